"""caffe2.python.session: run Nets, ExecutionSteps, Plans, Tasks and
TaskGroups, and fetch the outputs of their tasks."""
from caffe2.python import core, workspace
from caffe2.python.task import Cluster, Task, TaskGroup, WorkspaceType


class CompiledRunnable(object):
    """What Session.compile returns: the compiled object and the Session
    class it was compiled for."""

    def __init__(self, obj, session_class):
        self.obj = obj
        self.session_class = session_class


class Session(object):
    """Runs Nets, ExecutionSteps, Plans, Tasks and TaskGroups, possibly on
    several nodes. Anything but a TaskGroup is wrapped into a TaskGroup of
    one Task on the global workspace; the tasks of a TaskGroup run
    concurrently, each on its node's workspace (WorkspaceType). After a run,
    the TaskOutputs of the tasks can be fetched:

        with TaskGroup() as tg:
            with Task():
                total = ops.Const(0)
                ...
                out = final_output(total)
        with LocalSession() as session:
            session.run(tg)
            print(out.fetch())

    A runnable is compiled once per Session class (cached); running it again
    reruns the same plan, setup and exit nets included.
    """

    _compiled_cache = {}

    def __init__(self):
        self._open = True

    def is_open(self):
        return self._open

    @classmethod
    def compile(cls, runnable, workspace_type=None, setup_net_list=None):
        """The CompiledRunnable of `runnable` for this Session class."""
        if isinstance(runnable, CompiledRunnable):
            assert (
                cls == runnable.session_class
            ), "Runnable was compiled for different session type. " + "Need: %s, got: %s" % (
                cls.__name__,
                runnable.session_class.__name__,
            )
            return runnable

        try:
            cache_key = (cls, runnable)
            hash(cache_key)
        except TypeError:  # a list of nets or steps: compiled every time
            cache_key = None
        if cache_key is not None and cache_key in cls._compiled_cache:
            return cls._compiled_cache[cache_key]

        if isinstance(runnable, TaskGroup):
            if workspace_type:
                if runnable.workspace_type():
                    assert (
                        runnable.workspace_type() == workspace_type
                    ), "Require {} but already have {}".format(
                        workspace_type, runnable.workspace_type()
                    )
                else:
                    runnable._workspace_type = workspace_type
            tg = runnable
        else:
            if workspace_type is None:
                workspace_type = WorkspaceType.GLOBAL
            tg = TaskGroup(workspace_type=workspace_type)
            if isinstance(runnable, Task):
                tg.add(runnable)
            elif isinstance(runnable, core.ExecutionStep):
                tg.add(Task(step=runnable))
            elif isinstance(runnable, core.Plan):
                # The steps of a plan run in order, the tasks of a group
                # concurrently: several steps go under one root step.
                assert len(runnable.Steps()) > 0
                if len(runnable.Steps()) == 1:
                    tg.add(Task(step=runnable.Steps()[0]))
                else:
                    tg.add(Task(step=runnable.Steps()))
            else:
                step = core.execution_step("runnable", runnable)
                tg.add(Task(step=step))
        compiled = CompiledRunnable(cls._compile_task_group(tg, setup_net_list), session_class=cls)
        if cache_key is not None:
            cls._compiled_cache[cache_key] = compiled
        return compiled

    def run(self, runnable, workspace_type=None, setup_net_list=None):
        """Runs `runnable`: a TaskGroup, Task, Plan, ExecutionStep, Net (or a
        list of nets or steps), or a CompiledRunnable.

        Args:
          workspace_type: a WorkspaceType for the run.
          setup_net_list: nets to set the run up (used by distributed
            sessions; LocalSession ignores it).
        """
        assert self.is_open(), "Session is closed."
        assert runnable is not None, "Got a none runnable."
        self._run_compiled(self.compile(runnable, workspace_type, setup_net_list).obj)

    def close(self):
        if self.is_open():
            self._do_close()
            self._open = False

    def fetch_output(self, output):
        raise NotImplementedError()

    def _run_compiled(self, task_group):
        raise NotImplementedError()

    @classmethod
    def _compile_task_group(cls, task_group, setup_net_list=None):
        return task_group

    def _do_close(self):
        pass

    def __enter__(self):
        assert self._open, "Session already closed."
        return self

    def __exit__(self, ex_type, value, traceback):
        if ex_type is None:
            self.close()


class LocalSession(Session):
    """A Session on this process: every task runs on node 'local', the
    tasks concurrently, in the workspace `ws` (default: the current one)
    or, for PRIVATE tasks, in a child workspace of it made for the run. The
    task outputs are created in `ws` beforehand, so they are fetched from
    it afterwards."""

    def __init__(self, ws=None):
        Session.__init__(self)
        self._ws = ws or workspace.C.Workspace.current

    @classmethod
    def _compile_task_group(cls, task_group, setup_net_list=None):
        with Cluster():
            task = task_group.to_task()
        plan = core.Plan("task_group_plan")
        plan.AddStep(task.get_step())
        return (plan, task.output_list(), task.workspace_type())

    def _run_compiled(self, compiled):
        plan, output_list, workspace_type = compiled
        # The outputs must live in the session's workspace.
        outputs = []
        for name in output_list.names():
            self._ws.create_blob(str(name))
            outputs.append(core.BlobReference(str(name)))
        output_list.set_values(outputs, _fetch_func=self._fetch_output)
        task_ws = (
            workspace.C.Workspace(self._ws) if workspace_type == WorkspaceType.PRIVATE else self._ws
        )
        task_ws.run(plan)

    def _fetch_output(self, output):
        return self._ws.blobs[str(output)].fetch()
