"""Device checks over several norm ops together: the input errors of LayerNorm, InstanceNorm and
their gradients (the CUDA ops refuse what the CPU ops refuse, with the same messages), and
ChannelStats with ChannelBackpropStats. Each op's own checks are in its test_<op>.py."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import check_cpu_gpu, gpu, needs_gpu

COVERED_CUDA_OPS = [
    "LayerNorm",
    "LayerNormGradient",
    "InstanceNorm",
    "InstanceNormGradient",
    "ChannelStats",
    "ChannelBackpropStats",
]


# Input errors: the CUDA ops refuse what the CPU ops refuse, with the same messages.
def run_on_gpu(op, inputs):
    op = core.CreateOperator(
        op.type, list(op.input), list(op.output), device_option=gpu(), arg=list(op.arg)
    )
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(op)


ERRORS = [
    (
        "LayerNorm",
        ["X"],
        ["Y", "m", "s"],
        [np.zeros((2, 3), np.float32)],
        dict(axis=2),
        "axis 2 out of range",
    ),
    (
        "LayerNorm",
        ["X"],
        ["Y", "m", "s"],
        [np.zeros((2, 3), np.float32)],
        dict(axis=-3),
        "axis -3 out of range",
    ),
    (
        "LayerNorm",
        ["X"],
        ["Y", "m", "s"],
        [np.zeros((2, 0), np.float32)],
        {},
        "cannot normalize empty rows",
    ),
    ("LayerNorm", ["X"], ["Y", "m", "s"], [np.zeros((2, 3), np.int32)], {}, "float input expected"),
    (
        "LayerNorm",
        ["X"],
        ["Y", "m", "s"],
        [np.zeros((2, 3), np.float32)],
        dict(epsilon=-1.0),
        "epsilon must be >= 0",
    ),
    (
        "LayerNormGradient",
        ["dY", "Y", "m", "s", "X"],
        ["dX"],
        [
            np.zeros((2, 4), np.float32),
            np.zeros((2, 3), np.float32),
            np.zeros((2, 1), np.float32),
            np.zeros((2, 1), np.float32),
            np.zeros((2, 3), np.float32),
        ],
        {},
        "must be shaped like X",
    ),
    (
        "LayerNormGradient",
        ["dY", "Y", "m", "s", "X"],
        ["dX"],
        [
            np.zeros((2, 3), np.float32),
            np.zeros((2, 3), np.float32),
            np.zeros((3, 1), np.float32),
            np.zeros((2, 1), np.float32),
            np.zeros((2, 3), np.float32),
        ],
        {},
        r"one value per row \(2\)",
    ),
    (
        "InstanceNorm",
        ["X", "s", "b"],
        ["Y"],
        [np.zeros((2, 3, 4), np.float32), np.ones(2, np.float32), np.zeros(3, np.float32)],
        {},
        "scale .* must hold 3 floats",
    ),
    (
        "InstanceNorm",
        ["X", "s", "b"],
        ["Y"],
        [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(4, np.float32)],
        dict(order="NHWC"),
        "scale .* must hold 4 floats",
    ),
    (
        "InstanceNorm",
        ["X", "s", "b"],
        ["Y"],
        [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(4, np.float32)],
        {},
        "bias .* must hold 3 floats",
    ),
    (
        "InstanceNorm",
        ["X", "s", "b"],
        ["Y"],
        [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)],
        dict(order="NCWH"),
        "NCWH",
    ),
    (
        "InstanceNorm",
        ["X", "s", "b"],
        ["Y"],
        [np.zeros((2, 3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)],
        dict(epsilon=-1e-3),
        "epsilon must be >= 0",
    ),
    (
        "InstanceNormGradient",
        ["X", "s", "b", "dY"],
        ["dX", "ds", "db"],
        [
            np.zeros((2, 3, 4), np.float32),
            np.ones(3, np.float32),
            np.zeros(3, np.float32),
            np.zeros((2, 3, 5), np.float32),
        ],
        {},
        "must be shaped like X",
    ),
    (
        "InstanceNormGradient",
        ["X", "s", "b", "dY", "m", "is"],
        ["dX", "ds", "db"],
        [
            np.zeros((2, 3, 4), np.float32),
            np.ones(3, np.float32),
            np.zeros(3, np.float32),
            np.zeros((2, 3, 4), np.float32),
            np.zeros((2, 3), np.float32),
            np.zeros((3, 1), np.float32),
        ],
        {},
        "inv_std .* must hold N x C = 6 floats",
    ),
]


@needs_gpu
@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[5][:24]))
def test_input_errors(case):
    op_type, inputs, outputs, values, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values)


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize(
    "order,shape",
    [
        ("NCHW", (2, 3, 4, 5)),
        ("NHWC", (2, 4, 5, 3)),
        ("NCHW", (3, 8, 7)),
        ("NHWC", (2, 2, 3, 4, 6)),
    ],
)
def test_channel_stats(order, shape):
    x = R.randn(*shape).astype(np.float32)
    check_cpu_gpu(
        core.CreateOperator("ChannelStats", ["x"], ["sum", "sumsq"], order=order),
        [x],
        rtol=1e-5,
        atol=1e-4,
    )
    c = shape[1] if order == "NCHW" else shape[-1]
    mean, inv_std = R.randn(c).astype(np.float32), (R.rand(c) + 0.5).astype(np.float32)
    dy = R.randn(*shape).astype(np.float32)
    check_cpu_gpu(
        core.CreateOperator(
            "ChannelBackpropStats", ["x", "mean", "inv_std", "dy"], ["dscale", "dbias"], order=order
        ),
        [x, mean, inv_std, dy],
        rtol=1e-5,
        atol=1e-4,
    )
