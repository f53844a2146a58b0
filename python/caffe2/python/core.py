"""caffe2.python.core: nets, operators, blob references, gradients, plans.

The implementation is split over core_base (types, devices, blob
references, CreateOperator), core_gradients (GradientRegistry and the
backward-pass IR), core_graph (SSA helpers), core_net (Net), core_net_utils
(clone and cross-device helpers) and core_plan (ExecutionStep, Plan); this
module re-exports their public API under the upstream names.
"""
import importlib
import importlib.util

from caffe2.proto import caffe2_pb2  # noqa: F401
from caffe2.python import scope, utils, workspace  # noqa: F401
import caffe2.python._import_c_extension as C

from caffe2.python.core_base import (  # noqa: F401
    _GLOBAL_INIT_ARGS,
    _REGISTERED_OPERATORS,
    _GetRegisteredOperators,
    _RectifyInputOutput,
    _RegisterPythonImpl,
    _extract_stacktrace,
    _get_blob_ref,
    BlobReference,
    CreateOperator,
    CreatePythonOperator,
    DataType,
    DeviceOption,
    DeviceScope,
    EmptyDeviceScope,
    GetGlobalInitArgs,
    GlobalInit,
    GradientSlice,
    IsOperator,
    IsOperatorWithEngine,
    NameScope,
    RefreshRegisteredOperators,
    ScopedBlobReference,
    ScopedName,
    device_equal,
    device_option_equal,
)
from caffe2.python.core_arguments import AllowUnknownArguments  # noqa: F401
from caffe2.python.core_gradients import (  # noqa: F401
    GetIndexFromGradientList,
    GradGenMeta,
    GradientRegistry,
    IR,
    OpSSA,
    SparseGradGenMeta,
)
from caffe2.python.core_graph import (  # noqa: F401
    InferBlobDevices,
    InferOpBlobDevices,
    InferOpBlobDevicesAsDict,
    InferOpDeviceAsBlobDevices,
    get_op_ids_in_path,
    get_output_producers,
    get_ssa,
    get_undefined_blobs,
)
from caffe2.python.core_net import Net  # noqa: F401
from caffe2.python.core_net_records import _recover_record_by_prefix  # noqa: F401
from caffe2.python.core_net_utils import (  # noqa: F401
    InjectCrossDeviceCopies,
    InjectDeviceCopiesAmongNets,
    InjectDeviceCopiesAmongNetsWithoutB2D,
    clone_and_bind_net,
    get_net_name,
    output_to_list,
)
from caffe2.python.core_plan import (  # noqa: F401
    ExecutionStep,
    Plan,
    _add_net_to_dict,
    add_nets_in_order,
    execution_step,
    scoped_execution_step,
    to_execution_step,
)

SetPerOpEnginePref = C.set_per_op_engine_pref
SetGlobalEnginePref = C.set_global_engine_pref
SetEnginePref = C.set_engine_pref
SetOpEnginePref = C.set_op_engine_pref


def _RegisterControlOpGradients():
    """Python gradients of Do, If and While, when control ops are shipped."""
    name = "caffe2.python.control_ops_grad"
    if importlib.util.find_spec(name) is None:
        return
    control_ops_grad = importlib.import_module(name)
    for op_type, maker in (
        ("Do", "gen_do_gradient"),
        ("If", "gen_if_gradient"),
        ("While", "gen_while_gradient"),
    ):
        if hasattr(control_ops_grad, maker):
            GradientRegistry.RegisterGradient(op_type)(getattr(control_ops_grad, maker))


_RegisterControlOpGradients()
