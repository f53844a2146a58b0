"""caffe2.python.workspace against the extension: feeding and fetching,
workspaces, nets, failures and their Python tracebacks."""
import os

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope, utils, workspace
import caffe2.python._import_c_extension as C


@pytest.fixture(autouse=True)
def fresh_workspace():
    name = workspace.CurrentWorkspace()
    workspace.ResetWorkspace()
    yield
    workspace.SwitchWorkspace(name, True)
    workspace.ResetWorkspace()


def test_import_time_bindings():
    assert workspace.Blobs is C.blobs
    assert workspace.HasBlob is C.has_blob
    assert workspace.RegisteredOperators is C.registered_operators
    assert isinstance(workspace.is_asan, bool)
    assert isinstance(workspace.has_gpu_support, bool)
    assert workspace.has_gpu_support == C.has_gpu_support
    assert isinstance(workspace.operator_tracebacks, dict)
    for name in (
        "GetCUDAVersion",
        "GetCuDNNVersion",
        "NumCudaDevices",
        "GetDeviceProperties",
        "GetCudaPeerAccessPattern",
        "IsNUMAEnabled",
        "GetNumNUMANodes",
        "GetBlobNUMANode",
        "GetStats",
        "BenchmarkNet",
    ):
        assert callable(getattr(workspace, name)), name


@pytest.mark.skipif(workspace.has_gpu_support, reason="CPU-only fallbacks")
def test_cpu_only_gpu_helpers():
    assert workspace.NumCudaDevices() == 0
    assert workspace.GetCUDAVersion() == 0
    assert workspace.GetCuDNNVersion() == 0
    assert workspace.GetCudaPeerAccessPattern().size == 0
    assert workspace.GetDeviceProperties(0) is None


def test_tensor_cpu_python_helpers():
    assert isinstance(C.TensorCPU.shape, property)
    assert callable(C.TensorCPU.reshape)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8, np.int16]
)
def test_feed_fetch_round_trip(dtype):
    arr = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    assert workspace.FeedBlob("x", arr) is True
    out = workspace.FetchBlob("x")
    assert out.dtype == arr.dtype
    np.testing.assert_array_equal(out, arr)
    out[0, 0] = 1
    assert workspace.FetchBlob("x")[0, 0] == arr[0, 0]


def test_feed_scalar_and_strings():
    workspace.FeedBlob("s", np.array(3.5, dtype=np.float32))
    assert workspace.FetchBlob("s").shape == ()
    workspace.FeedBlob("str", "hello")
    assert workspace.FetchBlob("str") == b"hello"
    workspace.FeedBlob("bytes", b"\x00raw")
    assert workspace.FetchBlob("bytes") == b"\x00raw"
    for arr in (
        np.array(["a", "bc"]),
        np.array([b"a", b"bc"]),
        np.array(["a", "bc"], dtype=object),
    ):
        workspace.FeedBlob("strs", arr)
        out = workspace.FetchBlob("strs")
        assert out.dtype == object
        assert list(out) == [b"a", b"bc"]


def test_feed_tensor_proto():
    tensor = utils.NumpyArrayToCaffe2Tensor(np.array([[1.5, 2.5]], dtype=np.float32))
    workspace.FeedBlob("t", tensor)
    np.testing.assert_array_equal(workspace.FetchBlob("t"), [[1.5, 2.5]])


def test_feed_uses_the_device_scope_option():
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        workspace.FeedBlob("x", np.ones(2, dtype=np.float32))
    workspace.FeedBlob(
        core.BlobReference("ref"),
        np.ones(1, np.float32),
        device_option=core.DeviceOption(caffe2_pb2.CPU),
    )
    assert workspace.HasBlob("ref")


def test_fetch_missing_blob_raises():
    with pytest.raises(RuntimeError):
        workspace.FetchBlob("does_not_exist")


def test_blob_listing_and_dict_view():
    workspace.FeedBlob("b", np.zeros(1, np.float32))
    workspace.FeedBlob("a", np.ones(1, np.float32))
    assert workspace.Blobs() == ["a", "b"]
    assert workspace.HasBlob("a") and not workspace.HasBlob("c")
    blobs = workspace.blobs
    assert len(blobs) == 2
    assert list(blobs) == ["a", "b"]
    assert "a" in blobs and "c" not in blobs
    blobs["c"] = np.array([3], dtype=np.int64)
    assert blobs["c"][0] == 3
    assert workspace.FetchBlobs(["a", "b"])[0][0] == 1
    assert workspace.CreateBlob("empty") is True
    assert workspace.HasBlob("empty")


def test_switch_workspaces():
    workspace.FeedBlob("x", np.ones(1, np.float32))
    original = workspace.CurrentWorkspace()
    with workspace.WorkspaceGuard("test_ws_guard"):
        assert workspace.CurrentWorkspace() == "test_ws_guard"
        assert not workspace.HasBlob("x")
        workspace.FeedBlob("y", np.ones(1, np.float32))
    assert workspace.CurrentWorkspace() == original
    assert workspace.HasBlob("x") and not workspace.HasBlob("y")
    assert "test_ws_guard" in workspace.Workspaces()
    with pytest.raises(RuntimeError):
        workspace.SwitchWorkspace("test_ws_never_created")
    workspace.SwitchWorkspace(b"test_ws_bytes", True)
    assert workspace.CurrentWorkspace() == "test_ws_bytes"
    workspace.SwitchWorkspace(original)


def test_reset_workspace_root_folder(tmp_path):
    folder = str(tmp_path / "new_root")
    workspace.FeedBlob("x", np.ones(1, np.float32))
    assert workspace.ResetWorkspace(folder) is True
    assert os.path.isdir(folder)
    assert workspace.RootFolder() == folder
    assert not workspace.HasBlob("x")
    workspace.ResetWorkspace()
    assert workspace.RootFolder() == folder
    workspace.ResetWorkspace(".")


def test_create_and_run_net():
    init = core.Net("ws_init")
    init.ConstantFill([], "x", shape=[2], value=2.0)
    net = core.Net("ws_run")
    y = net.Sum(["x", "x"], "y")
    assert workspace.RunNetOnce(init) is True
    assert workspace.CreateNet(net) is True
    assert workspace.RunNet(net.Proto().name) is True
    np.testing.assert_array_equal(workspace.FetchBlob(y), [4.0, 4.0])
    assert workspace.RunNet(net, num_iter=3) is True
    with pytest.raises(RuntimeError):
        workspace.CreateNet(net)
    assert workspace.CreateNet(net, overwrite=True) is True


def test_create_net_with_input_blobs():
    net = core.Net("ws_input_blobs")
    net.Copy("fed_later", "copy")
    workspace.CreateNet(net, input_blobs=["fed_later"])
    assert workspace.HasBlob("fed_later")


def test_run_missing_net_raises():
    with pytest.raises(RuntimeError):
        workspace.RunNet("no_such_net_here")


def _failing_net(name):
    net = core.Net(name)
    net.ConstantFill([], "a", shape=[2], value=1.0)
    net.ConstantFill([], "b", shape=[3], value=1.0)
    net.Sum(["a", "b"], "c")
    return net


def test_failure_prints_the_creating_python_line(capsys):
    net = _failing_net("ws_fails")
    with pytest.raises(RuntimeError):
        workspace.RunNetOnce(net)
    out = capsys.readouterr().out
    assert "Original python traceback for operator 2 in network " "`ws_fails`" in out
    assert "in _failing_net" in out
    assert __file__ in out


def test_run_net_allow_fail():
    net = _failing_net("ws_allow_fail")
    workspace.CreateNet(net)
    assert workspace.RunNet(net, allow_fail=True) is False
    with pytest.raises(RuntimeError):
        workspace.RunNet(net)


def test_run_operators_once():
    ops = [
        core.CreateOperator("ConstantFill", [], "x", shape=[1], value=3.0),
        core.CreateOperator("Copy", "x", "y"),
    ]
    assert workspace.RunOperatorsOnce(ops) is True
    assert workspace.RunOperatorOnce(ops[0]) is True
    assert workspace.FetchBlob("y")[0] == 3.0


def test_run_plan_with_execution_step():
    init = core.Net("ws_plan_init")
    init.ConstantFill([], "acc", shape=[1], value=0.0)
    init.ConstantFill([], "one", shape=[1], value=1.0)
    step_net = core.Net("ws_plan_step")
    step_net.Sum(["acc", "one"], "acc")
    workspace.RunNetOnce(init)
    assert workspace.RunPlan(core.execution_step("ws_plan", step_net, num_iter=3)) is True
    assert workspace.FetchBlob("acc")[0] == 3.0
    plan = core.Plan("ws_plan_object")
    plan.AddStep(core.execution_step("ws_plan_again", [step_net], num_iter=2))
    workspace.RunPlan(plan)
    assert workspace.FetchBlob("acc")[0] == 5.0


def test_workspace_object_api():
    ws = workspace.C.Workspace()
    ws.create_blob("x").feed(np.array([1.0, 2.0], dtype=np.float32))
    np.testing.assert_array_equal(ws.blobs["x"].fetch(), [1.0, 2.0])
    ws.create_blob("x").feed(np.ones(1, np.float32), core.DeviceOption(caffe2_pb2.CPU))
    ws.feed_blob("z", np.array([5], dtype=np.int32))
    assert ws.fetch_blob("z")[0] == 5
    net = core.Net("ws_object_net")
    net.Copy("x", "y")
    ws.run(net)
    assert ws.fetch_blob("y")[0] == 1.0
    ws.run(core.CreateOperator("Copy", "x", "w"))
    assert ws.has_blob("w")
    ws.create_net(net)
    assert net.Name() in ws.nets
    assert not workspace.HasBlob("x")
    with pytest.raises(ValueError):
        ws.run(3)


def test_current_workspace_object():
    workspace.FeedBlob("seen", np.ones(1, np.float32))
    assert C.Workspace.current.has_blob("seen")
    assert C.Workspace.current._last_failed_op_net_position() == -1


def test_infer_shapes_and_types():
    net = core.Net("ws_infer")
    net.ConstantFill([], "x", shape=[2, 3], value=1.0)
    net.ConstantFill([], "i", shape=[4], value=1, dtype=core.DataType.INT32)
    net.Copy("x", "y")
    shapes, types = workspace.InferShapesAndTypes([net], {})
    assert shapes["x"] == [2, 3] and shapes["y"] == [2, 3]
    assert types["x"] == caffe2_pb2.TensorProto.FLOAT
    assert shapes["i"] == [4] and types["i"] == caffe2_pb2.TensorProto.INT32
    workspace.FeedBlob("fed", np.zeros((5,), np.float32))
    copy_net = core.Net("ws_infer_ws")
    copy_net.Copy("fed", "fed_copy")
    shapes, _ = workspace.InferShapesAndTypes([copy_net])
    assert shapes["fed_copy"] == [5]


def test_stringify_helpers():
    net = core.Net("ws_stringify")
    assert workspace.StringifyProto(net) == net.Proto().SerializeToString()
    assert workspace.StringifyProto(b"raw") == b"raw"
    assert workspace.StringifyProto(net.Proto()) == net.Proto().SerializeToString()
    with pytest.raises(ValueError):
        workspace.StringifyProto(3)
    assert workspace.GetNetName(net) == "ws_stringify"
    assert workspace.GetNetName(net.Proto()) == "ws_stringify"
    assert workspace.StringifyNetName(net) == "ws_stringify"
    assert workspace.StringifyBlobName(core.BlobReference("b")) == "b"
    with pytest.raises(AssertionError):
        workspace.StringifyBlobName(3)
    with scope.NameScope("ns"):
        assert workspace.GetNameScope() == "ns/"


def test_immediate_mode(capsys):
    assert not workspace.IsImmediate()
    workspace.StartImmediate(i_know=True)
    try:
        assert workspace.IsImmediate()
        core.CreateOperator("ConstantFill", [], "imm", shape=[1], value=4.0)
        assert "imm" in workspace.ImmediateBlobs()
        assert workspace.FetchImmediate("imm")[0] == 4.0
        workspace.FeedImmediate("fed", np.ones(1, np.float32))
        assert "fed" in workspace.ImmediateBlobs()
        assert not workspace.HasBlob("imm")
    finally:
        workspace.StopImmediate()
    assert not workspace.IsImmediate()


def test_build_unique_mutex_iter_and_log_info():
    init = core.Net("ws_iter_init")
    net = core.Net("ws_iter")
    iteration = utils.BuildUniqueMutexIter(init, net)
    assert iteration == "iter"
    assert [op.device_option.device_type for op in init.Proto().op] == [
        caffe2_pb2.CPU,
        caffe2_pb2.CPU,
    ]
    workspace.RunNetOnce(init)
    workspace.CreateNet(net)
    workspace.RunNet(net, num_iter=3)
    assert workspace.FetchBlob(iteration).tolist() == [3]
    log_net = core.Net("ws_log")
    log_net.LogInfo("message", iteration)
    assert [op.type for op in log_net.Proto().op] == ["GivenTensorStringFill", "Print", "Print"]
    assert workspace.RunNetOnce(log_net)


def test_a_net_named_the_empty_string_runs_as_upstream():
    """Python names the first unnamed core.Net ""; upstream creates and runs it, in plans too."""
    workspace.ResetWorkspace()
    net = core.Net("")
    net.ConstantFill([], "x", shape=[1], value=3.0)
    net.Proto().name = ""
    workspace.CreateNet(net)
    workspace.RunNet("")
    assert workspace.FetchBlob("x") == [3.0]
    workspace.ResetWorkspace()
    workspace.RunPlan(core.Plan(core.execution_step("s", net)))
    assert workspace.FetchBlob("x") == [3.0]
