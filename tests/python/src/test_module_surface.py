"""The extension's import-time surface, workspaces, nets and errors (spec §2.3, §2.4, §2.7)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import caffe2_pybind11_state as C

IMPORT_TIME = [
    "blobs",
    "create_blob",
    "current_workspace",
    "deserialize_blob",
    "global_init",
    "has_blob",
    "registered_operators",
    "serialize_blob",
    "switch_workspace",
    "root_folder",
    "workspaces",
    "benchmark_net",
    "get_stats",
    "is_asan",
    "is_numa_enabled",
    "get_num_numa_nodes",
    "get_blob_numa_node",
    "Workspace",
    "Blob",
    "TensorCPU",
    "on_module_exit",
    "set_per_op_engine_pref",
    "set_global_engine_pref",
    "set_engine_pref",
    "set_op_engine_pref",
    "op_registry_key",
    "nearby_opnames",
    "reset_workspace",
    "create_net",
    "run_net",
    "run_net_once",
    "run_operator_once",
    "feed_blob",
    "fetch_blob",
    "get_gradient_defs",
    "GradientWrapper",
    "infer_shapes_and_types_from_map",
    "infer_shapes_and_types_from_workspace",
    "OpSchema",
    "Predictor",
    "DB",
    "Cursor",
    "Transaction",
    "Mode",
    "create_db",
    "registered_dbs",
    "run_plan",
    "delete_net",
    "nets",
    "local_blobs",
    "get_build_options",
    "define_caffe2_no_operator_schema",
]


def op(type_, inputs, outputs, **args):
    d = caffe2_pb2.OperatorDef(type=type_, input=inputs, output=outputs)
    for k, v in args.items():
        a = d.arg.add(name=k)
        if isinstance(v, float):
            a.f = v
        elif isinstance(v, int):
            a.i = v
        elif isinstance(v, (list, tuple)):
            a.ints.extend(v)
        else:
            a.s = v.encode() if isinstance(v, str) else v
    return d


@pytest.fixture(autouse=True)
def fresh_workspace():
    C.switch_workspace("surface_test", True)
    C.reset_workspace()
    yield
    C.switch_workspace("default", True)


def test_import_time_attributes_exist():
    missing = [name for name in IMPORT_TIME if not hasattr(C, name)]
    assert missing == []


def test_registry_helpers():
    ops = C.registered_operators()
    assert ops == sorted(ops) and "ConstantFill" in ops
    assert C.op_registry_key("Conv", "") == "Conv"
    assert C.op_registry_key("Conv", "DEFAULT") == "Conv"
    assert C.op_registry_key("Conv", "CUDNN") == "Conv_ENGINE_CUDNN"
    assert "ConstantFill" in C.nearby_opnames("ConstantFil")


def test_workspaces_switch_and_reset(tmp_path):
    C.create_blob("a")
    assert C.has_blob("a") and C.blobs() == ["a"]
    C.switch_workspace("other_ws", True)
    assert not C.has_blob("a")
    assert C.current_workspace() == "other_ws"
    with pytest.raises(RuntimeError, match="does not exist"):
        C.switch_workspace("never_created")
    C.switch_workspace(b"surface_test")
    assert C.has_blob("a")
    assert C.reset_workspace(str(tmp_path)) is True
    assert C.root_folder() == str(tmp_path)
    assert not C.has_blob("a")
    assert "other_ws" in C.workspaces() and C.workspaces() == sorted(C.workspaces())


def test_nets_run_and_errors():
    net = caffe2_pb2.NetDef(name="n")
    net.op.extend(
        [op("ConstantFill", [], ["x"], shape=[2], value=2.0), op("Sum", ["x", "x"], ["y"])]
    )
    assert C.create_net(net.SerializeToString()) is True
    with pytest.raises(RuntimeError, match="I respectfully refuse"):
        C.create_net(net.SerializeToString())
    assert C.run_net("n", 2, False) is True
    np.testing.assert_array_equal(C.fetch_blob("y"), [4, 4])
    assert C.nets() == ["n"]
    with pytest.raises(RuntimeError, match="Can't find net nope"):
        C.run_net("nope", 1, False)
    times = C.benchmark_net("n", 1, 2, True)
    assert len(times) == 3
    assert C.Workspace.current.nets["n"] is not None


def test_failing_net_raises_unless_allow_fail():
    net = caffe2_pb2.NetDef(name="bad")
    net.op.extend([op("Copy", ["x"], ["y"])])
    C.create_blob("x")
    C.create_net(net.SerializeToString())
    with pytest.raises(RuntimeError, match=r"^\[Copy\]"):
        C.run_net("bad", 1, False)
    assert C.Workspace.current._last_failed_op_net_position() == 0
    assert C.run_net("bad", 1, True) is False


def test_bad_input_errors_keep_the_process_usable():
    with pytest.raises(RuntimeError, match="Cannot parse a NetDef"):
        C.create_net(b"\xff\xff garbage")
    with pytest.raises(RuntimeError, match="non-existing input blob: ghost"):
        C.run_operator_once(op("Copy", ["ghost"], ["y"]).SerializeToString())
    C.feed_blob("present", np.zeros(1, np.float32))
    with pytest.raises(
        RuntimeError, match=r"^\[Print\] Argument 'limit' does not have the right field"
    ):
        C.run_operator_once(op("Print", ["present"], [], limit=1.5).SerializeToString())
    with pytest.raises(RuntimeError, match="Cannot create operator of type 'NoSuchOp'"):
        C.run_operator_once(op("NoSuchOp", [], ["y"]).SerializeToString())
    d = op("ConstantFill", [], ["z"], shape=[1], value=1.0)
    d.engine = "NO_SUCH_ENGINE"
    assert C.run_operator_once(d.SerializeToString()) is True  # unknown engine falls back
    assert C.fetch_blob("z")[0] == 1.0


def test_run_net_once_and_plan():
    net = caffe2_pb2.NetDef(name="once")
    net.op.extend([op("ConstantFill", [], ["c"], shape=[1], value=0, dtype=10)])
    assert C.run_net_once(net.SerializeToString()) is True
    plan = caffe2_pb2.PlanDef(name="plan")
    inc = plan.network.add(name="inc")
    inc.op.extend([op("Iter", ["c"], ["c"])])
    step = plan.execution_step.add(name="s", num_iter=5)
    step.network.append("inc")
    assert C.run_plan(plan.SerializeToString()) is True
    assert C.fetch_blob("c")[0] == 5


def test_workspace_object_api():
    ws = C.Workspace()
    assert not ws.has_blob("x")
    blob = ws.create_blob("x")
    blob._feed(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(ws.fetch_blob("x"), [0, 1, 2])
    ws._run_operator(op("Copy", ["x"], ["y"]).SerializeToString())
    assert set(ws.blobs) == {"x", "y"}
    child = C.Workspace(ws)
    assert child.has_blob("x")
    net = caffe2_pb2.NetDef(name="wsnet")
    net.op.extend([op("Sum", ["x", "y"], ["z"])])
    created = ws._create_net(net.SerializeToString())
    created.run()
    np.testing.assert_array_equal(ws.fetch_blob("z"), [0, 2, 4])
    assert not C.has_blob("x")  # the module's current workspace is untouched


def test_serialize_deserialize_blob():
    C.feed_blob("x", np.arange(4, dtype=np.int64))
    data = C.serialize_blob("x")
    proto = caffe2_pb2.BlobProto()
    proto.ParseFromString(data)
    assert proto.name == "x" and proto.type == "Tensor"
    assert list(proto.tensor.int64_data) == [0, 1, 2, 3]
    C.deserialize_blob("copy", data)
    np.testing.assert_array_equal(C.fetch_blob("copy"), [0, 1, 2, 3])
    with pytest.raises(RuntimeError):
        C.deserialize_blob("bad", b"\xff\xff\xff")


def test_gradient_defs():
    fwd = op("Copy", ["x"], ["y"])
    g = C.GradientWrapper()
    g.dense = "y_grad"
    assert g.is_dense() and not g.is_sparse() and not C.GradientWrapper().is_dense()
    ops, grads = C.get_gradient_defs(fwd.SerializeToString(), [g])
    grad_op = caffe2_pb2.OperatorDef()
    grad_op.ParseFromString(ops[0])
    assert grad_op.type == "CopyOnDeviceLike" and grad_op.is_gradient_op
    assert list(grad_op.input) == ["y_grad", "x"] and grads[0].dense == "x_grad"
    with pytest.raises(RuntimeError, match="no gradient"):
        C.get_gradient_defs(op("NoSuchOp", ["a"], ["b"]).SerializeToString(), [g])


def test_shape_inference_and_schema():
    net = caffe2_pb2.NetDef(name="si")
    net.op.extend([op("Copy", ["x"], ["y"])])
    shapes = caffe2_pb2.TensorShapes()
    shapes.ParseFromString(
        C.infer_shapes_and_types_from_map([net.SerializeToString()], {"x": [2, 3]})
    )
    by_name = {s.name: list(s.dims) for s in shapes.shapes}
    assert by_name["y"] == [2, 3]
    schema = C.OpSchema.get("Sum")
    assert schema.min_input == 1 and schema.max_input == schema.inf
    assert schema.num_inputs_allowed(3) and not schema.num_inputs_allowed(0)
    assert C.OpSchema.get("NoSuchOp") is None
    assert [a.name for a in C.OpSchema.get("ConstantFill").args][:2] == ["value", "dtype"]


def test_predictor_runs_init_then_predict():
    init = caffe2_pb2.NetDef(name="init")
    init.op.extend([op("ConstantFill", [], ["w"], shape=[3], value=10.0)])
    pred = caffe2_pb2.NetDef(name="pred", external_input=["data", "w"], external_output=["out"])
    pred.op.extend([op("Sum", ["data", "w"], ["out"])])
    p = C.Predictor(init.SerializeToString(), pred.SerializeToString())
    out = p.run([np.ones(3, np.float32)])
    np.testing.assert_array_equal(out[0], [11, 11, 11])
    out = p.run({"data": np.zeros(3, np.float32)})
    np.testing.assert_array_equal(out[0], [10, 10, 10])


def test_global_init_flags():
    C.global_init(["python", "--caffe2_log_level=2"])
    with pytest.raises(RuntimeError, match="Unknown flag"):
        C.global_init(["python", "--caffe2_not_a_flag=1"])
