"""Wire-format compatibility of caffe2.proto and its companions, beyond the message round trips
of test_wire_format.py: enum numbers, default values and field presence, packed and unpacked
encodings of repeated fields (written and read), and malformed or partial input."""
import pytest
from google.protobuf import message

from caffe2.proto import caffe2_legacy_pb2, caffe2_pb2, metanet_pb2, predictor_consts_pb2

from wire_encoder import f32, f64, ld, packed_f32, packed_f64, packed_varints, rep, vint

# ---------------------------------------------------- enums, defaults, packing


def enum_items(enum):
    return {v.name: v.number for v in enum.values}


def test_enums():
    assert enum_items(caffe2_pb2.TensorProto.DataType.DESCRIPTOR) == {
        "UNDEFINED": 0,
        "FLOAT": 1,
        "INT32": 2,
        "BYTE": 3,
        "STRING": 4,
        "BOOL": 5,
        "UINT8": 6,
        "INT8": 7,
        "UINT16": 8,
        "INT16": 9,
        "INT64": 10,
        "FLOAT16": 12,
        "DOUBLE": 13,
    }
    assert 11 not in caffe2_pb2.TensorProto.DataType.values()
    assert caffe2_pb2.TensorProto.FLOAT16 == 12
    assert enum_items(caffe2_pb2.DeviceType.DESCRIPTOR) == {
        "CPU": 0,
        "CUDA": 1,
        "MKLDNN": 2,
        "OPENGL": 3,
        "COMPILE_TIME_MAX_DEVICE_TYPES": 4,
        "ONLY_FOR_TEST": 20901701,
    }
    assert (caffe2_pb2.CPU, caffe2_pb2.CUDA, caffe2_pb2.ONLY_FOR_TEST) == (0, 1, 20901701)
    assert caffe2_pb2.DeviceType.DESCRIPTOR.full_name == "caffe2.DeviceType"
    assert enum_items(caffe2_legacy_pb2.LegacyPadding.DESCRIPTOR) == {
        "NOTSET": 0,
        "VALID": 1,
        "SAME": 2,
        "CAFFE_LEGACY_POOLING": 3,
    }
    assert caffe2_legacy_pb2.CAFFE_LEGACY_POOLING == 3


def test_defaults_and_presence():
    t = caffe2_pb2.TensorProto()
    assert t.data_type == caffe2_pb2.TensorProto.FLOAT
    assert not t.HasField("data_type") and not t.HasField("segment")
    assert caffe2_pb2.TensorShape().data_type == caffe2_pb2.TensorProto.FLOAT
    assert caffe2_pb2.TensorShape().unknown_shape is False
    d = caffe2_pb2.DeviceOption()
    assert (d.device_type, d.cuda_gpu_id, d.random_seed, d.numa_node_id) == (0, 0, 0, -1)
    assert caffe2_pb2.OperatorDef().is_gradient_op is False
    assert metanet_pb2.ModelInfo().predictorType == "SINGLE_PREDICTOR"
    assert not metanet_pb2.ModelInfo().HasField("predictorType")
    # Presence is significant (has_cuda_gpu_id, has_name...): explicit zeros
    # and empty strings are written.
    assert caffe2_pb2.DeviceOption(cuda_gpu_id=0).SerializeToString() == vint(2, 0)
    assert caffe2_pb2.OperatorDef(name="").SerializeToString() == ld(3, b"")


def test_predictor_consts_defaults():
    c = predictor_consts_pb2.PredictorConsts()
    names = [
        "META_NET_DEF",
        "PREDICTOR_DBREADER",
        "PARAMETERS_BLOB_TYPE",
        "INPUTS_BLOB_TYPE",
        "OUTPUTS_BLOB_TYPE",
        "GLOBAL_INIT_NET_TYPE",
        "PREDICT_INIT_NET_TYPE",
        "PREDICT_NET_TYPE",
        "SINGLE_PREDICTOR",
        "MULTI_PREDICTOR",
        "TRAIN_INIT_PLAN_TYPE",
        "TRAIN_PLAN_TYPE",
    ]
    fields = c.DESCRIPTOR.fields
    assert [(f.name, f.number) for f in fields] == [(n, i + 1) for i, n in enumerate(names)]
    for name in names:
        expected = "!!" + name if name in names[:2] else name
        assert getattr(c, name) == expected


def test_packed_and_unpacked_encodings():
    t = caffe2_pb2.TensorProto(
        dims=[2, 3], float_data=[1.5], int32_data=[1, -7], double_data=[0.5], int64_data=[-1]
    )
    assert t.SerializeToString() == (
        rep(vint, 1, [2, 3])
        + packed_f32(3, [1.5])
        + packed_varints(4, [1, -7])
        + packed_f64(9, [0.5])
        + packed_varints(10, [-1])
    )
    assert caffe2_pb2.QTensorProto(
        precision=1, scale=1.0, bias=0.0, is_signed=False, data=[3, 4]
    ).SerializeToString() == (
        vint(2, 1) + f64(3, 1.0) + f64(4, 0.0) + vint(5, 0) + packed_varints(6, [3, 4])
    )
    a = caffe2_pb2.Argument(floats=[0.5, 1.0], ints=[1, 2])
    assert a.SerializeToString() == rep(f32, 5, [0.5, 1.0]) + rep(vint, 6, [1, 2])
    s = caffe2_pb2.TensorShape(dims=[4], unknown_dims=[0])
    assert s.SerializeToString() == vint(1, 4) + vint(3, 0)
    # Readers accept the other encoding and writers normalise it.
    t = caffe2_pb2.TensorProto()
    t.ParseFromString(packed_varints(1, [2, 3]) + rep(f32, 3, [1.5, 2.0]))
    assert (list(t.dims), list(t.float_data)) == ([2, 3], [1.5, 2.0])
    assert t.SerializeToString() == rep(vint, 1, [2, 3]) + packed_f32(3, [1.5, 2.0])


# ------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "data",
    [
        b"\x08\x80",  # varint cut short
        b"\x12",  # tag without a value
        ld(7, "abc")[:-1],  # length-delimited runs past the end
        b"\x1a\x03abc",  # packed floats not a multiple of 4 bytes
        b"\x4a\x03abc",  # packed doubles not a multiple of 8 bytes
        b"\x0e",  # wire type 6 does not exist
        b"\x0f",  # wire type 7 does not exist
    ],
)
def test_malformed_bytes_raise_decode_error(data):
    with pytest.raises(message.DecodeError):
        caffe2_pb2.TensorProto().ParseFromString(data)


def test_missing_required_fields():
    # Python parses partial messages (C++ ParseFromString rejects them), but
    # they report uninitialised and refuse to serialize.
    seg = caffe2_pb2.TensorProto.Segment()
    seg.ParseFromString(vint(1, 5))
    assert not seg.IsInitialized()
    with pytest.raises(message.EncodeError):
        seg.SerializeToString()
    assert seg.SerializePartialToString() == vint(1, 5)
