"""caffe2.python.task and caffe2.python.session: TaskGroups of Tasks run by
LocalSession, their outputs, setup and exit nets, workspace types, reruns
and failures."""
import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.net_builder import ops
from caffe2.python.session import CompiledRunnable, LocalSession, Session
from caffe2.python.task import (
    Cluster,
    Node,
    SetupNets,
    Task,
    TaskGroup,
    TaskOutput,
    TaskOutputList,
    WorkspaceType,
    final_output,
    get_setup_nets,
)


def _session():
    ws = workspace.C.Workspace()
    return ws, LocalSession(ws)


def test_task_group_of_several_tasks_returns_outputs():
    with TaskGroup() as tg:
        with Task():
            a = ops.Const(np.array([1.0, 2.0], dtype=np.float32))
            scaled = final_output(ops.Scale(a, scale=3.0))
        with Task():
            b = ops.Const(5)
            pair = final_output([b, ops.Add([b, b])])
        with Node("other_node"), Task():
            total = ops.Const(0)
            with ops.loop(4) as loop:
                ops.Add([total, loop.iter()], [total])
            summed = final_output(total)
    assert tg.used_nodes() == ["local", "other_node"]
    ws, session = _session()
    with session:
        session.run(tg)
        np.testing.assert_array_equal(scaled.fetch(), [3.0, 6.0])
        assert [int(v) for v in pair.fetch()] == [5, 10]
        assert summed.fetch() == 6
    # Only the outputs reach the session's workspace (tasks are PRIVATE).
    assert ws.has_blob(str(summed.get()))
    assert not ws.has_blob(str(a))
    assert not session.is_open()


def test_setup_and_exit_nets_run_once_per_run():
    instances, iters = 3, 4
    with TaskGroup() as tg:
        with Task(num_instances=instances):
            with ops.task_init():
                mutex = ops.CreateMutex([], 1)
                count = ops.Const(0, dtype=np.int32)
                exits = ops.Const(0, dtype=np.int32)
                init_runs = ops.Add([ops.Const(0, dtype=np.int32), ops.Const(1, dtype=np.int32)])
            one = ops.Const(1, dtype=np.int32)
            with ops.task_instance_init():
                mine = ops.Const(0, dtype=np.int32)
            with ops.loop(iters):
                ops.AtomicFetchAdd([mutex, count, one], [count, "ts_prev"])
                ops.Add([mine, one], [mine])
            with ops.task_instance_exit():
                ops.AtomicFetchAdd([mutex, exits, mine], [exits, "ts_prev2"])
            with ops.task_exit():
                outs = [final_output(ops.Copy(b)) for b in (count, exits, init_runs)]
        with Task():
            with ops.local_init():
                local_runs = ops.Const(0, dtype=np.int32)
                ops.Add([local_runs, ops.Const(1, dtype=np.int32)], [local_runs])
            ops.Const(0)
            with ops.local_exit():
                local_out = final_output(ops.Copy(local_runs))
    ws, session = _session()
    for _ in range(2):  # the same TaskGroup, run twice
        session.run(tg)
        assert [int(o.fetch()) for o in outs] == [instances * iters, instances * iters, 1]
        assert local_out.fetch() == 1
    # PRIVATE: the node's setup blobs lived in a workspace made for the run.
    assert not ws.has_blob(str(local_runs)) and not ws.has_blob(str(mutex))


def test_rerun_private_and_global_workspaces():
    ws, session = _session()
    ws.create_blob("ts_acc").feed(np.array(0, dtype=np.int64))
    with TaskGroup(workspace_type=WorkspaceType.GLOBAL) as global_tg:
        with Task():
            ops.Add(["ts_acc", ops.Const(1)], ["ts_acc"])
            ops.Const(7, blob_out="ts_global_local")
    with TaskGroup() as private_tg:
        with Task():
            acc = ops.Const(0)
            ops.Add([acc, ops.Const(1)], [acc])
            ops.Const(7, blob_out="ts_private_local")
            out = final_output(acc)
    compiled = LocalSession.compile(global_tg)
    assert isinstance(compiled, CompiledRunnable) and compiled.session_class is LocalSession
    assert LocalSession.compile(global_tg) is compiled
    for expected in (1, 2):
        session.run(global_tg)
        session.run(private_tg)
        assert ws.blobs["ts_acc"].fetch() == expected
        assert out.fetch() == 1
    assert ws.has_blob("ts_global_local") and not ws.has_blob("ts_private_local")
    assert global_tg.workspace_type() == WorkspaceType.GLOBAL
    assert private_tg.workspace_type() == WorkspaceType.PRIVATE


def test_failing_task_raises():
    with TaskGroup() as tg:
        with Task(name="ts_good"):
            ops.Const(1)
        with Task(name="ts_failing"):
            u = ops.Const(np.ones(2, dtype=np.float32))
            v = ops.Const(np.ones(3, dtype=np.float32))
            ops.Add([u, v])
    ws, session = _session()
    with pytest.raises(RuntimeError, match=r"\[Add\].*differ in shape"):
        session.run(tg)
    # The session is still usable.
    with Task() as ok:
        out = final_output(ops.Const(3))
    session.run(ok)
    assert out.fetch() == 3
    with pytest.raises(RuntimeError, match="non-existing input blob: ts_missing"):
        with Task() as missing:
            ops.Copy("ts_missing")
        session.run(missing)


def test_run_net_step_plan_and_task():
    ws, session = _session()
    net = core.Net("ts_net")
    net.ConstantFill([], "ts_net_out", shape=[2], value=4.0)
    session.run(net)
    np.testing.assert_array_equal(ws.blobs["ts_net_out"].fetch(), [4.0, 4.0])

    counter = core.Net("ts_counter")
    one = counter.Const(np.array(1.0, dtype=np.float32))
    counter.Add(["ts_net_out", one], ["ts_net_out"], broadcast=1)
    session.run(core.execution_step("ts_step", counter, num_iter=3))
    np.testing.assert_array_equal(ws.blobs["ts_net_out"].fetch(), [7.0, 7.0])

    # The steps of a Plan run in order.
    first, second = core.Net("ts_first"), core.Net("ts_second")
    first.ConstantFill([], "ts_plan_a", shape=[1], value=2.0)
    second.Scale("ts_plan_a", "ts_plan_b", scale=5.0)
    plan = core.Plan("ts_plan")
    plan.AddStep(core.execution_step("ts_p1", first))
    plan.AddStep(core.execution_step("ts_p2", second))
    session.run(plan)
    np.testing.assert_array_equal(ws.blobs["ts_plan_b"].fetch(), [10.0])

    task = Task(step=core.execution_step("ts_task_step", [first]), outputs="ts_plan_a")
    session.run(task)
    np.testing.assert_array_equal(task.outputs()[0].fetch(), [2.0])


def test_final_output_outside_task_and_dummy_output():
    with TaskGroup(workspace_type=WorkspaceType.GLOBAL) as tg:
        with Task():
            ops.Const(np.array([9.0], dtype=np.float32), blob_out="ts_written")
        written = final_output("ts_written")
        silent = Task(step=core.execution_step("ts_silent", core.Net("ts_silent_net")))
    assert len(tg.tasks()) == 3
    ws, session = _session()
    session.run(tg)
    np.testing.assert_array_equal(written.fetch(), [9.0])
    # A task without outputs gets one int32 zero.
    assert len(silent.outputs()) == 1 and silent.outputs()[0].fetch() == 0


def test_local_reporter_runs_after_tasks():
    ws, session = _session()
    ws.create_blob("ts_rep_runs").feed(np.array(0, dtype=np.int64))
    with TaskGroup(workspace_type=WorkspaceType.GLOBAL) as tg:
        with Task():
            cnt = ops.Const(0, blob_out="ts_rep_cnt")
            with ops.loop(20):
                ops.Add([cnt, ops.Const(1)], [cnt])
        # A long interval: the step runs (at least) once, after the tasks.
        with ops.local_reporter(interval_ms=10**6):
            ops.Copy(cnt, "ts_reported")
            ops.Add(["ts_rep_runs", ops.Const(1)], ["ts_rep_runs"])
    session.run(tg)
    assert ws.blobs["ts_reported"].fetch() == 20
    assert ws.blobs["ts_rep_runs"].fetch() >= 1


def test_setup_nets_attribute_used_once():
    init_net = core.Net("ts_setup_init")
    init_net.Const(np.array(0, dtype=np.int64), blob_out="ts_setup_val")
    exit_net = core.Net("ts_setup_exit")
    exit_net.Copy("ts_setup_val", "ts_setup_final")
    setup = SetupNets([init_net], [exit_net])
    a, b = core.Net("ts_setup_a"), core.Net("ts_setup_b")
    for net in (a, b):
        net.Add(["ts_setup_val", net.Const(1)], ["ts_setup_val"])
        net.add_attribute(Task.TASK_SETUP, setup)
    inits, exits = get_setup_nets(Task.TASK_SETUP, [a, b], None)
    assert inits == [init_net] and exits == [exit_net]
    assert get_setup_nets(Task.TASK_SETUP, [a, b], None) == ([], [])

    setup2 = SetupNets([init_net], [exit_net])
    for net in (a, b):
        net.add_attribute(TaskGroup.LOCAL_SETUP, setup2)
    with TaskGroup(workspace_type=WorkspaceType.GLOBAL) as tg:
        Task(step=core.execution_step("ts_setup_step", [a, b]))
    ws, session = _session()
    session.run(tg)
    assert ws.blobs["ts_setup_final"].fetch() == 2


def test_task_outputs_and_lists():
    single = TaskOutput("ts_o1")
    several = TaskOutput(["ts_o2", "ts_o3"])
    lst = TaskOutputList([single, several])
    assert lst.names() == ["ts_o1", "ts_o2", "ts_o3"]
    with pytest.raises(AssertionError):
        single.get()
    lst.set_values([1, 2, 3], _fetch_func=lambda v: v * 10)
    assert single.get() == 1 and several.get() == [2, 3]
    assert single.fetch() == 10 and several.fetch() == [20, 30]
    with pytest.raises(AssertionError, match="Wrong number"):
        TaskOutputList([single]).set_values([1, 2])


def test_nodes_clusters_and_task_names():
    with Cluster() as cluster:
        with TaskGroup() as tg:
            with Node("ts_n1"):
                t1 = Task(step=core.execution_step("ts_s1", core.Net("ts_n1_net")))
            with Node("ts_n2", cores=2):
                t2 = Task(name="ts_named")
                t3 = Task(name="ts_named")
        assert cluster.nodes() == ["ts_n1", "ts_n2"]
        assert cluster.node_kwargs()["ts_n2"] == {"cores": 2}
    assert (t1.node, t2.node) == ("ts_n1", "ts_n2")
    assert t1.name == "ts_n1/ts_s1"
    assert (t2.name, t3.name) == ("ts_n2/ts_named", "ts_n2/ts_named:1")
    assert str(Node.current()) == "local"
    grouped = tg.tasks_by_node()
    assert sorted(t.node for t in grouped.tasks()) == ["ts_n1", "ts_n2"]
    with pytest.raises(AssertionError, match="already used"):
        tg.add(Task())


def test_session_contract():
    with pytest.raises(NotImplementedError):
        Session().run(core.Net("ts_base_net"))
    _, session = _session()
    compiled = LocalSession.compile(core.execution_step("ts_cmp", core.Net("ts_cmp_net")))

    class OtherSession(LocalSession):
        pass

    with pytest.raises(AssertionError, match="different session type"):
        OtherSession.compile(compiled)
    session.close()
    with pytest.raises(AssertionError, match="closed"):
        session.run(compiled)


def test_task_group_inside_net_builder():
    from caffe2.python.net_builder import NetBuilder

    with NetBuilder() as nb:
        total = ops.Const(0)
        with ops.task_group():
            with Task(workspace_type=WorkspaceType.GLOBAL):
                ops.Const(5, blob_out="ts_tg_a")
            with Task(workspace_type=WorkspaceType.GLOBAL):
                ops.Const(6, blob_out="ts_tg_b")
        ops.Add(["ts_tg_a", "ts_tg_b"], [total])
    ws = workspace.C.Workspace()
    ws.run(core.Plan(core.to_execution_step(nb)))
    assert ws.blobs[str(total)].fetch() == 11
