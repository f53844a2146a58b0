"""LengthsSum/Mean/WeightedSum and SparseLengthsSum/Mean/WeightedSum: references, gradients (dense
and sparse), gradient op names and bad input, on the CPU. The device checks are in
test_lengths_reducer_device.py (outputs and gradients) and test_lengths_reducer_device_errors.py
(the CUDA ops' input errors)."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def segment_ref(rows, lengths, mode, weights=None):
    out, pos = [], 0
    for l in lengths:
        seg = rows[pos : pos + l]
        if weights is not None:
            seg = seg * weights[pos : pos + l].reshape(-1, *([1] * (rows.ndim - 1)))
        r = seg.sum(axis=0) if l or mode != "mean" else np.zeros(rows.shape[1:], np.float32)
        if mode == "mean" and l:
            r = r / l
        out.append(r)
        pos += l
    return np.array(out, np.float32).reshape(len(lengths), *rows.shape[1:])


class TestLengthsReducers(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), mode=st.sampled_from(["sum", "mean", "weighted"]))
    @settings(deadline=None, max_examples=10)
    def test_dense(self, seed, mode):
        rng = np.random.RandomState(seed)
        lengths = np.array([2, 0, 3, 1], np.int32)
        data = rng.randn(6, 2).astype(np.float32)
        w = rng.randn(6).astype(np.float32)
        if mode == "weighted":
            op = core.CreateOperator("LengthsWeightedSum", ["D", "W", "L"], ["Y"])
            inputs = [data, w, lengths]
            ref = lambda d, w, l: [segment_ref(d, l, "sum", w)]
        else:
            op = core.CreateOperator(
                "LengthsSum" if mode == "sum" else "LengthsMean", ["D", "L"], ["Y"]
            )
            inputs = [data, lengths]
            ref = lambda d, l: [segment_ref(d, l, mode)]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    @given(
        seed=st.integers(0, 100),
        mode=st.sampled_from(["sum", "mean", "weighted"]),
        idx_type=st.sampled_from([np.int32, np.int64]),
    )
    @settings(deadline=None, max_examples=10)
    def test_sparse(self, seed, mode, idx_type):
        rng = np.random.RandomState(seed)
        lengths = np.array([1, 3, 0, 2], np.int32)
        data = rng.randn(5, 3).astype(np.float32)
        idx = rng.randint(0, 5, size=6).astype(idx_type)
        w = rng.randn(6).astype(np.float32)
        if mode == "weighted":
            op = core.CreateOperator("SparseLengthsWeightedSum", ["D", "W", "I", "L"], ["Y"])
            inputs = [data, w, idx, lengths]
            ref = lambda d, w, i, l: [segment_ref(d[i], l, "sum", w)]
        else:
            op = core.CreateOperator(
                "SparseLengthsSum" if mode == "sum" else "SparseLengthsMean", ["D", "I", "L"], ["Y"]
            )
            inputs = [data, idx, lengths]
            ref = lambda d, i, l: [segment_ref(d[i], l, mode)]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_gradient_defs(self):
        cases = [
            ("LengthsSum", ["D", "L"], "LengthsIndicesInGradientSumGradient", ["Y_grad", "L", "D"]),
            ("LengthsMean", ["D", "L"], "LengthsMeanGradient", ["Y_grad", "L"]),
            (
                "SparseLengthsSum",
                ["D", "I", "L"],
                "SparseLengthsIndicesInGradientSumGradient",
                ["Y_grad", "L", "I"],
            ),
        ]
        for op_type, ins, grad_type, grad_ins in cases:
            op = core.CreateOperator(op_type, ins, ["Y"])
            ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
            self.assertEqual(ops[0].type, grad_type)
            self.assertEqual(list(ops[0].input), grad_ins)
        self.assertEqual(grads[0].indices, "I")

    def test_bad_input(self):
        op = core.CreateOperator("LengthsSum", ["D", "L"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([1, 2], np.int32)],
            exception=RuntimeError,
            regexp=r"^\[LengthsSum\] LENGTHS add up to 3 but DATA \(4, 2\) has 4 rows",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([4], np.int64)],
            exception=RuntimeError,
            regexp=r"LENGTHS must be a 1-D int32 tensor",
        )
        op = core.CreateOperator("SparseLengthsSum", ["D", "I", "L"], ["Y"])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(4, 2), np.array([0, 9]), np.array([2], np.int32)],
            exception=RuntimeError,
            regexp=r"index 9 at position 1 out of range for DATA \(4, 2\)",
        )
