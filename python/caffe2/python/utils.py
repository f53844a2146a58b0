"""Helpers for arguments, tensors and protobuf text/binary conversion."""
import collections.abc
import copy
import functools
import pdb
import sys
import traceback

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError, Message

from caffe2.proto import caffe2_pb2

# TensorProto element types and the repeated field that holds their data.
_TENSOR_FIELDS = {
    caffe2_pb2.TensorProto.FLOAT: (np.float32, "float_data"),
    caffe2_pb2.TensorProto.DOUBLE: (np.float64, "double_data"),
    caffe2_pb2.TensorProto.INT32: (np.int32, "int32_data"),
    caffe2_pb2.TensorProto.INT16: (np.int16, "int32_data"),
    caffe2_pb2.TensorProto.UINT16: (np.uint16, "int32_data"),
    caffe2_pb2.TensorProto.INT8: (np.int8, "int32_data"),
    caffe2_pb2.TensorProto.UINT8: (np.uint8, "int32_data"),
    caffe2_pb2.TensorProto.BOOL: (np.bool_, "int32_data"),
    caffe2_pb2.TensorProto.INT64: (np.int64, "int64_data"),
}
_NUMPY_TO_TENSOR_TYPE = {
    np.dtype(dtype): data_type for data_type, (dtype, _) in _TENSOR_FIELDS.items()
}


def CaffeBlobToNumpyArray(blob):
    """Converts a Caffe (v1) BlobProto to a float32 numpy array."""
    if blob.num != 0:
        # Legacy 4-d blob.
        shape = (blob.num, blob.channels, blob.height, blob.width)
    else:
        shape = tuple(blob.shape.dim)
    return np.asarray(blob.data, dtype=np.float32).reshape(shape)


def Caffe2TensorToNumpyArray(tensor):
    """Converts a caffe2_pb2.TensorProto to a numpy array."""
    if tensor.data_type == caffe2_pb2.TensorProto.STRING:
        return np.asarray(list(tensor.string_data), dtype=object).reshape(tensor.dims)
    if tensor.data_type not in _TENSOR_FIELDS:
        raise RuntimeError("Tensor data type not supported yet: " + str(tensor.data_type))
    dtype, field = _TENSOR_FIELDS[tensor.data_type]
    return np.asarray(getattr(tensor, field), dtype=dtype).reshape(tensor.dims)


def NumpyArrayToCaffe2Tensor(arr, name=None):
    """Converts a numpy array to a caffe2_pb2.TensorProto."""
    tensor = caffe2_pb2.TensorProto()
    tensor.dims.extend(arr.shape)
    if name:
        tensor.name = name
    if arr.dtype not in _NUMPY_TO_TENSOR_TYPE:
        raise NotImplementedError("Don't know how to do conversion: " + str(arr.dtype))
    tensor.data_type = _NUMPY_TO_TENSOR_TYPE[arr.dtype]
    field = _TENSOR_FIELDS[tensor.data_type][1]
    values = arr.flatten().tolist()
    if field != "float_data" and field != "double_data":
        values = [int(v) for v in values]
    getattr(tensor, field).extend(values)
    return tensor


def _is_float(v):
    return type(v) is float or isinstance(v, np.floating)


def _is_int(v):
    return type(v) in (int, bool) or isinstance(v, (np.integer, np.bool_))


def _is_string(v):
    return isinstance(v, (str, bytes))


def _to_bytes(v):
    return v.encode("utf-8") if isinstance(v, str) else v


def MakeArgument(key, value):
    """Makes a caffe2_pb2.Argument named `key` holding `value`.

    floats go to `f`, ints and bools to `i`, strings to `s`, NetDefs to `n`,
    other messages to `s` serialized; lists to the plural fields. An empty
    list sets only the name.
    """
    argument = caffe2_pb2.Argument()
    argument.name = key

    # A float32 array is the common case of tensor data: no per-item checks.
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        argument.floats.extend(value.flatten().tolist())
        return argument
    if isinstance(value, np.ndarray):
        value = value.flatten().tolist()
    elif isinstance(value, np.generic):
        value = value.item()

    if type(value) is float:
        argument.f = value
    elif type(value) in (int, bool):
        argument.i = int(value)
    elif isinstance(value, bytes):
        argument.s = value
    elif isinstance(value, str):
        argument.s = value.encode("utf-8")
    elif isinstance(value, caffe2_pb2.NetDef):
        argument.n.CopyFrom(value)
    elif isinstance(value, Message):
        argument.s = value.SerializeToString()
    elif isinstance(value, collections.abc.Iterable):
        values = list(value)
        if all(_is_float(v) for v in values):
            argument.floats.extend(float(v) for v in values)
        elif all(_is_int(v) for v in values):
            argument.ints.extend(int(v) for v in values)
        elif all(_is_string(v) for v in values):
            argument.strings.extend(_to_bytes(v) for v in values)
        elif all(isinstance(v, caffe2_pb2.NetDef) for v in values):
            argument.nets.extend(values)
        elif all(isinstance(v, Message) for v in values):
            argument.strings.extend(v.SerializeToString() for v in values)
        else:
            raise ValueError(
                "Unknown iterable argument type: key={} value={}, value "
                "type={}[{}]".format(key, value, type(value), set(type(v) for v in values))
            )
    else:
        raise ValueError(
            "Unknown argument type: key={} value={}, value type={}".format(key, value, type(value))
        )
    return argument


def ArgsToDict(args):
    """Maps each Argument's name to its value (the field that is set)."""
    result = {}
    for arg in args:
        for field in ("f", "i", "s", "n"):
            if arg.HasField(field):
                result[arg.name] = getattr(arg, field)
                break
        else:
            for field in ("floats", "ints", "strings", "nets"):
                if len(getattr(arg, field)):
                    result[arg.name] = list(getattr(arg, field))
                    break
            else:
                result[arg.name] = []
    return result


def TryReadProtoWithClass(cls, s):
    """Parses `s` as text format, falling back to the binary format."""
    obj = cls()
    try:
        text = s.decode("utf-8") if isinstance(s, bytes) else s
        text_format.Parse(text, obj)
    except (text_format.ParseError, UnicodeDecodeError):
        obj = cls()
        obj.ParseFromString(s)
    return obj


def GetContentFromProto(obj, function_map):
    """Calls the function registered for the exact type of `obj`."""
    for cls, func in function_map.items():
        if type(obj) is cls:
            return func(obj)
    return None


def GetContentFromProtoString(s, function_map):
    """Parses `s` with the first class of `function_map` that accepts it."""
    for cls, func in function_map.items():
        try:
            obj = TryReadProtoWithClass(cls, s)
        except DecodeError:
            continue
        return func(obj)
    raise DecodeError("Cannot find a fit protobuffer class.")


def ConvertProtoToBinary(proto_class, filename, out_filename):
    """Reads a text-format proto from `filename`, writes it in binary."""
    proto = TryReadProtoWithClass(proto_class, open(filename).read())
    with open(out_filename, "wb") as fid:
        fid.write(proto.SerializeToString())


def GetGPUMemoryUsageStats():
    """Per-GPU current and peak memory use (needs the GetGPUMemoryUsage op)."""
    from caffe2.python import core, workspace

    workspace.RunOperatorOnce(
        core.CreateOperator(
            "GetGPUMemoryUsage",
            [],
            ["____mem____"],
            device_option=core.DeviceOption(caffe2_pb2.CUDA, 0),
        )
    )
    b = workspace.FetchBlob("____mem____")
    return {
        "total_by_gpu": b[0, :],
        "max_by_gpu": b[1, :],
        "total": np.sum(b[0, :]),
        "max_total": np.sum(b[1, :]),
    }


def ResetBlobs(blobs):
    """Frees the memory of the given blobs with the Free op."""
    from caffe2.python import core, workspace

    workspace.RunOperatorOnce(
        core.CreateOperator(
            "Free", list(blobs), list(blobs), device_option=core.DeviceOption(caffe2_pb2.CPU)
        )
    )


def BuildUniqueMutexIter(init_net, net, iter=None, iter_mutex=None, iter_val=0):
    """Adds an int64 iteration counter with its mutex, incremented by `net`."""
    from caffe2.python import core

    iter = iter if iter else init_net.NextScopedBlob("iter")
    iter_mutex = iter_mutex if iter_mutex else init_net.NextScopedBlob("iter_mutex")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        iteration = init_net.ConstantFill(
            [], iter, shape=[1], value=iter_val, dtype=core.DataType.INT64
        )
        mutex = init_net.CreateMutex([], [iter_mutex])
        net.AtomicIter([mutex, iteration], [iteration])
    return iteration


def EnumClassKeyVals(cls):
    """The public, non-callable class attributes of `cls` as a dict."""
    return {k: v for k, v in vars(cls).items() if not k.startswith("_") and not callable(v)}


def OpAlmostEqual(op_a, op_b, ignore_fields=None):
    """Compares two OperatorDefs, ignoring the named fields."""
    ignore_fields = ignore_fields or []
    if not isinstance(ignore_fields, list):
        ignore_fields = [ignore_fields]
    assert all(
        isinstance(f, str) for f in ignore_fields
    ), "Expect each field is text type, but got {}".format(ignore_fields)

    def clean(op):
        op = copy.deepcopy(op)
        for field in ignore_fields:
            op.ClearField(field)
        return op

    return clean(op_a) == clean(op_b)


class DebugMode(object):
    """Runs a function and drops into pdb post-mortem on an exception.

    Usage: `DebugMode.run(main)`, or decorate `main` with `@debug`.
    """

    @classmethod
    def run(cls, func):
        try:
            return func()
        except KeyboardInterrupt:
            raise
        except Exception:
            traceback.print_exc()
            print(
                'Entering interactive debugger. Type "bt" to print '
                'the full stacktrace. Type "help" to see command '
                "listing."
            )
            pdb.post_mortem(sys.exc_info()[2])
            raise


def debug(f):
    """Decorator: runs `f` under DebugMode."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return DebugMode.run(lambda: f(*args, **kwargs))

    return wrapper


def raiseIfNotEqual(a, b, msg):
    if a != b:
        raise Exception("{}. {} != {}".format(msg, a, b))
