"""MaxPool / AveragePool (+1D/2D/3D) / LpPool and their gradients (spec ops §1.2.3): numpy
references, finite-difference and reference gradients, global pooling, padding exclusion, tied
maxima, NHWC, and bad input; device checks of the cuDNN MaxPool / AveragePool and their gradients
against the CPU kernel (orders, 1-D/2-D/3-D, strides, pads, global pooling, and the geometries
that run on the CPU fallback). Device inputs are random normals, so a max window has no ties (the
CPU gradient gives ties to every maximal element, cuDNN to one)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from conv_pool_reference import geometry, pool_grad_nchw, pool_nchw, to_nchw, to_nhwc
from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "MaxPool",
    "MaxPool_ENGINE_CUDNN",
    "MaxPoolGradient",
    "MaxPoolGradient_ENGINE_CUDNN",
    "MaxPool1D",
    "MaxPool1D_ENGINE_CUDNN",
    "MaxPool1DGradient",
    "MaxPool1DGradient_ENGINE_CUDNN",
    "MaxPool2D",
    "MaxPool2D_ENGINE_CUDNN",
    "MaxPool2DGradient",
    "MaxPool2DGradient_ENGINE_CUDNN",
    "MaxPool3D",
    "MaxPool3D_ENGINE_CUDNN",
    "MaxPool3DGradient",
    "MaxPool3DGradient_ENGINE_CUDNN",
    "AveragePool",
    "AveragePool_ENGINE_CUDNN",
    "AveragePoolGradient",
    "AveragePoolGradient_ENGINE_CUDNN",
    "AveragePool1D",
    "AveragePool1D_ENGINE_CUDNN",
    "AveragePool1DGradient",
    "AveragePool1DGradient_ENGINE_CUDNN",
    "AveragePool2D",
    "AveragePool2D_ENGINE_CUDNN",
    "AveragePool2DGradient",
    "AveragePool2DGradient_ENGINE_CUDNN",
    "AveragePool3D",
    "AveragePool3D_ENGINE_CUDNN",
    "AveragePool3DGradient",
    "AveragePool3DGradient_ENGINE_CUDNN",
]

CPU = core.DeviceOption(0)

KINDS = {"MaxPool": "max", "AveragePool": "avg", "LpPool": "lp"}


def distinct(rng, *shape):
    """Values at least 0.2 apart (and 0.1 away from 0), so a finite-difference step of 0.05 never
    changes which element is a window's max."""
    n = int(np.prod(shape))
    v = (rng.permutation(n) - n // 2 + 0.5) * 0.2
    return v.reshape(shape).astype(np.float32)


class TestPool(hu.HypothesisTestCase):
    def check(self, op_type, X, grads=True, ref_args=None, p=2.0, order="NCHW", **kw):
        """Reference check of Y and of the gradient op, plus a finite-difference check of dX."""
        n = X.ndim - 2
        r = ref_args or {}
        xn = X if order == "NCHW" else to_nchw(X)
        if kw.get("global_pooling"):
            k = list(xn.shape[2:])
        else:
            k = r.get("kernels", kw.get("kernels", [kw.get("kernel")] * n))
        strides = r.get("strides", kw.get("strides", [kw.get("stride", 1)] * n))
        dil = r.get("dilations", kw.get("dilations", [kw.get("dilation", 1)] * n))
        pads = r.get("pads", kw.get("pads", [kw.get("pad", 0)] * 2 * n))
        _, heads, tails = geometry(
            xn.shape[2:], k, strides, dil, pads[:n], pads[n:], kw.get("legacy_pad", 0)
        )
        kind = KINDS[op_type.rstrip("123D")]
        if kind == "lp":
            kw["p"] = p
        op = core.CreateOperator(op_type, ["X"], ["Y"], order=order, **kw)
        conv = (lambda a: a) if order == "NCHW" else to_nhwc

        def ref(X):
            return [conv(pool_nchw(xn, kind, k, strides, dil, heads, tails, p))]

        def grad_ref(dY, outputs, inputs):
            yn = outputs[0] if order == "NCHW" else to_nchw(outputs[0])
            dyn = dY if order == "NCHW" else to_nchw(dY)
            return [conv(pool_grad_nchw(xn, yn, dyn, kind, k, strides, dil, heads, tails, p))]

        self.assertReferenceChecks(
            CPU, op, [X], ref, threshold=1e-4, output_to_grad="Y", grad_reference=grad_ref
        )
        if grads:
            self.assertGradientChecks(CPU, op, [X], 0, [0])

    @given(
        op_type=st.sampled_from(sorted(KINDS)),
        n=st.integers(1, 2),
        c=st.integers(1, 3),
        h=st.integers(2, 6),
        w=st.integers(2, 6),
        k=st.integers(1, 3),
        stride=st.integers(1, 3),
        pad=st.integers(0, 1),
        order=st.sampled_from(["NCHW", "NHWC"]),
        seed=st.integers(0, 1000),
    )
    @settings(deadline=None, max_examples=10)
    def test_2d(self, op_type, n, c, h, w, k, stride, pad, order, seed):
        k = min(k, h + 2 * pad, w + 2 * pad)
        X = distinct(np.random.RandomState(seed), n, c, h, w)
        self.check(
            op_type,
            X if order == "NCHW" else to_nhwc(X),
            order=order,
            kernel=k,
            stride=stride,
            pad=pad,
        )

    def test_asymmetric_pads_and_dilation(self):
        X = distinct(np.random.RandomState(0), 2, 2, 5, 6)
        for op_type in KINDS:
            self.check(op_type, X, kernels=[2, 3], strides=[2, 1], pads=[1, 0, 0, 2])
            self.check(
                op_type,
                X,
                ref_args=dict(kernels=[3, 2], strides=[1, 2], pads=[0, 1, 1, 0]),
                kernel_h=3,
                kernel_w=2,
                stride_h=1,
                stride_w=2,
                pad_t=0,
                pad_l=1,
                pad_b=1,
                pad_r=0,
            )
            self.check(op_type, X, kernel=2, dilations=[2, 1])
            self.check(op_type, to_nhwc(X), order="NHWC", kernel=2, dilation=2, pad=1)

    def test_1d_and_3d_and_aliases(self):
        rng = np.random.RandomState(1)
        X1, X3 = distinct(rng, 2, 3, 7), distinct(rng, 1, 2, 4, 3, 5)
        for base in ("MaxPool", "AveragePool"):
            self.check(base + "1D", X1, kernels=[3], strides=[2], pads=[1, 1])
            self.check(base, X1, kernel=2)
            self.check(
                base + "3D", X3, kernels=[2, 2, 3], strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1]
            )
            self.check(base + "2D", distinct(rng, 1, 2, 4, 4), kernel=2, stride=2)
            self.check(base, to_nhwc(X3), order="NHWC", kernel=2)
            op = core.CreateOperator(base + "3D", ["X"], ["Y"], kernel=2)
            grad_ops, _ = core.GradientRegistry.GetBackwardPass([op], {"Y": "Y_grad"})
            self.assertEqual(grad_ops[0].type, base + "3DGradient")
            self.assertEqual(list(grad_ops[0].input), ["X", "Y", "Y_grad"])
            self.assertEqual(list(grad_ops[0].output), ["X_grad"])
        self.check("LpPool", X3, kernel=2, stride=2, pad=1, p=3.0)

    def test_global_pooling(self):
        rng = np.random.RandomState(2)
        for X in (distinct(rng, 2, 3, 4, 5), distinct(rng, 2, 3, 6), distinct(rng, 1, 2, 2, 3, 4)):
            for op_type in KINDS:
                self.check(op_type, X, global_pooling=1)
                self.check(op_type, to_nhwc(X), order="NHWC", global_pooling=1)
        X = distinct(rng, 2, 3, 4, 5)
        op = core.CreateOperator("AveragePool", ["X"], ["Y"], global_pooling=1)
        out = self.assertReferenceChecks(
            CPU, op, [X], lambda X: [X.mean(axis=(2, 3), keepdims=True)]
        )[0]
        self.assertEqual(out.shape, (2, 3, 1, 1))

    def test_average_excludes_padding(self):
        X = np.ones((1, 1, 3, 3), np.float32)
        op = core.CreateOperator("AveragePool", ["X"], ["Y"], kernel=3, pad=1)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.ones((1, 1, 3, 3), np.float32)])
        # the gradient splits dY over the in-bounds elements only: a corner window holds 4
        workspace.FeedBlob("X", X)
        workspace.FeedBlob("dY", np.eye(3, dtype=np.float32).reshape(1, 1, 3, 3))
        workspace.RunOperatorOnce(
            core.CreateOperator("AveragePoolGradient", ["X", "X", "dY"], ["dX"], kernel=3, pad=1)
        )
        dX = workspace.FetchBlob("dX")
        self.assertAlmostEqual(float(dX[0, 0, 0, 0]), 1 / 4 + 1 / 9)

    def test_max_ties_all_get_gradient(self):
        X = np.array([[[[1, 3], [3, 0]]]], np.float32)
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(core.CreateOperator("MaxPool", ["X"], ["Y"], kernel=2))
        Y = workspace.FetchBlob("Y")
        self.assertEqual(Y.tolist(), [[[[3.0]]]])
        workspace.FeedBlob("dY", np.full((1, 1, 1, 1), 2.0, np.float32))
        workspace.RunOperatorOnce(
            core.CreateOperator("MaxPoolGradient", ["X", "Y", "dY"], ["dX"], kernel=2)
        )
        self.assertEqual(workspace.FetchBlob("dX").tolist(), [[[[0, 2], [2, 0]]]])

    def test_window_entirely_in_padding_gives_zero(self):
        X = np.full((1, 1, 1, 1), -5.0, np.float32)
        for op_type in KINDS:
            op = core.CreateOperator(op_type, ["X"], ["Y"], kernel=2, pad=2, stride=3)
            Y = self.assertReferenceChecks(
                CPU,
                op,
                [X],
                lambda X: [pool_nchw(X, KINDS[op_type], [2, 2], [3, 3], [1, 1], [2, 2], [2, 2])],
            )[0]
            self.assertEqual(Y.shape, (1, 1, 2, 2))
            self.assertEqual(float(Y[0, 0, 0, 0]), 0.0)

    def test_legacy_padding_modes(self):
        rng = np.random.RandomState(3)
        X = distinct(rng, 1, 2, 7, 6)
        for op_type in KINDS:
            for mode in (1, 2):
                for stride in (1, 2, 3):
                    self.check(op_type, X, kernel=3, stride=stride, legacy_pad=mode)
            for pad in (0, 1):
                self.check(op_type, X, kernel=3, stride=2, pad=pad, legacy_pad=3)
                self.check(
                    op_type, to_nhwc(X), order="NHWC", kernel=2, stride=2, pad=pad, legacy_pad=3
                )

    def test_multithreaded_planes(self):
        X = distinct(np.random.RandomState(4), 4, 16, 24, 24)
        for op_type in KINDS:
            self.check(op_type, X, grads=False, kernel=3, stride=2, pad=1)
            self.check(op_type, to_nhwc(X), grads=False, order="NHWC", kernel=3, stride=2, pad=1)

    def test_errors(self):
        X = np.zeros((1, 2, 4, 4), np.float32)

        def raises(regexp, op_type="MaxPool", inputs=(X,), **kw):
            names = ["X", "Y", "dY"][: len(inputs)]
            op = core.CreateOperator(op_type, names, ["Z"], **kw)
            self.assertRunOpRaises(CPU, op, list(inputs), exception=RuntimeError, regexp=regexp)

        raises(r"^\[MaxPool\] the kernel size is not set")
        raises(
            r"^\[AveragePool\] global_pooling requires pads 0, strides 1 and dilations 1, "
            r"got pads 1, strides 1, dilations 1",
            op_type="AveragePool",
            global_pooling=1,
            pad=1,
        )
        raises(r"global_pooling requires .* strides 2", global_pooling=1, stride=2)
        raises(
            r"kernel 6 is larger than the padded input 6 \(size 4 \+ pads 1 \+ 1\)|kernel 7",
            kernel=7,
            pad=1,
        )
        raises(
            r"legacy_pad VALID computes the pads itself; remove the explicit 'pad'",
            kernel=2,
            pad=0,
            legacy_pad=1,
        )
        raises(r"^\[LpPool\] p must be positive, got -1", op_type="LpPool", kernel=2, p=-1.0)
        raises(r"Argument 'p' does not have the right field", op_type="LpPool", kernel=2, p=2)
        raises(
            r"X \(2, 4\) must have 3 to 5 dims", inputs=(np.zeros((2, 4), np.float32),), kernel=2
        )
        raises(
            r"X must be a float tensor, got int",
            inputs=(np.zeros((1, 1, 4, 4), np.int32),),
            kernel=2,
        )
        raises(
            r"'kernels' gives 3 kernel sizes but the input has 2 spatial dims", kernels=[2, 2, 2]
        )
        raises(
            r"^\[MaxPoolGradient\] Y \(1, 2, 2, 2\) and dY \(1, 2, 3, 3\) must have the "
            r"output shape \(1, 2, 2, 2\)",
            op_type="MaxPoolGradient",
            kernel=2,
            stride=2,
            inputs=(X, np.zeros((1, 2, 2, 2), np.float32), np.zeros((1, 2, 3, 3), np.float32)),
        )

    def test_kernel_7_message(self):
        op = core.CreateOperator("MaxPool", ["X"], ["Y"], kernel=7, pad=1)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((1, 2, 4, 4), np.float32)],
            exception=RuntimeError,
            regexp=r"kernel 7 is larger than the padded input 6 \(size 4 \+ pads 1 \+ 1\) "
            r"in spatial dim 0 of X \(1, 2, 4, 4\)",
        )


CUDNN_KINDS = ["MaxPool", "AveragePool"]


def pool_case(
    kind, n=2, c=3, spatial=(7, 6), order="NCHW", dims="", engine="CUDNN", seed=0, **args
):
    rng = np.random.RandomState(seed)
    shape = (n, c) + tuple(spatial) if order == "NCHW" else (n,) + tuple(spatial) + (c,)
    x = rng.randn(*shape).astype(np.float32)
    op = core.CreateOperator(kind + dims, ["X"], ["Y"], order=order, engine=engine, **args)
    return op, [x]


CUDNN_CASES = [
    dict(kernel=2, stride=2),
    dict(kernel=3, stride=1),
    dict(kernel=3, stride=2, pad=1),
    dict(kernel=3, stride=2, pad=1, engine=""),
    dict(kernel=3, stride=2, pad=1, dims="2D"),
    dict(kernel_h=3, kernel_w=2, stride_h=1, stride_w=2, pad_t=1, pad_l=0, pad_b=1, pad_r=0),
    dict(kernel=3, stride=2, pad=1, order="NHWC"),
    dict(kernel=2, stride=1, order="NHWC", spatial=(5, 4)),
    dict(global_pooling=1),
    dict(global_pooling=1, order="NHWC"),
    dict(kernel=3, stride=2, pad=1, spatial=(9,), dims="1D"),
    dict(kernel=2, stride=2, spatial=(8,), dims="1D", order="NHWC"),
    dict(kernel=2, stride=2, pad=1, spatial=(4, 5, 6), dims="3D"),
    dict(kernel=3, stride=1, spatial=(4, 5, 3), dims="3D", order="NHWC"),
    dict(kernel=3, stride=2, pad=1, deterministic=1),
    # Asymmetric pads with cuDNN's output size, run with pad_head on both sides.
    dict(kernel=3, stride=2, spatial=(8, 8), pads=[1, 1, 0, 0]),
    # Run on the CPU fallback.
    dict(kernel=3, stride=2, spatial=(7, 7), pads=[1, 1, 0, 0]),
    dict(kernel=3, stride=2, spatial=(6, 6), legacy_pad=3),
    dict(kernel=2, stride=1, dilation=2),
    dict(kernel=2, stride=1, pad=2),
]


def cudnn_case_id(case):
    return ",".join("{}={}".format(k, v) for k, v in sorted(case.items()))


@needs_gpu
@pytest.mark.parametrize("kind", CUDNN_KINDS)
@pytest.mark.parametrize("case", CUDNN_CASES, ids=cudnn_case_id)
def test_pool_forward_matches_cpu(kind, case):
    op, inputs = pool_case(kind, **case)
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("kind", CUDNN_KINDS)
@pytest.mark.parametrize("case", CUDNN_CASES, ids=cudnn_case_id)
def test_pool_gradient_matches_cpu(kind, case):
    op, inputs = pool_case(kind, seed=1, **case)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("kind", CUDNN_KINDS)
def test_pool_gradient_op_directly(kind):
    """The gradient op given X, Y and dY (as a net runs it), for both registrations."""
    rng = np.random.RandomState(2)
    x = rng.randn(2, 3, 6, 6).astype(np.float32)
    (fwd,) = check_cpu_gpu(core.CreateOperator(kind, ["X"], ["Y"], kernel=2, stride=2), [x])
    dy = rng.randn(*fwd.shape).astype(np.float32)
    for engine in ["", "CUDNN"]:
        op = core.CreateOperator(
            kind + "Gradient", ["X", "Y", "dY"], ["dX"], kernel=2, stride=2, engine=engine
        )
        check_cpu_gpu(op, [x, fwd, dy], rtol=1e-5, atol=1e-5)


@needs_gpu
@gpu_semantics
@pytest.mark.parametrize("kind", CUDNN_KINDS)
def test_float16_pooling(kind):
    x = np.random.RandomState(3).randn(2, 3, 6, 6).astype(np.float16)
    args = dict(kernel=3, stride=2, pad=1)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x.astype(np.float32))
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"], **args))
    expected = workspace.FetchBlob("Y")
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"], device_option=gpu(), **args))
    y = workspace.FetchBlob("Y")
    assert y.dtype == np.float16
    # The max is exact; the mean of up to 9 fp16 values is rounded to fp16.
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=1e-3, atol=2e-3)


if __name__ == "__main__":
    import unittest

    unittest.main()
