"""Inputs and runners shared by the device checks of the loss ops (test_<op>.py of this folder and
test_loss_ops.py)."""
import numpy as np

from caffe2.python import core, workspace

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu

# Rows past the grid cap of the row kernels (4096 blocks), so their grid-stride loops run.
MANY_ROWS = 5000


def rng(seed):
    return np.random.RandomState(seed)


def logits(r, *shape):
    return (r.randn(*shape) * 3).astype(np.float32)


def labels(r, n, classes, shape=None):
    return r.randint(0, classes, n).astype(np.int32).reshape(shape or (n,))


def probs(r, n, d):
    p = r.rand(n, d).astype(np.float64) + 0.1
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


def spatial_labels(r, n, d, h, w, ignore_fraction=0.3):
    t = r.randint(0, d, (n, h, w)).astype(np.int32)
    t[r.rand(n, h, w) < ignore_fraction] = -1
    return t


def check_with_gradient(op, inputs, rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-6):
    out = check_cpu_gpu(op, inputs, rtol=rtol, atol=atol)
    check_gradient_cpu_gpu(op, inputs, rtol=grad_rtol, atol=grad_atol)
    return out


def run_on_gpu(op, inputs):
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, gpu())
    op = core.CreateOperator(
        op.type, list(op.input), list(op.output), device_option=gpu(), arg=list(op.arg)
    )
    workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(name) for name in op.output]
