"""What `caffe2.python.task` builds on: nodes and clusters, workspace types,
task outputs, and the setup / exit nets gathered from net attributes."""
from copy import copy

from caffe2.python import context, core


def _merge_node_kwargs(a, b):
    if a is None:
        return b
    if b is None:
        return a
    c = copy(a)
    c.update(b)
    return c


@context.define_context(allow_default=True)
class Cluster(context.Managed):
    """Keeps track of the node names used (in order). One is created on the
    first use of Node; users rarely need it directly."""

    def __init__(self):
        self._nodes = []
        self._node_kwargs = {}

    def add_node(self, node):
        if str(node) not in self._nodes:
            self._nodes.append(str(node))
        self._node_kwargs[str(node)] = _merge_node_kwargs(
            node.kwargs(), self._node_kwargs.get(str(node))
        )

    def nodes(self):
        """The unique node names used within this context."""
        return self._nodes

    def node_kwargs(self):
        return self._node_kwargs

    def __repr__(self):
        return "Cluster(nodes={}, node_kwargs={})".format(self.nodes(), self.node_kwargs())


@context.define_context(allow_default=True)
class Node(context.Managed):
    """Tasks created within `with Node(name):` run on that node; tasks of
    one node share its workspace. Only the name counts (plus optional
    implementation-specific kwargs). The default node is 'local'."""

    def __init__(self, node="local", **kwargs):
        self._name = str(node)
        self._kwargs = kwargs
        Cluster.current().add_node(self)

    def __str__(self):
        return self._name

    def __repr__(self):
        return "Node(name={}, kwargs={})".format(self._name, self._kwargs)

    def kwargs(self):
        return self._kwargs


class WorkspaceType(object):
    """Whether the tasks of a TaskGroup run in the global workspace, kept
    across runs (GLOBAL), or in a child workspace made for the run
    (PRIVATE): then only blobs that already existed, such as the task
    outputs, are seen after the run."""

    PRIVATE = "private"
    GLOBAL = "global"


def _schema():
    try:
        from caffe2.python import schema
    except ImportError:
        return None
    return schema


class TaskOutput(object):
    """The output of a task: a blob, a list of blobs, or a schema record.
    After a Session ran the task, `fetch()` returns the value(s)."""

    def __init__(self, names):
        self._schema = None
        self._is_scalar = False
        schema = _schema()
        if schema is not None and isinstance(names, schema.Field):
            self._schema = names
            names = self._schema.field_blobs()
        self._is_scalar = type(names) not in (tuple, list)
        if self._is_scalar:
            names = [names]
        self.names = names
        self._values = None
        self._fetch_func = None

    def set(self, values, _fetch_func=None):
        assert len(values) == len(self.names)
        self._values = values
        self._fetch_func = _fetch_func

    def get(self):
        """The blob reference(s) holding the output after the run."""
        assert self._values is not None, "Output value not set yet."
        if self._is_scalar:
            return self._values[0]
        elif self._schema:
            return _schema().from_blob_list(self._schema, self._values)
        return self._values

    def fetch(self):
        """The value(s) of the output, fetched by the session that ran it."""
        assert self._fetch_func is not None, "Cannot fetch value for this output."
        fetched_vals = [self._fetch_func(v) for v in self._values]
        if self._is_scalar:
            return fetched_vals[0]
        elif self._schema:
            return _schema().from_blob_list(self._schema, fetched_vals)
        return fetched_vals

    def __repr__(self):
        return "TaskOutput(names={}, values={})".format(self.names, self._values)


class TaskOutputList(object):
    """The outputs of a task, in order."""

    def __init__(self, outputs=None):
        self.outputs = outputs or []

    def names(self):
        """Every output blob name, in order."""
        names = []
        for o in self.outputs:
            names += o.names
        return names

    def set_values(self, values, _fetch_func=None):
        offset = 0
        for o in self.outputs:
            num = len(o.names)
            o.set(values[offset : offset + num], _fetch_func)
            offset += num
        assert offset == len(values), "Wrong number of output values."

    def __repr__(self):
        return "TaskOutputList(outputs={})".format(self.outputs)


def _append_setup(nets, found, what):
    if isinstance(found, (list, tuple)):
        nets += found
    elif isinstance(found, (core.Net, core.ExecutionStep)):
        nets.append(found)
    elif found is not None:
        raise TypeError("Unsupported type for %s: %s" % (what, type(found)))


def get_setup_nets(key, steps_or_nets, target):
    """The init and exit nets/steps of the objects attached under `key` to
    the nets of `steps_or_nets` (each object used once; see SetupNets).

    Returns (init_nets, exit_nets); nets the objects wrote into the shared
    `<key>/init` and `<key>/exit` nets come first.
    """
    init_net = core.Net(key + "/init")
    exit_net = core.Net(key + "/exit")
    init_nets = []
    exit_nets = []
    objs = []
    for step_or_net in steps_or_nets:
        if hasattr(step_or_net, "get_all_attributes"):
            objs += step_or_net.get_all_attributes(key)
        elif hasattr(step_or_net, "get_attributes"):
            objs += step_or_net.get_attributes(key)
    for obj in objs:
        if getattr(obj, "_setup_used", False):
            continue
        if hasattr(obj, "_setup_target") and obj._setup_target != target:
            continue
        if hasattr(obj, "setup"):
            _append_setup(init_nets, obj.setup(init_net), "setup")
            obj._setup_used = True
        if hasattr(obj, "exit"):
            _append_setup(exit_nets, obj.exit(exit_net), "exit")
            obj._setup_used = True
    if len(init_net.Proto().op) > 0:
        init_nets.insert(0, init_net)
    if len(exit_net.Proto().op) > 0:
        exit_nets.insert(0, exit_net)
    return init_nets, exit_nets


def add_setup_steps(step, init_nets, exit_nets, name):
    """`step` between a `<name>:init` and a `<name>:exit` step (when there
    are such nets)."""
    if not init_nets and not exit_nets:
        return step
    steps = []
    if init_nets:
        steps.append(core.execution_step("%s:init" % name, init_nets))
    steps.append(step)
    if len(exit_nets) > 0:
        steps.append(core.execution_step("%s:exit" % name, exit_nets))
    return core.execution_step(name, steps)


class SetupNets(object):
    """Nets to run once at the start and end of the Tasks (or TaskGroup
    nodes) that use a net:

        net.add_attribute(Task.TASK_SETUP, SetupNets([init_net]))
        net.add_attribute(TaskGroup.LOCAL_SETUP, SetupNets([init_net]))

    The same object may be attached to several nets; it runs once per run.
    """

    def __init__(self, init_nets=None, exit_nets=None):
        self.init_nets = init_nets
        self.exit_nets = exit_nets

    def setup(self, init_net):
        return self.init_nets

    def exit(self, exit_net):
        return self.exit_nets

    def __repr__(self):
        return "SetupNets(init_nets={}, exit_nets={})".format(self.init_nets, self.exit_nets)
