"""Helpers of the NCCL op tests (tests/python/distributed/nccl): the GPU count, the skip marks (NCCL
has no CPU stand-in: these checks need real GPUs whatever C2_CUDA_TESTS_ON_CPU says), one tensor
per GPU fed and run, and where a blob lives."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

try:
    from caffe2.python import caffe2_pybind11_state_gpu as gpu_module
except ImportError:  # a build without the CUDA backend
    gpu_module = None

NUM_GPUS = gpu_module.num_cuda_devices() if gpu_module else 0

# NCCL has no CPU stand-in: these checks need real GPUs whatever the harness's CPU mode says.
needs_gpu = pytest.mark.skipif(NUM_GPUS == 0, reason="NCCL needs a GPU; none on this machine")

needs_two_gpus = pytest.mark.skipif(NUM_GPUS < 2, reason="fewer than 2 GPUs")


def gpu(i=0):
    return caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=i)


HAS_NCCL = (
    gpu_module is not None and "Allreduce_ENGINE_NCCL" in gpu_module.registered_cuda_operators()
)

needs_nccl = pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL")

GROUP_SIZES = [n for n in (2, 3, 4) if n <= NUM_GPUS]


def feed(values):
    """Feeds values[i] to blob 'x<i>' on GPU i; returns the names."""
    names = []
    for i, v in enumerate(values):
        workspace.FeedBlob("x{}".format(i), v, gpu(i))
        names.append("x{}".format(i))
    return names


def run(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(op_type, inputs, outputs, device_option=gpu(0), **kwargs)
    )
    return [workspace.FetchBlob(o) for o in outputs]


def blob_gpu(name):
    """The GPU a blob's tensor lives on (from its serialized device_detail)."""
    proto = caffe2_pb2.BlobProto.FromString(workspace.SerializeBlob(name))
    assert proto.tensor.device_detail.device_type == caffe2_pb2.CUDA, name
    return proto.tensor.device_detail.cuda_gpu_id


def per_gpu(n, shape=(3, 4), dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return [(rng.randn(*shape) * 4).astype(dtype) for _ in range(n)]
