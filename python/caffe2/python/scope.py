"""Thread-local name and device scopes applied when operators are created."""
import contextlib
import threading

from caffe2.proto import caffe2_pb2

_NAMESCOPE_SEPARATOR = "/"

_threadlocal_scope = threading.local()


def CurrentNameScope():
    """The current name prefix: '' or a string ending in '/'."""
    if not hasattr(_threadlocal_scope, "namescope"):
        _threadlocal_scope.namescope = ""
    return _threadlocal_scope.namescope


def CurrentDeviceScope():
    """The current DeviceOption, or None when no DeviceScope is active."""
    if not hasattr(_threadlocal_scope, "devicescope"):
        _threadlocal_scope.devicescope = None
    return _threadlocal_scope.devicescope


@contextlib.contextmanager
def NameScope(prefix, reset=False):
    """Appends `prefix + '/'` to the name scope (replaces it if `reset`)."""
    assert prefix is None or isinstance(prefix, str), "NameScope takes in a string as its argument."
    old_scope = CurrentNameScope()
    added = prefix + _NAMESCOPE_SEPARATOR if prefix else ""
    _threadlocal_scope.namescope = added if reset else old_scope + added
    try:
        yield
    finally:
        assert _threadlocal_scope.namescope.endswith(
            added
        ), "The namescope variable is changed from outside NameScope() calls."
        _threadlocal_scope.namescope = old_scope


@contextlib.contextmanager
def DeviceScope(scope, node_name=None):
    """Makes a copy of `scope` (a DeviceOption) the current device scope."""
    new_scope = caffe2_pb2.DeviceOption()
    if scope is not None:
        assert isinstance(
            scope, caffe2_pb2.DeviceOption
        ), "DeviceScope takes in a caffe2_pb2.DeviceOption as its argument."
        new_scope.CopyFrom(scope)
    else:
        assert node_name, "At least one argument should be non-null in DeviceScope"
    if node_name:
        new_scope.node_name = node_name
    old_scope = CurrentDeviceScope()
    # A node name set by an outer scope is inherited.
    if (
        old_scope is not None
        and old_scope.HasField("node_name")
        and not new_scope.HasField("node_name")
    ):
        new_scope.node_name = old_scope.node_name
    _threadlocal_scope.devicescope = new_scope
    try:
        yield
    finally:
        assert (
            CurrentDeviceScope() is new_scope
        ), "The device scope is changed from outside DeviceScope() calls."
        _threadlocal_scope.devicescope = old_scope


@contextlib.contextmanager
def EmptyDeviceScope():
    """Temporarily clears the device scope (ops get no device_option)."""
    old_scope = CurrentDeviceScope()
    _threadlocal_scope.devicescope = None
    try:
        yield
    finally:
        _threadlocal_scope.devicescope = old_scope
