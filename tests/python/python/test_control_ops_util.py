"""control_ops_util (add_if_op, add_while_op, get_external_blob_names) and
brew.cond / brew.loop: the nets they build (CreateScope per subnet, If/While
whose then/else/loop/cond nets each hold one Do op binding the outer blobs),
run on the real If/While/Do/CreateScope ops and checked against Python.

Blobs a subnet writes that are not in the lexical scope stay in the subnet's
child workspace: every run also checks that they do not reach the outer
workspace, not even when an outer blob of the same name exists.

No gradients: If/While/Do have none in this package."""

import math

import numpy as np
import pytest

from caffe2.python import brew, control_ops_util, core, model_helper, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def feed(**blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(name, value)


def scalar_i32(v):
    return np.array([v], dtype=np.int32)


def args_of(op):
    return {a.name: a for a in op.arg}


def do_op_of(subnet_arg):
    """The single Do op of an If/While subnet argument."""
    ops = list(subnet_arg.n.op)
    assert [op.type for op in ops] == ["Do"]
    return ops[0]


def check_bindings(do_op):
    """inner_blobs[k] names the blob at outer_blobs_idx[k] of the Do op's
    inputs-without-stack followed by outputs-without-stack, and the stack
    blob is last in both."""
    a = args_of(do_op)
    inner = [s.decode() for s in a["inner_blobs"].strings]
    idx = list(a["outer_blobs_idx"].ints)
    ordered = list(do_op.input[:-1]) + list(do_op.output[:-1])
    assert [ordered[i] for i in idx] == inner
    assert do_op.input[-1] == do_op.output[-1]
    assert "copy_external_blobs" not in a
    return set(inner)


# -- get_external_blob_names ------------------------------------------------


def test_external_blob_names_are_first_reads_and_scoped_writes():
    net = core.Net("ext")
    net.Add(["a", "b"], "t")  # t: local, written first
    net.Mul(["t", "c"], "a")  # a: read before written, then written
    net.Copy("a", "d")  # d: written and in scope
    inputs, outputs = control_ops_util.get_external_blob_names(net, ["a", "b", "c", "d", "e"])
    assert inputs == {"a", "b", "c"}
    assert outputs == {"a", "d"}


def test_external_blob_names_reject_a_read_outside_the_scope():
    net = core.Net("ext_bad")
    net.Copy("hidden", "y")
    with pytest.raises(AssertionError, match="hidden is undefined"):
        control_ops_util.get_external_blob_names(net, ["y"])


# -- If -----------------------------------------------------------------------


def build_if(with_else=True):
    """then: tmp = x + x; y = tmp * x (2x^2). else: etmp = 3x; y = etmp - x
    (2x). tmp and etmp are local to their branch."""
    then_net = core.Net("then_branch")
    then_net.Add(["x", "x"], "tmp")
    then_net.Mul(["tmp", "x"], "y")
    else_net = None
    if with_else:
        else_net = core.Net("else_branch")
        else_net.Scale("x", "etmp", scale=3.0)
        else_net.Sub(["etmp", "x"], "y")
    net = core.Net("if_net")
    control_ops_util.add_if_op(net, "cond", ["cond", "x", "y"], then_net, else_net)
    return net


def test_if_net_structure():
    net = build_if()
    ops = net.Proto().op
    assert [op.type for op in ops] == ["CreateScope", "CreateScope", "If"]
    then_ws, else_ws = ops[0].output[0], ops[1].output[0]
    assert then_ws != else_ws
    if_op = ops[2]
    assert if_op.input[0] == "cond"
    assert list(if_op.input[1:]) == ["x", then_ws, else_ws]
    assert list(if_op.output) == ["y", then_ws, else_ws]
    a = args_of(if_op)
    then_do, else_do = do_op_of(a["then_net"]), do_op_of(a["else_net"])
    assert then_do.input[-1] == then_ws and else_do.input[-1] == else_ws
    assert check_bindings(then_do) == {"x", "y"}
    assert check_bindings(else_do) == {"x", "y"}
    # The branch nets are carried unchanged inside the Do ops.
    assert [op.type for op in args_of(then_do)["net"].n.op] == ["Add", "Mul"]
    assert [op.type for op in args_of(else_do)["net"].n.op] == ["Scale", "Sub"]
    assert set(net.Proto().external_output) == {"y", then_ws, else_ws}


@pytest.mark.parametrize("flag", [True, False])
def test_if_runs_one_branch_and_keeps_its_temps_local(flag):
    x = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    outer_tmp = np.array([7.0], dtype=np.float32)
    feed(cond=np.array([flag]), x=x, y=np.zeros(3, np.float32), tmp=outer_tmp)
    net = build_if()
    workspace.RunNetOnce(net)
    expected = 2 * x * x if flag else 2 * x
    np.testing.assert_allclose(workspace.FetchBlob("y"), expected, rtol=1e-6)
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x)
    # The then branch's tmp is its own, not the outer one; etmp never leaks.
    np.testing.assert_array_equal(workspace.FetchBlob("tmp"), outer_tmp)
    assert not workspace.HasBlob("etmp")
    stacks = [op.output[0] for op in net.Proto().op if op.type == "CreateScope"]
    assert sorted(workspace.Blobs()) == sorted(["cond", "x", "y", "tmp"] + stacks)


def test_if_without_else_leaves_outputs_alone_when_false():
    x = np.array([2.0], dtype=np.float32)
    feed(cond=np.array([False]), x=x, y=np.array([-1.0], np.float32))
    net = build_if(with_else=False)
    assert [op.type for op in net.Proto().op] == ["CreateScope", "If"]
    assert "else_net" not in args_of(net.Proto().op[-1])
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [-1.0])
    feed(cond=np.array([True]))
    workspace.RunNetOnce(net)
    np.testing.assert_allclose(workspace.FetchBlob("y"), [8.0])
    assert not workspace.HasBlob("tmp")


# -- While ---------------------------------------------------------------------


def build_factorial(net):
    """acc = n! by a counter loop whose body updates the condition itself
    (no cond_net). The body's next_i is local."""
    net.ConstantFill([], "i", shape=[1], value=1, dtype=core.DataType.INT32)
    net.ConstantFill([], "one", shape=[1], value=1, dtype=core.DataType.INT32)
    net.ConstantFill([], "acc", shape=[1], value=1, dtype=core.DataType.INT32)
    net.LE(["i", "n"], "cond")
    body = core.Net("factorial_body")
    body.Mul(["acc", "i"], "acc")
    body.Add(["i", "one"], "next_i")
    body.Copy("next_i", "i")
    body.LE(["i", "n"], "cond")
    control_ops_util.add_while_op(net, "cond", ["i", "n", "one", "acc", "cond"], body)
    return net


@pytest.mark.parametrize("n", [0, 1, 5, 7])
def test_while_factorial_without_cond_net(n):
    feed(n=scalar_i32(n))
    net = build_factorial(core.Net("factorial"))
    while_op = net.Proto().op[-1]
    assert while_op.type == "While"
    assert while_op.input[0] == "cond"
    a = args_of(while_op)
    assert "cond_net" not in a
    # Blobs the body writes are inputs too: the body may run zero times.
    assert set(while_op.input[1:-1]) == {"i", "n", "one", "acc", "cond"}
    assert set(while_op.output[:-1]) == {"i", "acc", "cond"}
    assert check_bindings(do_op_of(a["loop_net"])) == {"i", "n", "one", "acc", "cond"}
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob("acc").tolist() == [math.factorial(n)]
    assert workspace.FetchBlob("i").tolist() == [max(n, 0) + 1]
    assert workspace.FetchBlob("cond").tolist() == [False]
    assert not workspace.HasBlob("next_i")


def build_sum(net, cond_in_scope):
    """s = 0 + 1 + ... + (n - 1); cond_net computes go = (i + 1 <= n)
    through a local i_plus."""
    net.ConstantFill([], "i", shape=[1], value=0, dtype=core.DataType.INT32)
    net.ConstantFill([], "one", shape=[1], value=1, dtype=core.DataType.INT32)
    net.ConstantFill([], "s", shape=[1], value=0, dtype=core.DataType.INT32)
    cond_net = core.Net("sum_cond")
    cond_net.Add(["i", "one"], "i_plus")
    cond_net.LE(["i_plus", "n"], "go")
    body = core.Net("sum_body")
    body.Add(["s", "i"], "s")
    body.Add(["i", "one"], "i")
    scope = ["i", "n", "one", "s"] + (["go"] if cond_in_scope else [])
    control_ops_util.add_while_op(net, "go", scope, body, cond_net)
    return net


@pytest.mark.parametrize("cond_in_scope", [False, True])
@pytest.mark.parametrize("n", [0, 1, 6])
def test_while_sum_with_cond_net(n, cond_in_scope):
    feed(n=scalar_i32(n))
    if cond_in_scope:
        feed(go=np.array([True]))
    net = build_sum(core.Net("sum"), cond_in_scope)
    types = [op.type for op in net.Proto().op]
    # A condition blob from outside the scope is first made (False) in the net.
    fills = [op for op in net.Proto().op if op.type == "ConstantFill" and op.output[0] == "go"]
    assert len(fills) == (0 if cond_in_scope else 1)
    assert types[-3:] == ["CreateScope", "CreateScope", "While"]
    while_op = net.Proto().op[-1]
    a = args_of(while_op)
    assert check_bindings(do_op_of(a["cond_net"])) == {"i", "one", "n", "go"}
    assert "go" in while_op.output
    workspace.RunNetOnce(net)
    assert workspace.FetchBlob("s").tolist() == [sum(range(n))]
    assert workspace.FetchBlob("i").tolist() == [n]
    assert workspace.FetchBlob("go").tolist() == [False]
    assert not workspace.HasBlob("i_plus")


def test_while_cond_net_must_write_the_condition():
    cond_net = core.Net("no_write")
    cond_net.LT(["i", "n"], "other")
    body = core.Net("body")
    body.Add(["i", "n"], "i")
    with pytest.raises(AssertionError, match="does not write into condition blob"):
        control_ops_util.add_while_op(core.Net("w"), "go", ["i", "n"], body, cond_net)


def test_while_from_serialized_bytes_and_rerun():
    feed(n=scalar_i32(5))
    net = build_factorial(core.Net("factorial_bytes"))
    workspace.RunNetOnce(net.Proto().SerializeToString())
    assert workspace.FetchBlob("acc").tolist() == [120]
    # A created net reruns from scratch: its CreateScope ops clear the stacks.
    feed(n=scalar_i32(4))
    workspace.CreateNet(net.Proto().SerializeToString())
    for _ in range(2):
        workspace.RunNet(net.Name())
        assert workspace.FetchBlob("acc").tolist() == [24]
    stack = net.Proto().op[-1].input[-1]
    workspace.RunOperatorOnce(core.CreateOperator("HasScope", [stack], ["has"]))
    has = workspace.FetchBlob("has")
    assert has.dtype == np.bool_ and has.size == 1 and bool(has.item())


def test_if_nested_in_while():
    """s = sum(i if i < k else 10 * i for i in range(n)), the choice made by
    an If inside the loop body; its condition and stacks are body locals."""
    n, k = 6, 3
    feed(n=scalar_i32(n), k=scalar_i32(k), ten=scalar_i32(10))
    net = core.Net("nested")
    net.ConstantFill([], "i", shape=[1], value=0, dtype=core.DataType.INT32)
    net.ConstantFill([], "one", shape=[1], value=1, dtype=core.DataType.INT32)
    net.ConstantFill([], "s", shape=[1], value=0, dtype=core.DataType.INT32)
    net.LT(["i", "n"], "go")
    outer_scope = ["i", "n", "k", "ten", "one", "s", "go"]

    small = core.Net("small")
    small.Add(["s", "i"], "s")
    large = core.Net("large")
    large.Mul(["i", "ten"], "ten_i")
    large.Add(["s", "ten_i"], "s")
    body = core.Net("nested_body")
    body.LT(["i", "k"], "i_lt_k")
    control_ops_util.add_if_op(body, "i_lt_k", outer_scope, small, large)
    body.Add(["i", "one"], "i")
    body.LT(["i", "n"], "go")
    control_ops_util.add_while_op(net, "go", outer_scope, body)

    workspace.RunNetOnce(net)
    expected = sum(i if i < k else 10 * i for i in range(n))
    assert workspace.FetchBlob("s").tolist() == [expected]
    for local in ["i_lt_k", "ten_i", "nested_body/workspace_if_then"]:
        assert not workspace.HasBlob(local)


# -- brew.cond / brew.loop -----------------------------------------------------


def test_brew_registers_cond_and_loop():
    assert brew.has_helper("cond") and brew.has_helper("loop")
    assert brew.cond.__name__ == "cond" and brew.loop.__name__ == "loop"


@pytest.mark.parametrize("a,b", [(3.0, -1.0), (-2.5, 4.0), (1.0, 1.0)])
def test_brew_cond_computes_max(a, b):
    feed(a=np.array([a], np.float32), b=np.array([b], np.float32))
    model = model_helper.ModelHelper(name="max_model")
    model.net.GT(["a", "b"], "a_gt_b")
    then_model = model_helper.ModelHelper(name="take_a")
    then_model.net.Copy("a", "m")
    else_model = model_helper.ModelHelper(name="take_b")
    else_model.net.Copy("b", "m")
    result = brew.cond(model, "a_gt_b", ["a", "b", "m"], then_model, else_model)
    assert result is None
    assert [op.type for op in model.net.Proto().op] == ["GT", "CreateScope", "CreateScope", "If"]
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("m").tolist() == [max(a, b)]


@pytest.mark.parametrize("with_cond_model", [True, False])
@pytest.mark.parametrize("k", [0, 3])
def test_brew_loop_computes_power(k, with_cond_model):
    """p = x ** k by repeated multiplication, the condition recomputed by a
    cond model or by the loop model itself."""
    x = np.array([1.5, -2.0], dtype=np.float32)
    feed(x=x, k=scalar_i32(k))
    model = model_helper.ModelHelper(name="power_model")
    model.param_init_net.ConstantFill([], "i", shape=[1], value=0, dtype=core.DataType.INT32)
    model.param_init_net.ConstantFill([], "one", shape=[1], value=1, dtype=core.DataType.INT32)
    model.param_init_net.ConstantFill([], "p", shape=[2], value=1.0)
    loop_model = model_helper.ModelHelper(name="power_step")
    loop_model.net.Mul(["p", "x"], "p")
    loop_model.net.Add(["i", "one"], "i")
    scope = ["i", "one", "k", "p", "x"]
    cond_model = None
    if with_cond_model:
        cond_model = model_helper.ModelHelper(name="power_cond")
        cond_model.net.LT(["i", "k"], "more")
    else:
        loop_model.net.LT(["i", "k"], "more")
        model.net.LT(["i", "k"], "more")
        scope.append("more")
    brew.loop(model, "more", scope, loop_model, cond_model)
    assert model.net.Proto().op[-1].type == "While"
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(workspace.FetchBlob("p"), x**k, rtol=1e-6)
    assert workspace.FetchBlob("i").tolist() == [k]


# -- errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "cond",
    [np.array([1.0], np.float32), np.array([True, False]), np.zeros(0, dtype=bool)],
    ids=["float", "two_elements", "empty"],
)
def test_if_and_while_reject_a_bad_condition(cond):
    feed(x=np.array([2.0], np.float32), y=np.zeros(1, np.float32), cond=cond)
    with pytest.raises(RuntimeError, match="one-element bool"):
        workspace.RunNetOnce(build_if())
    body = core.Net("bad_body")
    body.Copy("x", "y")
    net = core.Net("bad_while")
    control_ops_util.add_while_op(net, "cond", ["x", "y", "cond"], body)
    with pytest.raises(RuntimeError, match="one-element bool"):
        workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [0.0])


def test_if_and_while_require_their_subnet():
    feed(cond=np.array([True]))
    with pytest.raises(RuntimeError, match="then_net"):
        workspace.RunOperatorOnce(core.CreateOperator("If", ["cond"], []))
    with pytest.raises(RuntimeError, match="loop_net"):
        workspace.RunOperatorOnce(core.CreateOperator("While", ["cond"], []))
