"""The `Python` / `PythonGradient` operators and register_python_op (spec §2.3, §2.6)."""
import pickle
import threading
import time

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import caffe2_pybind11_state as C
from caffe2.python import core, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    C.switch_workspace("python_op_test", True)
    C.reset_workspace()
    yield
    C.switch_workspace("default", True)


def _double(inputs, outputs):
    outputs[0].feed(inputs[0].data * 2)


def _double_grad(inputs, outputs):
    # inputs: x, y, dy
    outputs[0].feed(inputs[2].data * 2)


def _make_scaler(scale):
    def scaler(inputs, outputs):
        outputs[0].feed(inputs[0].data * scale)

    return scaler


def _make_scaler_grad(scale):
    def scaler_grad(inputs, outputs):
        outputs[0].feed(inputs[2].data * scale)

    return scaler_grad


class _Doubler(object):
    def __init__(self, f):
        self.f = f

    def forward(self, inputs, outputs):
        outputs[0].feed(inputs[0].data * 2)

    def backward(self, inputs, outputs):
        outputs[0].feed(inputs[2].data * 2)


def test_schema_and_registration():
    assert C.OpSchema.get("Python") is not None
    assert C.OpSchema.get("PythonGradient") is not None
    assert "Python" in C.registered_operators()
    assert "PythonGradient" in C.registered_operators()


def test_register_tokens_are_unique():
    def fn(inputs, outputs):
        pass

    t1 = C.register_python_op(fn, False, "")
    t2 = C.register_python_op(fn, False, "")
    assert t1.startswith("fn")
    assert t1 != t2
    assert C.register_python_op(fn, False, "myop").startswith("myop:fn")
    C.register_python_gradient_op(t1, fn)
    with pytest.raises(RuntimeError, match="no Python operator"):
        C.register_python_gradient_op("no such token", fn)


def test_forward():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    workspace.FeedBlob("x", x)
    seen = {}

    def f(inputs, outputs):
        seen["types"] = [type(t).__name__ for t in inputs + outputs]
        seen["thread"] = threading.current_thread().name
        outputs[0].feed(inputs[0].data + 1)
        outputs[1].reshape((4,))
        outputs[1].data[...] = 7

    net = core.Net("fwd")
    net.Python(f)(["x"], ["y", "z"])
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), x + 1)
    np.testing.assert_array_equal(workspace.FetchBlob("z"), np.full(4, 7, np.float32))
    assert seen["types"] == ["TensorCPU"] * 3
    op = net.Proto().op[0]
    assert op.type == "Python"
    assert any(a.name == "token" for a in op.arg)


def test_create_python_operator_and_no_inputs():
    def f(inputs, outputs):
        assert inputs == []
        outputs[0].feed(np.array([1, 2, 3], dtype=np.int64))

    op = core.CreatePythonOperator(f, [], ["out"])
    workspace.RunOperatorOnce(op)
    out = workspace.FetchBlob("out")
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_gradient_through_add_gradient_operators():
    x = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    workspace.FeedBlob("x", x)
    net = core.Net("grad")
    net.Python(_double, _double_grad)(["x"], ["y"])
    net.AddGradientOperators(["y"])
    grad_ops = [op for op in net.Proto().op if op.type == "PythonGradient"]
    assert len(grad_ops) == 1
    assert list(grad_ops[0].input) == ["x", "y", "y_autogen_grad"]
    assert list(grad_ops[0].output) == ["x_grad"]
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), 2 * x)
    np.testing.assert_array_equal(workspace.FetchBlob("x_grad"), np.full(3, 2, np.float32))


def test_gradient_index_selection():
    net = core.Net("grad_sel")
    seen = {}

    def fwd(inputs, outputs):
        outputs[0].feed(inputs[0].data + inputs[1].data)
        outputs[1].feed(inputs[0].data * 0)

    def bwd(inputs, outputs):
        seen["n_in"], seen["n_out"] = len(inputs), len(outputs)
        outputs[0].feed(inputs[4].data * 3)

    workspace.FeedBlob("a", np.ones(2, np.float32))
    workspace.FeedBlob("b", np.ones(2, np.float32))
    net.Python(fwd, bwd, grad_output_indices=[0], grad_input_indices=[1])(
        ["a", "b"], ["s", "unused"]
    )
    net.AddGradientOperators(["s"])
    grad_op = [op for op in net.Proto().op if op.type == "PythonGradient"][0]
    assert list(grad_op.input) == ["a", "b", "s", "unused", "s_autogen_grad"]
    assert list(grad_op.output) == ["b_grad"]
    workspace.RunNetOnce(net)
    assert seen == {"n_in": 5, "n_out": 1}
    np.testing.assert_array_equal(workspace.FetchBlob("b_grad"), np.full(2, 3, np.float32))


def test_python_func_type():
    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("functype")
    net.Python(_Doubler, python_func_type=_Doubler)(["x"], ["y"])
    net.AddGradientOperators(["y"])
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [2, 2])
    np.testing.assert_array_equal(workspace.FetchBlob("x_grad"), [2, 2])


def test_builder_tuple_through_net_python():
    workspace.FeedBlob("x", np.ones(3, np.float32))
    net = core.Net("builder_tuple")
    net.Python((_make_scaler, (5,), {}), (_make_scaler_grad, (5,), {}))(["x"], ["y"])
    net.AddGradientOperators(["y"])
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), np.full(3, 5, np.float32))
    np.testing.assert_array_equal(workspace.FetchBlob("x_grad"), np.full(3, 5, np.float32))


def test_pickled_builder_arguments():
    workspace.FeedBlob("x", np.ones(3, np.float32))
    op = core.CreateOperator(
        "Python",
        ["x"],
        ["y"],
        pickled_builder=pickle.dumps((_make_scaler, (4,), {})),
        pickled_grad_builder=pickle.dumps((_make_scaler_grad, (), {"scale": 6})),
    )
    workspace.RunOperatorOnce(op)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), np.full(3, 4, np.float32))
    grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["y_grad"])
    assert [g.type for g in grad_ops] == ["PythonGradient"]
    workspace.FeedBlob("y_grad", np.ones(3, np.float32))
    for g in grad_ops:
        workspace.RunOperatorOnce(g)
    np.testing.assert_array_equal(workspace.FetchBlob("x_grad"), np.full(3, 6, np.float32))


def test_pickled_builder_that_fails_is_an_error():
    op = core.CreateOperator(
        "Python", [], ["y"], pickled_builder=pickle.dumps((_make_scaler, (), {}))
    )  # missing argument
    with pytest.raises(RuntimeError, match="scale"):
        workspace.RunOperatorOnce(op)


def test_pass_workspace():
    workspace.FeedBlob("side", np.array([10.0], dtype=np.float32))
    workspace.FeedBlob("x", np.array([1.0], dtype=np.float32))
    seen = {}

    def f(inputs, outputs, ws):
        seen["ws"] = type(ws).__name__
        side = ws.blobs["side"].fetch()
        outputs[0].feed(inputs[0].data + side)

    net = core.Net("passws")
    net.Python(f, pass_workspace=True)(["x"], ["y"])
    workspace.RunNetOnce(net)
    assert seen["ws"] == "Workspace"
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [11.0])


def test_in_place():
    x = np.arange(4, dtype=np.float32)
    workspace.FeedBlob("x", x)
    seen = {}

    def f(inputs, outputs):
        seen["alias"] = np.shares_memory(inputs[0].data, outputs[0].data)
        outputs[0].data[...] *= 3

    net = core.Net("inplace")
    net.Python(f)(["x"], ["x"])
    workspace.RunNetOnce(net)
    assert seen["alias"]
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x * 3)


def test_exception_propagates_and_process_stays_usable():
    def bad(inputs, outputs):
        raise ValueError("python op exploded 1234")

    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("bad")
    net.Python(bad)(["x"], ["y"])
    workspace.CreateNet(net)
    for _ in range(3):
        with pytest.raises(RuntimeError, match="ValueError: python op exploded 1234"):
            workspace.RunNet(net.Name())
    # Still usable: other Python ops and plain ops run.
    good = core.Net("good")
    good.Python(_double)(["x"], ["z"])
    good.Copy("z", "w")
    workspace.RunNetOnce(good)
    np.testing.assert_array_equal(workspace.FetchBlob("w"), [2, 2])


def test_exception_in_gradient_op():
    def bad_grad(inputs, outputs):
        raise KeyError("grad failure")

    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("badgrad")
    net.Python(_double, bad_grad)(["x"], ["y"])
    net.AddGradientOperators(["y"])
    with pytest.raises(RuntimeError, match="grad failure"):
        workspace.RunNetOnce(net)


def test_missing_token():
    op = core.CreateOperator("Python", [], ["y"], token="no_such_python_function")
    with pytest.raises(
        RuntimeError, match="Python operator for no_such_python_function is not available"
    ):
        workspace.RunOperatorOnce(op)
    op = core.CreateOperator("Python", [], ["y"])
    with pytest.raises(RuntimeError, match="token"):
        workspace.RunOperatorOnce(op)


def test_missing_gradient_function():
    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("nograd")
    net.Python(_double)(["x"], ["y"])
    net.AddGradientOperators(["y"])
    with pytest.raises(RuntimeError, match="_gradient is not available"):
        workspace.RunNetOnce(net)


@pytest.mark.parametrize("net_type", ["dag", "async_scheduling"])
def test_dag_net_runs_python_ops_concurrently(net_type):
    n = 6
    lock = threading.Lock()
    state = {"active": 0, "max_active": 0, "threads": set()}

    def make(i):
        def f(inputs, outputs):
            with lock:
                state["active"] += 1
                state["max_active"] = max(state["max_active"], state["active"])
                state["threads"].add(threading.get_ident())
            time.sleep(0.05)  # releases the GIL: other ops may enter
            outputs[0].feed(inputs[0].data + i)
            with lock:
                state["active"] -= 1

        return f

    workspace.FeedBlob("x", np.zeros(2, np.float32))
    net = core.Net("dag_py_" + net_type)
    for i in range(n):
        net.Python(make(i))(["x"], ["y%d" % i])
    net.Sum(["y%d" % i for i in range(n)], "total")
    net.Proto().type = net_type
    net.Proto().num_workers = 4
    workspace.CreateNet(net)
    for _ in range(3):
        workspace.RunNet(net.Name())
        np.testing.assert_array_equal(
            workspace.FetchBlob("total"), np.full(2, sum(range(n)), np.float32)
        )
    assert state["max_active"] >= 2
    assert len(state["threads"]) >= 2


def test_dag_net_exception():
    def bad(inputs, outputs):
        raise RuntimeError("dag python failure")

    workspace.FeedBlob("x", np.zeros(2, np.float32))
    net = core.Net("dag_bad")
    net.Python(_double)(["x"], ["a"])
    net.Python(bad)(["x"], ["b"])
    net.Proto().type = "dag"
    net.Proto().num_workers = 2
    with pytest.raises(RuntimeError, match="dag python failure"):
        workspace.RunNetOnce(net)
    workspace.FeedBlob("x", np.ones(2, np.float32))
    ok = core.Net("dag_ok")
    ok.Python(_double)(["x"], ["a"])
    ok.Proto().type = "dag"
    workspace.RunNetOnce(ok)
    np.testing.assert_array_equal(workspace.FetchBlob("a"), [2, 2])


def test_op_runs_on_python_created_thread():
    # A net run from a Python thread while the main thread holds the GIL waiting on it.
    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = core.Net("threaded")
    net.Python(_double)(["x"], ["y"])
    workspace.CreateNet(net)
    errors = []

    def run():
        try:
            for _ in range(5):
                workspace.RunNet(net.Name())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert not any(t.is_alive() for t in threads)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [2, 2])


def test_device_option_cpu():
    op = core.CreatePythonOperator(
        _double, ["x"], ["y"], device_option=core.DeviceOption(caffe2_pb2.CPU)
    )
    workspace.FeedBlob("x", np.ones(1, np.float32))
    workspace.RunOperatorOnce(op)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [2])
