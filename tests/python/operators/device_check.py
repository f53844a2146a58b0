"""Shared helpers of the CUDA device checks, which live in each op's own test file beside its numpy
reference and gradient checks (tests/python/operators/<family>/test_<stem>.py).

Every test file with device checks lists the CUDA op types it checks in COVERED_CUDA_OPS (a literal
list); test_device_check_coverage.py fails when a registered CUDA op is in none of them. A device
check is decorated with `needs_gpu`: it skips on a machine without a GPU (CI) and runs on a GPU
machine; `pytest -m device_check` selects the device checks alone.

C2_CUDA_TESTS_ON_CPU=1 runs the checks on a machine without a GPU with the CPU standing in for the
GPU: it proves nothing about the CUDA kernels, but it runs every test's inputs, arguments and
gradient plumbing, so a GPU session does not spend its minutes on a broken test. Tests that check
what only the GPU does (float16 kernels the CPU lacks) are marked `gpu_semantics` and skip then.
"""
import os

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

try:
    from caffe2.python import caffe2_pybind11_state_gpu as gpu_module
except ImportError:  # a build without the CUDA backend
    gpu_module = None

NUM_GPUS = gpu_module.num_cuda_devices() if gpu_module else 0
CPU_STANDS_IN = os.environ.get("C2_CUDA_TESTS_ON_CPU") == "1" and NUM_GPUS == 0
_skip_without_gpu = pytest.mark.skipif(
    NUM_GPUS == 0 and not CPU_STANDS_IN, reason="no GPU on this machine"
)
needs_two_gpus = pytest.mark.skipif(NUM_GPUS < 2, reason="fewer than 2 GPUs")
gpu_semantics = pytest.mark.skipif(NUM_GPUS == 0, reason="checks what only the GPU kernels do")

CPU = caffe2_pb2.DeviceOption()


def needs_gpu(test):
    """Marks `test` as a device check: it skips without a GPU (unless C2_CUDA_TESTS_ON_CPU=1) and
    carries the `device_check` marker."""
    return pytest.mark.device_check(_skip_without_gpu(test))


def gpu(i=0):
    if CPU_STANDS_IN:
        return caffe2_pb2.DeviceOption()
    return caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=i)


def _run(op, inputs, device_option, input_device_options):
    """Runs `op` once in a fresh workspace on `device_option`; returns every output (numpy)."""
    op = core.CreateOperator(
        op.type,
        list(op.input),
        list(op.output),
        engine=op.engine,
        device_option=device_option,
        arg=list(op.arg),
    )
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, input_device_options.get(name, device_option))
    workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(name) for name in op.output]


def check_cpu_gpu(
    op, inputs, outputs_to_check=None, rtol=1e-4, atol=1e-4, input_device_options=None, gpu_id=0
):
    """Runs `op` on the CPU and on GPU `gpu_id` with the same inputs and asserts that the outputs
    listed in `outputs_to_check` (indices; all by default) agree. Returns the GPU outputs."""
    input_device_options = input_device_options or {}
    cpu_out = _run(op, inputs, CPU, {})
    gpu_out = _run(op, inputs, gpu(gpu_id), input_device_options)
    indices = range(len(op.output)) if outputs_to_check is None else outputs_to_check
    for i in indices:
        expected, actual = np.asarray(cpu_out[i]), np.asarray(gpu_out[i])
        assert (
            actual.shape == expected.shape
        ), "{} output {} ({}): GPU shape {} != CPU shape {}".format(
            op.type, i, op.output[i], actual.shape, expected.shape
        )
        assert actual.dtype == expected.dtype, "{} output {}: GPU dtype {} != CPU dtype {}".format(
            op.type, i, actual.dtype, expected.dtype
        )
        np.testing.assert_allclose(
            actual.astype(np.float64) if actual.dtype != object else actual,
            expected.astype(np.float64) if expected.dtype != object else expected,
            rtol=rtol,
            atol=atol,
            err_msg="{} output {} ({})".format(op.type, i, op.output[i]),
        )
    return gpu_out


def check_gradient_cpu_gpu(op, inputs, rtol=1e-3, atol=1e-3, gpu_id=0):
    """Builds the gradient ops of `op` (with dY = ones-like random values for every output), runs
    forward + backward on the CPU and on the GPU, and asserts that every input gradient agrees."""
    rng = np.random.RandomState(7)
    grad_outputs = {}
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(op)
    for name in op.output:
        y = workspace.FetchBlob(name)
        grad_outputs[name] = rng.uniform(-1, 1, np.shape(y)).astype(y.dtype)
    grad_ops, input_grads = core.GradientRegistry.GetGradientForOp(
        op, [name + "_grad" for name in op.output]
    )
    results = []
    for device_option in (CPU, gpu(gpu_id)):
        workspace.ResetWorkspace()
        for name, value in zip(op.input, inputs):
            workspace.FeedBlob(name, value, device_option)
        for name, value in grad_outputs.items():
            workspace.FeedBlob(name + "_grad", value, device_option)
        fwd = core.CreateOperator(
            op.type,
            list(op.input),
            list(op.output),
            engine=op.engine,
            device_option=device_option,
            arg=list(op.arg),
        )
        workspace.RunOperatorOnce(fwd)
        for g in grad_ops:
            g = core.CreateOperator(
                g.type,
                list(g.input),
                list(g.output),
                engine=g.engine,
                device_option=device_option,
                arg=list(g.arg),
            )
            workspace.RunOperatorOnce(g)
        results.append(
            {
                name: workspace.FetchBlob(str(grad))
                for name, grad in zip(op.input, input_grads)
                if grad is not None and workspace.HasBlob(str(grad))
            }
        )
    assert (
        results[0].keys() == results[1].keys() and results[0]
    ), "{}: gradients computed on CPU {} and GPU {}".format(
        op.type, sorted(results[0]), sorted(results[1])
    )
    for name in results[0]:
        np.testing.assert_allclose(
            results[1][name],
            results[0][name],
            rtol=rtol,
            atol=atol,
            err_msg="{}: gradient of input {}".format(op.type, name),
        )


_VALUES_RNG = np.random.RandomState(1)


def values(dtype, *shape):
    """Random values of every element type (small integers, so every cast keeps them)."""
    if dtype == np.bool_:
        return np.asarray(_VALUES_RNG.rand(*shape) > 0.5)
    if np.issubdtype(dtype, np.floating):
        return np.asarray(_VALUES_RNG.rand(*shape) * 100).astype(dtype)
    return np.asarray(_VALUES_RNG.randint(0, 100, shape)).astype(dtype)


def blob_device_type(name):
    proto = caffe2_pb2.BlobProto()
    proto.ParseFromString(workspace.SerializeBlob(name))
    return proto.tensor.device_detail.device_type


def check_same_error(op, inputs, message, input_device_options=None):
    """The op fails on the CPU and on the GPU with the same message."""
    for device, on_host in ((CPU, {}), (gpu(), input_device_options or {})):
        workspace.ResetWorkspace()
        for name, value in zip(op.input, inputs):
            workspace.FeedBlob(name, value, on_host.get(name, device))
        op_on_device = core.CreateOperator(
            op.type, list(op.input), list(op.output), device_option=device, arg=list(op.arg)
        )
        with pytest.raises(RuntimeError, match=message):
            workspace.RunOperatorOnce(op_on_device)
