"""WeightedSum and WeightedSumGradient: reference, gradients (grad_on_w), bad weights and a short X
with grad_on_w; device checks against the CPU kernels (weights on the host, large and empty
inputs)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu
from sparse_optimizer_inputs import HOST_OPTIONS, f32, on_host

COVERED_CUDA_OPS = ["WeightedSum", "WeightedSumGradient"]

CPU = core.DeviceOption(0)


class TestWeightedSum(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        size=st.integers(1, 8),
        seed=st.integers(0, 1000),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, size, seed, in_place):
        rng = np.random.RandomState(seed)
        inputs, names = [], []
        for i in range(n):
            inputs += [rng.randn(size).astype(np.float32), rng.randn(1).astype(np.float32)]
            names += ["X%d" % i, "w%d" % i]
        op = core.CreateOperator("WeightedSum", names, ["X0" if in_place else "Y"])

        def ref(*args):
            return [sum(args[2 * i] * args[2 * i + 1][0] for i in range(n))]

        self.assertReferenceChecks(CPU, op, inputs, ref)
        if not in_place:
            for i in range(n):
                self.assertGradientChecks(CPU, op, inputs, 2 * i, [0])

    def test_grad_on_w_gradient(self):
        X = np.random.randn(4).astype(np.float32)
        w = np.array([0.5], np.float32)
        op = core.CreateOperator("WeightedSum", ["X", "w"], ["Y"], grad_on_w=1)
        self.assertGradientChecks(CPU, op, [X, w], 1, [0])

    def test_bad_weight(self):
        op = core.CreateOperator("WeightedSum", ["X", "w"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(3, np.float32), np.zeros(2, np.float32)],
            exception=RuntimeError,
            regexp="1-element float",
        )


def test_weighted_sum_gradient_refuses_a_short_x_with_grad_on_w():
    """It used to read past the end of X_i."""
    workspace.ResetWorkspace()
    workspace.FeedBlob("dy", np.ones(6, np.float32))
    workspace.FeedBlob("x0", np.ones(2, np.float32))
    workspace.FeedBlob("w0", np.ones(1, np.float32))
    with pytest.raises(RuntimeError, match=r"X0 \(2,\) must hold at least the 6 float values"):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "WeightedSumGradient", ["dy", "x0", "w0"], ["dx0", "dw0"], grad_on_w=1
            )
        )


HOST = caffe2_pb2.DeviceOption()


@needs_gpu
@pytest.mark.parametrize("in_place", [False, True])
def test_weighted_sum(in_place):
    rng = np.random.RandomState(2)
    x0, x1, x2 = (rng.randn(3, 11).astype(np.float32) for _ in range(3))
    w0, w1, w2 = (np.array([v], dtype=np.float32) for v in (0.5, -2.0, 3.0))
    op = core.CreateOperator(
        "WeightedSum", ["x0", "w0", "x1", "w1", "x2", "w2"], ["x0" if in_place else "y"]
    )
    check_cpu_gpu(
        op, [x0, w0, x1, w1, x2, w2], rtol=1e-5, atol=1e-6, input_device_options={"w1": HOST}
    )


@needs_gpu
@pytest.mark.parametrize("where", HOST_OPTIONS)
@pytest.mark.parametrize("grad_on_w", [0, 1])
@pytest.mark.parametrize("shape", [(3, 2), (0, 4), (1000, 300)], ids=["3x2", "empty", "1000x300"])
@pytest.mark.parametrize("pairs", [1, 3])
def test_weighted_sum_gradient_matches_cpu(pairs, shape, grad_on_w, where):
    rng = np.random.RandomState(15)
    names, inputs = ["dY"], [f32(rng, *shape)]
    for j in range(pairs):
        names += ["X%d" % j, "w%d" % j]
        inputs += [f32(rng, *shape), np.array([0.5 - j], np.float32)]
    outputs = ["dX%d" % j for j in range(pairs)] + (
        ["dw%d" % j for j in range(pairs)] if grad_on_w else []
    )
    op = core.CreateOperator("WeightedSumGradient", names, outputs, grad_on_w=grad_on_w)
    # dw sums up to 300000 products: float-sized differences of the double sums' roundings
    check_cpu_gpu(
        op,
        inputs,
        rtol=1e-5,
        atol=1e-4,
        input_device_options=on_host([n for n in names if n.startswith("w")], where),
    )


@needs_gpu
@pytest.mark.parametrize("grad_on_w", [0, 1])
def test_weighted_sum_gradient_through_the_registry(grad_on_w):
    rng = np.random.RandomState(16)
    inputs = [
        f32(rng, 4, 5),
        np.array([0.3], np.float32),
        f32(rng, 4, 5),
        np.array([-2.0], np.float32),
    ]
    op = core.CreateOperator("WeightedSum", ["X0", "w0", "X1", "w1"], ["Y"], grad_on_w=grad_on_w)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
