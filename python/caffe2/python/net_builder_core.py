"""NetBuilder: the scope-driven builder behind `caffe2.python.net_builder`.

A NetBuilder collects, in order, plain nets and nested builders (loops, ifs,
setup blocks). `core.to_execution_step(builder)` turns it into an
ExecutionStep whose children run in order; when the builder owns a stop
blob, the step repeats until that blob is true (ExecutionStep's
should_stop_blob), otherwise it runs once.
"""
from caffe2.python import context, core


@context.define_context()
class NetBuilder(context.Managed):
    """Scope-driven mechanism for building nets, loops and conditional blocks.

    Args:
      name: the builder's name; nets created inside are prefixed with it.
      initial_scope: blobs available for reading and writing inside (used by
        the control-op builders to tell outer blobs from local ones).

    Example:
        from caffe2.python.net_builder import NetBuilder, ops
        with NetBuilder() as nb:
            c = ops.Const(5)
            d = ops.Const(0)
            with ops.loop():
                ops.stop_if(ops.LE([c, ops.Const(0)]))
                ops.Add([c, ops.Const(-1)], [c])
                with ops.If(ops.GE([c, ops.Const(3)])):
                    ops.Add([d, ops.Const(10)], [d])
        step = core.to_execution_step(nb)
    """

    def __init__(
        self,
        name=None,
        initial_scope=None,
        _stop_blob_required=False,
        _stop_blob=None,
        _fullname=None,
        _use_control_ops=False,
    ):
        parent = NetBuilder.current(required=False)
        assert not _fullname or not name, "Cannot set both _fullname and name"
        assert not _use_control_ops or (
            not _stop_blob_required and not _stop_blob
        ), "Stop blobs are not used with control operators"
        self.name = _fullname or "/".join(n for n in (parent.name if parent else None, name) if n)
        self._frozen = False
        self._current_net = None
        self._children = []
        if parent:
            # The parent's scope must include the nets it has so far.
            parent._update_lexical_scope()
        self._init_lexical_scope = set(parent._lexical_scope) if parent else set()
        if initial_scope:
            self._init_lexical_scope |= set(str(b) for b in initial_scope)
        self._lexical_scope = set(self._init_lexical_scope)
        self._stop_blob = _stop_blob
        self._stop_blob_required = _stop_blob_required
        self._use_control_ops = _use_control_ops

    def stop_blob(self):
        """The BlobReference of this builder's stop blob, created on first use.

        The blob is set to False in the current net, which the caller is
        expected to use right away; when the current net is not the first
        child, a `stop_blob_init` net resetting it is put first, so that a
        stale True from an earlier run cannot stop the step early.
        """
        assert not self._use_control_ops, "Stop blobs are not used with control operators"
        if self._stop_blob is None:
            net = self.current_net()
            self._stop_blob = core.BlobReference(net.NextName("stop_blob"), net=net)
            net.Const(False, blob_out=self._stop_blob)
            if self._current_net != self._children[0]:
                self._children.insert(0, core.Net("stop_blob_init"))
                self._children[0].Const(False, blob_out=self._stop_blob)
        return self._stop_blob

    def stop_if(self, blob):
        """Stops this builder's step after the current net if `blob` is true."""
        assert not self._use_control_ops, "Stop blobs are not used with control operators"
        stop_blob = self.stop_blob()
        self.current_net().Or([stop_blob, blob], [stop_blob])
        # The stop blob is checked between nets: what follows needs a new one.
        self._current_net = None

    def _assert_mutable(self):
        assert not self._frozen, "This NetBuilder (%s) has been built already." % self.name

    def _update_lexical_scope(self):
        """Recomputes the names of the blobs visible at the end of this
        builder: the initial scope plus every blob its nets use (and the
        scopes of nested control-op builders)."""
        self._lexical_scope = set(self._init_lexical_scope)
        for child in self._children:
            if isinstance(child, core.Net):
                self._lexical_scope |= child.UsedBlobNames()
            elif isinstance(child, NetBuilder) and child._use_control_ops:
                self._lexical_scope |= child._lexical_scope

    def _reset_children(self):
        self._current_net = None
        self._children = []
        self._lexical_scope = set(self._init_lexical_scope)

    def add(self, child):
        """Appends a Net, a NetBuilder, an ExecutionStep or a TaskGroup; a
        Net becomes the current net."""
        self._assert_mutable()
        if self._use_control_ops:
            assert isinstance(child, core.Net) or (
                isinstance(child, NetBuilder) and child._use_control_ops
            ), "Expected Net or NetBuilder with control ops"
        self._current_net = None
        self._children.append(child)
        if isinstance(child, core.Net):
            self._current_net = child
        self._update_lexical_scope()
        return child

    def current_net(self, name=None):
        """The net ops go to; a new one when there is none or `name` is given."""
        self._assert_mutable()
        if self._current_net is None or name is not None:
            self.add(core.Net(name))
        return self._current_net

    def freeze(self):
        for child in self._children:
            if hasattr(child, "freeze"):
                child.freeze()
        self._current_net = None
        self._frozen = True

    def get(self):
        """Freezes the builder and returns its children, with any TaskGroup
        replaced by the execution step of its tasks."""
        self.freeze()
        return [_task_group_to_step(c) for c in self._children]

    def __exit__(self, etype, *args):
        super(NetBuilder, self).__exit__(etype, *args)
        if self._use_control_ops and len(self._children) > 0:
            children = self._children
            self._reset_children()
            merged_net = NetBuilder.merge_nets(children, self._lexical_scope)
            assert merged_net, "Expected a non-empty merge of children"
            self._children = [merged_net]
            self._current_net = merged_net
        self.freeze()
        if etype is not None:
            return
        assert (
            not self._stop_blob_required or self._stop_blob is not None
        ), "This loop does not have a stop condition."

    def __str__(self):
        return self.name or "Un-named NetBuilder"

    @staticmethod
    def merge_nets(nets_or_builders, outer_blob_names):
        """Appends the nets (and the single nets of control-op builders) into
        the first one; only outputs visible outside stay external outputs."""
        net = None
        for n in nets_or_builders:
            if isinstance(n, NetBuilder):
                assert n._use_control_ops, "Merging of NetBuilder supported only for control ops"
                nets = n.get()
                assert len(nets) == 1 and isinstance(
                    nets[0], core.Net
                ), "Invalid control op net builder"
                cur = nets[0]
            else:
                assert isinstance(n, core.Net)
                cur = n
            if net:
                net.AppendNet(cur)
            else:
                net = cur
        if net:
            external_outputs = [o for o in net.Proto().external_output if o in outer_blob_names]
            net.Proto().external_output[:] = external_outputs
        return net


def _task_group_to_step(child):
    """A TaskGroup added with ops.task_group() runs, as one step, its tasks
    concurrently on the local node."""
    from caffe2.python.task import Cluster, TaskGroup

    if not isinstance(child, TaskGroup):
        return child
    with Cluster():
        return child.to_task().get_step()
