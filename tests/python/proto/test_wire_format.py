"""Wire-format compatibility of caffe2.proto and its companions: every message round-trips.

Fixture bytes are written field by field from upstream's field tables (numbers,
types, labels, packing) with the tiny raw encoder of wire_encoder.py (never with the
generated classes), in field-number order, so that parsing them and serializing
again must give back the same bytes. The descriptors themselves are checked
against the same tables in test_proto_descriptors.py; enum numbers, defaults,
packing and malformed input in test_wire_format_encodings.py.
"""
from caffe2.proto import caffe2_pb2, metanet_pb2, predictor_consts_pb2, prof_dag_pb2

from wire_encoder import f32, f64, ld, packed_f32, packed_f64, packed_varints, rep, roundtrip, vint

# ------------------------------------------------------------------- fixtures


def device_option_bytes():
    return vint(1, 1) + vint(2, 3) + vint(3, 2**32 - 1) + ld(4, "node-a") + vint(5, 1)


def check_device_option(d):
    assert (d.device_type, d.cuda_gpu_id, d.random_seed, d.node_name, d.numa_node_id) == (
        caffe2_pb2.CUDA,
        3,
        2**32 - 1,
        "node-a",
        1,
    )


def tensor_bytes():
    return (
        rep(vint, 1, [2, 3])
        + vint(2, caffe2_pb2.TensorProto.DOUBLE)
        + packed_f32(3, [1.5, -2.25, 0.0])
        + packed_varints(4, [1, -7, 300])
        + ld(5, b"\x00\xffab")
        + rep(ld, 6, [b"abc", b"\xff\x00"])
        + ld(7, "tensør")
        + ld(8, device_option_bytes())
        + packed_f64(9, [0.1, -1e300])
        + packed_varints(10, [-1, 2**62, 0])
        + ld(11, vint(1, 5) + vint(2, 11))
    )


def check_tensor(t):
    assert list(t.dims) == [2, 3]
    assert t.data_type == caffe2_pb2.TensorProto.DOUBLE
    assert list(t.float_data) == [1.5, -2.25, 0.0]
    assert list(t.int32_data) == [1, -7, 300]
    assert t.byte_data == b"\x00\xffab"
    assert list(t.string_data) == [b"abc", b"\xff\x00"]
    assert t.name == "tensør"
    check_device_option(t.device_detail)
    assert list(t.double_data) == [0.1, -1e300]
    assert list(t.int64_data) == [-1, 2**62, 0]
    assert (t.segment.begin, t.segment.end) == (5, 11)


def qtensor_bytes():
    return (
        rep(vint, 1, [4, 1])
        + vint(2, 8)
        + f64(3, 0.5)
        + f64(4, -3.0)
        + vint(5, 1)
        + packed_varints(6, [1, -2, 255])
        + ld(7, "q")
    )


def check_qtensor(q):
    assert list(q.dims) == [4, 1]
    assert (q.precision, q.scale, q.bias, q.is_signed) == (8, 0.5, -3.0, True)
    assert list(q.data) == [1, -2, 255]
    assert q.name == "q"


def shape_bytes(name):
    return (
        rep(vint, 1, [1, 224])
        + vint(2, caffe2_pb2.TensorProto.INT64)
        + rep(vint, 3, [0, 2])
        + vint(4, 1)
        + ld(5, name)
    )


def check_shape(s, name):
    assert list(s.dims) == [1, 224]
    assert s.data_type == caffe2_pb2.TensorProto.INT64
    assert list(s.unknown_dims) == [0, 2]
    assert s.unknown_shape is True
    assert s.name == name


def small_net_bytes(name):
    return ld(1, name) + ld(3, "simple")


def argument_bytes():
    return (
        ld(1, "everything")
        + f32(2, 0.25)
        + vint(3, -(2**40))
        + ld(4, b"\x00s")
        + rep(f32, 5, [0.5, -1.0])
        + rep(vint, 6, [1, -2, 2**40])
        + rep(ld, 7, [b"a", b""])
        + ld(8, small_net_bytes("inner"))
        + ld(9, small_net_bytes("n0"))
        + ld(9, net_bytes())
    )


def check_argument(a):
    assert (a.name, a.f, a.i, a.s) == ("everything", 0.25, -(2**40), b"\x00s")
    assert list(a.floats) == [0.5, -1.0]
    assert list(a.ints) == [1, -2, 2**40]
    assert list(a.strings) == [b"a", b""]
    assert (a.n.name, a.n.type) == ("inner", "simple")
    assert [n.name for n in a.nets] == ["n0", "net"]
    check_net(a.nets[1])


def operator_bytes():
    return (
        rep(ld, 1, ["X", "W"])
        + ld(2, "Y")
        + ld(3, "conv1")
        + ld(4, "Conv")
        + ld(5, ld(1, "kernel") + vint(3, 3))
        + ld(5, ld(1, "order") + ld(4, "NCHW"))
        + ld(6, device_option_bytes())
        + ld(7, "CUDNN")
        + ld(8, "dep")
        + vint(9, 1)
        + ld(10, "model.py:12")
    )


def check_operator(op):
    assert (list(op.input), list(op.output)) == (["X", "W"], ["Y"])
    assert (op.name, op.type, op.engine) == ("conv1", "Conv", "CUDNN")
    assert [(a.name, a.i, a.s) for a in op.arg] == [("kernel", 3, b""), ("order", 0, b"NCHW")]
    assert op.arg[0].HasField("i") and not op.arg[0].HasField("s")
    check_device_option(op.device_option)
    assert list(op.control_input) == ["dep"]
    assert op.is_gradient_op is True
    assert op.debug_info == "model.py:12"


def net_bytes():
    return (
        ld(1, "net")
        + ld(2, operator_bytes())
        + ld(2, ld(4, "Relu"))
        + ld(3, "dag")
        + vint(4, 8)
        + ld(5, device_option_bytes())
        + ld(6, ld(1, "first_iter_only_one_worker") + vint(3, 1))
        + rep(ld, 7, ["X", "W"])
        + ld(8, "Y")
    )


def check_net(n):
    assert (n.name, n.type, n.num_workers) == ("net", "dag", 8)
    assert len(n.op) == 2
    check_operator(n.op[0])
    assert n.op[1].type == "Relu" and not n.op[1].HasField("name")
    check_device_option(n.device_option)
    assert [(a.name, a.i) for a in n.arg] == [("first_iter_only_one_worker", 1)]
    assert list(n.external_input) == ["X", "W"]
    assert list(n.external_output) == ["Y"]


def step_bytes():
    return (
        ld(1, "step")
        + ld(2, ld(1, "sub") + ld(3, "net"))
        + rep(ld, 3, ["net", "net2"])
        + vint(4, 2**33)
        + ld(5, "crit")
        + vint(6, 1)
        + ld(7, "report")
        + vint(8, 10)
        + ld(9, "stop")
        + vint(10, 1)
        + vint(11, 1000)
        + vint(12, 1)
        + vint(13, 4)
    )


def check_step(s):
    assert s.name == "step"
    assert [(x.name, list(x.network)) for x in s.substep] == [("sub", ["net"])]
    assert list(s.network) == ["net", "net2"]
    assert (s.num_iter, s.criteria_network, s.concurrent_substeps) == (2**33, "crit", True)
    assert (s.report_net, s.report_interval, s.should_stop_blob) == ("report", 10, "stop")
    assert (s.only_once, s.run_every_ms, s.create_workspace, s.num_concurrent_instances) == (
        True,
        1000,
        True,
        4,
    )


def plan_bytes():
    return ld(1, "plan") + ld(2, net_bytes()) + ld(3, step_bytes())


def check_plan(p):
    assert p.name == "plan"
    assert len(p.network) == 1 and len(p.execution_step) == 1
    check_net(p.network[0])
    check_step(p.execution_step[0])


# ---------------------------------------------------------- message roundtrips


def test_tensor_proto():
    check_tensor(roundtrip(caffe2_pb2.TensorProto, tensor_bytes()))


def test_qtensor_proto():
    check_qtensor(roundtrip(caffe2_pb2.QTensorProto, qtensor_bytes()))


def test_tensor_protos():
    ts = roundtrip(caffe2_pb2.TensorProtos, ld(1, tensor_bytes()) + ld(1, b"") + ld(1, ld(7, "b")))
    assert len(ts.protos) == 3
    check_tensor(ts.protos[0])
    assert ts.protos[1].ListFields() == []
    assert ts.protos[2].name == "b"


def test_tensor_shape_and_shapes():
    check_shape(roundtrip(caffe2_pb2.TensorShape, shape_bytes("s")), "s")
    shapes = roundtrip(caffe2_pb2.TensorShapes, ld(1, shape_bytes("a")) + ld(1, shape_bytes("b")))
    check_shape(shapes.shapes[0], "a")
    check_shape(shapes.shapes[1], "b")


def test_argument():
    check_argument(roundtrip(caffe2_pb2.Argument, argument_bytes()))


def test_device_option():
    check_device_option(roundtrip(caffe2_pb2.DeviceOption, device_option_bytes()))
    d = roundtrip(caffe2_pb2.DeviceOption, vint(5, -1))
    assert d.numa_node_id == -1 and d.HasField("numa_node_id")


def test_operator_def():
    check_operator(roundtrip(caffe2_pb2.OperatorDef, operator_bytes()))


def test_net_def():
    check_net(roundtrip(caffe2_pb2.NetDef, net_bytes()))


def test_execution_step_and_plan():
    check_step(roundtrip(caffe2_pb2.ExecutionStep, step_bytes()))
    check_plan(roundtrip(caffe2_pb2.PlanDef, plan_bytes()))


def test_blob_proto():
    b = roundtrip(
        caffe2_pb2.BlobProto,
        ld(1, "w")
        + ld(2, "Tensor")
        + ld(3, tensor_bytes())
        + ld(4, b"\x00\x01")
        + ld(5, qtensor_bytes())
        + vint(6, 3)
        + vint(7, 1),
    )
    assert (b.name, b.type, b.content) == ("w", "Tensor", b"\x00\x01")
    check_tensor(b.tensor)
    check_qtensor(b.qtensor)
    assert (b.content_num_chunks, b.content_chunk_id) == (3, 1)


def test_db_reader_proto():
    r = roundtrip(
        caffe2_pb2.DBReaderProto,
        ld(1, "reader") + ld(2, "/data/train") + ld(3, "lmdb") + ld(4, "k\x00"),
    )
    assert (r.name, r.source, r.db_type, r.key) == ("reader", "/data/train", "lmdb", "k\x00")


def test_metanet():
    info = ld(1, "proj") + ld(2, "cls") + ld(3, "1.0") + ld(4, "MULTI_PREDICTOR") + ld(5, "id7")
    blobs = ld(1, "INPUTS_BLOB_TYPE") + rep(ld, 2, ["data", "label"])
    nets = ld(1, "PREDICT_NET_TYPE") + ld(2, net_bytes())
    plans = ld(1, "TRAIN_PLAN_TYPE") + ld(2, plan_bytes())
    strings = ld(1, "k") + ld(2, "v")
    m = roundtrip(
        metanet_pb2.MetaNetDef,
        ld(1, blobs)
        + ld(1, ld(1, "OUTPUTS_BLOB_TYPE"))
        + ld(2, nets)
        + ld(3, info)
        + ld(4, plans)
        + ld(5, strings),
    )
    assert [(b.key, list(b.value)) for b in m.blobs] == [
        ("INPUTS_BLOB_TYPE", ["data", "label"]),
        ("OUTPUTS_BLOB_TYPE", []),
    ]
    assert [n.key for n in m.nets] == ["PREDICT_NET_TYPE"]
    check_net(m.nets[0].value)
    mi = m.modelInfo
    assert (mi.project, mi.modelClass, mi.version, mi.predictorType, mi.modelId) == (
        "proj",
        "cls",
        "1.0",
        "MULTI_PREDICTOR",
        "id7",
    )
    assert [p.key for p in m.plans] == ["TRAIN_PLAN_TYPE"]
    check_plan(m.plans[0].value)
    assert [(s.key, s.value) for s in m.applicationSpecificInfo] == [("k", "v")]
    for cls, data in [
        (metanet_pb2.ModelInfo, info),
        (metanet_pb2.BlobsMap, blobs),
        (metanet_pb2.NetsMap, nets),
        (metanet_pb2.PlansMap, plans),
        (metanet_pb2.StringMap, strings),
    ]:
        assert roundtrip(cls, data).IsInitialized()


def test_prof_dag():
    one = ld(1, "Conv") + f32(2, 1.5) + f32(3, 0.125)
    p = roundtrip(prof_dag_pb2.ProfDAGProto, one)
    assert (p.name, p.mean, p.stddev) == ("Conv", 1.5, 0.125)
    ps = roundtrip(
        prof_dag_pb2.ProfDAGProtos, ld(1, one) + ld(1, ld(1, "Relu") + f32(2, 0.0) + f32(3, 2.0))
    )
    assert [(s.name, s.mean, s.stddev) for s in ps.stats] == [
        ("Conv", 1.5, 0.125),
        ("Relu", 0.0, 2.0),
    ]


def test_predictor_consts():
    assert predictor_consts_pb2.PredictorConsts().SerializeToString() == b""
    c = roundtrip(predictor_consts_pb2.PredictorConsts, ld(1, "x") + ld(12, "y"))
    assert (c.META_NET_DEF, c.TRAIN_PLAN_TYPE) == ("x", "y")
    assert c.PREDICTOR_DBREADER == "!!PREDICTOR_DBREADER"
