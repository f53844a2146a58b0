"""core.ExecutionStep, core.Plan and execution_step()."""
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core


def _net(name):
    net = core.Net(name)
    net.Sum(["a"], "b")
    return net


def test_execution_step_defaults_to_one_iteration():
    net = _net("es_default")
    step = core.execution_step("es_step", net)
    proto = step.Proto()
    assert proto.name == "es_step"
    assert list(proto.network) == [net.Name()]
    assert proto.HasField("num_iter") and proto.num_iter == 1
    assert not proto.HasField("should_stop_blob")
    assert not proto.HasField("create_workspace")
    assert step.HasNets() and not step.HasSubsteps()
    assert step.Nets() == [net]
    assert step.get_net(net.Name()) is net


def test_execution_step_options():
    net = _net("es_opts")
    stop = core.BlobReference("stop")
    step = core.execution_step(
        "es_opts_step",
        [net],
        should_stop_blob=stop,
        only_once=True,
        num_concurrent_instances=2,
        create_workspace=True,
        run_every_ms=5,
    )
    proto = step.Proto()
    assert not proto.HasField("num_iter")
    assert proto.should_stop_blob == "stop"
    assert proto.only_once and proto.create_workspace
    assert proto.num_concurrent_instances == 2
    assert proto.run_every_ms == 5
    with pytest.raises(AssertionError):
        core.execution_step("both", [net], num_iter=2, should_stop_blob=stop)
    with pytest.raises(AssertionError):
        core.ExecutionStep("s").SetShouldStopBlob("not_a_reference")


def test_substeps_and_concurrency():
    a, b = _net("es_sub_a"), _net("es_sub_b")
    step = core.execution_step(
        "es_parent",
        [core.execution_step("es_child_a", a, num_iter=2), core.execution_step("es_child_b", b)],
        concurrent_substeps=True,
    )
    proto = step.Proto()
    assert proto.concurrent_substeps
    assert [s.name for s in proto.substep] == ["es_child_a", "es_child_b"]
    assert proto.substep[0].num_iter == 2
    assert len(step.Substeps()) == 2
    assert step.Nets() == [a, b]


def test_nets_and_substeps_do_not_mix():
    step = core.ExecutionStep("es_mix", _net("es_mix_net"))
    with pytest.raises(AssertionError):
        step.AddSubstep(core.ExecutionStep("es_mix_child", _net("es_mix_2")))
    step2 = core.ExecutionStep("es_mix2")
    step2.AddSubstep(core.ExecutionStep("es_mix2_child", _net("es_mix_3")))
    with pytest.raises(AssertionError):
        step2.AddNet(_net("es_mix_4"))


def test_used_steps_cannot_change():
    child = core.ExecutionStep("es_used_child", _net("es_used"))
    core.ExecutionStep("es_used_parent").AddSubstep(child)
    with pytest.raises(AssertionError):
        child.SetIter(3)


def test_empty_substep_is_skipped():
    step = core.ExecutionStep("es_empty_parent")
    step.AddSubstep(core.ExecutionStep("es_empty_child"))
    assert not step.HasSubsteps()


def test_unnamed_steps_get_unique_names():
    first = core.ExecutionStep(None)
    second = core.ExecutionStep(None)
    assert first.Name().startswith("step")
    assert first.Name() != second.Name()


def test_same_name_different_nets_rejected():
    a = core.Net("es_clash")
    fake = core.Net("es_other")
    fake.Proto().name = "es_clash"
    step = core.ExecutionStep("es_clash_step", a)
    with pytest.raises(AssertionError):
        step.AddNet(fake)


def test_plan_adds_nets_in_order_of_use():
    a, b, c = _net("es_plan_a"), _net("es_plan_b"), _net("es_plan_c")
    step = core.execution_step(
        "es_plan_root",
        [
            core.execution_step("es_plan_1", [b, a]),
            core.execution_step("es_plan_2", [c, b]),
        ],
    )
    plan = core.Plan(step)
    proto = plan.Proto()
    assert proto.name == "es_plan_root"
    assert [n.name for n in proto.network] == [b.Name(), a.Name(), c.Name()]
    assert len(proto.execution_step) == 1
    assert plan.Nets() == [b, a, c]
    assert plan.Steps() == [step]
    assert str(plan) == "es_plan_root"
    with pytest.raises(ValueError):
        core.Plan(3)


def test_report_net_comes_last():
    main, report = _net("es_main"), _net("es_report")
    step = core.execution_step("es_report_step", main, report_net=report, report_interval=10)
    assert step.Proto().report_net == report.Name()
    assert step.Proto().report_interval == 10
    plan = core.Plan(step)
    assert [n.name for n in plan.Proto().network] == [main.Name(), report.Name()]


def test_plan_round_trip_from_proto():
    a, b = _net("es_rt_a"), _net("es_rt_b")
    root = core.execution_step(
        "es_rt_root",
        [
            core.execution_step("es_rt_1", [a], num_iter=4),
            core.execution_step("es_rt_2", [b], should_stop_blob=core.BlobReference("stop")),
        ],
    )
    plan = core.Plan(root)
    rebuilt = core.Plan.create_from_proto(plan.Proto())
    proto = rebuilt.Proto()
    # The rebuilt Nets get fresh unique names; the steps follow them.
    net_names = [n.name for n in proto.network]
    assert net_names == [a.Name() + "_1", b.Name() + "_1"]
    steps = proto.execution_step
    assert len(steps) == 1 and steps[0].name == "es_rt_root"
    first, second = steps[0].substep
    assert (list(first.network), first.num_iter) == ([net_names[0]], 4)
    assert list(second.network) == [net_names[1]]
    assert second.should_stop_blob == "stop"
    assert not second.HasField("num_iter")
    assert [list(n.op) for n in proto.network] == [list(n.op) for n in plan.Proto().network]
    assert isinstance(rebuilt.Steps()[0], core.ExecutionStep)


def test_to_execution_step_and_scoped_step():
    net = _net("es_to_step")
    step = core.to_execution_step(net)
    assert isinstance(step, core.ExecutionStep)
    assert core.to_execution_step(step) is step
    with core.NameScope("scope"):
        scoped = core.scoped_execution_step("es_scoped", net)
    assert scoped.Name() == "scope/es_scoped"


def test_add_nets_in_order():
    a, b = _net("es_order_a"), _net("es_order_b")
    step = core.execution_step(
        "es_order",
        [
            core.execution_step("es_order_1", [a]),
            core.execution_step("es_order_2", [b, a]),
        ],
    )
    names = []
    core.add_nets_in_order(step, names)
    assert names == [a.Name(), b.Name()]


def test_step_proto_type():
    assert isinstance(core.ExecutionStep("es_type").Proto(), caffe2_pb2.ExecutionStep)
