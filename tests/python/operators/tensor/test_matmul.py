"""MatMul: reference, gradient, axes and bad input; device checks against the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["MatMul"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestMatMul(hu.HypothesisTestCase):
    @given(
        m=st.integers(1, 4),
        k=st.integers(1, 4),
        n=st.integers(1, 4),
        trans_a=st.booleans(),
        trans_b=st.booleans(),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, m, k, n, trans_a, trans_b, seed):
        A = rand(k, m, seed=seed) if trans_a else rand(m, k, seed=seed)
        B = rand(n, k, seed=seed + 1) if trans_b else rand(k, n, seed=seed + 1)
        op = core.CreateOperator(
            "MatMul", ["A", "B"], ["Y"], trans_a=int(trans_a), trans_b=int(trans_b)
        )
        self.assertReferenceChecks(
            CPU, op, [A, B], lambda A, B: [(A.T if trans_a else A) @ (B.T if trans_b else B)]
        )
        self.assertGradientChecks(CPU, op, [A, B], 0, [0])
        self.assertGradientChecks(CPU, op, [A, B], 1, [0])

    def test_axes_and_bad_input(self):
        A = rand(2, 3, 4)
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"], axis_a=1)
        self.assertReferenceChecks(CPU, op, [A, rand(12, 5)], lambda A, B: [A.reshape(2, 12) @ B])
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"], axis_a=2)
        self.assertReferenceChecks(CPU, op, [A, rand(4, 5)], lambda A, B: [A.reshape(6, 4) @ B])
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), rand(4, 2)],
            exception=RuntimeError,
            regexp=r"^\[MatMul\] A \(2, 3\) gives inner dim 3 but B \(4, 2\) gives 4",
        )

    def test_negative_axes_count_from_the_end(self):
        A = rand(1, 2, 3, 4)
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"], axis_a=-3, axis_b=-1)
        self.assertReferenceChecks(
            CPU, op, [A, rand(2, 3, 4, 5)], lambda A, B: [A.reshape(1, 24) @ B.reshape(24, 5)]
        )
        op = core.CreateOperator("MatMul", ["A", "B"], ["Y"], axis_a=-5)
        self.assertRunOpRaises(
            CPU,
            op,
            [A, rand(24, 2)],
            exception=RuntimeError,
            regexp=r"^\[MatMul\] axis_a -5 out of range for A \(1, 2, 3, 4\)",
        )


@needs_gpu
@pytest.mark.parametrize(
    "a_shape,b_shape,args",
    [
        ((3, 4), (4, 5), {}),
        ((4, 3), (4, 5), {"trans_a": 1}),
        ((3, 4), (5, 4), {"trans_b": 1}),
        ((2, 3, 4), (5, 4), {"axis_a": 2, "trans_b": 1}),
    ],
)
def test_matmul(a_shape, b_shape, args):
    rng = np.random.RandomState(9)
    a, b = rng.randn(*a_shape).astype(np.float32), rng.randn(*b_shape).astype(np.float32)
    op = core.CreateOperator("MatMul", ["a", "b"], ["y"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
