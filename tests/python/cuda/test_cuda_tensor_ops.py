"""Device checks of the CUDA copy, fill, flatten and free ops (operators/tensor/*.cu,
operators/fill/filler_op.cu)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_OPS = [
    "Alias", "Copy", "CopyCPUToGPU", "CopyGPUToCPU", "CopyOnDeviceLike", "EnsureCPUOutput",
    "ConstantFill", "GivenTensorFill", "GivenTensorDoubleFill", "GivenTensorBoolFill",
    "GivenTensorIntFill", "GivenTensorInt64Fill", "RangeFill", "DiagonalFill", "GaussianFill",
    "UniformFill", "UniformIntFill", "XavierFill", "MSRAFill", "FlattenDenseTensors",
    "UnflattenDenseTensors", "Free",
]

pytestmark = needs_gpu


@gpu_semantics
def test_copy_cpu_to_gpu_and_back():
    x = np.random.rand(3, 4).astype(np.float32)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x)
    workspace.RunOperatorOnce(core.CreateOperator("CopyCPUToGPU", ["x"], ["x_gpu"],
                                                  device_option=gpu()))
    workspace.RunOperatorOnce(core.CreateOperator("Copy", ["x_gpu"], ["y_gpu"],
                                                  device_option=gpu()))
    workspace.RunOperatorOnce(core.CreateOperator("Alias", ["y_gpu"], ["z_gpu"],
                                                  device_option=gpu()))
    workspace.RunOperatorOnce(core.CreateOperator("CopyGPUToCPU", ["z_gpu"], ["back"],
                                                  device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("back"), x)
    workspace.RunOperatorOnce(core.CreateOperator("CopyOnDeviceLike", ["x_gpu", "y_gpu"], ["w"],
                                                  device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("w"), x)
    workspace.RunOperatorOnce(core.CreateOperator("EnsureCPUOutput", ["x_gpu"], ["host"],
                                                  device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("host"), x)


@pytest.mark.parametrize("op_type,dtype,values", [
    ("GivenTensorFill", np.float32, [1.5, -2.0, 3.25, 4.0, 0.0, 7.0]),
    ("GivenTensorDoubleFill", np.float64, [1.5, -2.0, 3.25, 4.0, 0.0, 7.0]),
    ("GivenTensorIntFill", np.int32, [1, -2, 3, 4, 0, 7]),
    ("GivenTensorInt64Fill", np.int64, [1, -2, 3, 4, 0, 2 ** 40]),
    ("GivenTensorBoolFill", np.bool_, [True, False, True, True, False, False]),
])
def test_given_tensor_fills(op_type, dtype, values):
    op = core.CreateOperator(op_type, [], ["y"], shape=[2, 3], values=values)
    out = check_cpu_gpu(op, [])
    np.testing.assert_array_equal(out[0], np.array(values, dtype=dtype).reshape(2, 3))


@pytest.mark.parametrize("op", [
    core.CreateOperator("ConstantFill", [], ["y"], shape=[4, 5], value=2.5),
    core.CreateOperator("ConstantFill", [], ["y"], shape=[3], value=7,
                        dtype=caffe2_pb2.TensorProto.INT64),
    core.CreateOperator("DiagonalFill", [], ["y"], shape=[4, 4], value=3.0),
    core.CreateOperator("RangeFill", [], ["y"], shape=[2, 5]),
])
def test_deterministic_fills_match_cpu(op):
    check_cpu_gpu(op, [], rtol=0, atol=0)


@pytest.mark.parametrize("op,check", [
    (core.CreateOperator("UniformFill", [], ["y"], shape=[1000], min=-2.0, max=3.0),
     lambda y: y.min() >= -2.0 and y.max() <= 3.0 and abs(y.mean() - 0.5) < 0.2),
    (core.CreateOperator("UniformIntFill", [], ["y"], shape=[1000], min=-2, max=3),
     lambda y: y.dtype == np.int32 and y.min() >= -2 and y.max() <= 3),
    (core.CreateOperator("GaussianFill", [], ["y"], shape=[4000], mean=1.0, std=2.0),
     lambda y: abs(y.mean() - 1.0) < 0.15 and abs(y.std() - 2.0) < 0.15),
    (core.CreateOperator("XavierFill", [], ["y"], shape=[64, 100]),
     lambda y: np.abs(y).max() <= np.sqrt(3.0 / 100) + 1e-6),
    (core.CreateOperator("MSRAFill", [], ["y"], shape=[64, 100]),
     lambda y: abs(y.std() - np.sqrt(2.0 / 64)) < 0.02),
])
def test_random_fills_on_gpu_have_their_distribution(op, check):
    op.device_option.CopyFrom(gpu())
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(op)
    assert check(workspace.FetchBlob("y"))


def test_flatten_and_unflatten_dense_tensors():
    a = np.random.rand(2, 3).astype(np.float32)
    b = np.random.rand(5).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator("FlattenDenseTensors", ["a", "b"], ["buf"]), [a, b],
                        rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], np.concatenate([a.ravel(), b]))
    workspace.ResetWorkspace()
    buf = np.arange(11, dtype=np.float32)
    for name, value in (("buf", buf), ("a", a), ("b", b)):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(
        "UnflattenDenseTensors", ["buf", "a", "b"], ["a", "b"], device_option=gpu()))
    np.testing.assert_array_equal(workspace.FetchBlob("a"), buf[:6].reshape(2, 3))
    np.testing.assert_array_equal(workspace.FetchBlob("b"), buf[6:])


def test_free_releases_a_gpu_tensor():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.ones(1000, np.float32), gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Free", ["x"], ["x"], device_option=gpu()))
    assert workspace.HasBlob("x")
