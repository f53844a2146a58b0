"""`ops`: the operations used inside a NetBuilder (`net_builder.ops`).

Any operator type is an attribute (`ops.Add(...)` adds an Add op to the
current net of the active builder); the methods below open nested blocks
(loop, If, stop_guard, setup blocks, ...) or control the current step.
"""
from caffe2.python.net_builder_blocks import (
    _Loop,
    _ReporterBuilder,
    _RunElseNet,
    _RunIf,
    _RunIfNet,
    _RunWhileCondition,
    _RunWhileNet,
    _SetupBuilder,
    _StopGuard,
)
from caffe2.python.net_builder_core import NetBuilder


class Operations(object):
    """Operations to be used in the context of a NetBuilder."""

    def net(self, net=None, name=None):
        """The current net, or adds a net to the active builder.

        Args:
          net: if given, added to the active builder (and returned).
          name: if given, a new Net of that name becomes the current net.
        """
        assert name is None or net is None, "Cannot provide both `net` and `name`."
        if net is not None:
            NetBuilder.current().add(net)
            return net
        return NetBuilder.current().current_net(name=name)

    def __getattr__(self, op_type):
        """Adds an operator of type `op_type` to the current net."""
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        # hasattr(ops, X) must work without an active builder.
        if NetBuilder.current(required=False) is None:
            raise AttributeError("No active NetBuilder.")
        return getattr(self.net(), op_type)

    def task_group(self):
        """A TaskGroup on the local node, run (its tasks concurrently) as the
        next step of the current builder."""
        from caffe2.python import task

        builder = NetBuilder.current()
        with task.Cluster():
            with task.Node("local"):
                tg = task.TaskGroup()
                builder.add(tg)
                return tg

    def stop(self):
        """Stops the current execution step after the current net:
        ops that follow in the same block do not run."""
        return self.stop_if(self.Const(True))

    def stop_if(self, blob):
        """Stops the current execution step if the scalar bool `blob` is true.

        ops.stop_if(ops.LE([x, ops.Const(0)]))
        ops.Print(b, [])   # runs only if x > 0
        """
        return NetBuilder.current().stop_if(blob)

    def loop(self, iters=None, name=None):
        """A block repeated as the next step of the current builder: `iters`
        times (a number or a scalar blob; `loop.iter()` is the counter), or
        until ops.stop / ops.stop_if when `iters` is None.

            with ops.loop(10) as loop:
                ops.LogInfo(loop.iter())   # 0 .. 9
        """
        return NetBuilder.current().add(_Loop(iters, name=name))

    def stop_guard(self, has_stopped_blob=None, name=None):
        """A block run once; afterwards `guard.has_stopped()` is a bool blob
        telling whether stop / stop_if halted it."""
        return NetBuilder.current().add(_StopGuard(has_stopped_blob=has_stopped_blob, name=name))

    def If(self, cond, name=None):
        """A block run once, as the next step, if the bool blob `cond` is true.
        The returned builder has `Elif(cond)` and `Else()`.

            with ops.If(ops.GT([x, ops.Const(0)])) as c:
                ...
            with c.Else():
                ...
        """
        return NetBuilder.current().add(_RunIf(cond, name=name))

    def IfNet(self, cond, name=None):
        """Same as If, but built as one net with an `If` operator."""
        return NetBuilder.current().add(_RunIfNet(cond, name=name))

    def Else(self, name=None):
        """The else-branch of the block just closed: of an IfNet (upstream's
        use), or of an If (same as `if_block.Else()`)."""
        parent = NetBuilder.current(required=False)
        if parent is not None and parent._children:
            last = parent._children[-1]
            if isinstance(last, _RunIf) and not last._is_else:
                return last.Else(name=name)
        return _RunElseNet(name=name)

    def WhileNet(self, name=None):
        """A loop built as one net with a `While` operator: open a
        Condition() block first, then write the body."""
        return NetBuilder.current().add(_RunWhileNet(name=name))

    def Condition(self, name=None):
        """The condition of the enclosing WhileNet; its last op's single
        output is the loop's condition."""
        assert isinstance(
            NetBuilder.current(), _RunWhileNet
        ), "Use of Condition outside of WhileNet"
        return _RunWhileCondition(name=name)

    def task_init(self):
        """A block run once at task start, before all instances of the task
        (for per-instance setup see task_instance_init).

            with ops.task_init():
                one = ops.Const(1)
        """
        from caffe2.python.task import Task

        setup = _SetupBuilder(_SetupBuilder.INIT)
        self.net().add_attribute(Task.TASK_SETUP, setup)
        return setup

    def task_exit(self):
        """A block run once at task end, after all instances of the task."""
        from caffe2.python.task import Task

        setup = _SetupBuilder(_SetupBuilder.EXIT)
        self.net().add_attribute(Task.TASK_SETUP, setup)
        return setup

    def task_instance_init(self):
        """A block run at the start of each concurrent instance of the task,
        in the instance's workspace."""
        from caffe2.python.task import Task

        setup = _SetupBuilder(_SetupBuilder.INIT)
        self.net().add_attribute(Task.TASK_INSTANCE_SETUP, setup)
        return setup

    def task_instance_exit(self):
        """A block run at the end of each concurrent instance of the task."""
        from caffe2.python.task import Task

        setup = _SetupBuilder(_SetupBuilder.EXIT)
        self.net().add_attribute(Task.TASK_INSTANCE_SETUP, setup)
        return setup

    def local_init(self):
        """A block run once on the node, before any task of the TaskGroup."""
        from caffe2.python.task import TaskGroup

        setup = _SetupBuilder(_SetupBuilder.INIT)
        self.net().add_attribute(TaskGroup.LOCAL_SETUP, setup)
        return setup

    def local_exit(self, name=None):
        """A block run once on the node, after every task of the TaskGroup."""
        from caffe2.python.task import TaskGroup

        setup = _SetupBuilder(_SetupBuilder.EXIT, name)
        self.net().add_attribute(TaskGroup.LOCAL_SETUP, setup)
        return setup

    def task_reporter(self, interval_ms=1000, name=None):
        """A block run every `interval_ms` while the task runs, and once at
        its end."""
        return _ReporterBuilder(interval_ms, net=self.net(), name=name)

    def local_reporter(self, interval_ms=1000, name=None):
        """A block run every `interval_ms` on the node while the tasks of
        the active TaskGroup run, and once at their end."""
        return _ReporterBuilder(interval_ms, name=name)


ops = Operations()
