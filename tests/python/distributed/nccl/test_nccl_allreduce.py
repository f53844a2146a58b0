"""NCCLAllreduce (distributed/nccl/nccl_allreduce_op.cc) over one tensor per GPU: sums in place or
not over 2 to 4 GPUs and element types, repeated runs on cached communicators, in a net, and the
input errors (a CPU input, two inputs on one GPU, an unsupported type, mismatched sizes). The
checks shared with the other NCCL ops are in test_nccl_ops.py; the schema checks run anywhere."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from nccl_test_util import GROUP_SIZES, blob_gpu, feed, gpu, needs_gpu, needs_two_gpus, per_gpu, run

COVERED_CUDA_OPS = ["NCCLAllreduce"]

pytestmark = pytest.mark.device_check


@needs_gpu
def test_cpu_input_is_named():
    workspace.FeedBlob("x0", np.ones(4, np.float32), gpu(0))
    workspace.FeedBlob("host", np.ones(4, np.float32))
    with pytest.raises(RuntimeError, match=r"\[NCCLAllreduce\] input 1 \('host'\) is a CPU tensor"):
        run("NCCLAllreduce", ["x0", "host"], ["x0", "host"])


@needs_gpu
def test_two_inputs_on_one_gpu_are_named():
    workspace.FeedBlob("a", np.ones(4, np.float32), gpu(0))
    workspace.FeedBlob("b", np.ones(4, np.float32), gpu(0))
    with pytest.raises(
        RuntimeError,
        match=r"\[NCCLAllreduce\] input 0 \('a'\) and input 1 " r"\('b'\) are both on GPU 0",
    ):
        run("NCCLAllreduce", ["a", "b"], ["a", "b"])


@needs_gpu
def test_unsupported_dtype_is_named():
    names = feed([np.array([True, False])])
    with pytest.raises(
        RuntimeError,
        match=r"input 0 \('x0'\) has dtype BOOL, which NCCL cannot "
        r"carry; supported: FLOAT, FLOAT16, DOUBLE",
    ):
        run("NCCLAllreduce", names, names)


@needs_two_gpus
def test_mismatched_sizes_are_named():
    names = feed([np.ones(4, np.float32), np.ones(5, np.float32)])
    with pytest.raises(
        RuntimeError,
        match=r"same dtype and size: input 0 \('x0'\) is FLOAT "
        r"\(4,\) but input 1 \('x1'\) is FLOAT \(5,\)",
    ):
        run("NCCLAllreduce", names, names)


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.int64])
def test_allreduce(n, in_place, dtype):
    xs = per_gpu(n, (5, 7), dtype, seed=n)
    names = feed(xs)
    outputs = names if in_place else ["y{}".format(i) for i in range(n)]
    expected = np.sum(np.stack([x.astype(np.float64) for x in xs]), axis=0)
    # twice: the second run reuses the cached communicators
    for _ in range(2):
        feed(xs)
        for i, y in enumerate(run("NCCLAllreduce", names, outputs)):
            assert y.dtype == dtype and y.shape == (5, 7)
            assert blob_gpu(outputs[i]) == i
            np.testing.assert_allclose(
                y.astype(np.float64),
                expected,
                rtol=2e-3 if dtype == np.float16 else 1e-6,
                atol=0.1 if dtype == np.float16 else 1e-5,
            )


@needs_two_gpus
def test_in_a_net_run_repeatedly():
    xs = per_gpu(2, (8,), seed=7)
    names = feed(xs)
    net = core.Net("nccl_net")
    net.NCCLAllreduce(names, names, device_option=gpu(0))
    workspace.CreateNet(net)
    expected = xs[0] + xs[1]
    for it in range(3):
        workspace.RunNet(net.Proto().name)
        for name in names:
            np.testing.assert_allclose(workspace.FetchBlob(name), expected, rtol=1e-5)
        expected = expected * 2
