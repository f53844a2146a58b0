"""Device checks of the cuDNN MaxPool / AveragePool and their gradients (operators/conv/pool_op_cudnn.cc)
against the CPU kernel: orders, 1-D/2-D/3-D, strides, pads, global pooling, and the geometries that
run on the CPU fallback (dilation, CAFFE_LEGACY_POOLING's enlarged tail pad, pad >= kernel).
Inputs are random normals, so a max window has no ties (the CPU gradient gives ties to every maximal
element, cuDNN to one)."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

KINDS = ["MaxPool", "AveragePool"]
COVERED_OPS = [kind + dims + suffix
               for kind in KINDS
               for dims in ["", "1D", "2D", "3D"]
               for suffix in ["", "_ENGINE_CUDNN", "Gradient", "Gradient_ENGINE_CUDNN"]]

pytestmark = needs_gpu


def pool_case(kind, n=2, c=3, spatial=(7, 6), order="NCHW", dims="", engine="CUDNN", seed=0, **args):
    rng = np.random.RandomState(seed)
    shape = (n, c) + tuple(spatial) if order == "NCHW" else (n,) + tuple(spatial) + (c,)
    x = rng.randn(*shape).astype(np.float32)
    op = core.CreateOperator(kind + dims, ["X"], ["Y"], order=order, engine=engine, **args)
    return op, [x]


CASES = [
    dict(kernel=2, stride=2),
    dict(kernel=3, stride=1),
    dict(kernel=3, stride=2, pad=1),
    dict(kernel=3, stride=2, pad=1, engine=""),
    dict(kernel=3, stride=2, pad=1, dims="2D"),
    dict(kernel_h=3, kernel_w=2, stride_h=1, stride_w=2, pad_t=1, pad_l=0, pad_b=1, pad_r=0),
    dict(kernel=3, stride=2, pad=1, order="NHWC"),
    dict(kernel=2, stride=1, order="NHWC", spatial=(5, 4)),
    dict(global_pooling=1),
    dict(global_pooling=1, order="NHWC"),
    dict(kernel=3, stride=2, pad=1, spatial=(9,), dims="1D"),
    dict(kernel=2, stride=2, spatial=(8,), dims="1D", order="NHWC"),
    dict(kernel=2, stride=2, pad=1, spatial=(4, 5, 6), dims="3D"),
    dict(kernel=3, stride=1, spatial=(4, 5, 3), dims="3D", order="NHWC"),
    dict(kernel=3, stride=2, pad=1, deterministic=1),
    # Asymmetric pads with cuDNN's output size, run with pad_head on both sides.
    dict(kernel=3, stride=2, spatial=(8, 8), pads=[1, 1, 0, 0]),
    # Run on the CPU fallback.
    dict(kernel=3, stride=2, spatial=(7, 7), pads=[1, 1, 0, 0]),
    dict(kernel=3, stride=2, spatial=(6, 6), legacy_pad=3),
    dict(kernel=2, stride=1, dilation=2),
    dict(kernel=2, stride=1, pad=2),
]


def case_id(case):
    return ",".join("{}={}".format(k, v) for k, v in sorted(case.items()))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_pool_forward_matches_cpu(kind, case):
    op, inputs = pool_case(kind, **case)
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_pool_gradient_matches_cpu(kind, case):
    op, inputs = pool_case(kind, seed=1, **case)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_pool_gradient_op_directly(kind):
    """The gradient op given X, Y and dY (as a net runs it), for both registrations."""
    rng = np.random.RandomState(2)
    x = rng.randn(2, 3, 6, 6).astype(np.float32)
    fwd, = check_cpu_gpu(core.CreateOperator(kind, ["X"], ["Y"], kernel=2, stride=2), [x])
    dy = rng.randn(*fwd.shape).astype(np.float32)
    for engine in ["", "CUDNN"]:
        op = core.CreateOperator(kind + "Gradient", ["X", "Y", "dY"], ["dX"], kernel=2, stride=2, engine=engine)
        check_cpu_gpu(op, [x, fwd, dy], rtol=1e-5, atol=1e-5)


@gpu_semantics
@pytest.mark.parametrize("kind", KINDS)
def test_float16_pooling(kind):
    x = np.random.RandomState(3).randn(2, 3, 6, 6).astype(np.float16)
    args = dict(kernel=3, stride=2, pad=1)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x.astype(np.float32))
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"], **args))
    expected = workspace.FetchBlob("Y")
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(kind, ["X"], ["Y"], device_option=gpu(), **args))
    y = workspace.FetchBlob("Y")
    assert y.dtype == np.float16
    # The max is exact; the mean of up to 9 fp16 values is rounded to fp16.
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=1e-3, atol=2e-3)
