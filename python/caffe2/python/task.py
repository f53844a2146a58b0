"""caffe2.python.task: Tasks (an execution step plus outputs) gathered in
TaskGroups, placed on Nodes, and run by a Session.

Cluster, Node, WorkspaceType, TaskOutput, TaskOutputList, SetupNets and
the setup helpers live in task_base and are re-exported here.
"""
from collections import defaultdict

from caffe2.python import context, core
from caffe2.python.task_base import (  # noqa: F401
    Cluster,
    Node,
    SetupNets,
    TaskOutput,
    TaskOutputList,
    WorkspaceType,
    add_setup_steps,
    get_setup_nets,
)


@context.define_context()
class TaskGroup(context.Managed):
    """Tasks that run concurrently, possibly on several nodes. Tasks on the
    same node share a workspace; the group ends when its last task ends.

        with TaskGroup() as tg:
            Task(step=s1)          # node 'local'
            with Node('n2'):
                Task(step=s2)
        session.run(tg)
    """

    LOCAL_SETUP = "local_setup"

    def __init__(self, workspace_type=None):
        self._plan_cache = None
        self._tasks = []
        self._already_used = False
        self._prev_active = None
        self._tasks_to_add = []
        self._report_nets = {}
        self._report_steps = []
        self._workspace_type = workspace_type
        self._tasks_by_node = None
        self._remote_nets = []

    def add_remote_net(self, net):
        self._remote_nets.append(net)

    def remote_nets(self):
        return self._remote_nets

    def add(self, task):
        assert not self._already_used, "Cannot add Task to an already used TaskGroup."
        assert (
            self._workspace_type is None
            or task._workspace_type is None
            or self._workspace_type == task._workspace_type
        )
        if task._workspace_type is None:
            task._workspace_type = self._workspace_type or WorkspaceType.PRIVATE
        if self._workspace_type is None:
            self._workspace_type = task._workspace_type
        task._notify_used()
        self._tasks.append(task)

    def tasks(self):
        for task in self._tasks_to_add:
            self.add(task)
        self._tasks_to_add = []
        self._already_used = True
        return self._tasks

    def num_registered_tasks(self):
        return len(self._tasks_to_add) + len(self._tasks)

    def used_nodes(self):
        used = []
        for task in self._tasks + self._tasks_to_add:
            if task.node not in used:
                used.append(task.node)
        return used

    def report_step(self, step=None, node=None, interval_ms=1000):
        """Adds a step run every `interval_ms` on the node while the group
        runs, and at least once after every task of the node finished."""
        step = core.to_execution_step(step)
        step.RunEveryMillis(interval_ms)
        self._report_steps.append((str(node or Node.current(node)), step))

    def report_net(self, net=None, node=None, report_interval=5):
        """Deprecated: use report_step."""
        node = str(node or Node.current(node))
        assert net is None or node not in self._report_nets
        if node not in self._report_nets:
            self._report_nets[node] = (
                net if net else core.Net("%s/reporter" % node),
                report_interval,
            )
        return self._report_nets[node][0]

    def tasks_by_node(self, node_remap=None):
        """A TaskGroup with one task per (remapped) node, running that node's
        tasks concurrently between its local setup and exit nets. Only
        computed once: a second call must use the same node mapping."""
        node_map = {}
        for task in self.tasks():
            node_map[task.node] = node_remap(task.node) if node_remap else task.node
        if self._tasks_by_node is not None:
            tasks_by_node, prev_node_map = self._tasks_by_node
            assert prev_node_map == node_map, "Cannot call tasks_by_node multiple times."
            return tasks_by_node

        for node, (net, interval) in self._report_nets.items():
            self.report_step(net, node=node, interval_ms=interval * 1000)
        self._report_nets = {}

        tasks_by_node = defaultdict(list)
        for task in self.tasks():
            tasks_by_node[node_map[task.node]].append(task)
        report_steps_by_node = defaultdict(list)
        for original_node, step in self._report_steps:
            report_steps_by_node[node_map[original_node]].append(step)

        grouped_by_node = TaskGroup()
        for node, tasks in tasks_by_node.items():
            report_steps = report_steps_by_node[node]
            node_inits, node_exits = get_setup_nets(
                TaskGroup.LOCAL_SETUP, [t.get_step() for t in tasks] + report_steps, self
            )
            steps = list(report_steps)
            outputs = []
            grouped_workspace_type = WorkspaceType.PRIVATE
            for task in tasks:
                step = task.get_step()
                step.SetCreateWorkspace(task.workspace_type() == WorkspaceType.PRIVATE)
                steps.append(step)
                outputs += task.outputs()
                # One task on the global workspace puts the node's task there.
                if task.workspace_type() == WorkspaceType.GLOBAL:
                    grouped_workspace_type = WorkspaceType.GLOBAL
            if len(steps) == 0:
                steps.append(core.execution_step("empty", []))
            if len(steps) == 1:
                step = steps[0]
            else:
                step = core.execution_step("%s:body" % node, steps, concurrent_substeps=True)
            step = add_setup_steps(step, node_inits, node_exits, node)
            Task(
                node=node,
                step=step,
                outputs=outputs,
                name="grouped_by_node",
                group=grouped_by_node,
                workspace_type=grouped_workspace_type,
            )
        self._tasks_by_node = (grouped_by_node, node_map)
        return grouped_by_node

    def to_task(self, node=None):
        """All tasks as one Task on `node` (default: the current Node)."""
        node = str(Node.current(node))
        tasks = self.tasks_by_node(lambda x: node).tasks()
        if len(tasks) == 0:
            return Task()
        return tasks[0]

    def workspace_type(self):
        return self._workspace_type

    def __repr__(self):
        return "TaskGroup(tasks={}, workspace_type={}, remote_nets={})".format(
            self._tasks + self._tasks_to_add, self.workspace_type(), self.remote_nets()
        )


def final_output(blob_or_record):
    """Adds `blob_or_record` as an output of the current Task (of a new
    Task when none is active); returns the TaskOutput, whose value can be
    fetched after the task ran."""
    cur_task = Task.current(required=False) or Task()
    return cur_task.add_output(blob_or_record)


@context.define_context()
class Task(context.Managed):
    """An execution step and zero or more outputs, run within a TaskGroup
    by a Session. Built with `net_builder.ops` inside `with Task():`

        with Node('trainer'), Task(name='my_task', num_instances=2):
            with ops.task_init():
                globl = ops.Const(0)
            with ops.task_instance_init():
                local = ops.Const(0)
            with ops.loop(100):
                ops.Copy(globl, local)
            with ops.task_exit():
                ops.Mul([globl, globl], [globl])

    task_init / task_exit blocks run once per task, task_instance_init /
    task_instance_exit once per concurrent instance (in its own workspace).
    """

    # Runs once per task, before/after all concurrent instances.
    TASK_SETUP = "task_setup"
    # Runs once for each instance of the task.
    TASK_INSTANCE_SETUP = "task_instance_setup"
    REPORT_STEP = "report_step"
    _global_names_used = set()

    @staticmethod
    def _get_next_name(node, group, name):
        basename = str(node) + "/" + str(name)
        names_used = (
            Task._global_names_used if group is None else set(t.name for t in group._tasks_to_add)
        )
        cur_name = basename
        i = 0
        while cur_name in names_used:
            i += 1
            cur_name = "%s:%d" % (basename, i)
        return cur_name

    def __init__(
        self,
        step=None,
        outputs=None,
        workspace_type=None,
        group=None,
        node=None,
        name=None,
        num_instances=None,
    ):
        """Creates a Task and adds it to the current TaskGroup (if any).

        Args:
          step: the ExecutionStep (or net, list, NetBuilder) to run.
          outputs: blobs or records returned to the client at the end.
          workspace_type: a WorkspaceType (default: the group's, else PRIVATE).
          group: the TaskGroup (default: the active one).
          node: the node to run on (default: the current Node).
          name: the task's name (default: the step's name, else 'task').
          num_instances: run that many instances of the step concurrently.
        """
        if not name and isinstance(step, core.ExecutionStep):
            name = step.Proto().name
        if not name:
            name = "task"
        self.node = str(Node.current(None if node is None else Node(node)))
        self.group = TaskGroup.current(group, required=False)
        self.name = Task._get_next_name(self.node, self.group, name)
        if self.group is None:
            Task._global_names_used.add(self.name)
        # Taken out again while the Task is used as a context, to keep order.
        if self.group is not None:
            self.group._tasks_to_add.append(self)

        self._already_used = False
        self._step = None
        self._step_with_setup = None
        self._outputs = []
        if step is not None:
            self.set_step(step)
        if outputs is not None:
            self.add_outputs(outputs)

        self._pipeline = None
        self._is_pipeline_context = False
        self._workspace_type = workspace_type
        self._report_net = None
        self._num_instances = num_instances
        self._net_builder = None

    def __enter__(self):
        super(Task, self).__enter__()
        if self.group is not None:
            self.group._tasks_to_add.remove(self)
        self._assert_not_used()
        assert self._step is None, "This Task already has an execution step."
        from caffe2.python import net_builder

        self._net_builder = net_builder.NetBuilder(_fullname=self.name)
        self._net_builder.__enter__()
        return self

    def __exit__(self, etype, value, traceback):
        super(Task, self).__exit__(etype, value, traceback)
        self._net_builder.__exit__(etype, value, traceback)
        if etype is None:
            self.set_step(self._net_builder)
        if self.group is not None:
            self.group._tasks_to_add.append(self)
        self._net_builder = None

    def workspace_type(self):
        return self._workspace_type

    def _assert_not_used(self):
        assert not self._already_used, "Cannot modify task since it is already been used."

    def add_output(self, output):
        self._assert_not_used()
        output = output if isinstance(output, TaskOutput) else TaskOutput(output)
        self._outputs.append(output)
        return output

    def add_outputs(self, outputs):
        self._assert_not_used()
        if type(outputs) not in (list, tuple):
            return self.add_output(outputs)
        return [self.add_output(output) for output in outputs]

    def set_step(self, step):
        self._assert_not_used()
        self._step = core.to_execution_step(step)

    def get_step(self):
        """The task's step with its report steps, its instance and task
        setup/exit nets, and its concurrent instances (built once)."""
        if self._step_with_setup is not None:
            return self._step_with_setup
        if self._step is None:
            self._step_with_setup = core.execution_step(self.name, [])
            return self._step_with_setup

        report_steps = [
            s
            for s in self._step.get_all_attributes(Task.REPORT_STEP)
            if not hasattr(s, "_report_step_used")
        ]
        for step in report_steps:
            step._report_step_used = True
            if not step.Proto().run_every_ms:
                step.RunEveryMillis(1000)
        task_init_nets, task_exit_nets = get_setup_nets(
            Task.TASK_SETUP, [self._step] + report_steps, self
        )
        instance_init_nets, instance_exit_nets = get_setup_nets(
            Task.TASK_INSTANCE_SETUP, [self._step] + report_steps, self
        )
        if len(self._outputs) == 0:
            output_net = core.Net("%s:output" % self.name)
            self.add_output(output_net.ConstantFill([], 1, dtype=core.DataType.INT32, value=0))
            task_exit_nets.append(output_net)

        # Instance-level report steps run beside the body.
        body = (
            self._step
            if not report_steps
            else core.execution_step("%s:body" % self.name, report_steps + [self._step])
        )
        # Instance-level (thread-local) setup around the body.
        step_with_instance_setup = add_setup_steps(
            body, instance_init_nets, instance_exit_nets, self.name + ":instance"
        )
        if self._num_instances and self._num_instances > 1:
            step_with_instance_setup.SetCreateWorkspace(True)
            step_with_instance_setup = core.execution_step(
                "%s:parallel" % self.name,
                [step_with_instance_setup],
                num_concurrent_instances=self._num_instances,
            )
        # Task-level setup around everything.
        self._step_with_setup = add_setup_steps(
            step_with_instance_setup, task_init_nets, task_exit_nets, self.name
        )
        return self._step_with_setup

    def output_list(self):
        return TaskOutputList(self._outputs)

    def outputs(self):
        return self._outputs

    def _notify_used(self):
        self.get_step()
        self._already_used = True

    def __repr__(self):
        return "Task(name={}, node={}, outputs={})".format(self.name, self.node, self.outputs())
