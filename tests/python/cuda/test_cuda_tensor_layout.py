"""Device checks of the CUDA layout and shape ops (operators/shape/*.cu, *_cuda.cc): arguments,
element types, in-place forms, host/GPU placement of the small int inputs, errors and big tensors,
each against the CPU kernel. The basic case of every op is also in test_cuda_fallback_ops.py."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from cuda_test_util import CPU, check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_OPS = [
    "Transpose", "NHWC2NCHW", "NCHW2NHWC", "Concat", "DepthConcat", "Split", "DepthSplit",
    "Reshape", "Flatten", "FlattenToVec", "ResizeLike", "Squeeze", "ExpandDims", "StopGradient",
    "Cast", "Slice", "SliceGradient", "Tile", "TileGradient", "Gather", "Where",
]

pytestmark = needs_gpu
R = np.random.RandomState(1)
TP = caffe2_pb2.TensorProto


def values(dtype, *shape):
    """Random values of every element type (small integers, so every cast keeps them)."""
    if dtype == np.bool_:
        return np.asarray(R.rand(*shape) > 0.5)
    if np.issubdtype(dtype, np.floating):
        return np.asarray(R.rand(*shape) * 100).astype(dtype)
    return np.asarray(R.randint(0, 100, shape)).astype(dtype)


def blob_device_type(name):
    proto = caffe2_pb2.BlobProto()
    proto.ParseFromString(workspace.SerializeBlob(name))
    return proto.tensor.device_detail.device_type


def check_same_error(op, inputs, message, input_device_options=None):
    """The op fails on the CPU and on the GPU with the same message."""
    for device, on_host in ((CPU, {}), (gpu(), input_device_options or {})):
        workspace.ResetWorkspace()
        for name, value in zip(op.input, inputs):
            workspace.FeedBlob(name, value, on_host.get(name, device))
        op_on_device = core.CreateOperator(op.type, list(op.input), list(op.output),
                                           device_option=device, arg=list(op.arg))
        with pytest.raises(RuntimeError, match=message):
            workspace.RunOperatorOnce(op_on_device)


ALL_TYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int16, np.int8,
             np.uint16, np.uint8, np.bool_]

# ---- Transpose and the layout switches ----


@pytest.mark.parametrize("shape,axes", [
    ((5,), None), ((3, 4), None), ((3, 4), [1, 0]), ((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [0, 2, 1]),
    ((2, 3, 4), [1, 0, 2]), ((2, 3, 4, 5), [3, 1, 0, 2]), ((2, 1, 3, 1, 4), [4, 3, 2, 1, 0]),
    ((2, 3, 4), [-1, 0, 1]), ((2, 3, 2, 3, 2, 3), [5, 3, 1, 4, 2, 0]), ((3, 0, 2), [2, 1, 0]),
    ((), None),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_, np.uint8])
def test_transpose_axes_ranks_and_types(shape, axes, dtype):
    args = {} if axes is None else dict(axes=axes)
    op = core.CreateOperator("Transpose", ["x"], ["y"], **args)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, axes))


@pytest.mark.parametrize("shape,axes", [
    ((64, 96), [1, 0]),  # a tiled 2-D transpose with ragged edges
    ((4, 50, 70), [0, 2, 1]),  # batched
    ((3, 40, 40, 33), [0, 3, 1, 2]),  # NHWC -> NCHW, many channels
    ((2, 17, 300, 8), [2, 1, 0, 3]),  # rows of 8 move together
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_transpose_large(shape, axes, dtype):
    op = core.CreateOperator("Transpose", ["x"], ["y"], axes=axes)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, axes))


def test_transpose_gradient_and_errors():
    op = core.CreateOperator("Transpose", ["x"], ["y"], axes=[1, 2, 0])
    check_gradient_cpu_gpu(op, [values(np.float32, 2, 3, 4)])
    check_same_error(core.CreateOperator("Transpose", ["x"], ["y"], axes=[0, 0, 1]),
                     [values(np.float32, 2, 3, 4)], "not a permutation")
    check_same_error(core.CreateOperator("Transpose", ["x"], ["y"], axes=[1, 0]),
                     [values(np.float32, 2, 3, 4)], "axes has 2 entries but X has 3 dims")


@pytest.mark.parametrize("op_type,perm", [("NHWC2NCHW", (0, 3, 1, 2)), ("NCHW2NHWC", (0, 2, 3, 1))])
@pytest.mark.parametrize("shape", [(2, 5, 6, 3), (2, 9, 11, 64), (1, 1, 1, 1), (2, 0, 3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_order_switch(op_type, perm, shape, dtype):
    op = core.CreateOperator(op_type, ["x"], ["y"])
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.transpose(x, perm))


def test_order_switch_gradient_and_rank_error():
    for op_type in ("NHWC2NCHW", "NCHW2NHWC"):
        check_gradient_cpu_gpu(core.CreateOperator(op_type, ["x"], ["y"]),
                               [values(np.float32, 2, 20, 18, 17)])
        check_same_error(core.CreateOperator(op_type, ["x"], ["y"]), [values(np.float32, 2, 3, 4)],
                         r"X must be 4-D, got \(2, 3, 4\)")


# ---- Concat and Split ----


@pytest.mark.parametrize("shapes,args", [
    ([(2, 3), (2, 4), (2, 1)], dict(axis=1)),
    ([(2, 3), (5, 3)], dict(axis=0)),
    ([(2, 3, 4), (2, 3, 6)], dict(axis=-1)),
    ([(2, 4, 3, 3), (2, 4, 3, 3), (2, 4, 3, 3)], dict(order="NHWC")),
    ([(2, 3, 5), (2, 3, 5)], dict(axis=1, add_axis=1)),
    ([(2, 3, 5), (2, 3, 5), (2, 3, 5)], dict(axis=3, add_axis=1)),
    ([(2, 0, 4), (2, 3, 4)], dict(axis=1)),
    ([(7,)], dict(axis=0)),
    ([(64, 1000), (64, 24)], dict(axis=1)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_concat_axes_and_types(shapes, args, dtype):
    names = ["x%d" % i for i in range(len(shapes))]
    op = core.CreateOperator("Concat", names, ["y", "split_info"], **args)
    xs = [values(dtype, *s) for s in shapes]
    out = check_cpu_gpu(op, xs, rtol=0, atol=0)
    assert out[1].dtype == np.int32
    if args.get("add_axis"):
        np.testing.assert_array_equal(out[0], np.stack(xs, axis=args["axis"]))
        np.testing.assert_array_equal(out[1], [1] * len(xs))


@pytest.mark.parametrize("shape,args,n", [
    ((2, 7), dict(axis=1, split=[3, 4]), 2),
    ((6, 3), dict(axis=0), 3),
    ((2, 3, 8), dict(axis=-1, split=[2, 0, 6]), 3),
    ((2, 3, 3, 4), dict(order="NHWC", split=[1, 3]), 2),
    ((2, 3, 5), dict(axis=1, add_axis=1), 3),
    ((64, 1024), dict(axis=1, split=[1000, 24]), 2),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_split_axes_and_types(shape, args, n, dtype):
    op = core.CreateOperator("Split", ["x"], ["y%d" % i for i in range(n)], **args)
    check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)


@pytest.mark.parametrize("sizes_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("sizes_on_host", [True, False])
def test_split_sizes_as_input(sizes_dtype, sizes_on_host):
    op = core.CreateOperator("DepthSplit", ["x", "sizes"], ["a", "b", "c"], axis=1)
    check_cpu_gpu(op, [values(np.float32, 2, 9, 3), np.array([2, 3, 4], sizes_dtype)],
                  input_device_options={"sizes": CPU} if sizes_on_host else {})


def test_concat_split_gradients_round_trip():
    check_gradient_cpu_gpu(core.CreateOperator("Concat", ["a", "b"], ["y", "info"], axis=2),
                           [values(np.float32, 2, 3, 4), values(np.float32, 2, 3, 5)])
    check_gradient_cpu_gpu(core.CreateOperator("DepthConcat", ["a", "b"], ["y", "info"]),
                           [values(np.float32, 2, 3, 4), values(np.float32, 2, 1, 4)])
    check_gradient_cpu_gpu(core.CreateOperator("Split", ["x"], ["a", "b"], axis=0, split=[1, 3]),
                           [values(np.float32, 4, 5)])


def test_concat_split_errors():
    check_same_error(core.CreateOperator("Concat", ["a", "b"], ["y", "i"], axis=1),
                     [values(np.float32, 2, 3), values(np.float32, 3, 3)],
                     "does not match input 0")
    check_same_error(core.CreateOperator("Concat", ["a", "b"], ["y", "i"], axis=1),
                     [values(np.float32, 2, 3), values(np.int32, 2, 3)],
                     "input 1 is int but input 0 is float")
    check_same_error(core.CreateOperator("Concat", ["a"], ["y", "i"], axis=2),
                     [values(np.float32, 2, 3)], "axis 2 out of range for a 2-d input")
    check_same_error(core.CreateOperator("Split", ["x"], ["a", "b"], axis=1, split=[1, 1]),
                     [values(np.float32, 2, 3)], "split sizes add up to 2")
    check_same_error(core.CreateOperator("Split", ["x"], ["a", "b"], axis=1),
                     [values(np.float32, 2, 3)], "into 2 equal parts")


@gpu_semantics
def test_concat_split_info_lives_on_the_host():
    workspace.ResetWorkspace()
    workspace.FeedBlob("a", values(np.float32, 2, 3), gpu())
    workspace.FeedBlob("b", values(np.float32, 2, 5), gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Concat", ["a", "b"], ["y", "info"], axis=1,
                                                  device_option=gpu()))
    assert blob_device_type("y") == caffe2_pb2.CUDA
    assert blob_device_type("info") == caffe2_pb2.CPU
    # The gradient's Split reads the sizes from the host.
    workspace.RunOperatorOnce(core.CreateOperator("Split", ["y", "info"], ["a2", "b2"], axis=1,
                                                  device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("b2"), workspace.FetchBlob("b"))


# ---- Reshape, Flatten, ResizeLike, Squeeze, ExpandDims, StopGradient ----


@pytest.mark.parametrize("shape,new_shape", [
    ((2, 3, 4), [6, -1]), ((2, 3, 4), [0, -1]), ((2, 3, 4), [4, 0, 2]), ((6,), [1, 2, 1, 3]),
    ((2, 0, 3), [0, -1, 3]), ((1, 1), [1]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_reshape_shapes(shape, new_shape, dtype):
    op = core.CreateOperator("Reshape", ["x"], ["y", "old_shape"], shape=new_shape)
    out = check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)
    assert out[1].dtype == np.int64
    np.testing.assert_array_equal(out[1], shape)


@pytest.mark.parametrize("shape_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape_on_host", [True, False])
def test_reshape_shape_as_input_and_in_place(shape_dtype, shape_on_host):
    op = core.CreateOperator("Reshape", ["x", "s"], ["x", "old"])
    check_cpu_gpu(op, [values(np.float32, 4, 6), np.array([3, -1, 2], shape_dtype)],
                  input_device_options={"s": CPU} if shape_on_host else {})


def test_reshape_gradient_and_errors():
    check_gradient_cpu_gpu(core.CreateOperator("Reshape", ["x"], ["y", "old"], shape=[-1, 4]),
                           [values(np.float32, 2, 3, 4)])
    check_same_error(core.CreateOperator("Reshape", ["x"], ["y", "old"], shape=[5, -1]),
                     [values(np.float32, 2, 3)], r"cannot reshape \(2, 3\) \(6 elements\)")
    check_same_error(core.CreateOperator("Reshape", ["x", "s"], ["y", "old"]),
                     [values(np.float32, 2, 3), np.array([-1, -1], np.int64)],
                     "has more than one -1", input_device_options={"s": CPU})


@gpu_semantics
def test_reshape_in_place_keeps_the_gpu_storage_and_old_shape_lives_on_the_host():
    x = values(np.float32, 4, 6)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Reshape", ["x"], ["x", "old"], shape=[2, 12],
                                                  device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x.reshape(2, 12))
    assert blob_device_type("x") == caffe2_pb2.CUDA
    assert blob_device_type("old") == caffe2_pb2.CPU
    np.testing.assert_array_equal(workspace.FetchBlob("old"), [4, 6])


@pytest.mark.parametrize("op", [
    core.CreateOperator("Flatten", ["x"], ["y"]),
    core.CreateOperator("Flatten", ["x"], ["y"], axis=0),
    core.CreateOperator("Flatten", ["x"], ["y"], axis=3),
    core.CreateOperator("FlattenToVec", ["x"], ["y"]),
    core.CreateOperator("Squeeze", ["x"], ["y"], dims=[1, 3, 1]),
    core.CreateOperator("Squeeze", ["x"], ["x"], dims=[3]),
    core.CreateOperator("ExpandDims", ["x"], ["y"], dims=[0, 5]),
    core.CreateOperator("ExpandDims", ["x"], ["x"], dims=[2]),
    core.CreateOperator("StopGradient", ["x"], ["y"]),
    core.CreateOperator("StopGradient", ["x"], ["x"]),
], ids=lambda op: op.type + ("_in_place" if op.input[0] in op.output else ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_dims_only_ops(op, dtype):
    out = check_cpu_gpu(op, [values(dtype, 2, 1, 3, 1)], rtol=0, atol=0)
    assert out[0].size == 6


def test_resize_like_and_in_place():
    check_cpu_gpu(core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
                  [values(np.int32, 6, 4), values(np.float32, 2, 3, 4)], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("ResizeLike", ["x", "like"], ["x"]),
                  [values(np.float16, 6, 4), values(np.float32, 24)], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
                  [values(np.float32, 6, 4), values(np.float32, 4, 6)],
                  input_device_options={"like": CPU})
    check_same_error(core.CreateOperator("ResizeLike", ["x", "like"], ["y"]),
                     [values(np.float32, 6, 4), values(np.float32, 5)], "has 24 elements")


def test_dims_only_gradients_and_errors():
    x = values(np.float32, 2, 1, 3)
    check_gradient_cpu_gpu(core.CreateOperator("Flatten", ["x"], ["y"], axis=2), [x])
    check_gradient_cpu_gpu(core.CreateOperator("FlattenToVec", ["x"], ["y"]), [x])
    check_gradient_cpu_gpu(core.CreateOperator("Squeeze", ["x"], ["y"], dims=[1]), [x])
    check_gradient_cpu_gpu(core.CreateOperator("ExpandDims", ["x"], ["y"], dims=[0, 4]), [x])
    check_same_error(core.CreateOperator("Squeeze", ["x"], ["y"], dims=[2]), [x],
                     "only size-1 dims can be squeezed")
    check_same_error(core.CreateOperator("Flatten", ["x"], ["y"], axis=4), [x],
                     "axis 4 out of range")


# ---- Cast ----


@pytest.mark.parametrize("src", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("to", [TP.FLOAT, TP.DOUBLE, TP.FLOAT16, TP.INT32, TP.INT64, TP.INT16,
                                TP.INT8, TP.UINT16, TP.UINT8, TP.BYTE, TP.BOOL],
                         ids=lambda t: TP.DataType.Name(t))
def test_cast_type_pairs(src, to):
    # Values every target type holds (negatives only for signed targets: a negative value cast
    # to an unsigned type is undefined in C++ and differs between the devices).
    x = values(src, 3, 5)
    unsigned_target = to in (TP.UINT16, TP.UINT8, TP.BYTE)
    if np.issubdtype(src, np.floating):
        x[0, :4] = [0, 0.5, -0.75, 99.5]  # truncation towards zero, a false bool
        if not unsigned_target:
            x[1, 0] = -42.9
    if src in (np.int32, np.int64, np.int16, np.int8):
        x[0, :2] = [0 if unsigned_target else -3, 0]
    op = core.CreateOperator("Cast", ["x"], ["y"], to=to)
    check_cpu_gpu(op, [x], rtol=0, atol=0)


def test_cast_by_name_in_place_and_gradient():
    x = values(np.float32, 4, 5) - 50
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["x"], to="int32"), [x], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["x"], to="FLOAT16"), [x], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["y"], to=TP.DOUBLE),
                  [values(np.float32, 300, 257)], rtol=0, atol=0)
    check_gradient_cpu_gpu(core.CreateOperator("Cast", ["x"], ["y"], to=TP.DOUBLE,
                                               from_type=TP.FLOAT), [x])


def test_cast_float16_rounding_matches_cpu():
    # Ties, subnormals, overflow and values that round differently through double and float.
    x = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65520, 1e6, -1e-7, 6e-8, 2 ** -25,
                  1 / 3, np.inf, -np.inf, np.nan], np.float64)
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["y"], to=TP.FLOAT16), [x], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["y"], to=TP.FLOAT16),
                  [x.astype(np.float32)], rtol=0, atol=0)


# ---- Slice ----


@pytest.mark.parametrize("shape,starts,ends", [
    ((4, 5), [1, 0], [3, -1]),
    ((4, 5), [0, 2], [-1, -2]),
    ((4, 5, 6), [1, -4], [-2, -1]),
    ((3, 4, 5), [0, 0, 1], [3, 4, 4]),
    ((3, 4, 5), [2], [2]),
    ((100, 300), [7, 13], [90, 290]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_slice_ranges_and_types(shape, starts, ends, dtype):
    op = core.CreateOperator("Slice", ["x"], ["y"], starts=starts, ends=ends)
    check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("on_host", [True, False])
def test_slice_ranges_as_inputs_and_gradient(index_dtype, on_host):
    op = core.CreateOperator("Slice", ["x", "starts", "ends"], ["y"])
    inputs = [values(np.float32, 4, 5, 3), np.array([1, -4], index_dtype),
              np.array([-1, 4], index_dtype)]
    where = {"starts": CPU, "ends": CPU} if on_host else {}
    check_cpu_gpu(op, inputs, input_device_options=where)
    check_gradient_cpu_gpu(op, inputs)


def test_slice_gradient_and_errors():
    check_gradient_cpu_gpu(core.CreateOperator("Slice", ["x"], ["y"], starts=[1, 2], ends=[3, -2]),
                           [values(np.float32, 4, 6)])
    check_same_error(core.CreateOperator("Slice", ["x"], ["y"], starts=[3], ends=[2]),
                     [values(np.float32, 4, 6)], r"slice \[3, 2\) of dim 0 is out of range")
    check_same_error(core.CreateOperator("SliceGradient", ["x", "dy"], ["dx"], starts=[0],
                                         ends=[2]),
                     [values(np.float32, 4, 6), values(np.float32, 3, 6)],
                     "does not match the slice")


# ---- Tile ----


@pytest.mark.parametrize("shape,tiles,axis", [
    ((2, 3), 2, 1), ((2, 3), 3, 0), ((2, 3, 4), 4, -1), ((2, 3, 4), 1, 1), ((2, 3), 0, 1),
    ((5,), 7, 0), ((8, 1), 300, 1),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_tile(shape, tiles, axis, dtype):
    op = core.CreateOperator("Tile", ["x"], ["y"], tiles=tiles, axis=axis)
    x = values(dtype, *shape)
    out = check_cpu_gpu(op, [x], rtol=0, atol=0)
    reps = [1] * len(shape)
    reps[axis] = tiles
    np.testing.assert_array_equal(out[0], np.tile(x, reps))


@pytest.mark.parametrize("on_host", [True, False])
def test_tile_params_as_inputs_and_gradients(on_host):
    op = core.CreateOperator("Tile", ["x", "tiles", "axis"], ["y"])
    inputs = [values(np.float32, 3, 4, 2), np.array([3], np.int32), np.array([1], np.int64)]
    where = {"tiles": CPU, "axis": CPU} if on_host else {}
    check_cpu_gpu(op, inputs, input_device_options=where)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(core.CreateOperator("Tile", ["x"], ["y"], tiles=50, axis=0),
                           [values(np.float32, 3, 7)], rtol=1e-6, atol=1e-6)
    check_same_error(core.CreateOperator("TileGradient", ["dy"], ["dx"], tiles=4, axis=0),
                     [values(np.float32, 6, 2)], "is not a multiple of tiles 4")


# ---- Gather ----


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("data_shape,index_shape", [
    ((5, 3), (4,)), ((5,), (2, 3)), ((6, 2, 3), (2, 2)), ((10, 7), (0,)), ((1000, 64), (300,)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_])
def test_gather(index_dtype, data_shape, index_shape, dtype):
    op = core.CreateOperator("Gather", ["data", "indices"], ["out"])
    data = values(dtype, *data_shape)
    indices = R.randint(0, data_shape[0], index_shape).astype(index_dtype)
    out = check_cpu_gpu(op, [data, indices], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], data[indices])


def test_gather_indices_on_the_host_and_errors():
    op = core.CreateOperator("Gather", ["data", "indices"], ["out"])
    data = values(np.float32, 6, 5)
    check_cpu_gpu(op, [data, np.array([5, 0, 5], np.int64)], input_device_options={"indices": CPU})
    check_same_error(op, [data, np.array([1, 6], np.int64)],
                     r"index 6 at position 1 out of range for DATA \(6, 5\)",
                     input_device_options={"indices": CPU})
    check_same_error(op, [data, np.array([1.0], np.float32)], "INDICES must be an int32 or int64")
    check_same_error(op, [np.array(3.0, np.float32), np.array([0], np.int32)],
                     "DATA must have at least one dimension")


@gpu_semantics
def test_gather_out_of_range_indices_on_the_gpu_give_zero_rows():
    workspace.ResetWorkspace()
    data = values(np.float32, 4, 3) + 1
    workspace.FeedBlob("data", data, gpu())
    workspace.FeedBlob("indices", np.array([2, 4, -1, 0], np.int32), gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Gather", ["data", "indices"], ["out"],
                                                  device_option=gpu()))
    out = workspace.FetchBlob("out")
    np.testing.assert_array_equal(out[[0, 3]], data[[2, 0]])
    np.testing.assert_array_equal(out[[1, 2]], np.zeros((2, 3), np.float32))


# ---- Where ----


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int64, np.uint8,
                                   np.bool_])
@pytest.mark.parametrize("shape,on_rows", [((3, 4), False), ((5, 2, 3), True), ((7,), True),
                                           ((200, 300), False)])
def test_where(dtype, shape, on_rows):
    c = R.rand(*(shape[:1] if on_rows else shape)) > 0.5
    x, y = values(dtype, *shape), values(dtype, *shape)
    args = dict(broadcast_on_rows=1) if on_rows else {}
    out = check_cpu_gpu(core.CreateOperator("Where", ["c", "x", "y"], ["z"], **args), [c, x, y],
                        rtol=0, atol=0)
    mask = c.reshape(c.shape + (1,) * (len(shape) - c.ndim))
    np.testing.assert_array_equal(out[0], np.where(mask, x, y))


def test_where_in_place_and_errors():
    c = R.rand(4, 3) > 0.5
    x, y = values(np.float32, 4, 3), values(np.float32, 4, 3)
    check_cpu_gpu(core.CreateOperator("Where", ["c", "x", "y"], ["x"]), [c, x, y])
    check_cpu_gpu(core.CreateOperator("Where", ["c", "x", "y"], ["y"]), [c, x, y])
    check_same_error(core.CreateOperator("Where", ["c", "x", "y"], ["z"]),
                     [c.astype(np.int32), x, y], "C must be a bool tensor")
    check_same_error(core.CreateOperator("Where", ["c", "x", "y"], ["z"], broadcast_on_rows=1),
                     [c, x, y], "must hold one value per row")


# ---- the device rules ----


@gpu_semantics
def test_kernel_inputs_must_live_on_the_gpu():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", values(np.float32, 2, 3), CPU)
    with pytest.raises(RuntimeError, match="X must live on the op's device CUDA:0"):
        workspace.RunOperatorOnce(core.CreateOperator("Transpose", ["x"], ["y"],
                                                      device_option=gpu()))
    # The dims-only ops copy from anywhere; in place they leave X where it lives.
    workspace.RunOperatorOnce(core.CreateOperator("Flatten", ["x"], ["y"], device_option=gpu()))
    assert blob_device_type("y") == caffe2_pb2.CUDA
    workspace.RunOperatorOnce(core.CreateOperator("Reshape", ["x"], ["x", "old"], shape=[3, 2],
                                                  device_option=gpu()))
    assert blob_device_type("x") == caffe2_pb2.CPU
    assert workspace.FetchBlob("x").shape == (3, 2)


def test_a_net_of_layout_ops_matches_the_cpu():
    """One simple net (device syncs deferred to its end on a GPU): shapes and sizes computed by
    earlier ops on the device are read back by later ones through host copies."""
    x = values(np.float32, 2, 6, 4, 5)
    results = []
    for device in (CPU, gpu()):
        workspace.ResetWorkspace()
        workspace.FeedBlob("x", x, device)
        net = core.Net("layout")
        with core.DeviceScope(device):
            net.NCHW2NHWC(["x"], ["nhwc"])
            net.Transpose(["nhwc"], ["t"], axes=[0, 3, 1, 2])
            net.Split(["t"], ["s0", "s1"], axis=1, split=[2, 4])
            net.Concat(["s1", "s0"], ["cat", "cat_info"], axis=1)
            net.Shape(["s1"], ["s1_shape"])  # a GPU fallback op: the shape lands on the GPU
            net.FlattenToVec(["s1"], ["s1_flat"])
            net.Reshape(["s1_flat", "s1_shape"], ["r", "r_old"])
            net.Slice(["cat"], ["sl"], starts=[0, 1, 0, 2], ends=[-1, 5, 3, -1])
            net.Tile(["sl"], ["tl"], tiles=3, axis=2)
            net.Cast(["tl"], ["half"], to=TP.FLOAT16)
            net.Cast(["tl"], ["ints"], to=TP.INT64)
            net.Transpose(["cat"], ["rows"], axes=[1, 0, 2, 3])
            net.Gather(["rows", "cat_info"], ["g_host_indices"])
            net.Gather(["rows", "s1_shape"], ["g_gpu_indices"])
            net.FlattenToVec(["half"], ["flat"])
        workspace.RunNetOnce(net)
        results.append({name: workspace.FetchBlob(name) for name in
                        ("cat", "cat_info", "r", "r_old", "flat", "ints", "g_host_indices",
                         "g_gpu_indices")})
    for name in results[0]:
        np.testing.assert_array_equal(results[1][name], results[0][name], err_msg=name)
