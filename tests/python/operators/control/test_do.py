"""Do, CreateScope and HasScope: a subnet run in a child workspace that writes the bound outer
blobs and keeps its other blobs to itself, a child that cannot see unbound outer blobs, the stack
(HasScope before and after, reuse_workspace, CreateScope clearing it), each binding error, the
refused upstream options, and device checks."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import gpu, needs_gpu

COVERED_CUDA_OPS = ["Do", "CreateScope", "HasScope"]


def triple_net():
    """inner_y = 2 * inner_x + inner_x, through a local blob tmp."""
    sub = core.Net("sub")
    sub.Scale(["inner_x"], ["tmp"], scale=2.0)
    sub.Add(["tmp", "inner_x"], ["inner_y"])
    return sub


def do_net(device=None, **kwargs):
    net = core.Net("do")
    net.CreateScope([], ["ws"])
    kwargs.setdefault("inner_blobs", ["inner_x", "inner_y"])
    kwargs.setdefault("outer_blobs_idx", [0, 1])
    net.Do(["x", "ws"], ["y", "ws"], net=triple_net().Proto(), **kwargs)
    if device is not None:
        net.Proto().device_option.CopyFrom(device)
        for op in net.Proto().op:
            for arg in op.arg:
                if arg.name == "net":
                    arg.n.device_option.CopyFrom(device)
    return net


def has_scope():
    workspace.RunOperatorOnce(core.CreateOperator("HasScope", ["ws"], ["has"]))
    return bool(workspace.FetchBlob("has"))


def test_subnet_writes_bound_blobs_and_keeps_its_own():
    workspace.ResetWorkspace()
    x = np.arange(4, dtype=np.float32)
    workspace.FeedBlob("x", x)
    net = do_net()
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), 3 * x)
    assert not workspace.HasBlob("tmp") and not workspace.HasBlob("inner_y")
    assert has_scope()
    # Again, from bytes: CreateScope clears the stack and the child is reused.
    workspace.FeedBlob("x", x + 1)
    workspace.RunNetOnce(net.Proto().SerializeToString())
    np.testing.assert_array_equal(workspace.FetchBlob("y"), 3 * (x + 1))


def test_create_scope_gives_an_empty_stack():
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("CreateScope", [], ["ws"]))
    assert not has_scope()


def test_reuse_workspace_reruns_in_the_top_child():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    net = do_net(reuse_workspace=True)
    workspace.RunNetOnce(net)
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [3.0, 3.0])


def test_the_child_sees_only_bound_blobs():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    workspace.FeedBlob("other", np.ones(2, np.float32))
    sub = core.Net("sub")
    sub.Add(["inner_x", "other"], ["inner_y"])
    net = core.Net("do")
    net.CreateScope([], ["ws"])
    net.Do(
        ["x", "ws"],
        ["y", "ws"],
        net=sub.Proto(),
        inner_blobs=["inner_x", "inner_y"],
        outer_blobs_idx=[0, 1],
    )
    with pytest.raises(RuntimeError, match="other"):
        workspace.RunNetOnce(net)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            {"inner_blobs": ["inner_x"], "outer_blobs_idx": [0, 1]},
            "inner_blobs has 1 names but outer_blobs_idx has 2 indices",
        ),
        (
            {"outer_blobs_idx": [0, 2]},
            r"outer_blobs_idx\[1\] = 2 is out of range for 2 outer blobs",
        ),
        (
            {"inner_blobs": ["inner_x"], "outer_blobs_idx": [0]},
            "the outer blob 'y' is bound to no inner blob",
        ),
        ({"inner_blobs": ["inner_x", "inner_x"]}, "the inner blob 'inner_x' is bound twice"),
        ({"outer_blobs_idx": [0, 0]}, "the outer blob 'y' is bound to no inner blob"),
        ({"copy_external_blobs": True}, "copy_external_blobs is not supported"),
    ],
)
def test_binding_errors_are_clear(kwargs, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    with pytest.raises(RuntimeError, match=message):
        workspace.RunNetOnce(do_net(**kwargs))


def test_the_stack_blob_must_end_inputs_and_outputs_and_hold_a_stack():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    workspace.FeedBlob("ws", np.ones(1, np.float32))
    op = core.CreateOperator(
        "Do",
        ["x", "ws"],
        ["y", "ws2"],
        net=triple_net().Proto(),
        inner_blobs=["inner_x", "inner_y"],
        outer_blobs_idx=[0, 1],
    )
    with pytest.raises(RuntimeError, match="must be the same workspace stack blob"):
        workspace.RunOperatorOnce(op)
    op = core.CreateOperator(
        "Do",
        ["x", "ws"],
        ["y", "ws"],
        net=triple_net().Proto(),
        inner_blobs=["inner_x", "inner_y"],
        outer_blobs_idx=[0, 1],
    )
    with pytest.raises(RuntimeError, match="the blob 'ws' holds no workspace stack"):
        workspace.RunOperatorOnce(op)
    with pytest.raises(RuntimeError, match="the blob 'ws' holds no workspace stack"):
        has_scope()


def test_the_gradient_form_is_refused():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(2, np.float32))
    workspace.RunOperatorOnce(core.CreateOperator("CreateScope", [], ["ws"]))
    op = core.CreateOperator(
        "Do",
        ["x", "ws"],
        ["y", "ws"],
        net=triple_net().Proto(),
        inner_blobs=["inner_x", "inner_y"],
        outer_blobs_idx=[0, 1],
    )
    op.is_gradient_op = True
    with pytest.raises(RuntimeError, match="the gradient form of Do is not supported"):
        workspace.RunOperatorOnce(op)


@needs_gpu
def test_device_check():
    device = gpu()
    workspace.ResetWorkspace()
    x = np.arange(4, dtype=np.float32)
    workspace.FeedBlob("x", x, device)
    workspace.RunNetOnce(do_net(device))
    y = workspace.FetchBlob("y")
    np.testing.assert_array_equal(y, 3 * x)
    workspace.RunOperatorOnce(
        core.CreateOperator("HasScope", ["ws"], ["has"], device_option=device)
    )
    assert bool(workspace.FetchBlob("has"))
