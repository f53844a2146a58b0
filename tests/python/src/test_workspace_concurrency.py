"""The workspace's rule for threads (core/workspace.h): while a net runs in a workspace, resetting
the workspace, deleting or overwriting the running net, and feeding a blob the net uses are refused
with an error naming the net; other blobs may be fed meanwhile. Also: the empty workspace name,
RunNet's num_iter, and a DAG net asking for absurdly many workers."""
import threading

import numpy as np
import pytest

from caffe2.python import core, workspace
from reliability_util import assert_clear_error, assert_usable, fresh_workspace_fixture


fresh_workspace = fresh_workspace_fixture("concurrency_test")


def slow_net(name="slow"):
    """A net that runs until released: a Python op that says it has started, then waits."""
    started, release = threading.Event(), threading.Event()

    def wait(inputs, outputs):
        started.set()
        release.wait(60)
        outputs[0].feed(inputs[0].data * 2)

    net = core.Net(name)
    net.Python(wait)(["x"], ["y"])
    workspace.FeedBlob("x", np.ones(3, np.float32))
    workspace.CreateNet(net)
    return net, started, release


def run_in_thread(net, started):
    errors = []

    def body():
        try:
            workspace.RunNet(net)
        except Exception as e:  # pragma: no cover - reported by the assertion below
            errors.append(e)

    thread = threading.Thread(target=body)
    thread.start()
    assert started.wait(60), "the net never started"  # it now runs, inside the Python op
    return thread, errors


def test_a_running_net_keeps_its_workspace_net_and_blobs():
    net, started, release = slow_net()
    thread, errors = run_in_thread(net, started)
    try:
        assert_clear_error(
            workspace.ResetWorkspace, "reset workspace 'concurrency_test'", "net 'slow'"
        )
        assert_clear_error(
            lambda: workspace.FeedBlob("x", np.zeros(3, np.int64)), "feed blob 'x'", "net 'slow'"
        )
        assert_clear_error(lambda: workspace.C.delete_net("slow"), "delete net 'slow'")
        assert_clear_error(lambda: workspace.CreateNet(net, overwrite=True), "overwrite net 'slow'")
        workspace.FeedBlob("unrelated", np.zeros(2, np.float32))  # blobs the net does not use: fine
    finally:
        release.set()
        thread.join()
    assert errors == []
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [2, 2, 2])
    # Once it is done, all of that is allowed again.
    workspace.FeedBlob("x", np.zeros(3, np.int64))
    workspace.ResetWorkspace()
    assert_usable()


def test_empty_workspace_name_can_be_reset():
    # Upstream's gradient checker names its workspace str(device_option): '' for the default CPU
    # one.
    workspace.SwitchWorkspace("", True)
    try:
        workspace.FeedBlob("a", np.ones(1, np.float32))
        assert workspace.ResetWorkspace()
        assert not workspace.HasBlob("a")
        assert workspace.CurrentWorkspace() == ""
    finally:
        workspace.SwitchWorkspace("concurrency_test", True)


def test_run_net_refuses_a_negative_num_iter():
    net = core.Net("once")
    net.ConstantFill([], ["c"], shape=[1], value=1.0)
    workspace.CreateNet(net)
    assert_clear_error(
        lambda: workspace.RunNet(net, num_iter=-5), "net once: num_iter must be >= 0, got -5"
    )
    assert workspace.RunNet(net, num_iter=0)  # runs nothing, as upstream


@pytest.mark.parametrize("net_type", ["dag", "async_scheduling"])
def test_absurd_worker_counts(net_type):
    net = core.Net("many_" + net_type)
    net.Proto().type = net_type
    net.Proto().num_workers = 100000
    net.ConstantFill([], ["a"], shape=[1], value=1.0)
    net.ConstantFill([], ["b"], shape=[1], value=2.0)
    workspace.RunNetOnce(net)  # capped at the op count: two workers
    assert workspace.FetchBlob("b")[0] == 2.0
    net.Proto().num_workers = -5
    assert_clear_error(lambda: workspace.RunNetOnce(net), "num_workers must be >= 0", "-5")


def test_run_net_once_with_the_wrong_object_is_a_type_error():
    assert_clear_error(
        lambda: workspace.RunNetOnce(None), "Expected a net", "NoneType", error=TypeError
    )
    op = core.CreateOperator("ConstantFill", [], ["z"], shape=[1])
    assert_clear_error(
        lambda: workspace.RunNetOnce(op), "OperatorDef", "RunOperatorOnce", error=TypeError
    )


def test_serialized_nets_as_bytes():
    net = core.Net("from_bytes")
    net.ConstantFill([], ["fb"], shape=[2], value=5.0)
    workspace.RunNetOnce(net.Proto().SerializeToString())
    np.testing.assert_array_equal(workspace.FetchBlob("fb"), [5.0, 5.0])
    workspace.CreateNet(net.Proto().SerializeToString())
    assert workspace.RunNet("from_bytes")
