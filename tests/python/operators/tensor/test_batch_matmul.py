"""BatchMatMul: reference, gradient, broadcasting and bad input; device checks against the CPU
kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["BatchMatMul"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestBatchMatMul(hu.HypothesisTestCase):
    @given(
        b=st.integers(1, 3),
        m=st.integers(1, 4),
        k=st.integers(1, 4),
        n=st.integers(1, 4),
        trans_a=st.booleans(),
        trans_b=st.booleans(),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, b, m, k, n, trans_a, trans_b, seed):
        A = rand(b, k, m, seed=seed) if trans_a else rand(b, m, k, seed=seed)
        B = rand(b, n, k, seed=seed + 1) if trans_b else rand(b, k, n, seed=seed + 1)
        op = core.CreateOperator(
            "BatchMatMul", ["A", "B"], ["Y"], trans_a=int(trans_a), trans_b=int(trans_b)
        )

        def ref(A, B):
            a = A.transpose(0, 2, 1) if trans_a else A
            bb = B.transpose(0, 2, 1) if trans_b else B
            return [a @ bb]

        self.assertReferenceChecks(CPU, op, [A, B], ref)
        self.assertGradientChecks(CPU, op, [A, B], 0, [0])
        self.assertGradientChecks(CPU, op, [A, B], 1, [0])

    def test_broadcast(self):
        for sa, sb in [
            ((2, 1, 3, 4), (5, 4, 2)),
            ((4,), (2, 4, 3)),
            ((2, 3, 4), (4,)),
            ((3, 4), (4, 2)),
        ]:
            A, B = rand(*sa), rand(*sb, seed=1)
            op = core.CreateOperator("BatchMatMul", ["A", "B"], ["Y"], broadcast=1)
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [np.matmul(A, B)])
        op = core.CreateOperator("BatchMatMul", ["A", "B"], ["Y"], broadcast=1)
        with self.assertRaisesRegex(Exception, "not available with broadcast=1"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])

    def test_bad_input(self):
        op = core.CreateOperator("BatchMatMul", ["A", "B"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3, 4), rand(2, 5, 2)],
            exception=RuntimeError,
            regexp=r"^\[BatchMatMul\] A \(2, 3, 4\) has inner dim 4 but B \(2, 5, 2\) has 5",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3, 4), rand(3, 4, 2)],
            exception=RuntimeError,
            regexp=r"same batch dims \(or set broadcast=1\)",
        )


@needs_gpu
@pytest.mark.parametrize(
    "a_shape,b_shape,args",
    [
        ((5, 3, 4), (5, 4, 2), {}),
        ((5, 4, 3), (5, 2, 4), {"trans_a": 1, "trans_b": 1}),
        ((2, 5, 3, 4), (4, 2), {"broadcast": 1}),
        ((4,), (3, 4, 2), {"broadcast": 1}),
        ((2, 1, 3, 4), (3, 4, 6), {"broadcast": 1}),
        ((3, 4), (3,), {"broadcast": 1, "trans_a": 1}),
    ],
)
def test_batch_matmul(a_shape, b_shape, args):
    rng = np.random.RandomState(10)
    a, b = rng.randn(*a_shape).astype(np.float32), rng.randn(*b_shape).astype(np.float32)
    op = core.CreateOperator("BatchMatMul", ["a", "b"], ["y"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
    if not args.get("broadcast"):
        check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
