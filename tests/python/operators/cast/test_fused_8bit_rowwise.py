"""The fused 8-bit row-wise family: FloatToFused8BitRowwiseQuantized's layout against a numpy
quantizer (bytes, scale and bias), the round trip within half a step per row,
Fused8BitRowwiseQuantizedToFloat, SparseLengths{Sum,Mean,WeightedSum}Fused8BitRowwise against numpy
on the dequantized table (empty segments too), the errors, no gradients, and device checks (CUDA
runs the CPU kernels)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

SLS = {
    "SparseLengthsSumFused8BitRowwise": "sum",
    "SparseLengthsMeanFused8BitRowwise": "mean",
    "SparseLengthsWeightedSumFused8BitRowwise": "weighted",
}
COVERED_CUDA_OPS = [
    "FloatToFused8BitRowwiseQuantized",
    "Fused8BitRowwiseQuantizedToFloat",
    "SparseLengthsMeanFused8BitRowwise",
    "SparseLengthsSumFused8BitRowwise",
    "SparseLengthsWeightedSumFused8BitRowwise",
]

CPU = core.DeviceOption(0)


def quantize(X):
    lo = X.min(axis=1, initial=np.inf) if X.shape[1] else np.zeros(len(X), np.float32)
    hi = X.max(axis=1, initial=-np.inf) if X.shape[1] else np.zeros(len(X), np.float32)
    lo, hi = lo.astype(np.float32), hi.astype(np.float32)
    rng = hi - lo
    inv = np.float32(255) / (rng + np.float32(1e-8))
    q = np.rint((X - lo[:, None]) * inv[:, None]).astype(np.uint8)
    scale = (rng / np.float32(255)).astype(np.float32)
    tail = np.stack([scale, lo], axis=1).astype(np.float32).view(np.uint8)
    return np.concatenate([q, tail.reshape(len(X), 8)], axis=1)


def dequantize(Q):
    scale_bias = Q[:, -8:].copy().view(np.float32)
    return Q[:, :-8].astype(np.float32) * scale_bias[:, :1] + scale_bias[:, 1:]


def sls(kind, table, lengths, indices, weights=None):
    rows = dequantize(table)[indices].astype(np.float64)
    if weights is not None:
        rows = rows * weights[:, None]
    out, pos = [], 0
    for n in lengths:
        seg = rows[pos : pos + n].sum(axis=0)
        out.append(seg / n if kind == "mean" and n else seg)
        pos += n
    return np.array(out, np.float32).reshape(len(lengths), table.shape[1] - 8)


class TestFused8BitRowwise(hu.HypothesisTestCase):
    @given(n=st.integers(0, 5), d=st.integers(1, 9), seed=st.integers(0, 100))
    @settings(deadline=None, max_examples=15)
    def test_quantize_layout_and_round_trip(self, n, d, seed):
        X = (np.random.RandomState(seed).randn(n, d) * 3).astype(np.float32)
        to_fused = core.CreateOperator("FloatToFused8BitRowwiseQuantized", ["X"], ["Q"])
        self.assertReferenceChecks(CPU, to_fused, [X], lambda X: [quantize(X)])
        to_float = core.CreateOperator("Fused8BitRowwiseQuantizedToFloat", ["Q"], ["Y"])
        Q = quantize(X)
        self.assertReferenceChecks(CPU, to_float, [Q], lambda Q: [dequantize(Q)])
        step = (X.max(axis=1) - X.min(axis=1)) / 255 if d else np.zeros(n)
        assert np.all(np.abs(dequantize(Q) - X) <= step[:, None] / 2 + 1e-5)

    def test_a_constant_row_reads_back_exactly(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.full((2, 4), 1.25, np.float32))
        workspace.RunOperatorOnce(
            core.CreateOperator("FloatToFused8BitRowwiseQuantized", ["X"], ["Q"])
        )
        workspace.RunOperatorOnce(
            core.CreateOperator("Fused8BitRowwiseQuantizedToFloat", ["Q"], ["Y"])
        )
        np.testing.assert_array_equal(workspace.FetchBlob("Y"), np.full((2, 4), 1.25))

    @given(
        op_type=st.sampled_from(sorted(SLS)),
        lengths=st.lists(st.integers(0, 4), min_size=1, max_size=5),
        index_type=st.sampled_from([np.int32, np.int64]),
        seed=st.integers(0, 100),
    )
    @settings(deadline=None, max_examples=20)
    def test_sparse_lengths_reductions(self, op_type, lengths, index_type, seed):
        rng = np.random.RandomState(seed)
        table = quantize(rng.randn(6, 5).astype(np.float32))
        lengths = np.array(lengths, np.int32)
        indices = rng.randint(0, 6, lengths.sum()).astype(index_type)
        kind = SLS[op_type]
        if kind == "weighted":
            weights = rng.rand(lengths.sum()).astype(np.float32)
            inputs, names = [table, weights, indices, lengths], ["T", "W", "I", "L"]
            ref = lambda t, w, i, l: [sls(kind, t, l, i, w)]  # noqa: E731
        else:
            inputs, names = [table, indices, lengths], ["T", "I", "L"]
            ref = lambda t, i, l: [sls(kind, t, l, i)]  # noqa: E731
        op = core.CreateOperator(op_type, names, ["Y"])
        self.assertReferenceChecks(CPU, op, inputs, ref, threshold=1e-4)
        assert core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])[0] == []


@pytest.mark.parametrize(
    "table,indices,lengths,message",
    [
        (np.zeros((3, 12), np.float32), [0], [1], "DATA must be a 2-d uint8 tensor of fused rows"),
        (np.zeros((3, 7), np.uint8), [0], [1], "DATA must be a 2-d uint8 tensor of fused rows"),
        (np.zeros((3, 12), np.uint8), [3], [1], "index 3 at position 0 out of range for DATA"),
        (np.zeros((3, 12), np.uint8), [0, 1], [1], "LENGTHS add up to 1 but there are 2 INDICES"),
    ],
)
def test_bad_inputs_are_clear_errors(table, indices, lengths, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("T", table)
    workspace.FeedBlob("I", np.array(indices, np.int64))
    workspace.FeedBlob("L", np.array(lengths, np.int32))
    op = core.CreateOperator("SparseLengthsSumFused8BitRowwise", ["T", "I", "L"], ["Y"])
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


def test_quantizing_a_non_matrix_is_refused():
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.zeros(4, np.float32))
    op = core.CreateOperator("FloatToFused8BitRowwiseQuantized", ["X"], ["Q"])
    with pytest.raises(RuntimeError, match="input must be a 2-d float tensor"):
        workspace.RunOperatorOnce(op)


@needs_gpu
def test_device_check():
    rng = np.random.RandomState(0)
    X = rng.randn(5, 6).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("FloatToFused8BitRowwiseQuantized", ["X"], ["Q"]), [X])
    Q = quantize(X)
    check_cpu_gpu(core.CreateOperator("Fused8BitRowwiseQuantizedToFloat", ["Q"], ["Y"]), [Q])
    lengths, indices = np.array([2, 0, 3], np.int32), np.array([4, 0, 1, 1, 3], np.int64)
    weights = rng.rand(5).astype(np.float32)
    for op_type, kind in SLS.items():
        if kind == "weighted":
            inputs, names = [Q, weights, indices, lengths], ["T", "W", "I", "L"]
        else:
            inputs, names = [Q, indices, lengths], ["T", "I", "L"]
        check_cpu_gpu(core.CreateOperator(op_type, names, ["Y"]), inputs)
