"""caffe2.python.net_builder: NetBuilder and ops (loops, If/Elif/Else,
stop/stop_if, stop_guard, task_init/task_exit, IfNet/WhileNet), run as
plans (workspace.RunPlan, Workspace.run) and through LocalSession."""
import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.core import Plan, to_execution_step
from caffe2.python.net_builder import NetBuilder, ops
from caffe2.python.session import LocalSession
from caffe2.python.task import Task, final_output

_HAS_CONTROL_OPS = all(op in workspace.RegisteredOperators() for op in ("If", "While", "Do"))


def _run_in_new_workspace(nb):
    """Runs the builder's step as a plan in a fresh workspace."""
    plan = Plan("nb_plan")
    plan.AddStep(to_execution_step(nb))
    ws = workspace.C.Workspace()
    ws.run(plan)
    return ws


def _fetch(ws, blob):
    return ws.blobs[str(blob)].fetch()


def _loop_counting_down():
    x = ops.Const(5)
    y = ops.Const(0)
    with ops.loop():
        ops.stop_if(ops.EQ([x, ops.Const(0)]))
        ops.Add([x, ops.Const(-1)], [x])
        ops.Add([y, ops.Const(1)], [y])
    return y


def _stop_if_below_five(x):
    ops.stop_if(ops.LT([x, ops.Const(5)]))


def _stop_guards():
    x = ops.Const(10)
    with ops.stop_guard() as not_stopped:
        _stop_if_below_five(x)
    y = ops.Const(3)
    with ops.stop_guard() as stopped:
        _stop_if_below_five(y)
    with ops.stop_guard() as no_stop:
        ops.Const(0)
    with ops.stop_guard() as empty:
        pass
    return (
        not_stopped.has_stopped(),
        stopped.has_stopped(),
        empty.has_stopped(),
        no_stop.has_stopped(),
    )


def _if_then_stop(x):
    y = ops.Const(1)
    with ops.If(ops.GT([x, ops.Const(50)])):
        ops.Const(2, blob_out=y)
    with ops.If(ops.LT([x, ops.Const(50)])):
        ops.Const(3, blob_out=y)
        ops.stop()
        ops.Const(4, blob_out=y)
    return y


def test_loop_stop_guard_if_and_stop():
    with NetBuilder() as nb:
        y = _loop_counting_down()
        g1, g2, g3, g4 = _stop_guards()
        p = _if_then_stop(ops.Const(75))
        q = _if_then_stop(ops.Const(25))
    ws = _run_in_new_workspace(nb)
    expected = [(y, 5), (g1, False), (g2, True), (g3, False), (g4, False), (p, 2), (q, 3)]
    for blob, value in expected:
        assert _fetch(ws, blob) == value, str(blob)


def test_counted_loop_with_iter_and_blob_count():
    with NetBuilder() as nb:
        total = ops.Const(0)
        with ops.loop(6) as loop:
            ops.Add([total, loop.iter()], [total])
        runs = ops.Const(0)
        count = ops.Add([ops.Const(2), ops.Const(1)])
        with ops.loop(count):
            ops.Add([runs, ops.Const(1)], [runs])
        never = ops.Const(0)
        with ops.loop(0):
            ops.Const(1, blob_out=never)
    ws = _run_in_new_workspace(nb)
    assert _fetch(ws, total) == sum(range(6))
    assert _fetch(ws, runs) == 3
    assert _fetch(ws, never) == 0


def test_run_plan_of_builder_step():
    """workspace.RunPlan on a core.Plan made of the builder's step."""
    with NetBuilder("nb_runplan") as nb:
        x = ops.Const(np.array([1.0, 2.0], dtype=np.float32))
        with ops.loop(3):
            ops.Add([x, x], [x])
    with workspace.WorkspaceGuard("nb_runplan_ws"):
        workspace.ResetWorkspace()
        assert workspace.RunPlan(Plan(to_execution_step(nb)))
        np.testing.assert_array_equal(workspace.FetchBlob(str(x)), [8.0, 16.0])
        # An ExecutionStep is wrapped into a Plan by RunPlan.
        with NetBuilder() as nb2:
            ops.Copy(x, "nb_runplan_copy")
        workspace.RunPlan(to_execution_step(nb2))
        np.testing.assert_array_equal(workspace.FetchBlob("nb_runplan_copy"), [8.0, 16.0])


def test_if_elif_else_chain():
    def classify(value):
        out = ops.Const(0)
        x = ops.Const(value)
        with ops.If(ops.GE([x, ops.Const(80)])) as c:
            ops.Const(1, blob_out=out)
        with c.Elif(ops.GE([x, ops.Const(50)])) as c:
            ops.Const(2, blob_out=out)
        with c.Else():
            ops.Const(3, blob_out=out)
        return out

    with NetBuilder() as nb:
        outs = [classify(v) for v in (90, 80, 60, 10)]
        # ops.Else() right after an If block is that If's else-branch.
        flag = ops.Const(0)
        with ops.If(ops.Const(False)):
            ops.Const(1, blob_out=flag)
        with ops.Else():
            ops.Const(2, blob_out=flag)
    ws = _run_in_new_workspace(nb)
    assert [int(_fetch(ws, o)) for o in outs] == [1, 1, 2, 3]
    assert _fetch(ws, flag) == 2


def _expected_nested_loops():
    total = large = small = tiny = 0
    for loop_iter in range(10):
        outer = loop_iter * 10
        for inner_iter in range(loop_iter):
            val = outer + inner_iter
            if val >= 80:
                large += val
            elif val >= 50:
                small += val
            else:
                tiny += val
            total += val
    return [total, large, small, tiny]


def test_nested_loops_with_if_in_task():
    with Task() as task:
        total, large, small, tiny = [ops.Const(0) for _ in range(4)]
        with ops.loop(10) as loop:
            outer = ops.Mul([loop.iter(), ops.Const(10)])
            with ops.loop(loop.iter()) as inner:
                val = ops.Add([outer, inner.iter()])
                with ops.If(ops.GE([val, ops.Const(80)])) as c:
                    ops.Add([large, val], [large])
                with c.Elif(ops.GE([val, ops.Const(50)])) as c:
                    ops.Add([small, val], [small])
                with c.Else():
                    ops.Add([tiny, val], [tiny])
                ops.Add([total, val], [total])
        outputs = [final_output(b) for b in (total, large, small, tiny)]
    with LocalSession(workspace.C.Workspace()) as session:
        session.run(task)
        assert [int(o.fetch()) for o in outputs] == _expected_nested_loops()


def test_while_loop_stop_if_after_nested_block_is_reset_on_reentry():
    """A stop_if past the loop's first net gets a `stop_blob_init` net, so a
    True left by the previous run of the inner loop does not end it early."""
    with NetBuilder() as nb:
        runs = ops.Const(0)
        big = ops.Const(0)
        with ops.loop(3):
            x = ops.Const(0)
            with ops.loop() as inner:
                ops.Add([x, ops.Const(1)], [x])
                with ops.If(ops.GT([x, ops.Const(2)])):
                    ops.Add([big, ops.Const(1)], [big])
                ops.Add([runs, ops.Const(1)], [runs])
                ops.stop_if(ops.GE([x, ops.Const(4)]))
    step = to_execution_step(nb)
    ws = _run_in_new_workspace(nb)
    assert _fetch(ws, runs) == 12
    assert _fetch(ws, big) == 6
    # The inner loop's step: stop blob, no iteration count, init net first.
    inner_children = inner.get()
    assert "stop_blob_init" in inner_children[0].Name()
    loop_step = step.Proto().substep[1]
    assert loop_step.HasField("should_stop_blob") and not loop_step.HasField("num_iter")


def test_stop_ends_the_task_step_and_stop_if_repeats_it():
    with Task() as task:
        before = ops.Const(1)
        ops.stop()
        after = ops.Const(1)
        ops.Const(2, blob_out=before)
        out = final_output(before)
    with Task() as repeat:
        # A top-level stop_if makes the task's step repeat until it holds.
        with ops.task_init():
            n = ops.Const(10)
        ops.Add([n, ops.Const(1)], [n])
        ops.stop_if(ops.GE([n, ops.Const(15)]))
        out_n = final_output(n)
    with LocalSession(workspace.C.Workspace()) as session:
        session.run(task)
        assert out.fetch() == 1
        session.run(repeat)
        assert out_n.fetch() == 15
    assert after is not None


def test_task_init_and_task_exit():
    with Task() as task:
        with ops.task_init():
            one = ops.Const(1)
        two = ops.Add([one, one])
        with ops.task_init():
            three = ops.Const(3)
        accum = ops.Add([two, three])
        # Runs after everything below: accum is 6 by then.
        with ops.task_exit():
            seven_1 = ops.Add([accum, one])
        six = ops.Add([accum, one])
        ops.Add([accum, one], [accum])
        seven_2 = ops.Add([accum, one])
        o6, o7_1, o7_2 = (final_output(b) for b in (six, seven_1, seven_2))
    with LocalSession(workspace.C.Workspace()) as session:
        session.run(task)
        assert (o6.fetch(), o7_1.fetch(), o7_2.fetch()) == (6, 7, 7)
    step = task.get_step().Proto()
    assert [s.name for s in step.substep] == [task.name + ":init", task.name, task.name + ":exit"]


def test_same_net_added_twice():
    with Task() as task:
        total = ops.Const(0)
        net = core.Net("nb_multi_use")
        net.Add([total, net.Const(1)], [total])
        ops.net(net)
        ops.net(net)
        result = final_output(total)
    with LocalSession(workspace.C.Workspace()) as session:
        session.run(task)
        assert result.fetch() == 2


def test_builder_structure_and_names():
    with NetBuilder("nb_named") as nb:
        first = ops.net()
        ops.Const(1)
        with ops.loop(2):
            ops.Const(2)
        ops.Const(3)
        named = ops.net(name="nb_explicit")
        assert ops.net() is named
    children = nb.get()
    assert first.Name().startswith("nb_named")  # unnamed: the prefix alone
    assert named.Name().startswith("nb_named/nb_explicit")
    assert [type(c).__name__ for c in children] == ["Net", "_Loop", "Net", "Net"]
    step = to_execution_step(nb).Proto()
    assert step.name == "nb_named"
    assert step.num_iter == 1 and not step.HasField("should_stop_blob")
    assert step.substep[1].should_stop_blob and not step.substep[1].HasField("num_iter")


def test_builder_misuse_is_refused():
    assert not hasattr(ops, "Add")  # no active builder
    with pytest.raises(AssertionError, match="stop condition"):
        with NetBuilder():
            with ops.loop():
                ops.Const(1)
    with NetBuilder() as nb:
        ops.Const(1)
    with pytest.raises(AssertionError, match="built already"):
        nb.current_net()
    with pytest.raises(AssertionError, match="Else"):
        with NetBuilder():
            ops.Const(1)
            ops.Else()
    with pytest.raises(AssertionError, match="outside of WhileNet"):
        with NetBuilder():
            ops.Condition()
    with pytest.raises(AssertionError):
        with NetBuilder():
            ops.net(core.Net("nb_a"), name="nb_b")
    with pytest.raises(AssertionError, match="control operators"):
        with NetBuilder(_use_control_ops=True):
            ops.stop()
    with pytest.raises(AssertionError, match="iterations"):
        with NetBuilder():
            with ops.loop() as loop:
                ops.stop()
                loop.iter()


@pytest.mark.skipif("Python" not in workspace.RegisteredOperators(), reason="no Python op")
def test_python_op_in_loop():
    calls = []
    with NetBuilder() as nb:
        ops.Python(lambda inputs, outputs: calls.append("once"))([], [])
        with ops.loop(3):
            ops.Python(lambda inputs, outputs: calls.append("loop"))([], [])
    _run_in_new_workspace(nb)
    assert calls == ["once", "loop", "loop", "loop"]


@pytest.mark.skipif(not _HAS_CONTROL_OPS, reason="If/While/Do ops not registered")
def test_if_net_and_else():
    with NetBuilder() as nb:
        x0, x1, x2 = ops.Const(0), ops.Const(1), ops.Const(2)
        y0, y1, y2 = ops.Const(0), ops.Const(1), ops.Const(2)
        first_res = ops.Const(0)
        with ops.IfNet(ops.Const(True)):
            ops.Const(1, blob_out=first_res)
        with ops.Else():
            ops.Const(2, blob_out=first_res)
        second_res = ops.Const(0)
        with ops.IfNet(ops.Const(False)):
            ops.Const(1, blob_out=second_res)
        with ops.Else():
            ops.Const(2, blob_out=second_res)
        # Nested ifs, empty branches, outer blobs read and written, a local.
        with ops.IfNet(ops.LT([x0, x1])):
            local_blob = ops.Const(900)
            ops.Add([ops.Const(100), local_blob], [y0])
            with ops.IfNet(ops.GT([x1, x2])):
                pass
            with ops.Else():
                ops.Add([y1, local_blob], [local_blob])
                ops.Add([ops.Const(100), y1], [y1])
            with ops.IfNet(ops.EQ([local_blob, ops.Const(901)])):
                ops.Const(7, blob_out=y2)
                ops.Add([y1, y2], [y2])
        with ops.Else():
            pass
    ws = _run_in_new_workspace(nb)
    values = [int(_fetch(ws, b)) for b in (first_res, second_res, y0, y1, y2)]
    assert values == [1, 2, 1000, 101, 108]
    assert str(local_blob) not in ws.blobs


@pytest.mark.skipif(not _HAS_CONTROL_OPS, reason="If/While/Do ops not registered")
def test_while_net_and_control_op_builder():
    with NetBuilder() as nb:
        x = ops.Const(0)
        y = ops.Const(0)
        with ops.WhileNet():
            with ops.Condition():
                ops.Add([x, ops.Const(1)], [x])
                ops.LT([x, ops.Const(7)])
            ops.Add([x, ops.Const(2)], [x])
            ops.Add([y, ops.Const(1)], [y])
    ws = _run_in_new_workspace(nb)
    # cond: x=1 (<7) body x=3; x=4 body x=6; x=7 stops.
    assert (_fetch(ws, x), _fetch(ws, y)) == (7, 2)

    with NetBuilder(_use_control_ops=True) as nb2:
        a = ops.Const(3)
        with ops.IfNet(ops.GT([a, ops.Const(2)])):
            ops.Const(10, blob_out=a)
        b = ops.Add([a, ops.Const(1)])
    children = nb2.get()
    assert len(children) == 1 and isinstance(children[0], core.Net)
    assert "If" in [op.type for op in children[0].Proto().op]
    assert _fetch(_run_in_new_workspace(nb2), b) == 11
