"""The net bindings (python/src/net_bindings.cc): a net's timeline written from Python."""
import pytest

from caffe2.python import core, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.SwitchWorkspace("load_errors_test", True)
    workspace.ResetWorkspace()
    yield
    workspace.SwitchWorkspace("default", True)


def test_timeline_from_python(tmp_path):
    path = str(tmp_path / "trace.json")
    net = core.Net("traced_py")
    net.ConstantFill([], "x", shape=[4], value=1.0)
    net.Proto().arg.add(name="timeline", s=path.encode())
    workspace.CreateNet(net)
    workspace.RunNet(net, 3)
    workspace.C.write_net_timeline(net.Name())
    import json

    with open(path) as f:
        events = json.load(f)["traceEvents"]
    assert len(events) == 3 and events[0]["name"] == "ConstantFill"
