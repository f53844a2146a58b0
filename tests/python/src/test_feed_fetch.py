"""Feeding and fetching through the extension module (spec §2.5)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import caffe2_pybind11_state as C


@pytest.fixture(autouse=True)
def fresh_workspace():
    C.switch_workspace("feed_fetch_test", True)
    C.reset_workspace()
    yield
    C.switch_workspace("default", True)


@pytest.mark.parametrize(
    "dtype",
    [
        np.float32,
        np.float64,
        np.float16,
        np.int32,
        np.int64,
        np.int16,
        np.uint16,
        np.int8,
        np.uint8,
        np.bool_,
    ],
)
def test_round_trip_keeps_dtype_shape_and_values(dtype):
    arr = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    assert C.feed_blob("x", arr) is True
    out = C.fetch_blob("x")
    assert out.dtype == arr.dtype
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(out, arr)


def test_fetch_is_a_copy():
    C.feed_blob("x", np.zeros(3, np.float32))
    a = C.fetch_blob("x")
    a[0] = 5
    assert C.fetch_blob("x")[0] == 0


def test_scalar_is_a_zero_d_array():
    C.feed_blob("s", np.array(3.5, dtype=np.float32))
    out = C.fetch_blob("s")
    assert out.shape == () and out == 3.5


def test_non_contiguous_input_is_made_contiguous():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4).T
    C.feed_blob("t", arr)
    np.testing.assert_array_equal(C.fetch_blob("t"), arr)


def test_strings():
    C.feed_blob("obj", np.array([b"a", "bc"], dtype=object))
    out = C.fetch_blob("obj")
    assert out.dtype == object and list(out) == [b"a", b"bc"]
    C.feed_blob("fixed", np.array([b"xy", b"z"]))
    assert list(C.fetch_blob("fixed")) == [b"xy", b"z"]
    C.feed_blob("str", "text")
    assert C.fetch_blob("str") == b"text"
    C.feed_blob("raw", b"\x00\x01")
    assert C.fetch_blob("raw") == b"\x00\x01"


def test_rejected_inputs():
    with pytest.raises(RuntimeError, match="only numpy array or string"):
        C.feed_blob("x", [1, 2, 3])
    with pytest.raises(RuntimeError, match="not supported"):
        C.feed_blob("x", np.zeros(2, dtype=np.uint32))
    with pytest.raises(RuntimeError, match="Unicode"):
        C.feed_blob("x", np.array(["a", "b"]))
    with pytest.raises(RuntimeError, match="DeviceOption"):
        C.feed_blob("x", np.zeros(2, np.float32), b"\xff\xff\xff")


def test_cuda_feed_without_gpu_is_a_clear_error():
    from caffe2.python import _import_c_extension

    if _import_c_extension.has_gpu_support:
        pytest.skip("a GPU is present")
    opt = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=0)
    with pytest.raises(RuntimeError, match="CUDA"):
        C.feed_blob("g", np.zeros(2, np.float32), opt.SerializeToString())


def test_fetch_missing_and_uninitialized():
    with pytest.raises(RuntimeError, match="Can't find blob: nope"):
        C.fetch_blob("nope")
    C.create_blob("empty")
    assert C.fetch_blob("empty") == b"empty, a C++ native class of type nullptr (uninitialized)."
    ws = C.Workspace.current
    with pytest.raises(RuntimeError, match="no fetcher"):
        ws.blobs["empty"].fetch()


def test_tensor_cpu_data_aliases_memory():
    C.feed_blob("x", np.ones(4, np.float32))
    blob = C.Workspace.current.blobs["x"]
    tensor = blob.tensor()
    view = tensor.data
    view[1] = 7
    assert C.fetch_blob("x")[1] == 7
    assert tensor._shape == [4]
    tensor._reshape([2, 2])
    assert C.fetch_blob("x").shape == (2, 2)
    tensor.feed(np.arange(3, dtype=np.int32))
    assert C.fetch_blob("x").dtype == np.int32
    np.testing.assert_array_equal(tensor.fetch(), [0, 1, 2])
    with pytest.raises(RuntimeError):
        tensor.init([2], caffe2_pb2.TensorProto.STRING)
    tensor.init([2, 3], caffe2_pb2.TensorProto.DOUBLE)
    assert C.fetch_blob("x").dtype == np.float64
