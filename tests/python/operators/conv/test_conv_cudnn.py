"""Device checks of the cuDNN Conv and ConvGradient (operators/conv/conv_op_cudnn.cc): every output
and gradient against the CPU kernel, over orders, groups, dilation, strides, pads (incl.
asymmetric pads that run on the CPU fallback), 1-D/2-D/3-D, algorithm search modes, the workspace
limit and float16. They have a file of their own for size; Conv's reference and gradient checks
are in test_conv.py, the algorithm cache per shape in tests/cpp/cuda/test_cudnn_ops.cc."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_CUDA_OPS = [
    "Conv",
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv_ENGINE_CUDNN",
    "Conv1D_ENGINE_CUDNN",
    "Conv2D_ENGINE_CUDNN",
    "Conv3D_ENGINE_CUDNN",
    "ConvGradient",
    "Conv1DGradient",
    "Conv2DGradient",
    "Conv3DGradient",
    "ConvGradient_ENGINE_CUDNN",
    "Conv1DGradient_ENGINE_CUDNN",
    "Conv2DGradient_ENGINE_CUDNN",
    "Conv3DGradient_ENGINE_CUDNN",
]


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


def conv_case(
    rng,
    n=2,
    c=4,
    m=6,
    spatial=(7, 6),
    k=3,
    group=1,
    order="NCHW",
    bias=True,
    op_type="Conv",
    engine="CUDNN",
    **args,
):
    """(op, inputs) of one convolution; the filter is (M, C/group, k...) or (M, k..., C)."""
    ks = (k,) * len(spatial)
    if order == "NCHW":
        x = rand(rng, n, c, *spatial)
        w = rand(rng, m, c // group, *ks)
    else:
        x = rand(rng, n, *spatial, c)
        w = rand(rng, m, *ks, c)
    inputs = [x, w] + ([rand(rng, m)] if bias else [])
    op = core.CreateOperator(
        op_type,
        ["X", "W", "b"][: len(inputs)],
        ["Y"],
        kernel=k,
        order=order,
        engine=engine,
        **dict(args, **({"group": group} if group > 1 else {})),
    )
    return op, inputs


CASES = [
    dict(),
    dict(engine=""),
    dict(op_type="Conv2D"),
    dict(bias=False),
    dict(stride=2, pad=1),
    dict(k=1),
    dict(k=5, pad=2, spatial=(9, 8)),
    dict(dilation=2, pad=2),
    dict(group=2),
    dict(group=4, m=8),
    dict(order="NHWC"),
    dict(order="NHWC", stride=2, pad=1, bias=False),
    dict(order="NHWC", dilation=2),
    dict(stride_h=2, stride_w=1, pad_t=1, pad_l=0, pad_b=1, pad_r=0),
    dict(n=1, c=3, m=2, spatial=(5,), op_type="Conv1D", stride=2, pad=1),
    dict(n=1, c=3, m=2, spatial=(5,), op_type="Conv1D", order="NHWC"),
    dict(n=2, c=2, m=3, spatial=(4, 5, 3), op_type="Conv3D", pad=1),
    dict(n=1, c=2, m=2, spatial=(4, 5, 3), op_type="Conv3D", order="NHWC", stride=2),
    # Asymmetric pads that cuDNN runs with pad_head on both sides (same output size) ...
    dict(spatial=(8, 8), stride=2, pads=[1, 1, 0, 0]),
    # ... and ones it cannot express, which run on the CPU kernel.
    dict(spatial=(7, 7), stride=2, pads=[1, 1, 0, 0]),
    dict(k=4, legacy_pad=2),
    dict(exhaustive_search=True),
    dict(exhaustive_search=True, order="NHWC", group=1),
    dict(ws_nbytes_limit=0),
    dict(exhaustive_search=True, ws_nbytes_limit=0),
    dict(deterministic=True),
]


@needs_gpu
@pytest.mark.parametrize(
    "case",
    CASES,
    ids=lambda c: ",".join("{}={}".format(k, v) for k, v in sorted(c.items())) or "default",
)
def test_conv_forward_matches_cpu(case):
    op, inputs = conv_case(np.random.RandomState(0), **case)
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize(
    "case",
    CASES,
    ids=lambda c: ",".join("{}={}".format(k, v) for k, v in sorted(c.items())) or "default",
)
def test_conv_gradient_matches_cpu(case):
    op, inputs = conv_case(np.random.RandomState(1), **case)
    check_gradient_cpu_gpu(op, inputs, rtol=1e-3, atol=1e-3)


@needs_gpu
@pytest.mark.parametrize(
    "bias,outputs",
    [
        (True, ["dW", "db"]),  # no_gradient_to_input
        (False, ["dW"]),
        (False, ["dW", "dX"]),
        (True, ["dW", "db", "dX"]),
    ],
)
def test_conv_gradient_output_lists(bias, outputs):
    rng = np.random.RandomState(2)
    x, w, dy = rand(rng, 2, 3, 6, 5), rand(rng, 4, 3, 3, 3), rand(rng, 2, 4, 4, 3)
    args = {} if bias else {"no_bias": 1}
    op = core.CreateOperator(
        "ConvGradient", ["X", "W", "dY"], outputs, kernel=3, engine="CUDNN", **args
    )
    check_cpu_gpu(op, [x, w, dy], rtol=1e-3, atol=1e-3)


@needs_gpu
def test_empty_batch():
    rng = np.random.RandomState(3)
    x, w, b = np.zeros((0, 3, 5, 5), np.float32), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    out = check_cpu_gpu(core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], kernel=3), [x, w, b])
    assert out[0].shape == (0, 4, 3, 3)
    dy = np.zeros((0, 4, 3, 3), np.float32)
    grads = check_cpu_gpu(
        core.CreateOperator("ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], kernel=3),
        [x, w, dy],
    )
    assert not grads[0].any() and not grads[1].any() and grads[2].shape == x.shape


@needs_gpu
def test_new_shapes_in_one_net_get_their_own_algorithms():
    """One op instance (in a net) sees X shapes in turn, a repeated one last; each result matches
    the CPU."""
    rng = np.random.RandomState(4)
    w, b = rand(rng, 5, 3, 3, 3), rand(rng, 5)
    xs = [rand(rng, *shape) for shape in [(2, 3, 8, 8), (4, 3, 5, 7), (2, 3, 8, 8)]]
    expected = [cpu_conv(x, w, b, kernel=3, pad=1) for x in xs]
    net = core.Net("conv_shapes")
    net.Proto().device_option.CopyFrom(gpu())
    net.Conv(["X", "W", "b"], ["Y"], kernel=3, pad=1, engine="CUDNN", exhaustive_search=True)
    workspace.ResetWorkspace()
    workspace.FeedBlob("W", w, gpu())
    workspace.FeedBlob("b", b, gpu())
    workspace.FeedBlob("X", xs[0], gpu())
    workspace.CreateNet(net)
    for x, y in zip(xs, expected):
        workspace.FeedBlob("X", x, gpu())
        workspace.RunNet(net)
        np.testing.assert_allclose(workspace.FetchBlob("Y"), y, rtol=1e-4, atol=1e-4)


def run_on_gpu(op, inputs):
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, gpu())
    op.device_option.CopyFrom(gpu())
    workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(name) for name in op.output]


def cpu_conv(x, w, b, **args):
    workspace.ResetWorkspace()
    for name, value in (("X", x), ("W", w), ("b", b)):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], **args))
    return workspace.FetchBlob("Y")


@needs_gpu
@gpu_semantics
@pytest.mark.parametrize("float16_compute", [False, True])
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_float16_conv_matches_the_float_conv_of_the_same_values(float16_compute, order):
    rng = np.random.RandomState(5)
    # Channel counts a multiple of 8, which cuDNN's fp16 NHWC kernels want.
    x = rng.uniform(-1, 1, (2, 8, 6, 6) if order == "NCHW" else (2, 6, 6, 8)).astype(np.float16)
    w = rng.uniform(-1, 1, (8, 8, 3, 3) if order == "NCHW" else (8, 3, 3, 8)).astype(np.float16)
    b = rng.uniform(-1, 1, 8).astype(np.float16)
    args = dict(kernel=3, pad=1, order=order)
    expected = cpu_conv(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), **args)
    (y,) = run_on_gpu(
        core.CreateOperator(
            "Conv", ["X", "W", "b"], ["Y"], engine="CUDNN", float16_compute=float16_compute, **args
        ),
        [x, w, b],
    )
    assert y.dtype == np.float16
    # 72 products of values in [-1, 1]: fp16 storage of Y (and fp16 accumulation) round at ~1e-2.
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=2e-2, atol=5e-2)


@needs_gpu
@gpu_semantics
def test_float16_gradient_matches_the_float_gradient():
    rng = np.random.RandomState(6)
    x = rng.uniform(-1, 1, (2, 8, 5, 5)).astype(np.float16)
    w = rng.uniform(-1, 1, (8, 8, 3, 3)).astype(np.float16)
    dy = rng.uniform(-1, 1, (2, 8, 3, 3)).astype(np.float16)
    op = core.CreateOperator(
        "ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], kernel=3, engine="CUDNN"
    )
    gpu_out = run_on_gpu(op, [x, w, dy])
    workspace.ResetWorkspace()
    for name, value in zip(op.input, [x, w, dy]):
        workspace.FeedBlob(name, value.astype(np.float32))
    cpu_op = core.CreateOperator("ConvGradient", ["X", "W", "dY"], ["dW", "db", "dX"], kernel=3)
    workspace.RunOperatorOnce(cpu_op)
    for i, name in enumerate(op.output):
        assert gpu_out[i].dtype == np.float16
        # dW and db sum 18 products per image pair, dX 72: fp16 outputs round at ~1e-2 relative.
        np.testing.assert_allclose(
            gpu_out[i].astype(np.float32),
            workspace.FetchBlob(name),
            rtol=2e-2,
            atol=8e-2,
            err_msg=name,
        )


@needs_gpu
def test_allow_tf32_stays_close_to_fp32():
    op, inputs = conv_case(np.random.RandomState(7), c=16, m=16, spatial=(12, 12), allow_tf32=True)
    # TF32 keeps 10 mantissa bits: about 1e-3 relative per product.
    check_cpu_gpu(op, inputs, rtol=1e-2, atol=2e-2)


@needs_gpu
@gpu_semantics
def test_mixed_element_types_are_an_error():
    rng = np.random.RandomState(8)
    x, w = rand(rng, 1, 2, 4, 4), rand(rng, 3, 2, 3, 3).astype(np.float16)
    with pytest.raises(RuntimeError, match="one element type"):
        run_on_gpu(core.CreateOperator("Conv", ["X", "W"], ["Y"], kernel=3, engine="CUDNN"), [x, w])


@needs_gpu
def test_filter_shape_errors_name_the_dims():
    rng = np.random.RandomState(9)
    x, w = rand(rng, 1, 2, 4, 4), rand(rng, 3, 5, 3, 3)
    with pytest.raises(RuntimeError, match=r"\[Conv\].*channels"):
        run_on_gpu(core.CreateOperator("Conv", ["X", "W"], ["Y"], kernel=3, engine="CUDNN"), [x, w])


@needs_gpu
@gpu_semantics
def test_negative_workspace_limit_is_an_error():
    rng = np.random.RandomState(10)
    with pytest.raises(RuntimeError, match="ws_nbytes_limit"):
        run_on_gpu(
            core.CreateOperator("Conv", ["X", "W"], ["Y"], kernel=3, ws_nbytes_limit=-1),
            [rand(rng, 1, 2, 4, 4), rand(rng, 3, 2, 3, 3)],
        )
