"""If and While: the branch taken for each condition (else_net optional), a counting loop with and
without cond_net, a loop that never runs, an If nested in a While, nets passed as serialized bytes,
blobs the nets both read and write, the errors (a condition that is not one bool, a missing
then_net/loop_net, a failing subnet), and device checks with the nets on the device."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import CPU, gpu, needs_gpu

COVERED_CUDA_OPS = ["If", "While"]


def fill_net(name, blob, value, device=None):
    net = core.Net(name)
    net.ConstantFill([], blob, shape=[1], value=value)
    if device is not None:
        net.Proto().device_option.CopyFrom(device)
    return net


def counting_loop(with_cond_net, device=None):
    """sum_{i < 5} i with a While: s += i; i += 1 while i < 5."""
    body = core.Net("body")
    body.Add(["s", "i"], ["s"])
    body.Add(["i", "one"], ["i"])
    cond = core.Net("cond")
    cond.LT(["i", "five"], ["c"])
    loop = core.Net("loop")
    if with_cond_net:
        loop.While(["c", "s", "i"], ["s", "i"], loop_net=body.Proto(), cond_net=cond.Proto())
    else:
        body.LT(["i", "five"], ["c"])  # the body updates the condition itself
        loop.LT(["i", "five"], ["c"])
        loop.While(["c", "s", "i"], ["s", "i"], loop_net=body.Proto())
    for net in (body, cond, loop):
        if device is not None:
            net.Proto().device_option.CopyFrom(device)
    return loop


def feed_counter(start=0, device=None):
    device = device or CPU
    for name, value in (("i", start), ("s", 0), ("one", 1), ("five", 5)):
        workspace.FeedBlob(name, np.array([value], np.int64), device)
    workspace.FeedBlob("c", np.array([True]), device)


@pytest.mark.parametrize("condition,expected", [(True, 1.0), (False, 2.0)])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_if_takes_the_branch_the_condition_says(condition, expected, as_bytes):
    workspace.ResetWorkspace()
    workspace.FeedBlob("c", np.array(condition))  # 0-d, as upstream's scalars
    workspace.FeedBlob("y", np.zeros(1, np.float32))
    net = core.Net("if_net")
    net.If(
        ["c"],
        ["y"],
        then_net=fill_net("then", "y", 1.0).Proto(),
        else_net=fill_net("else", "y", 2.0).Proto(),
    )
    workspace.RunNetOnce(net.Proto().SerializeToString() if as_bytes else net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [expected])


def test_if_without_else_leaves_blobs_alone():
    workspace.ResetWorkspace()
    workspace.FeedBlob("c", np.array([False]))
    workspace.FeedBlob("y", np.full(1, 7.0, np.float32))
    net = core.Net("if_net")
    net.If(["c"], ["y"], then_net=fill_net("then", "y", 1.0).Proto())
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [7.0])


@pytest.mark.parametrize("with_cond_net", [True, False])
def test_while_counts(with_cond_net):
    workspace.ResetWorkspace()
    feed_counter()
    workspace.RunNetOnce(counting_loop(with_cond_net))
    assert workspace.FetchBlob("s") == [10] and workspace.FetchBlob("i") == [5]


def test_a_loop_whose_condition_is_false_never_runs():
    workspace.ResetWorkspace()
    feed_counter(start=9)
    workspace.RunNetOnce(counting_loop(True))
    assert workspace.FetchBlob("s") == [0] and workspace.FetchBlob("i") == [9]


def test_if_nested_in_a_while():
    """Sums the even i < 6 with an If inside the loop body on a parity flag the body flips."""
    workspace.ResetWorkspace()
    feed_counter()
    workspace.FeedBlob("six", np.array([6], np.int64))
    workspace.FeedBlob("even", np.array([True]))
    add_i = core.Net("add_i")
    add_i.Add(["s", "i"], ["s"])
    body = core.Net("body")
    body.If(["even", "s", "i"], ["s"], then_net=add_i.Proto())
    body.Not(["even"], ["even"])
    body.Add(["i", "one"], ["i"])
    cond = core.Net("cond")
    cond.LT(["i", "six"], ["c"])
    net = core.Net("outer")
    net.While(["c"], ["s", "i"], loop_net=body.Proto(), cond_net=cond.Proto())
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob("s") == [0 + 2 + 4] and workspace.FetchBlob("i") == [6]


@pytest.mark.parametrize(
    "condition,message",
    [
        (np.array([1], np.int32), r"the condition 'c' must be a one-element bool tensor"),
        (np.array([True, False]), r"the condition 'c' must be a one-element bool tensor"),
    ],
)
def test_a_bad_condition_is_a_clear_error(condition, message):
    for op_type, arg in (("If", "then_net"), ("While", "loop_net")):
        workspace.ResetWorkspace()
        workspace.FeedBlob("c", condition)
        op = core.CreateOperator(op_type, ["c"], [], **{arg: fill_net("n", "y", 1.0).Proto()})
        with pytest.raises(RuntimeError, match=message):
            workspace.RunOperatorOnce(op)


@pytest.mark.parametrize("op_type,arg", [("If", "then_net"), ("While", "loop_net")])
def test_the_net_argument_is_required(op_type, arg):
    workspace.ResetWorkspace()
    workspace.FeedBlob("c", np.array([True]))
    with pytest.raises(RuntimeError, match="missing required argument '{}'".format(arg)):
        workspace.RunOperatorOnce(core.CreateOperator(op_type, ["c"], []))


def test_a_failing_subnet_fails_the_op_and_names_the_inner_op():
    workspace.ResetWorkspace()
    workspace.FeedBlob("c", np.array([True]))
    workspace.FeedBlob("a", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("b", np.zeros((4,), np.float32))
    bad = core.Net("bad")
    bad.MatMul(["a", "b"], ["y"])
    net = core.Net("if_net")
    net.If(["c", "a", "b"], ["y"], then_net=bad.Proto())
    with pytest.raises(RuntimeError, match="MatMul"):
        workspace.RunNetOnce(net)


@needs_gpu
def test_device_check():
    device = gpu()
    workspace.ResetWorkspace()
    workspace.FeedBlob("c", np.array([False]), device)
    workspace.FeedBlob("y", np.zeros(1, np.float32), device)
    net = core.Net("if_net")
    net.If(
        ["c"],
        ["y"],
        then_net=fill_net("then", "y", 1.0, device).Proto(),
        else_net=fill_net("else", "y", 2.0, device).Proto(),
    )
    net.Proto().device_option.CopyFrom(device)
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [2.0])
    workspace.ResetWorkspace()
    feed_counter(device=device)
    workspace.RunNetOnce(counting_loop(True, device))
    assert workspace.FetchBlob("s") == [10] and workspace.FetchBlob("i") == [5]
