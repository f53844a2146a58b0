"""Device checks of the input errors of the CUDA LengthsSum/Mean/WeightedSum,
SparseLengthsSum/Mean/WeightedSum and their gradient ops: each refuses what the CPU op refuses, with
the same message. The other device checks are in test_lengths_reducer_device.py."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import gpu, needs_gpu

COVERED_CUDA_OPS = [
    "LengthsSum",
    "LengthsMean",
    "LengthsWeightedSum",
    "SparseLengthsSum",
    "SparseLengthsMean",
    "SparseLengthsWeightedSum",
    "LengthsIndicesInGradientSumGradient",
    "LengthsMeanGradient",
    "SparseLengthsIndicesInGradientWeightedSumGradient",
]

CPU = core.DeviceOption(0)


# Input errors: the CUDA ops refuse what the CPU ops refuse, with the same messages. Inputs named
# in `host` are fed on the host (checks of values are only possible there).
def run_on_gpu(op, inputs, host=()):
    op = core.CreateOperator(
        op.type, list(op.input), list(op.output), device_option=gpu(), arg=list(op.arg)
    )
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, CPU if name in host else gpu())
    workspace.RunOperatorOnce(op)


F = np.zeros

I32 = lambda *v: np.array(v, np.int32)  # noqa: E731

I64 = lambda *v: np.array(v, np.int64)  # noqa: E731

ERRORS = [
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(1, 2)],
        (),
        {},
        "LENGTHS must be a 1-D int32 tensor",
    ),
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.int32), I32(1, 2)],
        (),
        {},
        "DATA must be a float tensor",
    ),
    (
        "LengthsSum",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I32(4, -1)],
        ("L",),
        {},
        "length 1 is negative: -1",
    ),
    (
        "LengthsMean",
        ["D", "L"],
        ["Y"],
        [F((3, 2), np.float32), I32(1, 1)],
        ("L",),
        {},
        r"LENGTHS add up to 2 but DATA \(3, 2\) has 3 rows",
    ),
    (
        "LengthsWeightedSum",
        ["D", "W", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(2, np.float32), I32(1, 2)],
        (),
        {},
        "SCALARS must hold 3 floats",
    ),
    (
        "SparseLengthsSum",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(0, 2, 1), I32(2, 2)],
        ("L",),
        {},
        "LENGTHS add up to 4 but there are 3 INDICES",
    ),
    (
        "SparseLengthsSum",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), I64(0, 7), I32(2)],
        ("I",),
        {},
        r"index 7 at position 1 out of range for DATA \(3, 2\)",
    ),
    (
        "SparseLengthsMean",
        ["D", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(2, np.float32), I32(2)],
        (),
        {},
        "INDICES must be an int32 or int64 tensor",
    ),
    (
        "SparseLengthsWeightedSum",
        ["D", "W", "I", "L"],
        ["Y"],
        [F((3, 2), np.float32), F(3, np.float32), I32(0, 1), I32(2)],
        (),
        {},
        "WEIGHTS must hold 2 floats",
    ),
    (
        "LengthsMeanGradient",
        ["dY", "L"],
        ["dX"],
        [F((3, 2), np.float32), I32(1, 2)],
        (),
        {},
        r"must have one row per segment \(2\)",
    ),
    (
        "LengthsIndicesInGradientSumGradient",
        ["dY", "L", "D"],
        ["dX"],
        [F((2, 2), np.float32), I32(1, 2), F((4, 2), np.float32)],
        ("L",),
        {},
        "LENGTHS add up to 3 but",
    ),
    (
        "SparseLengthsIndicesInGradientWeightedSumGradient",
        ["dY", "W", "L", "I"],
        ["dX"],
        [F((1, 2), np.float32), F(3, np.float32), I32(2), I64(0, 1)],
        ("L",),
        {},
        "weights must hold 2 floats",
    ),
]


@needs_gpu
@pytest.mark.parametrize("case", ERRORS, ids=lambda c: "{}:{}".format(c[0], c[6][:28]))
def test_input_errors(case):
    op_type, inputs, outputs, values, host, args, message = case
    op = core.CreateOperator(op_type, inputs, outputs, **args)
    with pytest.raises(RuntimeError, match=message):
        run_on_gpu(op, values, host)
