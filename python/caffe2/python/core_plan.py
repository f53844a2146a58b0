"""Execution steps and plans: how nets are sequenced, repeated and run
concurrently by workspace.RunPlan."""
import collections

from caffe2.proto import caffe2_pb2
from caffe2.python.core_base import BlobReference, ScopedName
from caffe2.python.core_net import Net
from caffe2.python.core_net_utils import get_net_name


def _add_net_to_dict(net_dict, net):
    """Adds `net` under its name; False if that name is already there."""
    name = get_net_name(net)
    if name in net_dict:
        assert net_dict[name] is None or net == net_dict[name], (
            "Different nets with same name: " + name
        )
        return False
    net_dict[name] = net if isinstance(net, Net) else None
    return True


class ExecutionStep(object):
    """Builds an ExecutionStep: a list of nets, or of substeps, run
    `num_iter` times or until `should_stop_blob` is true."""

    _step_names_used = set()

    @staticmethod
    def _get_next_step_name(basename):
        name = basename
        next_idx = 1
        while name in ExecutionStep._step_names_used:
            name = basename + "_" + str(next_idx)
            next_idx += 1
        ExecutionStep._step_names_used.add(name)
        return name

    def __init__(self, name, nets=None, num_iter=None):
        self._step = caffe2_pb2.ExecutionStep()
        self._step.name = name or ExecutionStep._get_next_step_name("step")
        self._net_dict = collections.OrderedDict()
        self._is_used = False
        self._substeps = []
        if nets is not None:
            if isinstance(nets, Net):
                nets = [nets]
            for net in nets:
                if _add_net_to_dict(self._net_dict, net):
                    self._step.network.append(get_net_name(net))
        if num_iter is not None:
            self._step.num_iter = num_iter

    def get_net(self, name):
        return self._net_dict[name]

    def Name(self):
        return self._step.name

    def __str__(self):
        return self._step.name

    def _assert_can_mutate(self):
        assert not self._is_used, "Cannot mutate a step that has already been added to a plan/step."

    def _notify_is_used(self):
        self._is_used = True

    def Proto(self):
        return self._step

    def HasNets(self):
        return len(self._step.network) > 0

    def HasSubsteps(self):
        return len(self._step.substep) > 0

    def Nets(self):
        return list(self._net_dict.values())

    def Substeps(self):
        return self._substeps

    def SetIter(self, num_iter):
        self._assert_can_mutate()
        self._step.num_iter = num_iter

    def SetCreateWorkspace(self, create_workspace):
        self._assert_can_mutate()
        self._step.create_workspace = create_workspace

    def SetNumConcurrentInstances(self, num_concurrent_instances):
        self._assert_can_mutate()
        self._step.num_concurrent_instances = num_concurrent_instances

    def SetOnlyOnce(self, only_once):
        self._assert_can_mutate()
        self._step.only_once = only_once

    def SetShouldStopBlob(self, should_stop_blob):
        assert isinstance(
            should_stop_blob, BlobReference
        ), "expects BlobReference here, got {}".format(type(should_stop_blob))
        self._assert_can_mutate()
        self._step.should_stop_blob = str(should_stop_blob)

    def RunEveryMillis(self, interval):
        """Reruns this step every `interval` ms while its siblings run (and
        once after they finish). Ignored for top-level steps."""
        self._step.run_every_ms = interval

    def SetReportNet(self, report_net, report_interval):
        """Deprecated: use RunEveryMillis."""
        self._assert_can_mutate()
        _add_net_to_dict(self._net_dict, report_net)
        self._step.report_net = get_net_name(report_net)
        self._step.report_interval = report_interval

    def AddSubstep(self, substep):
        """Adds an ExecutionStep (or ExecutionStep proto) as a substep."""
        self._assert_can_mutate()
        assert not self.HasNets(), "Cannot have both network and substeps."
        if isinstance(substep, ExecutionStep):
            substep._notify_is_used()
            if not substep.HasNets() and not substep.HasSubsteps():
                return self
            for net in substep.Nets():
                _add_net_to_dict(self._net_dict, net)
            self._substeps.append(substep)
            proto = substep.Proto()
        else:
            proto = substep
        self._step.substep.add().CopyFrom(proto)
        return self

    def SetConcurrentSubsteps(self, concurrent_substeps):
        self._assert_can_mutate()
        assert not self.HasNets(), "Cannot have both network and substeps."
        self._step.concurrent_substeps = concurrent_substeps

    def AddNet(self, net):
        self._assert_can_mutate()
        assert not self.HasSubsteps(), "Cannot have both network and substeps."
        assert isinstance(net, Net)
        _add_net_to_dict(self._net_dict, net)
        self._step.network.append(get_net_name(net))
        return self

    def get_all_attributes(self, name):
        """The attributes `name` of all nets of this step and its substeps."""
        return [attr for net in self._net_dict.values() for attr in net.get_attributes(name)]

    @classmethod
    def create_from_proto(cls, step_proto, net_obj_dict, net_proto_dict):
        """Rebuilds an ExecutionStep (recursively) from its proto.

        net_obj_dict caches the Net objects made from net_proto_dict.
        """
        assert isinstance(step_proto, caffe2_pb2.ExecutionStep)
        assert (len(step_proto.network) > 0) != (len(step_proto.substep) > 0)
        steps_or_nets = []
        if step_proto.substep:
            for substep_proto in step_proto.substep:
                steps_or_nets.append(
                    ExecutionStep.create_from_proto(substep_proto, net_obj_dict, net_proto_dict)
                )
        else:
            for net_name in step_proto.network:
                if net_name not in net_obj_dict:
                    assert net_name in net_proto_dict
                    net_obj_dict[net_name] = Net(net_proto_dict[net_name])
                net = net_obj_dict[net_name]
                assert isinstance(net, Net)
                steps_or_nets.append(net)

        def optional(field):
            if step_proto.HasField(field):
                return getattr(step_proto, field)
            return None

        should_stop_blob = optional("should_stop_blob")
        return execution_step(
            step_proto.name,
            steps_or_nets,
            num_iter=optional("num_iter"),
            concurrent_substeps=optional("concurrent_substeps"),
            should_stop_blob=(
                BlobReference(should_stop_blob) if should_stop_blob is not None else None
            ),
            only_once=optional("only_once"),
            num_concurrent_instances=optional("num_concurrent_instances"),
            create_workspace=optional("create_workspace"),
            run_every_ms=optional("run_every_ms"),
        )


def add_nets_in_order(step, net_list):
    """Appends to net_list the names of the nets of `step` in order of
    first use (substeps first, report net last)."""
    proto = step.Proto()
    for substep in step.Substeps():
        add_nets_in_order(substep, net_list)
    for net in proto.network:
        if net not in net_list:
            net_list.append(net)
    if proto.report_net and proto.report_net not in net_list:
        net_list.append(proto.report_net)


class Plan(object):
    """Builds a PlanDef: execution steps plus the nets they use."""

    def __init__(self, name_or_step):
        self._plan = caffe2_pb2.PlanDef()
        self._net_dict = collections.OrderedDict()
        self._steps = []
        if isinstance(name_or_step, ExecutionStep):
            self._plan.name = name_or_step.Name()
            self.AddStep(name_or_step)
        elif isinstance(name_or_step, str):
            self._plan.name = name_or_step
        else:
            raise ValueError("name_or_step must be a string or ExecutionStep")

    def __str__(self):
        return self._plan.name

    def Proto(self):
        return self._plan

    def AddNets(self, nets):
        for net in nets:
            if _add_net_to_dict(self._net_dict, net):
                assert isinstance(net, Net)
                self._plan.network.add().CopyFrom(net.Proto())

    def Nets(self):
        return list(self._net_dict.values())

    def AddStep(self, step):
        """Adds a copy of `step`, and the nets it uses in order of use."""
        assert isinstance(step, ExecutionStep)
        step._notify_is_used()
        if not step.HasNets() and not step.HasSubsteps():
            return
        self._plan.execution_step.add().CopyFrom(step.Proto())
        self._steps.append(step)
        net_list = []
        add_nets_in_order(step, net_list)
        self.AddNets([step.get_net(n) for n in net_list])

    def Steps(self):
        return self._steps

    def get_all_attributes(self, name):
        """The attributes `name` of all nets of this plan."""
        return [attr for net in self._net_dict.values() for attr in net.get_attributes(name)]

    @classmethod
    def create_from_proto(cls, plan_proto):
        assert isinstance(plan_proto, caffe2_pb2.PlanDef)
        plan = Plan(plan_proto.name)
        plan._plan.CopyFrom(plan_proto)
        del plan._plan.network[:]
        del plan._plan.execution_step[:]
        net_obj_dict = {}
        net_proto_dict = {}
        for net_proto in plan_proto.network:
            assert net_proto.name not in net_proto_dict
            net_proto_dict[net_proto.name] = net_proto
        for step_proto in plan_proto.execution_step:
            plan.AddStep(ExecutionStep.create_from_proto(step_proto, net_obj_dict, net_proto_dict))
        return plan


def to_execution_step(step_or_nets, default_name=None):
    """An ExecutionStep from a step, a net, a list, or a NetBuilder."""
    if isinstance(step_or_nets, ExecutionStep):
        return step_or_nets
    stop_blob = None
    if not default_name and hasattr(step_or_nets, "name"):
        default_name = step_or_nets.name
    if _is_net_builder(step_or_nets):
        stop_blob = step_or_nets._stop_blob
        step_or_nets = step_or_nets.get()
    return execution_step(default_name, step_or_nets, should_stop_blob=stop_blob)


def _is_net_builder(obj):
    try:
        from caffe2.python.net_builder import NetBuilder
    except ImportError:
        return False
    return isinstance(obj, NetBuilder)


def execution_step(
    default_name,
    steps_or_nets,
    num_iter=None,
    report_net=None,
    report_interval=None,
    concurrent_substeps=None,
    should_stop_blob=None,
    only_once=None,
    num_concurrent_instances=None,
    create_workspace=False,
    run_every_ms=None,
):
    """Builds an ExecutionStep.

    steps_or_nets: None, a Net, an ExecutionStep, or a list of either.
    should_stop_blob: a scalar bool blob checked after every substep/net;
    the step ends when it is true. Without it or num_iter, num_iter is 1.
    """
    assert (
        should_stop_blob is None or num_iter is None
    ), "Cannot set both should_stop_blob and num_iter."
    if should_stop_blob is None and num_iter is None:
        num_iter = 1

    step = ExecutionStep(default_name)
    if should_stop_blob is not None:
        step.SetShouldStopBlob(should_stop_blob)
    if num_iter is not None:
        step.SetIter(num_iter)
    if only_once is not None:
        step.SetOnlyOnce(only_once)
    if concurrent_substeps is not None:
        step.SetConcurrentSubsteps(concurrent_substeps)
    if report_net is not None:
        assert report_interval is not None
        step.SetReportNet(report_net, report_interval)
    if num_concurrent_instances is not None:
        step.SetNumConcurrentInstances(num_concurrent_instances)
    if create_workspace:
        step.SetCreateWorkspace(True)
    if run_every_ms:
        step.RunEveryMillis(run_every_ms)

    if isinstance(steps_or_nets, ExecutionStep):
        step.AddSubstep(steps_or_nets)
    elif isinstance(steps_or_nets, Net):
        step.AddNet(steps_or_nets)
    elif isinstance(steps_or_nets, list):
        if all(isinstance(x, Net) for x in steps_or_nets):
            for x in steps_or_nets:
                step.AddNet(x)
        else:
            for x in steps_or_nets:
                step.AddSubstep(to_execution_step(x))
    elif steps_or_nets:
        raise ValueError("steps_or_nets must be a step, a net, or a list of nets or steps.")
    return step


def scoped_execution_step(name, *args, **kwargs):
    """execution_step with a name under the current NameScope."""
    default_name = ScopedName(name) if name else name
    return execution_step(default_name, *args, **kwargs)
