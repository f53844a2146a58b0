"""Device checks of SpatialBN and SpatialBNGradient (the cuDNN engine and the default CUDA op)
against the CPU kernel: every output in training and test mode, ranks 3 to 5 in both orders, the
running statistics' momentum rule, in-place Y, aggregated statistics (num_batches), and the gradient
in all modes. The references and CPU checks are in test_spatial_bn.py."""
import numpy as np
import pytest

from caffe2.python import core

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "SpatialBN",
    "SpatialBN_ENGINE_CUDNN",
    "SpatialBNGradient",
    "SpatialBNGradient_ENGINE_CUDNN",
]


def x_shape(n, c, spatial, order):
    return (n, c) + tuple(spatial) if order == "NCHW" else (n,) + tuple(spatial) + (c,)


def device_bn_inputs(rng, n=3, c=4, spatial=(5, 6), order="NCHW"):
    """X with per-channel offsets and scales, scale, bias, running mean and variance."""
    x = rng.randn(*x_shape(n, c, spatial, order)).astype(np.float32) * 2.0 + 0.5
    scale = rng.uniform(0.5, 1.5, c).astype(np.float32)
    bias = rng.randn(c).astype(np.float32)
    rm = rng.randn(c).astype(np.float32)
    rv = rng.uniform(0.5, 2.0, c).astype(np.float32)
    return [x, scale, bias, rm, rv]


def train_op(engine="CUDNN", y="Y", **args):
    return core.CreateOperator(
        "SpatialBN",
        ["X", "scale", "bias", "rm", "rv"],
        [y, "rm", "rv", "sm", "siv"],
        is_test=0,
        engine=engine,
        **args,
    )


LAYOUTS = [
    dict(),
    dict(order="NHWC"),
    dict(spatial=(7,)),
    dict(spatial=(7,), order="NHWC"),
    dict(spatial=(3, 4, 5)),
    dict(spatial=(3, 4, 5), order="NHWC"),
    dict(n=1, spatial=(1, 2)),
]


def layout_id(layout):
    return ",".join("{}={}".format(k, v) for k, v in sorted(layout.items())) or "default"


@needs_gpu
@pytest.mark.parametrize("engine", ["", "CUDNN"])
@pytest.mark.parametrize("layout", LAYOUTS, ids=layout_id)
def test_training_outputs_match_cpu(engine, layout):
    inputs = device_bn_inputs(np.random.RandomState(0), **layout)
    op = train_op(engine, momentum=0.8, epsilon=1e-4, order=layout.get("order", "NCHW"))
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS, ids=layout_id)
def test_test_mode_matches_cpu(layout):
    inputs = device_bn_inputs(np.random.RandomState(1), **layout)
    op = core.CreateOperator(
        "SpatialBN",
        ["X", "scale", "bias", "rm", "rv"],
        ["Y"],
        is_test=1,
        epsilon=1e-3,
        order=layout.get("order", "NCHW"),
        engine="CUDNN",
    )
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("momentum", [0.0, 0.9, 1.0])
def test_running_statistics_follow_the_momentum_rule(momentum):
    """running = running * momentum + batch * (1 - momentum), with the biased batch variance."""
    inputs = device_bn_inputs(np.random.RandomState(2))
    x, _, _, rm, rv = inputs
    out = check_cpu_gpu(train_op(momentum=momentum), inputs, rtol=1e-4, atol=1e-4)
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(out[1], rm * momentum + mean * (1 - momentum), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[2], rv * momentum + var * (1 - momentum), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[4], 1 / np.sqrt(var + 1e-5), rtol=1e-4)


@needs_gpu
def test_running_statistics_of_the_wrong_size_start_from_zero():
    inputs = device_bn_inputs(np.random.RandomState(3))
    inputs[3] = np.zeros(0, np.float32)
    inputs[4] = np.zeros(0, np.float32)
    check_cpu_gpu(train_op(momentum=0.5), inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("is_test", [0, 1])
def test_in_place_output(is_test):
    inputs = device_bn_inputs(np.random.RandomState(4))
    outputs = ["X"] + ([] if is_test else ["rm", "rv", "sm", "siv"])
    op = core.CreateOperator(
        "SpatialBN", ["X", "scale", "bias", "rm", "rv"], outputs, is_test=is_test
    )
    check_cpu_gpu(op, inputs, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_aggregated_statistics(order):
    """num_batches=2: the statistics come from sums/sumsq over two batches."""
    rng = np.random.RandomState(5)
    inputs = device_bn_inputs(rng, order=order)
    other = rng.randn(*inputs[0].shape).astype(np.float32)
    axes = (0, 2, 3) if order == "NCHW" else (0, 1, 2)
    both = [inputs[0], other]
    sums = sum(b.sum(axis=axes) for b in both).astype(np.float32)
    sumsq = sum((b * b).sum(axis=axes) for b in both).astype(np.float32)
    op = core.CreateOperator(
        "SpatialBN",
        ["X", "scale", "bias", "rm", "rv", "sums", "sumsq"],
        ["Y", "rm", "rv", "sm", "siv"],
        num_batches=2,
        order=order,
        engine="CUDNN",
    )
    check_cpu_gpu(op, inputs + [sums, sumsq], rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("layout", LAYOUTS[:-1], ids=layout_id)
def test_training_gradient_matches_cpu(layout):
    inputs = device_bn_inputs(np.random.RandomState(6), **layout)
    check_gradient_cpu_gpu(
        train_op(order=layout.get("order", "NCHW")), inputs, rtol=1e-3, atol=1e-3
    )


@needs_gpu
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_test_mode_gradient_matches_cpu(order):
    rng = np.random.RandomState(7)
    x, scale, _, rm, rv = device_bn_inputs(rng, order=order)
    dy = rng.randn(*x.shape).astype(np.float32)
    op = core.CreateOperator(
        "SpatialBNGradient",
        ["X", "scale", "dY", "rm", "rv"],
        ["dX", "dscale", "dbias"],
        is_test=1,
        epsilon=1e-3,
        order=order,
        engine="CUDNN",
    )
    check_cpu_gpu(op, [x, scale, dy, rm, rv], rtol=1e-4, atol=1e-3)


@needs_gpu
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_aggregated_gradient_matches_cpu(order):
    rng = np.random.RandomState(8)
    x, scale, _, _, _ = device_bn_inputs(rng, order=order)
    dy = rng.randn(*x.shape).astype(np.float32)
    mean = rng.randn(4).astype(np.float32)
    inv_std = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    dscale_agg = rng.randn(4).astype(np.float32)
    dbias_agg = rng.randn(4).astype(np.float32)
    # The aggregates are updated in place (inputs 5, 6 are outputs 1, 2), as data_parallel_model
    # runs it.
    op = core.CreateOperator(
        "SpatialBNGradient",
        ["X", "scale", "dY", "sm", "siv", "dscale", "dbias"],
        ["dX", "dscale", "dbias"],
        num_batches=2,
        order=order,
    )
    check_cpu_gpu(op, [x, scale, dy, mean, inv_std, dscale_agg, dbias_agg], rtol=1e-4, atol=1e-4)


@needs_gpu
def test_training_gradient_op_directly():
    """The gradient from saved statistics, as a training net runs it
    (cudnnBatchNormalizationBackward)."""
    rng = np.random.RandomState(9)
    x, scale, _, _, _ = device_bn_inputs(rng)
    dy = rng.randn(*x.shape).astype(np.float32)
    mean = x.mean(axis=(0, 2, 3)).astype(np.float32)
    inv_std = (1 / np.sqrt(x.var(axis=(0, 2, 3)) + 1e-5)).astype(np.float32)
    op = core.CreateOperator(
        "SpatialBNGradient",
        ["X", "scale", "dY", "sm", "siv"],
        ["dX", "dscale", "dbias"],
        engine="CUDNN",
    )
    check_cpu_gpu(op, [x, scale, dy, mean, inv_std], rtol=1e-4, atol=1e-4)
