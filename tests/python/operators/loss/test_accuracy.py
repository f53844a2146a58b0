"""Accuracy: top_k, the stable tie rule (lower class index wins), label validation, no gradient;
device checks against the CPU kernel."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from loss_inputs import MANY_ROWS, labels, logits, rng

COVERED_CUDA_OPS = ["Accuracy"]

CPU = core.DeviceOption(0)


def accuracy_ref(P, L, top_k):
    correct = 0
    for row, label in zip(P, L):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        correct += label in order[:top_k]
    return [np.array(correct / len(L), np.float32)]


class TestAccuracy(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 8),
        d=st.integers(1, 6),
        seed=st.integers(0, 1000),
        top_k=st.integers(1, 3),
        ties=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference(self, n, d, seed, top_k, ties):
        top_k = min(top_k, d)
        rng = np.random.RandomState(seed)
        P = (rng.randint(0, 3, size=(n, d)) if ties else rng.randn(n, d)).astype(np.float32)
        L = rng.randint(0, d, size=n).astype(np.int32)
        op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=top_k)
        self.assertReferenceChecks(CPU, op, [P, L], lambda P, L: accuracy_ref(P, L, top_k))

    def test_ties_favour_lower_index(self):
        P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.2, 0.2]], np.float32)
        op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"])
        # row 0: label 0 wins the tie; row 1: label 1 loses it; row 2: label 0 wins the three-way
        # tie
        self.assertReferenceChecks(
            CPU,
            op,
            [P, np.array([0, 1, 0], np.int32)],
            lambda P, L: [np.array(2.0 / 3, np.float32)],
        )
        op2 = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=2)
        self.assertReferenceChecks(
            CPU,
            op2,
            [P, np.array([1, 1, 2], np.int32)],
            lambda P, L: [np.array(2.0 / 3, np.float32)],
        )

    def test_errors(self):
        op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"])
        P = np.zeros((2, 3), np.float32)
        self.assertRunOpRaises(
            CPU,
            op,
            [P, np.array([0, 3], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[Accuracy\] label 3 in row 1 is out of range \[0, 3\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [P, np.array([0], np.int32)],
            exception=RuntimeError,
            regexp=r"label must be int32 \(2\), got int \(1,\)",
        )
        op4 = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=4)
        self.assertRunOpRaises(
            CPU,
            op4,
            [P, np.array([0, 1], np.int32)],
            exception=RuntimeError,
            regexp="top_k 4 exceeds the number of classes 3",
        )

    def test_no_gradient(self):
        op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"])
        with self.assertRaises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["acc_grad"])


@needs_gpu
@pytest.mark.parametrize("top_k", [1, 2, 5])
@pytest.mark.parametrize("n,d", [(8, 5), (64, 1000), (MANY_ROWS, 6)])
def test_accuracy_top_k(top_k, n, d):
    r = rng(15)
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=top_k)
    (acc,) = check_cpu_gpu(op, [logits(r, n, d), labels(r, n, d)], rtol=0, atol=0)
    assert acc.shape == ()


@needs_gpu
@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_accuracy_ties_favour_the_lower_class(top_k):
    r = rng(16)
    p = r.randint(0, 3, (40, 6)).astype(np.float32)  # many equal scores
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=top_k)
    check_cpu_gpu(op, [p, labels(r, 40, 6, (40, 1))], rtol=0, atol=0)


@needs_gpu
def test_accuracy_of_no_rows_and_labels_on_the_host():
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=2)
    (acc,) = check_cpu_gpu(
        op, [np.zeros((0, 3), np.float32), np.zeros(0, np.int32)], rtol=0, atol=0
    )
    assert acc == 0
    r = rng(17)
    check_cpu_gpu(
        op, [logits(r, 9, 4), labels(r, 9, 4)], rtol=0, atol=0, input_device_options={"L": CPU}
    )
