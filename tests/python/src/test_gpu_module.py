"""The GPU variant of the extension: importable without a GPU, with the CUDA functions of
spec §2.3."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2

G = pytest.importorskip(
    "caffe2.python.caffe2_pybind11_state_gpu", reason="this build has no CUDA backend"
)


def test_has_the_cpu_surface_and_cuda_functions():
    from caffe2.python import caffe2_pybind11_state as C

    assert G.Workspace is C.Workspace and G.feed_blob is C.feed_blob
    assert G.get_cuda_version() >= 12000
    assert G.get_cudnn_version() >= 8000
    n = G.num_cuda_devices()
    pattern = G.get_cuda_peer_access_pattern()
    assert len(pattern) == n and all(len(row) == n for row in pattern)


def test_import_c_extension_reports_gpu_support_from_device_count():
    from caffe2.python import _import_c_extension, workspace

    assert _import_c_extension.has_gpu_support == bool(G.num_cuda_devices())
    assert workspace.NumCudaDevices() == G.num_cuda_devices()


def test_cuda_ops_without_a_gpu_fail_clearly():
    if G.num_cuda_devices() > 0:
        pytest.skip("a GPU is present")
    op = caffe2_pb2.OperatorDef(type="ConstantFill", output=["x"])
    op.device_option.device_type = caffe2_pb2.CUDA
    op.arg.add(name="shape", ints=[2])
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        G.run_operator_once(op.SerializeToString())


def test_feed_fetch_on_gpu():
    if G.num_cuda_devices() == 0:
        pytest.skip("no GPU")
    opt = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=0)
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    G.feed_blob("gpu_x", arr, opt.SerializeToString())
    np.testing.assert_array_equal(G.fetch_blob("gpu_x"), arr)
    props = G.get_device_properties(0)
    assert {"name", "major", "minor", "totalGlobalMem"} <= set(props)
