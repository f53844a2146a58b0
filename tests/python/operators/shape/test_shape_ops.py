"""Device checks over several shape ops together: the dims-only ops (Flatten, FlattenToVec, Squeeze,
ExpandDims, StopGradient) over element types and in place, their gradients and errors, where
kernel inputs must live, and a net of layout ops whose shapes and sizes travel through host
copies. Each op's own checks are in its test_<op>.py."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from device_check import (
    CPU,
    blob_device_type,
    check_cpu_gpu,
    check_gradient_cpu_gpu,
    check_same_error,
    gpu,
    gpu_semantics,
    needs_gpu,
    values,
)

COVERED_CUDA_OPS = ["Flatten", "FlattenToVec", "Squeeze", "ExpandDims", "StopGradient"]

TP = caffe2_pb2.TensorProto


@needs_gpu
@pytest.mark.parametrize(
    "op",
    [
        core.CreateOperator("Flatten", ["x"], ["y"]),
        core.CreateOperator("Flatten", ["x"], ["y"], axis=0),
        core.CreateOperator("Flatten", ["x"], ["y"], axis=3),
        core.CreateOperator("FlattenToVec", ["x"], ["y"]),
        core.CreateOperator("Squeeze", ["x"], ["y"], dims=[1, 3, 1]),
        core.CreateOperator("Squeeze", ["x"], ["x"], dims=[3]),
        core.CreateOperator("ExpandDims", ["x"], ["y"], dims=[0, 5]),
        core.CreateOperator("ExpandDims", ["x"], ["x"], dims=[2]),
        core.CreateOperator("StopGradient", ["x"], ["y"]),
        core.CreateOperator("StopGradient", ["x"], ["x"]),
    ],
    ids=lambda op: op.type + ("_in_place" if op.input[0] in op.output else ""),
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_dims_only_ops(op, dtype):
    out = check_cpu_gpu(op, [values(dtype, 2, 1, 3, 1)], rtol=0, atol=0)
    assert out[0].size == 6


@needs_gpu
def test_dims_only_gradients_and_errors():
    x = values(np.float32, 2, 1, 3)
    check_gradient_cpu_gpu(core.CreateOperator("Flatten", ["x"], ["y"], axis=2), [x])
    check_gradient_cpu_gpu(core.CreateOperator("FlattenToVec", ["x"], ["y"]), [x])
    check_gradient_cpu_gpu(core.CreateOperator("Squeeze", ["x"], ["y"], dims=[1]), [x])
    check_gradient_cpu_gpu(core.CreateOperator("ExpandDims", ["x"], ["y"], dims=[0, 4]), [x])
    check_same_error(
        core.CreateOperator("Squeeze", ["x"], ["y"], dims=[2]),
        [x],
        "only size-1 dims can be squeezed",
    )
    check_same_error(
        core.CreateOperator("Flatten", ["x"], ["y"], axis=4), [x], "axis 4 out of range"
    )


@needs_gpu
@gpu_semantics
def test_kernel_inputs_must_live_on_the_gpu():
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", values(np.float32, 2, 3), CPU)
    with pytest.raises(RuntimeError, match="X must live on the op's device CUDA:0"):
        workspace.RunOperatorOnce(
            core.CreateOperator("Transpose", ["x"], ["y"], device_option=gpu())
        )
    # The dims-only ops copy from anywhere; in place they leave X where it lives.
    workspace.RunOperatorOnce(core.CreateOperator("Flatten", ["x"], ["y"], device_option=gpu()))
    assert blob_device_type("y") == caffe2_pb2.CUDA
    workspace.RunOperatorOnce(
        core.CreateOperator("Reshape", ["x"], ["x", "old"], shape=[3, 2], device_option=gpu())
    )
    assert blob_device_type("x") == caffe2_pb2.CPU
    assert workspace.FetchBlob("x").shape == (3, 2)


@needs_gpu
def test_a_net_of_layout_ops_matches_the_cpu():
    """One simple net (device syncs deferred to its end on a GPU): shapes and sizes computed by
    earlier ops on the device are read back by later ones through host copies."""
    x = values(np.float32, 2, 6, 4, 5)
    results = []
    for device in (CPU, gpu()):
        workspace.ResetWorkspace()
        workspace.FeedBlob("x", x, device)
        net = core.Net("layout")
        with core.DeviceScope(device):
            net.NCHW2NHWC(["x"], ["nhwc"])
            net.Transpose(["nhwc"], ["t"], axes=[0, 3, 1, 2])
            net.Split(["t"], ["s0", "s1"], axis=1, split=[2, 4])
            net.Concat(["s1", "s0"], ["cat", "cat_info"], axis=1)
            net.Shape(["s1"], ["s1_shape"])  # a GPU fallback op: the shape lands on the GPU
            net.FlattenToVec(["s1"], ["s1_flat"])
            net.Reshape(["s1_flat", "s1_shape"], ["r", "r_old"])
            net.Slice(["cat"], ["sl"], starts=[0, 1, 0, 2], ends=[-1, 5, 3, -1])
            net.Tile(["sl"], ["tl"], tiles=3, axis=2)
            net.Cast(["tl"], ["half"], to=TP.FLOAT16)
            net.Cast(["tl"], ["ints"], to=TP.INT64)
            net.Transpose(["cat"], ["rows"], axes=[1, 0, 2, 3])
            net.Gather(["rows", "cat_info"], ["g_host_indices"])
            net.Gather(["rows", "s1_shape"], ["g_gpu_indices"])
            net.FlattenToVec(["half"], ["flat"])
        workspace.RunNetOnce(net)
        results.append(
            {
                name: workspace.FetchBlob(name)
                for name in (
                    "cat",
                    "cat_info",
                    "r",
                    "r_old",
                    "flat",
                    "ints",
                    "g_host_indices",
                    "g_gpu_indices",
                )
            }
        )
    for name in results[0]:
        np.testing.assert_array_equal(results[1][name], results[0][name], err_msg=name)
