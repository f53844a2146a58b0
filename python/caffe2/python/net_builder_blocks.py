"""The nested builders that `net_builder.ops` opens: loops, ifs, stop
guards, setup and reporter blocks (execution-step based), and IfNet / Else /
WhileNet / Condition (one net with If / While control ops)."""
from caffe2.python import core
from caffe2.python.net_builder_core import NetBuilder


def _net():
    """The current net of the active builder."""
    return NetBuilder.current().current_net()


def _control_ops_util():
    try:
        from caffe2.python import control_ops_util
    except ImportError as e:
        raise NotImplementedError(
            "IfNet / WhileNet need caffe2.python.control_ops_util (If, While and Do ops): %s" % e
        )
    return control_ops_util


class _ReporterBuilder(NetBuilder):
    """Builds a step run every `interval_ms` while the task runs (and once at
    its end): attached to `net` as its report step, or to the active
    TaskGroup."""

    def __init__(self, interval_ms, net=None, name=None):
        NetBuilder.__init__(self, name)
        self._net = net
        self.interval_ms = interval_ms

    def __exit__(self, etype, *args):
        if etype is None:
            from caffe2.python.task import Task, TaskGroup

            step = core.to_execution_step(self)
            step.RunEveryMillis(self.interval_ms)
            if self._net:
                self._net.add_attribute(Task.REPORT_STEP, step)
            else:
                TaskGroup.current().report_step(step, interval_ms=self.interval_ms)
        NetBuilder.__exit__(self, etype, *args)


class _SetupBuilder(NetBuilder):
    """Nets run once before (INIT) or after (EXIT) a task, a task instance or
    the tasks of a node; found through the attributes of the nets."""

    INIT = "init"
    EXIT = "exit"

    def __init__(self, type, name=None):
        NetBuilder.__init__(self, name)
        self.type = type

    def setup(self, net):
        if self.type == _SetupBuilder.INIT:
            return core.to_execution_step(self)

    def exit(self, net):
        if self.type == _SetupBuilder.EXIT:
            return core.to_execution_step(self)


class _RunOnce(NetBuilder):
    """A block that runs once even when it uses a stop blob: the blob is set
    at the end, so the step ends after one pass."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name)

    def __exit__(self, etype, *args):
        if etype is None and self._stop_blob is not None:
            self.stop_if(_net().Const(True))
        NetBuilder.__exit__(self, etype, *args)


class _StopGuard(_RunOnce):
    """A block run once; `has_stopped()` is a bool blob telling whether a
    stop / stop_if inside cut it short."""

    def __init__(self, has_stopped_blob=None, name=None):
        _RunOnce.__init__(self, name)
        self._stopped = has_stopped_blob
        self._ran = False

    def __enter__(self):
        r = _RunOnce.__enter__(self)
        self._stopped = _net().Const(True, blob_out=self._stopped)
        return r

    def __exit__(self, etype, *args):
        if etype is None:
            self._ran = True
            _net().Const(False, blob_out=self._stopped)
        _RunOnce.__exit__(self, etype, *args)

    def has_stopped(self):
        """A blob that is scalar True after the block ran iff it was halted
        early."""
        assert self._ran, "Context not used yet."
        return self._stopped


class _Loop(NetBuilder):
    """A block repeated until stop / stop_if, or `iters` times (a number or
    a blob) with the counter available as `iter()`."""

    def __init__(self, iters=None, name=None):
        NetBuilder.__init__(self, name, _stop_blob_required=True)
        self._iter = None
        if iters is not None:
            net = _net()
            self._inc = net.Const(1)
            self._iter = net.Const(0)
            self._num_iters = iters if isinstance(iters, core.BlobReference) else net.Const(iters)
        else:
            self._num_iters = None

    def iter(self):
        assert self._num_iters is not None, "This loop does not have a number of iterations."
        assert self._iter is not None, "iter() must be called from inside the loop context"
        return self._iter

    def __enter__(self):
        builder = NetBuilder.__enter__(self)
        if self._num_iters is not None:
            self.stop_if(_net().GE([self._iter, self._num_iters]))
        return builder

    def __exit__(self, etype, *args):
        if etype is None and self._num_iters is not None:
            self.current_net().Add([self._iter, self._inc], [self._iter])
        NetBuilder.__exit__(self, etype, *args)


class _RunIf(_RunOnce):
    """A block run once if `cond_blob` is true; `Elif` / `Else` open the
    following branches, each run only if no earlier branch ran."""

    def __init__(self, cond_blob=None, name=None, _already_ran=None):
        _RunOnce.__init__(self, name)
        assert cond_blob or _already_ran
        self._is_else = cond_blob is None
        net = _net()
        if _already_ran is None:
            self._else_blob = net.Not(cond_blob)
            self._already_ran = net.Const(False)
        else:
            self._already_ran = _already_ran
            self._else_blob = (
                _already_ran if cond_blob is None else net.Or([_already_ran, net.Not(cond_blob)])
            )

    def __enter__(self):
        r = _RunOnce.__enter__(self)
        self.stop_if(self._else_blob)
        _net().Const(True, blob_out=self._already_ran)
        return r

    def Elif(self, cond, name=None):
        assert not self._is_else, "Elif not allowed for an Else."
        return NetBuilder.current().add(
            _RunIf(cond, name=name or self.name, _already_ran=self._already_ran)
        )

    def Else(self, name=None):
        assert not self._is_else, "Else not allowed for an Else."
        return NetBuilder.current().add(
            _RunIf(name=name or self.name, _already_ran=self._already_ran)
        )


class _RunIfNet(NetBuilder):
    """One net holding an If op: the block is the then-branch; an Else
    block opened right after is the else-branch."""

    def __init__(self, cond_blob, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        assert cond_blob, "Conditional blob is not specified for an If net"
        self._cond_blob = cond_blob
        self._then_net = None
        self._else_net = None

    def __exit__(self, etype, *args):
        if etype is None:
            then_nets = self._children
            self._reset_children()
            self._then_net = NetBuilder.merge_nets(then_nets, self._lexical_scope)
            if not self._then_net:
                self._then_net = core.Net("empty_then_net")
            if_net = core.Net(self.name + "/if_net")
            _control_ops_util().add_if_op(
                if_net, self._cond_blob, self._lexical_scope, self._then_net, self._else_net
            )
            self._current_net = if_net
            self._children = [if_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunElseNet(NetBuilder):
    """The else-branch of the IfNet block just before it."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        parent = NetBuilder.current(required=False)
        assert (
            parent and len(parent._children) > 0 and isinstance(parent._children[-1], _RunIfNet)
        ), "Invalid use of Else builder"
        self._if_builder = parent._children[-1]

    def __exit__(self, etype, *args):
        if etype is None:
            else_nets = self._children
            self._reset_children()
            if_builder = self._if_builder
            if_builder._else_net = NetBuilder.merge_nets(else_nets, self._lexical_scope)
            if if_builder._else_net:
                if_else_net = core.Net(self.name + "/if_else_net")
                _control_ops_util().add_if_op(
                    if_else_net,
                    if_builder._cond_blob,
                    self._lexical_scope,
                    if_builder._then_net,
                    if_builder._else_net,
                )
                # The If op with both branches replaces the then-only one.
                if_builder._current_net = if_else_net
                if_builder._children = [if_else_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunWhileNet(NetBuilder):
    """One net holding a While op: a Condition block, then the loop body."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        self._cond_builder = None

    def __exit__(self, etype, *args):
        if etype is None:
            assert self._cond_builder, "Condition builder must be specified in While op"
            cond_blob = self._cond_builder._cond_blob
            cond_net = self._cond_builder._cond_net
            loop_body = self._children
            self._reset_children()
            loop_body_net = NetBuilder.merge_nets(loop_body, self._lexical_scope)
            if not loop_body_net:
                loop_body_net = core.Net("empty_loop_body_net")
            while_net = core.Net(self.name + "/while_net")
            _control_ops_util().add_while_op(
                while_net, cond_blob, self._lexical_scope, loop_body_net, cond_net
            )
            self._current_net = while_net
            self._children = [while_net]
        NetBuilder.__exit__(self, etype, *args)


class _RunWhileCondition(NetBuilder):
    """The condition of the enclosing WhileNet: its last op must write one
    scalar bool blob, the loop's condition. Blobs created here stay local."""

    def __init__(self, name=None):
        NetBuilder.__init__(self, name=name, _use_control_ops=True)
        parent = NetBuilder.current(required=False)
        assert parent and isinstance(parent, _RunWhileNet), "Invalid use of loop condition builder"
        assert not parent._cond_builder, "Multiple loop condition builders specified"
        assert (
            len(parent._children) == 0
        ), "Condition definition must be specified before the loop's body"
        parent._cond_builder = self
        self._cond_blob = None
        self._cond_net = None

    def __exit__(self, etype, *args):
        if etype is None:
            condition_body = self._children
            self._reset_children()
            self._cond_net = NetBuilder.merge_nets(condition_body, self._lexical_scope)
            assert self._cond_net, "Invalid loop condition specified"
            assert len(self._cond_net.Proto().op) > 0, "Invalid condition net"
            last_op = self._cond_net.Proto().op[-1]
            assert len(last_op.output) == 1, "Invalid condition net"
            self._cond_blob = core.BlobReference(name=last_op.output[0], net=None)
            self._current_net = self._cond_net
            self._children = [self._cond_net]
        NetBuilder.__exit__(self, etype, *args)
