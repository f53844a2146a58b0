"""LRN and LRNGradient: numpy reference (NCHW/NHWC), optional scale output, gradient, errors; device
checks of the cuDNN LRN against the CPU kernel, including the arguments that run on the CPU
fallback."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LRN", "LRN_ENGINE_CUDNN", "LRNGradient", "LRNGradient_ENGINE_CUDNN"]

CPU = core.DeviceOption(0)


def lrn_ref(X, size, alpha, beta, bias, order):
    x = X if order == "NCHW" else np.moveaxis(X, -1, 1)
    sq = x.astype(np.float64) ** 2
    C = x.shape[1]
    half = (size - 1) // 2
    scale = np.empty_like(sq)
    for c in range(C):
        scale[:, c] = bias + alpha / size * sq[:, max(0, c - half) : min(C, c + half + 1)].sum(
            axis=1
        )
    Y = x * scale**-beta
    if order == "NHWC":
        Y, scale = np.moveaxis(Y, 1, -1), np.moveaxis(scale, 1, -1)
    return [Y.astype(np.float32), scale.astype(np.float32)]


class TestLRN(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 2),
        c=st.integers(1, 6),
        hw=st.sampled_from([(2, 2), (3,), (1, 2, 1)]),
        size=st.sampled_from([1, 3, 5]),
        alpha=st.floats(0.1, 1.0),
        beta=st.floats(0.25, 0.75),
        bias=st.floats(1.0, 2.0),
        order=st.sampled_from(["NCHW", "NHWC"]),
        seed=st.integers(0, 1000),
        with_scale=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(
        self, n, c, hw, size, alpha, beta, bias, order, seed, with_scale
    ):
        rng = np.random.RandomState(seed)
        shape = (n, c) + hw if order == "NCHW" else (n,) + hw + (c,)
        X = rng.randn(*shape).astype(np.float32)
        outputs = ["Y", "scale"] if with_scale else ["Y"]
        op = core.CreateOperator(
            "LRN", ["X"], outputs, size=size, alpha=alpha, beta=beta, bias=bias, order=order
        )
        self.assertReferenceChecks(
            CPU,
            op,
            [X],
            lambda X: lrn_ref(X, size, alpha, beta, bias, order)[: len(outputs)],
            threshold=1e-3,
        )
        self.assertGradientChecks(CPU, op, [X], 0, [0], stepsize=0.01, threshold=0.01)

    def test_gradient_def(self):
        op = core.CreateOperator("LRN", ["X"], ["Y", "s"], size=3)
        g, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None])
        self.assertEqual(g[0].type, "LRNGradient")
        self.assertEqual(list(g[0].input), ["X", "Y", "Y_grad"])

    def test_errors(self):
        X = np.zeros((1, 3, 2, 2), np.float32)
        for size in (0, 2):
            op = core.CreateOperator("LRN", ["X"], ["Y"], size=size, alpha=1.0, beta=0.5)
            self.assertRunOpRaises(
                CPU,
                op,
                [X],
                exception=RuntimeError,
                regexp=r"^\[LRN\] size must be a positive odd number, got %d" % size,
            )
        op = core.CreateOperator("LRN", ["X"], ["Y"])
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp="missing required argument 'size'"
        )


@needs_gpu
@pytest.mark.parametrize("engine", ["", "CUDNN"])
@pytest.mark.parametrize(
    "shape,args",
    [
        ((2, 7, 4, 5), dict(size=5, alpha=0.5, beta=0.75, bias=2.0)),
        ((2, 7, 4, 5), dict(size=3, alpha=1e-4, beta=0.75, bias=1.0)),
        ((3, 16, 3), dict(size=1, alpha=0.3, beta=0.5, bias=1.0)),
        ((2, 6), dict(size=15, alpha=0.2, beta=1.0, bias=0.5)),
        ((1, 20, 2, 3, 2), dict(size=7, alpha=0.4, beta=0.6, bias=1.5)),
        # CPU fallback: NHWC, a window wider than cuDNN's 16, beta below cuDNN's minimum 0.01
        ((2, 4, 5, 7), dict(size=5, alpha=0.5, beta=0.75, bias=2.0, order="NHWC")),
        ((1, 20, 3, 3), dict(size=17, alpha=0.5, beta=0.75, bias=2.0)),
        ((2, 7, 4, 5), dict(size=3, alpha=0.5, beta=0.0, bias=1.0)),
    ],
)
def test_lrn_matches_cpu(engine, shape, args):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    op = core.CreateOperator("LRN", ["X"], ["Y"], engine=engine, **args)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [x], rtol=1e-3, atol=1e-4)


@needs_gpu
def test_lrn_with_scale_output_runs_on_the_fallback():
    x = np.random.RandomState(1).randn(2, 7, 3, 3).astype(np.float32)
    op = core.CreateOperator("LRN", ["X"], ["Y", "scale"], size=5, alpha=0.5, beta=0.75, bias=2.0)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-5)


@needs_gpu
def test_lrn_gradient_op_directly():
    rng = np.random.RandomState(2)
    x = rng.randn(2, 7, 4, 5).astype(np.float32)
    args = dict(size=5, alpha=0.5, beta=0.75, bias=2.0)
    (y,) = check_cpu_gpu(core.CreateOperator("LRN", ["X"], ["Y"], **args), [x])
    dy = rng.randn(*x.shape).astype(np.float32)
    op = core.CreateOperator("LRNGradient", ["X", "Y", "dY"], ["dX"], engine="CUDNN", **args)
    check_cpu_gpu(op, [x, y, dy], rtol=1e-4, atol=1e-5)
