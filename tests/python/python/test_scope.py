"""Name and device scopes (caffe2.python.scope)."""
import threading

import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope


def test_namescope_nests_and_restores():
    assert scope.CurrentNameScope() == ""
    with scope.NameScope("a"):
        assert scope.CurrentNameScope() == "a/"
        with scope.NameScope("b"):
            assert scope.CurrentNameScope() == "a/b/"
        with scope.NameScope("c", reset=True):
            assert scope.CurrentNameScope() == "c/"
        with scope.NameScope(None):
            assert scope.CurrentNameScope() == "a/"
        with scope.NameScope(""):
            assert scope.CurrentNameScope() == "a/"
        assert scope.CurrentNameScope() == "a/"
    assert scope.CurrentNameScope() == ""


def test_namescope_restored_after_exception():
    with pytest.raises(ValueError):
        with scope.NameScope("x"):
            raise ValueError()
    assert scope.CurrentNameScope() == ""


def test_namescope_rejects_non_strings():
    with pytest.raises(AssertionError):
        with scope.NameScope(3):
            pass


def test_core_aliases():
    assert core.NameScope is scope.NameScope
    assert core.DeviceScope is scope.DeviceScope


def test_devicescope_copies_the_option():
    option = core.DeviceOption(caffe2_pb2.CUDA, 1)
    assert scope.CurrentDeviceScope() is None
    with scope.DeviceScope(option):
        current = scope.CurrentDeviceScope()
        assert current == option
        assert current is not option
        option.cuda_gpu_id = 5
        assert scope.CurrentDeviceScope().cuda_gpu_id == 1
    assert scope.CurrentDeviceScope() is None


def test_devicescope_node_name_inherited_and_overridden():
    outer = core.DeviceOption(caffe2_pb2.CPU, node_name="node0")
    with scope.DeviceScope(outer):
        with scope.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
            inner = scope.CurrentDeviceScope()
            assert inner.node_name == "node0"
            assert inner.device_type == caffe2_pb2.CUDA
        with scope.DeviceScope(core.DeviceOption(caffe2_pb2.CPU), node_name="node1"):
            assert scope.CurrentDeviceScope().node_name == "node1"
        with scope.DeviceScope(None, node_name="node2"):
            assert scope.CurrentDeviceScope().node_name == "node2"
            assert scope.CurrentDeviceScope().device_type == caffe2_pb2.CPU


def test_devicescope_rejects_other_types():
    with pytest.raises(AssertionError):
        with scope.DeviceScope("cpu"):
            pass


def test_empty_device_scope():
    with scope.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        with scope.EmptyDeviceScope():
            assert scope.CurrentDeviceScope() is None
            op = core.CreateOperator("Sum", ["x"], ["y"])
            assert not op.HasField("device_option")
        assert scope.CurrentDeviceScope().device_type == caffe2_pb2.CUDA


def test_scopes_are_thread_local():
    seen = {}

    def worker():
        seen["name"] = scope.CurrentNameScope()
        seen["device"] = scope.CurrentDeviceScope()
        with scope.NameScope("worker"):
            seen["inner"] = scope.CurrentNameScope()

    with scope.NameScope("main"):
        with scope.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
            assert scope.CurrentNameScope() == "main/"
    assert seen == {"name": "", "device": None, "inner": "worker/"}
