"""The current workspace: blobs, nets, plans, feeding and fetching.

Most functions act on the process-wide current workspace held by the C++
extension; `C.Workspace` objects give explicit access to one workspace.

The module-level state (operator tracebacks, immediate mode) lives here; the
stateless proto and name helpers (workspace_names) and the graph tools
(workspace_tools: shape inference, transforms, Predictor) are re-exported.
"""
import collections
import contextlib
import logging
import os
import shutil
import tempfile

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import scope, utils
import caffe2.python._import_c_extension as C

# Stateless parts, by purpose, re-exported under the upstream names.
from caffe2.python.workspace_names import (  # noqa: F401
    _StringifyName,
    GetNetName,
    StringifyBlobName,
    StringifyNetName,
    StringifyProto,
)
from caffe2.python.workspace_tools import (  # noqa: F401
    _GetFreeFlaskPort,
    ApplyTransform,
    ApplyTransformIfFaster,
    GetOperatorCost,
    InferShapesAndTypes,
    Predictor,
    StartMint,
)

logger = logging.getLogger(__name__)

Blobs = C.blobs
CreateBlob = C.create_blob
CurrentWorkspace = C.current_workspace
DeserializeBlob = C.deserialize_blob
GlobalInit = C.global_init
HasBlob = C.has_blob
RegisteredOperators = C.registered_operators
SerializeBlob = C.serialize_blob
SwitchWorkspace = C.switch_workspace
RootFolder = C.root_folder
Workspaces = C.workspaces
BenchmarkNet = C.benchmark_net
GetStats = C.get_stats

# {net name: {op index: [(file, line, function), ...] innermost first}},
# filled by core.Net when ops are added, printed when a net fails.
operator_tracebacks = collections.defaultdict(dict)

is_asan = C.is_asan
has_gpu_support = C.has_gpu_support

if has_gpu_support:
    NumCudaDevices = C.num_cuda_devices
    GetCUDAVersion = C.get_cuda_version
    GetCuDNNVersion = C.get_cudnn_version
    GetDeviceProperties = C.get_device_properties

    def GetCudaPeerAccessPattern():
        return np.asarray(C.get_cuda_peer_access_pattern())

else:

    def NumCudaDevices():
        return 0

    def GetCUDAVersion():
        return 0

    def GetCuDNNVersion():
        return 0

    def GetCudaPeerAccessPattern():
        return np.array([])

    def GetDeviceProperties(device_id):
        return None


IsNUMAEnabled = C.is_numa_enabled
GetNumNUMANodes = C.get_num_numa_nodes
GetBlobNUMANode = C.get_blob_numa_node


def ResetWorkspace(root_folder=None):
    """Replaces the current workspace by an empty one (root folder kept)."""
    if root_folder is None:
        return C.reset_workspace(C.root_folder())
    if not os.path.exists(root_folder):
        os.makedirs(root_folder)
    return C.reset_workspace(root_folder)


def CreateNet(net, overwrite=False, input_blobs=None):
    """Instantiates `net` (Net or NetDef) in the current workspace."""
    for input_blob in input_blobs or []:
        C.create_blob(input_blob)
    return CallWithExceptionIntercept(
        C.create_net,
        C.Workspace.current._last_failed_op_net_position,
        GetNetName(net),
        StringifyProto(net),
        overwrite,
    )


def RunOperatorOnce(operator):
    return C.run_operator_once(StringifyProto(operator))


def RunOperatorsOnce(operators):
    for op in operators:
        if not RunOperatorOnce(op):
            return False
    return True


def CallWithExceptionIntercept(func, op_id_fetcher, net_name, *args, **kwargs):
    """Calls func; on failure prints where the failing op was created."""
    try:
        return func(*args, **kwargs)
    except Exception:
        op_id = op_id_fetcher()
        net_tracebacks = operator_tracebacks.get(net_name, None)
        if net_tracebacks and op_id in net_tracebacks:
            print(
                "Original python traceback for operator {} in network "
                "`{}` in exception above (most recent call last):".format(op_id, net_name)
            )
            for filename, line, function in reversed(net_tracebacks[op_id]):
                print('  File "{}", line {}, in {}'.format(filename, line, function))
        raise


def RunNetOnce(net):
    return CallWithExceptionIntercept(
        C.run_net_once,
        C.Workspace.current._last_failed_op_net_position,
        GetNetName(net),
        StringifyProto(net),
    )


def RunNet(name, num_iter=1, allow_fail=False):
    """Runs a created net `num_iter` times.

    Args:
      name: the net's name, or a Net.
      allow_fail: return False on failure instead of raising.
    """
    return CallWithExceptionIntercept(
        C.run_net,
        C.Workspace.current._last_failed_op_net_position,
        GetNetName(name),
        StringifyNetName(name),
        num_iter,
        allow_fail,
    )


def RunPlan(plan_or_step):
    # core imports workspace, so it is imported here, when first needed.
    from caffe2.python import core

    if isinstance(plan_or_step, core.ExecutionStep):
        plan_or_step = core.Plan(plan_or_step)
    return C.run_plan(StringifyProto(plan_or_step))


def FeedBlob(name, arr, device_option=None):
    """Feeds a numpy array, a TensorProto or a string into blob `name`.

    The device defaults to the current DeviceScope.
    """
    if isinstance(arr, caffe2_pb2.TensorProto):
        arr = utils.Caffe2TensorToNumpyArray(arr)
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "SU":
        # C++ stores strings from object arrays.
        arr = arr.astype(object)

    if device_option is None:
        device_option = scope.CurrentDeviceScope()

    if (
        device_option is not None
        and device_option.device_type == caffe2_pb2.CUDA
        and isinstance(arr, np.ndarray)
        and arr.dtype == np.dtype("float64")
    ):
        logger.warning(
            "CUDA operators do not support 64-bit doubles, please use "
            "arr.astype(np.float32) or np.int32 for ints. Blob: {} type: {}".format(name, arr.dtype)
        )

    name = StringifyBlobName(name)
    if device_option is not None:
        return C.feed_blob(name, arr, StringifyProto(device_option))
    return C.feed_blob(name, arr)


def FetchBlobs(names):
    return [FetchBlob(name) for name in names]


def FetchBlob(name):
    """Returns a copy of blob `name` as a numpy array (bytes for strings)."""
    return C.fetch_blob(StringifyBlobName(name))


def GetNameScope():
    return scope.CurrentNameScope()


class _BlobDict(object):
    """Dict-like view of the current workspace's blobs."""

    def __getitem__(self, key):
        return FetchBlob(key)

    def __setitem__(self, key, value):
        return FeedBlob(key, value)

    def __len__(self):
        return len(C.blobs())

    def __iter__(self):
        return iter(C.blobs())

    def __contains__(self, item):
        return C.has_blob(item)


blobs = _BlobDict()


# Immediate mode: every op created by core.CreateOperator also runs at once,
# in a workspace of its own.
_immediate_mode = False
_immediate_workspace_name = "_CAFFE2_IMMEDIATE"
_immediate_root_folder = ""


def IsImmediate():
    return _immediate_mode


@contextlib.contextmanager
def WorkspaceGuard(workspace_name):
    """Switches to (creating) `workspace_name`, and back afterwards."""
    current = CurrentWorkspace()
    SwitchWorkspace(workspace_name, True)
    try:
        yield
    finally:
        SwitchWorkspace(current)


def StartImmediate(i_know=False):
    """Enters immediate mode (experimental; for interactive debugging)."""
    global _immediate_mode
    global _immediate_root_folder
    if IsImmediate():
        # Start from a fresh immediate workspace.
        StopImmediate()
    _immediate_mode = True
    with WorkspaceGuard(_immediate_workspace_name):
        _immediate_root_folder = tempfile.mkdtemp()
        ResetWorkspace(_immediate_root_folder)
    if i_know:
        return
    print(
        """
    Enabling immediate mode in caffe2 python is an EXPERIMENTAL feature.
    Every operator you create is run at once in a separate workspace
    ("{}"), so that you can inspect its outputs with FetchImmediate() and
    ImmediateBlobs(). Caveats:
      - ops created for nets are still added to those nets and run again
        when the nets run;
      - gradient operators are also run at once, with whatever inputs exist;
      - call StopImmediate() to leave immediate mode and drop its blobs.
    Pass i_know=True to StartImmediate() to hide this message.
    """.format(
            _immediate_workspace_name
        )
    )


def StopImmediate():
    """Leaves immediate mode and drops its workspace's contents."""
    global _immediate_mode
    global _immediate_root_folder
    if not IsImmediate():
        return
    with WorkspaceGuard(_immediate_workspace_name):
        ResetWorkspace()
    shutil.rmtree(_immediate_root_folder, ignore_errors=True)
    _immediate_root_folder = ""
    _immediate_mode = False


def ImmediateBlobs():
    with WorkspaceGuard(_immediate_workspace_name):
        return Blobs()


def RunOperatorImmediate(op):
    with WorkspaceGuard(_immediate_workspace_name):
        RunOperatorOnce(op)


def FetchImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return FetchBlob(*args, **kwargs)


def FeedImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return FeedBlob(*args, **kwargs)


# Python conveniences on the extension's classes.


def _Workspace_create_net_with_exception_intercept(ws, net, overwrite=False):
    return CallWithExceptionIntercept(
        ws._create_net,
        ws._last_failed_op_net_position,
        GetNetName(net),
        StringifyProto(net),
        overwrite,
    )


def _Workspace_run(ws, obj):
    """Runs a Net/NetDef once, a PlanDef, or an OperatorDef in `ws`."""
    if hasattr(obj, "Proto"):
        obj = obj.Proto()
    if isinstance(obj, caffe2_pb2.PlanDef):
        return ws._run_plan(obj.SerializeToString())
    if isinstance(obj, caffe2_pb2.NetDef):
        return CallWithExceptionIntercept(
            ws._run_net, ws._last_failed_op_net_position, GetNetName(obj), obj.SerializeToString()
        )
    if isinstance(obj, caffe2_pb2.OperatorDef):
        return ws._run_operator(obj.SerializeToString())
    raise ValueError("Don't know how to do Workspace.run() on {}".format(type(obj)))


def _Workspace_feed_blob(ws, name, arr, device_option=None):
    if isinstance(arr, caffe2_pb2.TensorProto):
        arr = utils.Caffe2TensorToNumpyArray(arr)
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "SU":
        arr = arr.astype(object)
    if device_option is None:
        device_option = scope.CurrentDeviceScope()
    return ws.create_blob(StringifyBlobName(name)).feed(arr, device_option)


def _Blob_feed(blob, arg, device_option=None):
    if device_option is not None:
        device_option = StringifyProto(device_option)
    return blob._feed(arg, device_option)


C.Workspace.create_net = _Workspace_create_net_with_exception_intercept
C.Workspace.run = _Workspace_run
C.Workspace.feed_blob = _Workspace_feed_blob
C.Blob.feed = _Blob_feed
