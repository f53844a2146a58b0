"""caffe2.python.utils: MakeArgument and the proto/tensor helpers."""
import numpy as np
import pytest
from google.protobuf import text_format

from caffe2.proto import caffe2_pb2
from caffe2.python import utils


def test_scalars():
    assert utils.MakeArgument("a", 1.5).f == 1.5
    arg = utils.MakeArgument("a", 3)
    assert arg.HasField("i") and arg.i == 3 and not arg.HasField("f")
    arg = utils.MakeArgument("a", 1.0)
    assert arg.HasField("f") and not arg.HasField("i")
    assert utils.MakeArgument("a", True).i == 1
    assert utils.MakeArgument("a", False).HasField("i")
    assert utils.MakeArgument("a", b"raw\xff").s == b"raw\xff"
    assert utils.MakeArgument("a", "h\u00e9").s == "h\u00e9".encode("utf-8")
    assert utils.MakeArgument("a", "x").name == "a"


def test_numpy_scalars_become_python_scalars():
    assert utils.MakeArgument("a", np.float32(0.5)).f == 0.5
    assert utils.MakeArgument("a", np.float64(0.25)).HasField("f")
    assert utils.MakeArgument("a", np.int64(7)).i == 7
    assert utils.MakeArgument("a", np.int32(7)).HasField("i")
    assert utils.MakeArgument("a", np.bool_(True)).i == 1


def test_lists():
    assert list(utils.MakeArgument("a", [1.0, 2.5]).floats) == [1.0, 2.5]
    assert list(utils.MakeArgument("a", [1, 2]).ints) == [1, 2]
    assert list(utils.MakeArgument("a", (1, True)).ints) == [1, 1]
    assert list(utils.MakeArgument("a", ["x", b"y"]).strings) == [b"x", b"y"]
    assert list(utils.MakeArgument("a", np.array([1, 2])).ints) == [1, 2]
    assert list(utils.MakeArgument("a", np.array([0.5])).floats) == [0.5]


def test_empty_list_sets_only_the_name():
    arg = utils.MakeArgument("shape", [])
    expected = caffe2_pb2.Argument()
    expected.name = "shape"
    assert arg == expected
    assert arg.SerializeToString() == expected.SerializeToString()


def test_mixed_int_float_list_raises():
    with pytest.raises(ValueError):
        utils.MakeArgument("a", [1, 2.0])
    with pytest.raises(ValueError):
        utils.MakeArgument("a", [1, "x"])
    with pytest.raises(ValueError):
        utils.MakeArgument("a", None)


def test_float32_array_goes_to_floats_flattened():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    arg = utils.MakeArgument("values", arr)
    assert list(arg.floats) == [0, 1, 2, 3, 4, 5]
    assert not arg.ints


def test_int_and_bool_arrays():
    assert list(utils.MakeArgument("a", np.array([[1], [2]])).ints) == [1, 2]
    assert list(utils.MakeArgument("a", np.array([True, False])).ints) == [1, 0]


def test_protos():
    net = caffe2_pb2.NetDef()
    net.name = "n"
    assert utils.MakeArgument("net", net).n == net
    assert list(utils.MakeArgument("nets", [net, net]).nets) == [net, net]
    option = caffe2_pb2.DeviceOption(device_type=1)
    assert utils.MakeArgument("d", option).s == option.SerializeToString()
    assert list(utils.MakeArgument("d", [option]).strings) == [option.SerializeToString()]


def test_tensor_conversion_round_trip():
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.int16, np.uint8, np.bool_):
        arr = (np.arange(6) % 2 == 0) if dtype is np.bool_ else np.arange(6).astype(dtype)
        arr = arr.reshape(2, 3)
        tensor = utils.NumpyArrayToCaffe2Tensor(arr, "blob")
        assert tensor.name == "blob"
        assert list(tensor.dims) == [2, 3]
        back = utils.Caffe2TensorToNumpyArray(tensor)
        assert back.dtype == arr.dtype
        np.testing.assert_array_equal(back, arr)
    float_tensor = utils.NumpyArrayToCaffe2Tensor(np.zeros(2, np.float32))
    assert float_tensor.data_type == caffe2_pb2.TensorProto.FLOAT
    assert len(float_tensor.float_data) == 2


def test_tensor_conversion_rejects_unknown_types():
    with pytest.raises(NotImplementedError):
        utils.NumpyArrayToCaffe2Tensor(np.zeros(2, np.complex64))
    tensor = caffe2_pb2.TensorProto(data_type=caffe2_pb2.TensorProto.FLOAT16)
    with pytest.raises(RuntimeError):
        utils.Caffe2TensorToNumpyArray(tensor)


def test_try_read_proto_text_and_binary():
    net = caffe2_pb2.NetDef()
    net.name = "n"
    net.op.add().type = "Relu"
    text = text_format.MessageToString(net)
    assert utils.TryReadProtoWithClass(caffe2_pb2.NetDef, text) == net
    binary = net.SerializeToString()
    assert utils.TryReadProtoWithClass(caffe2_pb2.NetDef, binary) == net


def test_get_content_from_proto():
    net = caffe2_pb2.NetDef(name="n")
    function_map = {caffe2_pb2.NetDef: lambda x: x.name, caffe2_pb2.PlanDef: lambda x: "plan"}
    assert utils.GetContentFromProto(net, function_map) == "n"
    assert (
        utils.GetContentFromProtoString(
            net.SerializeToString(), {caffe2_pb2.NetDef: lambda x: x.name}
        )
        == "n"
    )


def test_convert_proto_to_binary(tmp_path):
    net = caffe2_pb2.NetDef(name="n")
    text_file = tmp_path / "net.pbtxt"
    text_file.write_text(text_format.MessageToString(net))
    out = tmp_path / "net.pb"
    utils.ConvertProtoToBinary(caffe2_pb2.NetDef, str(text_file), str(out))
    parsed = caffe2_pb2.NetDef()
    parsed.ParseFromString(out.read_bytes())
    assert parsed == net


def test_op_almost_equal():
    a = caffe2_pb2.OperatorDef(type="Relu", name="a", input=["x"])
    b = caffe2_pb2.OperatorDef(type="Relu", name="b", input=["x"])
    assert not utils.OpAlmostEqual(a, b)
    assert utils.OpAlmostEqual(a, b, "name")
    assert utils.OpAlmostEqual(a, b, ["name"])
    assert a.name == "a"


def test_args_to_dict():
    args = [
        utils.MakeArgument("f", 0.5),
        utils.MakeArgument("i", 2),
        utils.MakeArgument("s", "x"),
        utils.MakeArgument("l", [1, 2]),
        utils.MakeArgument("e", []),
    ]
    assert utils.ArgsToDict(args) == {"f": 0.5, "i": 2, "s": b"x", "l": [1, 2], "e": []}


def test_small_helpers():
    class Enum(object):
        A = 1
        B = "b"

        def method(self):
            pass

    assert utils.EnumClassKeyVals(Enum) == {"A": 1, "B": "b"}
    utils.raiseIfNotEqual(1, 1, "same")
    with pytest.raises(Exception, match="differ. 1 != 2"):
        utils.raiseIfNotEqual(1, 2, "differ")
    assert utils.debug(lambda x: x + 1)(1) == 2
