"""LabelCrossEntropy: reference, gradient, label shapes and label validation; device checks against
the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import needs_gpu
from loss_inputs import MANY_ROWS, check_with_gradient, labels, probs, rng

COVERED_CUDA_OPS = ["LabelCrossEntropy", "LabelCrossEntropyGradient"]

CPU = core.DeviceOption(0)


class TestLabelCrossEntropy(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 1000), column=st.booleans()
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, d, seed, column):
        rng = np.random.RandomState(seed)
        X = (rng.rand(n, d) * 0.8 + 0.2).astype(np.float32)
        L = rng.randint(0, d, size=(n, 1) if column else n).astype(np.int32)
        op = core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"])
        self.assertReferenceChecks(
            CPU, op, [X, L], lambda X, L: [-np.log(X[np.arange(n), L.reshape(-1)])]
        )
        self.assertGradientChecks(CPU, op, [X, L], 0, [0], stepsize=1e-3, threshold=0.01)

    def test_clamps_zero_probability(self):
        X = np.array([[0.0, 1.0]], np.float32)
        op = core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"])
        self.assertReferenceChecks(
            CPU,
            op,
            [X, np.array([0], np.int32)],
            lambda X, L: [np.array([-np.log(1e-20)], np.float32)],
        )

    def test_errors(self):
        op = core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"])
        X = np.full((3, 4), 0.25, np.float32)
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([0, 1, 9], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[LabelCrossEntropy\] label 9 in row 2 is out of range \[0, 4\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([0, 1], np.int32)],
            exception=RuntimeError,
            regexp=r"label \(2,\) must be \(3\) or \(3, 1\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [X, np.array([0, 1, 2], np.int64)],
            exception=RuntimeError,
            regexp="label must be int32",
        )


@needs_gpu
@pytest.mark.parametrize(
    "n,d,label_shape", [(6, 4, None), (64, 1000, None), (5, 3, "n1"), (MANY_ROWS, 3, None)]
)
def test_label_cross_entropy(n, d, label_shape):
    r = rng(11)
    t = labels(r, n, d, (n, 1) if label_shape else None)
    check_with_gradient(
        core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"]), [probs(r, n, d), t]
    )


@needs_gpu
def test_label_cross_entropy_of_one_row_and_of_zero_probability():
    r = rng(12)
    op = core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"])
    (y,) = check_with_gradient(op, [probs(r, 1, 5).reshape(5), np.array([3], np.int32)])
    assert y.shape == (1,)
    x = np.array([[0.0, 1.0], [0.5, 0.5]], np.float32)  # log(max(0, 1e-20))
    check_with_gradient(op, [x, np.array([0, 1], np.int32)], rtol=1e-5, grad_rtol=1e-5)
