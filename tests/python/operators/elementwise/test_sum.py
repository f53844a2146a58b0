"""Sum of n inputs: reference, gradient, in place, integer inputs and a shape mismatch; device
checks over element types, float16 on the GPU and an input fed on the host."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = ["Sum"]

CPU = core.DeviceOption(0)


class TestCopyAndSum(hu.HypothesisTestCase):
    @given(n=st.integers(1, 4), X=hu.tensor(), in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_sum(self, n, X, in_place):
        inputs = [X * (i + 1) for i in range(n)]
        names = ["X%d" % i for i in range(n)]
        op = core.CreateOperator("Sum", names, ["X0" if in_place else "Y"])
        self.assertReferenceChecks(CPU, op, inputs, lambda *xs: [sum(xs)])
        if not in_place:
            for i in range(n):
                self.assertGradientChecks(CPU, op, inputs, i, [0])

    def test_sum_integer_and_bad_shapes(self):
        op = core.CreateOperator("Sum", ["a", "b"], ["c"])
        self.assertReferenceChecks(
            CPU, op, [np.arange(4, dtype=np.int32), np.ones(4, np.int32)], lambda a, b: [a + b]
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(3, np.float32), np.zeros(4, np.float32)],
            exception=RuntimeError,
            regexp=r"input 1 \('b'\) has shape \(4,\)",
        )


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n_inputs", [1, 2, 5])
def test_sum(dtype, n_inputs):
    rng = np.random.RandomState(6)
    xs = [(rng.randn(3, 7) * 4).astype(dtype) for _ in range(n_inputs)]
    names = ["x%d" % i for i in range(n_inputs)]
    check_cpu_gpu(core.CreateOperator("Sum", names, ["y"]), xs, rtol=1e-6, atol=1e-6)
    check_cpu_gpu(core.CreateOperator("Sum", names, ["x0"]), xs, rtol=1e-6, atol=1e-6)


@needs_gpu
@gpu_semantics
def test_float16_sum_matches_numpy():
    rng = np.random.RandomState(6)
    xs = [rng.randn(3, 7).astype(np.float16) for _ in range(3)]
    workspace.ResetWorkspace()
    for i, x in enumerate(xs):
        workspace.FeedBlob("x%d" % i, x, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Sum", ["x0", "x1", "x2"], ["y"], device_option=gpu())
    )
    y = workspace.FetchBlob("y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(
        y.astype(np.float32), sum(x.astype(np.float32) for x in xs), rtol=5e-3, atol=5e-3
    )


@needs_gpu
def test_sum_of_an_input_fed_on_the_host():
    from caffe2.proto import caffe2_pb2

    x = np.random.rand(4).astype(np.float32)
    out = check_cpu_gpu(
        core.CreateOperator("Sum", ["a", "b"], ["y"]),
        [x, x],
        input_device_options={"b": caffe2_pb2.DeviceOption()},
    )
    np.testing.assert_allclose(out[0], 2 * x, rtol=1e-6)
