"""caffe2.python.net_builder: build nets, loops and conditional blocks with
`with` scopes.

    from caffe2.python.net_builder import NetBuilder, ops
    with NetBuilder() as nb:
        x = ops.Const(5)
        with ops.loop():
            ops.stop_if(ops.LE([x, ops.Const(0)]))
            ops.Add([x, ops.Const(-1)], [x])
    workspace.RunPlan(core.Plan(core.to_execution_step(nb)))

The implementation is split over net_builder_core (NetBuilder),
net_builder_blocks (the nested blocks) and net_builder_ops (`ops`); this
module re-exports them under the upstream names.
"""
from caffe2.python.net_builder_blocks import (  # noqa: F401
    _Loop,
    _ReporterBuilder,
    _RunElseNet,
    _RunIf,
    _RunIfNet,
    _RunOnce,
    _RunWhileCondition,
    _RunWhileNet,
    _SetupBuilder,
    _StopGuard,
)
from caffe2.python.net_builder_core import NetBuilder  # noqa: F401
from caffe2.python.net_builder_ops import Operations, ops  # noqa: F401
