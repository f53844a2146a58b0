"""One table row per op: each op on the GPU against the CPU, and its gradient where it has one. The
table began with the CUDA registrations that run CPU kernels (GPUFallbackOp); many of its ops
have their own kernels now, and the rows check those the same way. Also outputs of a fallback
living on the GPU, in-place fallbacks, and UniqueUniformFill and Print on a GPU op."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from device_check import CPU, check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "LearningRate",
    "Accuracy",
    "SoftmaxWithLoss",
    "LabelCrossEntropy",
    "AveragedLoss",
    "CrossEntropy",
    "SpatialSoftmaxWithLoss",
    "SquaredL2Distance",
    "SumReduceLike",
    "DivGradient",
    "Pow",
    "Mean",
    "Max",
    "Min",
    "ElementwiseLinear",
    "PRelu",
    "SumElements",
    "SumSqrElements",
    "ReduceSum",
    "ReduceMean",
    "ReduceFrontSum",
    "ReduceFrontMean",
    "ReduceBackSum",
    "ReduceBackMean",
    "Reshape",
    "Shape",
    "Size",
    "Flatten",
    "FlattenToVec",
    "ResizeLike",
    "Squeeze",
    "ExpandDims",
    "StopGradient",
    "Transpose",
    "NHWC2NCHW",
    "NCHW2NHWC",
    "Concat",
    "DepthConcat",
    "Split",
    "DepthSplit",
    "Slice",
    "Tile",
    "Cast",
    "Gather",
    "ArgMax",
    "ArgMin",
    "TopK",
    "OneHot",
    "Where",
    "TopKGradient",
    "SparseToDense",
    "LengthsRangeFill",
    "LengthsSum",
    "LengthsMean",
    "LengthsWeightedSum",
    "SparseLengthsSum",
    "SparseLengthsMean",
    "SparseLengthsWeightedSum",
    "LengthsWeightedSumGradient",
    "SparseLengthsIndicesInGradientSumGradient",
    "SparseLengthsIndicesInGradientMeanGradient",
    "SparseLengthsIndicesInGradientWeightedSumGradient",
    "SparseMomentumSGDUpdate",
    "ScatterWeightedSum",
    "SparseAdagrad",
    "RowWiseSparseAdagrad",
    "SparseAdam",
    "RowWiseSparseAdam",
    "MatMul",
    "BatchMatMul",
    "Adam",
    "Adagrad",
    "RmsProp",
    "WeightedSumGradient",
    "ConvTranspose",
    "LpPool",
    "InstanceNorm",
    "LayerNorm",
    "ChannelStats",
    "ChannelBackpropStats",
    "AveragedLossGradient",
    "ConvTransposeGradient",
    "CrossEntropyGradient",
    "ElementwiseLinearGradient",
    "InstanceNormGradient",
    "LabelCrossEntropyGradient",
    "LayerNormGradient",
    "LengthsIndicesInGradientSumGradient",
    "LengthsMeanGradient",
    "LpPoolGradient",
    "MaxGradient",
    "MeanGradient",
    "MinGradient",
    "PReluGradient",
    "ReduceBackMeanGradient",
    "ReduceBackSumGradient",
    "ReduceFrontMeanGradient",
    "ReduceFrontSumGradient",
    "SliceGradient",
    "SoftmaxWithLossGradient",
    "SpatialSoftmaxWithLossGradient",
    "SquaredL2DistanceGradient",
    "SumElementsGradient",
    "TileGradient",
    "UniqueUniformFill",
    "Print",
]

R = np.random.RandomState(0)


def f32(*shape):
    return R.randn(*shape).astype(np.float32)


def pos(*shape):
    return (R.rand(*shape) + 0.1).astype(np.float32)


def labels(n, classes):
    return R.randint(0, classes, n).astype(np.int32)


def probs(n, d):
    p = pos(n, d)
    return p / p.sum(axis=1, keepdims=True)


INT64 = caffe2_pb2.TensorProto.INT64

# (op type, inputs, outputs (a count, or names for in-place ops), args, input names kept on the
# host, check gradient)
CASES = [
    (
        "LearningRate",
        [np.array([25], np.int64)],
        1,
        dict(base_lr=0.1, policy="step", stepsize=10, gamma=0.5),
        ["i0"],
        False,
    ),
    ("Accuracy", [f32(8, 5), labels(8, 5)], 1, {}, [], False),
    ("SoftmaxWithLoss", [f32(6, 7), labels(6, 7)], 2, {}, [], True),
    ("LabelCrossEntropy", [probs(6, 4), labels(6, 4)], 1, {}, [], True),
    ("AveragedLoss", [f32(5, 3)], 1, {}, [], True),
    ("CrossEntropy", [probs(4, 3), probs(4, 3)], 1, {}, [], True),
    (
        "SpatialSoftmaxWithLoss",
        [f32(2, 3, 4, 4), R.randint(0, 3, (2, 4, 4)).astype(np.int32)],
        2,
        {},
        [],
        True,
    ),
    ("SquaredL2Distance", [f32(4, 6), f32(4, 6)], 1, {}, [], True),
    ("SumReduceLike", [f32(2, 3, 4), f32(3, 4)], 1, {}, [], False),
    ("DivGradient", [pos(3, 4), f32(3, 4), f32(3, 4)], 2, {}, [], False),
    ("Pow", [pos(3, 4)], 1, dict(exponent=2.5), [], True),
    ("Mean", [f32(3, 4), f32(3, 4)], 1, {}, [], True),
    ("Max", [f32(3, 4), f32(3, 4)], 1, {}, [], True),
    ("Min", [f32(3, 4), f32(3, 4)], 1, {}, [], True),
    ("ElementwiseLinear", [f32(4, 5), f32(5), f32(5)], 1, {}, [], True),
    ("PRelu", [f32(2, 3, 4, 4), pos(3)], 1, {}, [], True),
    ("SumElements", [f32(3, 5)], 1, dict(average=1), [], True),
    ("SumSqrElements", [f32(3, 5)], 1, {}, [], False),
    ("ReduceSum", [f32(2, 3, 4)], 1, dict(axes=[1], keepdims=0), [], False),
    ("ReduceMean", [f32(2, 3, 4)], 1, dict(axes=[0, 2]), [], False),
    ("ReduceFrontSum", [f32(2, 3, 4)], 1, {}, [], True),
    ("ReduceFrontMean", [f32(2, 3, 4)], 1, dict(num_reduce_dim=2), [], True),
    ("ReduceBackSum", [f32(2, 3, 4)], 1, {}, [], True),
    ("ReduceBackMean", [f32(2, 3, 4)], 1, {}, [], True),
    ("Reshape", [f32(2, 3, 4)], 2, dict(shape=[6, -1]), [], True),
    ("Shape", [f32(2, 3, 4)], 1, {}, [], False),
    ("Size", [f32(2, 3, 4)], 1, {}, [], False),
    ("Flatten", [f32(2, 3, 4)], 1, {}, [], True),
    ("FlattenToVec", [f32(2, 3, 4)], 1, {}, [], True),
    ("ResizeLike", [f32(6, 4), f32(2, 3, 4)], 1, {}, [], False),
    ("Squeeze", [f32(2, 1, 3)], 1, dict(dims=[1]), [], True),
    ("ExpandDims", [f32(2, 3)], 1, dict(dims=[0]), [], True),
    ("StopGradient", [f32(2, 3)], 1, {}, [], False),
    ("Transpose", [f32(2, 3, 4)], 1, dict(axes=[2, 0, 1]), [], True),
    ("NHWC2NCHW", [f32(2, 3, 4, 5)], 1, {}, [], True),
    ("NCHW2NHWC", [f32(2, 3, 4, 5)], 1, {}, [], True),
    ("Concat", [f32(2, 3), f32(2, 4)], 2, dict(axis=1), [], True),
    ("DepthConcat", [f32(2, 3, 2, 2), f32(2, 1, 2, 2)], 2, {}, [], True),
    ("Split", [f32(2, 7)], 2, dict(split=[3, 4], axis=1), [], True),
    ("DepthSplit", [f32(2, 4, 3, 3)], 2, dict(split=[1, 3]), [], True),
    ("Slice", [f32(4, 5)], 1, dict(starts=[1, 0], ends=[3, -1]), [], True),
    ("Tile", [f32(2, 3)], 1, dict(tiles=2, axis=1), [], True),
    ("Cast", [f32(3, 4) * 10], 1, dict(to=caffe2_pb2.TensorProto.INT32), [], False),
    ("Gather", [f32(5, 3), np.array([4, 0, 2, 2], np.int32)], 1, {}, [], False),
    ("ArgMax", [f32(3, 5)], 1, {}, [], False),
    ("ArgMin", [f32(3, 5)], 1, dict(axis=0), [], False),
    ("TopK", [f32(3, 5)], 2, dict(k=2), [], True),
    ("OneHot", [np.array([0, 3, 1], np.int64), np.array(5, np.int64)], 1, {}, ["i1"], False),
    ("Where", [R.rand(3, 4) > 0.5, f32(3, 4), f32(3, 4)], 1, {}, [], False),
    (
        "TopKGradient",
        [f32(3, 2), np.array([[0, 4], [1, 2], [3, 3]], np.int64), f32(3, 5)],
        1,
        {},
        [],
        False,
    ),
    ("SparseToDense", [np.array([0, 3, 3], np.int32), f32(3, 2)], 1, {}, [], False),
    ("LengthsRangeFill", [np.array([2, 0, 3], np.int32)], 1, {}, [], False),
    ("LengthsSum", [f32(5, 3), np.array([2, 0, 3], np.int32)], 1, {}, [], True),
    ("LengthsMean", [f32(5, 3), np.array([2, 0, 3], np.int32)], 1, {}, [], True),
    ("LengthsWeightedSum", [f32(5, 3), f32(5), np.array([2, 0, 3], np.int32)], 1, {}, [], False),
    (
        "SparseLengthsSum",
        [f32(6, 3), np.array([5, 0, 2, 2], np.int64), np.array([1, 3], np.int32)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseLengthsMean",
        [f32(6, 3), np.array([5, 0, 2, 2], np.int64), np.array([1, 3], np.int32)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseLengthsWeightedSum",
        [f32(6, 3), f32(4), np.array([5, 0, 2, 2], np.int64), np.array([1, 3], np.int32)],
        1,
        {},
        [],
        False,
    ),
    (
        "LengthsWeightedSumGradient",
        [f32(3, 3), f32(5), np.array([2, 0, 3], np.int32)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseLengthsIndicesInGradientSumGradient",
        [f32(2, 3), np.array([1, 3], np.int32), np.array([5, 0, 2, 2], np.int64)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseLengthsIndicesInGradientMeanGradient",
        [f32(2, 3), np.array([1, 3], np.int32), np.array([5, 0, 2, 2], np.int64)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseLengthsIndicesInGradientWeightedSumGradient",
        [f32(2, 3), f32(4), np.array([1, 3], np.int32), np.array([5, 0, 2, 2], np.int64)],
        1,
        {},
        [],
        False,
    ),
    (
        "SparseMomentumSGDUpdate",
        [f32(2, 3), f32(6, 3), np.array([0.1], np.float32), f32(6, 3), np.array([4, 1], np.int64)],
        ["o0", "i1", "i3"],
        dict(momentum=0.9),
        [],
        False,
    ),
    (
        "ScatterWeightedSum",
        [
            f32(6, 3),
            np.array([0.5], np.float32),
            np.array([4, 1], np.int64),
            f32(2, 3),
            np.array([2.0], np.float32),
        ],
        ["i0"],
        {},
        [],
        False,
    ),
    (
        "SparseAdagrad",
        [f32(6, 3), pos(6, 3), np.array([4, 1], np.int64), f32(2, 3), np.array([0.1], np.float32)],
        ["i0", "i1"],
        {},
        [],
        False,
    ),
    (
        "RowWiseSparseAdagrad",
        [f32(6, 3), pos(6), np.array([4, 1], np.int64), f32(2, 3), np.array([0.1], np.float32)],
        ["i0", "i1"],
        {},
        [],
        False,
    ),
    (
        "SparseAdam",
        [
            f32(6, 3),
            f32(6, 3),
            pos(6, 3),
            np.array([4, 1], np.int64),
            f32(2, 3),
            np.array([0.01], np.float32),
            np.array([3], np.int64),
        ],
        ["i0", "i1", "i2"],
        {},
        ["i6"],
        False,
    ),
    (
        "RowWiseSparseAdam",
        [
            f32(6, 3),
            f32(6, 3),
            pos(6),
            np.array([4, 1], np.int64),
            f32(2, 3),
            np.array([0.01], np.float32),
            np.array([3], np.int64),
        ],
        ["i0", "i1", "i2"],
        {},
        ["i6"],
        False,
    ),
    ("MatMul", [f32(3, 4), f32(4, 5)], 1, {}, [], True),
    ("BatchMatMul", [f32(2, 3, 4), f32(2, 4, 5)], 1, {}, [], True),
    (
        "Adam",
        [f32(6), f32(6), pos(6), f32(6), np.array([0.01], np.float32), np.array([3], np.int64)],
        3,
        {},
        ["i5"],
        False,
    ),
    ("Adagrad", [f32(6), pos(6), f32(6), np.array([0.01], np.float32)], 2, {}, [], False),
    ("RmsProp", [f32(6), pos(6), f32(6), np.array([0.01], np.float32)], 3, {}, [], False),
    (
        "WeightedSumGradient",
        [f32(3, 2), f32(3, 2), np.array([0.5], np.float32), f32(3, 2), np.array([2.0], np.float32)],
        2,
        {},
        [],
        False,
    ),
    (
        "ConvTranspose",
        [f32(2, 3, 5, 5), f32(3, 4, 3, 3), f32(4)],
        1,
        dict(kernel=3, stride=2),
        [],
        True,
    ),
    ("LpPool", [pos(2, 3, 6, 6)], 1, dict(kernel=2, stride=2, p=2.0), [], True),
    ("InstanceNorm", [f32(2, 3, 4, 5), pos(3), f32(3)], 1, {}, [], True),
    ("LayerNorm", [f32(3, 8)], 3, {}, [], True),
    ("ChannelStats", [f32(2, 3, 4, 4)], 2, {}, [], False),
    ("ChannelBackpropStats", [f32(2, 3, 4, 4), f32(3), pos(3), f32(2, 3, 4, 4)], 2, {}, [], False),
]

GRADIENT_TYPES = {  # gradient ops the checks above run on the GPU
    "SoftmaxWithLossGradient",
    "LabelCrossEntropyGradient",
    "AveragedLossGradient",
    "CrossEntropyGradient",
    "SpatialSoftmaxWithLossGradient",
    "SquaredL2DistanceGradient",
    "MeanGradient",
    "MaxGradient",
    "MinGradient",
    "ElementwiseLinearGradient",
    "PReluGradient",
    "SumElementsGradient",
    "ReduceFrontSumGradient",
    "ReduceFrontMeanGradient",
    "ReduceBackSumGradient",
    "ReduceBackMeanGradient",
    "SliceGradient",
    "TileGradient",
    "InstanceNormGradient",
    "LayerNormGradient",
    "LengthsIndicesInGradientSumGradient",
    "LengthsMeanGradient",
    "ConvTransposeGradient",
    "LpPoolGradient",
}

# test_device_check_coverage.py reads COVERED_CUDA_OPS without importing this module: keep it the
# table's op types, the gradient ops above and the ops of test_unique_uniform_fill_and_print.
assert set(COVERED_CUDA_OPS) == (
    {case[0] for case in CASES} | GRADIENT_TYPES | {"UniqueUniformFill", "Print"}
)


def _op(op_type, n_inputs, outputs, args):
    if isinstance(outputs, int):
        outputs = ["o%d" % i for i in range(outputs)]
    return core.CreateOperator(op_type, ["i%d" % i for i in range(n_inputs)], outputs, **args)


@needs_gpu
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_fallback_op_matches_cpu(case):
    op_type, inputs, n_outputs, args, on_host, with_gradient = case
    op = _op(op_type, len(inputs), n_outputs, args)
    check_cpu_gpu(
        op, inputs, rtol=1e-5, atol=1e-5, input_device_options={name: CPU for name in on_host}
    )
    if with_gradient:
        float_inputs = [i for i, x in enumerate(inputs) if x.dtype == np.float32]
        assert float_inputs
        check_gradient_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-5)


@needs_gpu
@gpu_semantics
def test_fallback_outputs_live_on_the_gpu_and_in_place_stays_in_place():
    x = f32(3, 4)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Pow", ["x"], ["x"], exponent=2.0, device_option=gpu())
    )
    np.testing.assert_allclose(workspace.FetchBlob("x"), x**2, rtol=1e-6)
    workspace.RunOperatorOnce(core.CreateOperator("Sqrt", ["x"], ["y"], device_option=gpu()))
    np.testing.assert_allclose(workspace.FetchBlob("y"), np.abs(x), rtol=1e-5)


@needs_gpu
def test_unique_uniform_fill_and_print():
    op = core.CreateOperator(
        "UniqueUniformFill",
        [],
        ["u"],
        min=0,
        max=20,
        shape=[10],
        dtype=caffe2_pb2.TensorProto.INT32,
        device_option=gpu(),
    )
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(op)
    u = workspace.FetchBlob("u")
    assert len(set(u.tolist())) == 10 and u.min() >= 0 and u.max() <= 20
    workspace.RunOperatorOnce(core.CreateOperator("Print", ["u"], [], device_option=gpu()))
