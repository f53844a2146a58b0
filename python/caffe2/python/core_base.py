"""Building blocks of caffe2.python.core: types, devices, blob references
and operator creation. Import them from `core`, which re-exports them."""
import collections
import os
import sys
import traceback

from caffe2.proto import caffe2_pb2
from caffe2.python import core_arguments, scope, utils, workspace
import caffe2.python._import_c_extension as C

NameScope = scope.NameScope
DeviceScope = scope.DeviceScope
EmptyDeviceScope = scope.EmptyDeviceScope

if sys.platform == "darwin" and "leveldb" in C.registered_dbs():
    print(
        "If you are using homebrew leveldb on a Mac OS, you might see an "
        "error warning you that malloc_zone_unregister() failed. This is "
        "not a caffe2 issue but is due to the homebrew leveldb having an "
        "incompatible memory allocator. It does not affect usage."
    )


class DataType:
    """TensorProto.DataType values as attributes (DataType.FLOAT, ...)."""


for _name, _value in caffe2_pb2.TensorProto.DataType.items():
    setattr(DataType, _name, _value)
del _name, _value


def _GetRegisteredOperators():
    return set(workspace.RegisteredOperators())


# Kept as one set object, updated in place, so every module that imported
# it sees operators loaded later (dyndep.InitOpsLibrary).
_REGISTERED_OPERATORS = _GetRegisteredOperators()


def RefreshRegisteredOperators():
    _REGISTERED_OPERATORS.clear()
    _REGISTERED_OPERATORS.update(_GetRegisteredOperators())


_GLOBAL_INIT_ARGS = []


def GlobalInit(args):
    """Initializes the C++ runtime with command-line style `args`."""
    _GLOBAL_INIT_ARGS.extend(args[1:])
    C.global_init(args)


def GetGlobalInitArgs():
    return _GLOBAL_INIT_ARGS[:]


def IsOperator(op_type):
    return IsOperatorWithEngine(op_type, engine="DEFAULT")


def IsOperatorWithEngine(op_type, engine):
    return C.op_registry_key(op_type, engine) in _REGISTERED_OPERATORS


def DeviceOption(device_type, cuda_gpu_id=0, random_seed=None, node_name=None):
    """A DeviceOption; device_type and cuda_gpu_id are always set."""
    option = caffe2_pb2.DeviceOption()
    option.device_type = device_type
    option.cuda_gpu_id = cuda_gpu_id
    if node_name is not None:
        option.node_name = node_name
    if random_seed is not None:
        option.random_seed = random_seed
    return option


def device_option_equal(opt1, opt2, ignore_node_name=True, ignore_random_seed=True):
    """Compares device options: two CPU options are equal, others compare
    their device type and GPU id."""
    if opt1 is None or opt2 is None:
        return opt1 is opt2
    if not ignore_node_name and opt1.node_name != opt2.node_name:
        return False
    if not ignore_random_seed and opt1.random_seed != opt2.random_seed:
        return False
    if opt1.device_type == caffe2_pb2.CPU or opt2.device_type == caffe2_pb2.CPU:
        return opt1.device_type == opt2.device_type
    return opt1.device_type == opt2.device_type and opt1.cuda_gpu_id == opt2.cuda_gpu_id


def device_equal(src, dst):
    """Compares only device_type and cuda_gpu_id."""
    return src.device_type == dst.device_type and src.cuda_gpu_id == dst.cuda_gpu_id


GradientSlice = collections.namedtuple("GradientSlice", ["indices", "values"])


class _NoSuchOperatorError(AttributeError, RuntimeError):
    """Raised for `blob.<Name>` when Name cannot be created: a
    RuntimeError as upstream raised, and an AttributeError so that
    hasattr() probes answer False."""


class BlobReference(object):
    """A reference to a blob by name, optionally tied to the net that
    produces it (which lets `blob.Op(...)` add ops to that net)."""

    def __init__(self, name, net=None):
        if isinstance(name, str):
            self._name = name
        elif isinstance(name, bytes):
            self._name = name.decode("utf-8")
        else:
            self._name = str(name)
        self._from_net = net
        # Free-form metadata attached by callers.
        self.meta = {}

    def __hash__(self):
        return hash(self._name)

    def __eq__(self, other):
        if isinstance(other, str):
            return self._name == other
        if isinstance(other, bytes):
            return self._name == other.decode("utf-8")
        if isinstance(other, BlobReference):
            return self._name == other._name
        return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return self._name

    def __repr__(self):
        return 'BlobReference("{}")'.format(self._name)

    def __add__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add BlobReference to a non-string.")
        return BlobReference(self._name + other, self._from_net)

    def __radd__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add a non-string to BlobReference.")
        return BlobReference(other + self._name, self._from_net)

    def Net(self):
        return self._from_net

    def GetNameScope(self):
        return self._name[: self._name.rfind(scope._NAMESCOPE_SEPARATOR) + 1]

    def GetUnscopedName(self):
        return self._name[self._name.rfind(scope._NAMESCOPE_SEPARATOR) + 1 :]

    def _CreateAndAddToNet(self, op_type, inputs=None, *args, **kwargs):
        """Adds `op_type` to the originating net with self as first input."""
        if inputs is None:
            inputs = []
        elif isinstance(inputs, (BlobReference, str, bytes)):
            inputs = [inputs]
        return self._from_net.__getattr__(op_type)([self] + list(inputs), *args, **kwargs)

    def __getattr__(self, op_type):
        if op_type.startswith("_"):
            raise AttributeError(op_type)
        if self._from_net is None:
            raise _NoSuchOperatorError(
                "You cannot use a blob reference that does not have a net "
                "source to create operators. Create the operator from an "
                "explicit net object."
            )
        if not IsOperator(op_type):
            raise _NoSuchOperatorError(
                "Method " + op_type + " is not a registered operator."
                " Did you mean: [" + ",".join(C.nearby_opnames(op_type)) + "]"
            )
        return lambda *args, **kwargs: self._CreateAndAddToNet(op_type, *args, **kwargs)

    def __dir__(self):
        additional = [op for op in _REGISTERED_OPERATORS if "_ENGINE_" not in op]
        return sorted(set(list(super().__dir__()) + additional))


def ScopedName(name):
    """Prefixes `name` with the current NameScope."""
    if isinstance(name, bytes):
        name = name.decode("ascii")
    return scope.CurrentNameScope() + name


def ScopedBlobReference(name, *args, **kwargs):
    """A BlobReference whose name is prefixed with the current NameScope."""
    return BlobReference(ScopedName(name), *args, **kwargs)


def _get_blob_ref(blob_name_or_ref):
    if isinstance(blob_name_or_ref, BlobReference):
        return blob_name_or_ref
    return BlobReference(blob_name_or_ref)


def _RectifyInputOutput(blobs, net=None):
    """Turns one blob or a list/tuple of blobs into a list of
    BlobReferences; strings are scoped, BlobReferences kept as they are."""
    if isinstance(blobs, (str, bytes)):
        return [ScopedBlobReference(blobs, net=net)]
    if isinstance(blobs, BlobReference):
        return [blobs]
    if isinstance(blobs, (list, tuple)):
        rectified = []
        for blob in blobs:
            if isinstance(blob, (str, bytes)):
                rectified.append(ScopedBlobReference(blob, net=net))
            elif isinstance(blob, BlobReference):
                rectified.append(blob)
            else:
                raise TypeError(
                    "I/O blob #{} of unsupported type: {} of type {}".format(
                        len(rectified), str(blob), type(blob)
                    )
                )
        return rectified
    raise TypeError("Unknown input/output type: %s of type %s." % (str(blobs), type(blobs)))


def CreateOperator(
    operator_type,
    inputs,
    outputs,
    name="",
    control_input=None,
    device_option=None,
    arg=None,
    engine=None,
    **kwargs,
):
    """Creates an OperatorDef.

    String blob names are scoped with the current NameScope; the device is
    `device_option`, else a copy of the current DeviceScope, else unset.
    Keyword arguments become op arguments (`random_seed` goes into the
    device option); a name the op's schema does not declare is refused
    (core_arguments).
    """
    operator = caffe2_pb2.OperatorDef()
    if os.environ.get("CAFFE2_DEBUG"):
        operator.debug_info = "".join(traceback.format_stack()[:-1])
    operator.type = operator_type
    operator.name = name
    operator.input.extend(str(i) for i in _RectifyInputOutput(inputs))
    operator.output.extend(str(o) for o in _RectifyInputOutput(outputs))
    if control_input:
        operator.control_input.extend(str(i) for i in _RectifyInputOutput(control_input))
    if device_option is not None:
        operator.device_option.CopyFrom(device_option)
    elif scope.CurrentDeviceScope() is not None:
        operator.device_option.CopyFrom(scope.CurrentDeviceScope())
    if engine is not None:
        operator.engine = engine
    if "random_seed" in kwargs:
        operator.device_option.random_seed = kwargs.pop("random_seed")
    if arg is not None:
        operator.arg.extend(arg)
    for key, value in kwargs.items():
        operator.arg.add().CopyFrom(utils.MakeArgument(key, value))
    core_arguments.CheckArgumentNames(operator)

    if workspace.IsImmediate():
        workspace.RunOperatorImmediate(operator)
    return operator


def _RegisterPythonImpl(f, grad_f=None, python_func_type=None, pass_workspace=False):
    """Registers a Python op implementation; returns its registry token."""
    if python_func_type:
        func = python_func_type(f)
        f = func.forward
        grad_f = func.backward
    else:
        # (builder, args, kwargs) tuples build the function.
        if isinstance(f, tuple):
            f = f[0](*f[1], **f[2])
        if isinstance(grad_f, tuple):
            grad_f = grad_f[0](*grad_f[1], **grad_f[2])
    token = C.register_python_op(f, pass_workspace, "")
    if grad_f:
        C.register_python_gradient_op(token, grad_f)
    return token


def CreatePythonOperator(
    f, inputs, outputs, grad_f=None, pass_workspace=False, python_func_type=None, *args, **kwargs
):
    """Creates a `Python` op running f(inputs, outputs[, workspace])."""
    kwargs["token"] = _RegisterPythonImpl(
        f, grad_f, python_func_type, pass_workspace=pass_workspace
    )
    return CreateOperator("Python", inputs, outputs, *args, **kwargs)


def _extract_stacktrace():
    """The caller's stack as [(file, line, function)], innermost first,
    without the frames of core itself. Reads frames only, no source files
    (which may sit on a slow network file system)."""
    result = []
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        "caffe2.python.core"
    ):
        frame = frame.f_back
    while frame is not None:
        result.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return result
