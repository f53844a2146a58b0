"""InstanceNorm and InstanceNormGradient: reference (NCHW/NHWC, 1 or 3 outputs), gradients, in
place; device checks against the CPU kernel (ranks 3 to 5, in-place Y, epsilon, a large offset,
the gradient from saved or recomputed statistics)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["InstanceNorm", "InstanceNormGradient"]

CPU = core.DeviceOption(0)


def instance_norm_ref(X, scale, bias, eps, order):
    x = (X if order == "NCHW" else np.moveaxis(X, -1, 1)).astype(np.float64)
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    cs = (1, -1) + (1,) * (x.ndim - 2)
    Y = (x - mean) * inv_std * scale.reshape(cs) + bias.reshape(cs)
    if order == "NHWC":
        Y = np.moveaxis(Y, 1, -1)
    n, c = x.shape[:2]
    return [
        Y.astype(np.float32),
        mean.reshape(n, c).astype(np.float32),
        inv_std.reshape(n, c).astype(np.float32),
    ]


class TestInstanceNorm(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 3),
        hw=st.sampled_from([(3,), (2, 2), (2, 1, 2)]),
        order=st.sampled_from(["NCHW", "NHWC"]),
        seed=st.integers(0, 1000),
        outputs=st.sampled_from([1, 2, 3]),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, c, hw, order, seed, outputs, in_place):
        rng = np.random.RandomState(seed)
        shape = (n, c) + hw if order == "NCHW" else (n,) + hw + (c,)
        X = rng.randn(*shape).astype(np.float32)
        scale = (rng.rand(c) + 0.5).astype(np.float32)
        bias = rng.randn(c).astype(np.float32)
        outs = (["X"] if in_place else ["Y"]) + ["mean", "inv_std"][: outputs - 1]
        op = core.CreateOperator(
            "InstanceNorm", ["X", "scale", "bias"], outs, epsilon=1e-3, order=order
        )
        self.assertReferenceChecks(
            CPU,
            op,
            [X, scale, bias],
            lambda *a: instance_norm_ref(*a, 1e-3, order)[:outputs],
            threshold=1e-3,
        )
        if not in_place:
            for i in range(3):
                self.assertGradientChecks(
                    CPU, op, [X, scale, bias], i, [0], stepsize=0.01, threshold=0.02
                )

    def test_gradient_defs(self):
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y", "m", "is"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None, None])
        self.assertEqual(g[0].type, "InstanceNormGradient")
        self.assertEqual(list(g[0].input), ["X", "s", "b", "Y_grad", "m", "is"])
        self.assertEqual(list(g[0].output), ["X_grad", "s_grad", "b_grad"])
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"])
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(list(g[0].input), ["X", "s", "b", "Y_grad"])

    def test_errors(self):
        op = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"])
        X = np.zeros((2, 3, 4), np.float32)
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.ones(2, np.float32), np.zeros(3, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[InstanceNorm\] scale \(2,\) must hold 3 floats",
        )
        op4 = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y", "m", "i", "j"])
        self.assertRunOpRaises(
            CPU,
            op4,
            [X, np.ones(3, np.float32), np.zeros(3, np.float32)],
            exception=RuntimeError,
            regexp="4 outputs given, but the op produces 1 to 3",
        )
        op5 = core.CreateOperator("InstanceNorm", ["X", "s", "b"], ["Y"], order="CHW")
        self.assertRunOpRaises(
            CPU,
            op5,
            [X, np.ones(3, np.float32), np.zeros(3, np.float32)],
            exception=RuntimeError,
            regexp="order must be NCHW or NHWC, got 'CHW'",
        )


def f32(rng, *shape, offset=0.0, spread=1.0):
    return (rng.randn(*shape) * spread + offset).astype(np.float32)


def x_shape(n, c, spatial, order):
    return (n, c) + tuple(spatial) if order == "NCHW" else (n,) + tuple(spatial) + (c,)


def instance_inputs(rng, n, c, spatial, order, offset=0.5):
    x = f32(rng, *x_shape(n, c, spatial, order), offset=offset, spread=2.0)
    scale = rng.uniform(0.5, 1.5, c).astype(np.float32)
    bias = f32(rng, c)
    return [x, scale, bias]


INSTANCE_LAYOUTS = [
    (2, 3, (4, 5)),
    (3, 4, (7,)),
    (2, 3, (3, 4, 5)),
    (1, 1, (1, 1)),  # one value per plane
    (2, 5, (64, 64)),  # planes longer than a block
    (4, 64, (9, 11)),  # many planes
]


def layout_id(layout):
    n, c, spatial = layout
    return "N{}C{}S{}".format(n, c, "x".join(map(str, spatial)))


@needs_gpu
@pytest.mark.parametrize("outputs", [1, 2, 3])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("layout", INSTANCE_LAYOUTS, ids=layout_id)
def test_instance_norm_matches_cpu(layout, order, outputs):
    inputs = instance_inputs(np.random.RandomState(4), *layout, order)
    op = core.CreateOperator(
        "InstanceNorm",
        ["X", "scale", "bias"],
        ["Y", "mean", "inv_std"][:outputs],
        order=order,
        epsilon=1e-4,
    )
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_instance_norm_in_place(order):
    inputs = instance_inputs(np.random.RandomState(5), 2, 3, (4, 5), order)
    op = core.CreateOperator(
        "InstanceNorm", ["X", "scale", "bias"], ["X", "mean", "inv_std"], order=order
    )
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("epsilon", [0.0, 1e-5, 1.0])
def test_instance_norm_epsilon(epsilon):
    inputs = instance_inputs(np.random.RandomState(6), 2, 3, (5, 5), "NCHW")
    op = core.CreateOperator(
        "InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], epsilon=epsilon
    )
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_instance_norm_large_offset_matches_numpy():
    """Planes far from 0 (mean 1000, std 0.5) in NHWC: statistics match numpy in float64."""
    x, scale, bias = instance_inputs(np.random.RandomState(7), 2, 8, (32, 32), "NHWC")
    x = (x * 0.25 + 1000.0).astype(np.float32)
    op = core.CreateOperator(
        "InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], order="NHWC"
    )
    y, mean, inv_std = check_cpu_gpu(op, [x, scale, bias], rtol=1e-4, atol=1e-4)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(inv_std, 1 / np.sqrt(x64.var(axis=(1, 2)) + 1e-5), rtol=1e-4)


@needs_gpu
@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("layout", INSTANCE_LAYOUTS, ids=layout_id)
def test_instance_norm_gradient_matches_cpu(layout, order, outputs):
    """1 output: InstanceNormGradient recomputes the statistics; 3: it reads the saved ones."""
    inputs = instance_inputs(np.random.RandomState(8), *layout, order)
    op = core.CreateOperator(
        "InstanceNorm",
        ["X", "scale", "bias"],
        ["Y", "mean", "inv_std"][:outputs],
        order=order,
        epsilon=1e-3,
    )
    check_gradient_cpu_gpu(op, inputs, rtol=1e-3, atol=1e-3)


@needs_gpu
@pytest.mark.parametrize("saved", [False, True])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_instance_norm_gradient_op_matches_cpu(order, saved):
    """InstanceNormGradient on its own: dX, dscale and dbias, with 4 or 6 inputs."""
    rng = np.random.RandomState(9)
    x, scale, bias = instance_inputs(rng, 3, 4, (6, 7), order)
    dy = f32(rng, *x.shape)
    inputs = [x, scale, bias, dy]
    names = ["X", "scale", "bias", "dY"]
    if saved:
        fwd = core.CreateOperator(
            "InstanceNorm", ["X", "scale", "bias"], ["Y", "mean", "inv_std"], order=order
        )
        workspace.ResetWorkspace()
        for name, value in zip(names, inputs):
            workspace.FeedBlob(name, value)
        workspace.RunOperatorOnce(fwd)
        inputs += [workspace.FetchBlob("mean"), workspace.FetchBlob("inv_std")]
        names += ["mean", "inv_std"]
    op = core.CreateOperator("InstanceNormGradient", names, ["dX", "dscale", "dbias"], order=order)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)
