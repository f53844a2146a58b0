"""What ops do with empty inputs: an empty result where the result is defined (Softmax of a (2, 0)
or (0, 3) input), a clear error where it is not (the mean of no elements, pooling an empty image);
the process stays usable."""
import os
import sys

import numpy as np
import pytest

from caffe2.python import workspace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
from reliability_util import (  # noqa: E402 (needs the src/ entry on sys.path above)
    assert_clear_error,
    assert_usable,
    run_op,
    fresh_workspace_fixture,
)


fresh_workspace = fresh_workspace_fixture("empty_inputs_test")


@pytest.mark.parametrize("shape,axis", [((2, 0), 1), ((0, 3), 0), ((0, 3), 1), ((4, 0, 2), 1)])
def test_softmax_of_an_empty_input_is_empty(shape, axis):
    workspace.FeedBlob("x", np.zeros(shape, np.float32))
    run_op("Softmax", ["x"], ["y"], axis=axis)
    assert workspace.FetchBlob("y").shape == shape
    workspace.FeedBlob("dy", np.zeros(shape, np.float32))
    run_op("SoftmaxGradient", ["y", "dy"], ["dx"], axis=axis)
    assert workspace.FetchBlob("dx").shape == shape
    assert_usable()


def test_mean_of_no_elements_is_an_error():
    workspace.FeedBlob("x", np.zeros((3, 0), np.float32))
    assert_clear_error(
        lambda: run_op("ReduceBackMean", ["x"], ["y"]),
        "[ReduceBackMean]",
        "(3, 0)",
        "mean of 0 elements",
    )
    assert_clear_error(
        lambda: run_op("ReduceFrontMean", ["x"], ["y"], num_reduce_dim=2), "[ReduceFrontMean]"
    )
    # The sum of no elements is 0, and a zero length gives 0, as documented.
    run_op("ReduceBackSum", ["x"], ["s"])
    np.testing.assert_array_equal(workspace.FetchBlob("s"), [0, 0, 0])
    workspace.FeedBlob("x2", np.ones((2, 3), np.float32))
    workspace.FeedBlob("len", np.array([0, 2], np.int32))
    run_op("ReduceBackMean", ["x2", "len"], ["m"])
    np.testing.assert_array_equal(workspace.FetchBlob("m"), [0, 1])


@pytest.mark.parametrize("pool", ["AveragePool", "MaxPool"])
def test_pooling_an_empty_image_is_an_error(pool):
    workspace.FeedBlob("x", np.zeros((1, 1, 0, 0), np.float32))
    assert_clear_error(
        lambda: run_op(pool, ["x"], ["y"], global_pooling=1),
        "[" + pool + "]",
        "(1, 1, 0, 0)",
        "empty image",
    )
    # No images at all is fine: an empty batch gives an empty output.
    workspace.FeedBlob("x0", np.zeros((0, 2, 4, 4), np.float32))
    run_op(pool, ["x0"], ["y0"], kernel=2)
    assert workspace.FetchBlob("y0").shape == (0, 2, 3, 3)


# The rule of each family (docs/empty_inputs.md), one or more cases each:
# (op, inputs {name: (shape, dtype)}, outputs, args, expected output shapes or an error fragment).
F, I, L, B = np.float32, np.int32, np.int64, bool
FAMILY_CASES = [
    # element-wise, activations, casts, copies
    ("Add", {"a": ((0, 3), F), "b": ((0, 3), F)}, ["y"], {}, [(0, 3)]),
    ("Mul", {"a": ((0, 3), F), "b": ((3,), F)}, ["y"], {"broadcast": 1}, [(0, 3)]),
    ("Relu", {"x": ((0, 3), F)}, ["y"], {}, [(0, 3)]),
    ("Sigmoid", {"x": ((2, 0), F)}, ["y"], {}, [(2, 0)]),
    ("Sum", {"a": ((0, 2), F), "b": ((0, 2), F)}, ["y"], {}, [(0, 2)]),
    ("Cast", {"x": ((0, 2), F)}, ["y"], {"to": 2}, [(0, 2)]),
    ("Where", {"c": ((0,), B), "a": ((0,), F), "b": ((0,), F)}, ["y"], {}, [(0,)]),
    ("PRelu", {"x": ((0, 2, 2, 2), F), "s": ((2,), F)}, ["y"], {}, [(0, 2, 2, 2)]),
    # shape and layout
    ("Reshape", {"x": ((0, 4), F)}, ["y", "old"], {"shape": [-1, 2]}, [(0, 2), (2,)]),
    ("Reshape", {"x": ((0, 4), F)}, ["y", "old"], {"shape": [0, -1]}, "cannot reshape (0, 4)"),
    ("Transpose", {"x": ((0, 4), F)}, ["y"], {}, [(4, 0)]),
    ("Concat", {"a": ((2, 0), F), "b": ((2, 3), F)}, ["y", "s"], {"axis": 1}, [(2, 3), (2,)]),
    ("Split", {"x": ((0, 4), F)}, ["a", "b"], {"axis": 1}, [(0, 2), (0, 2)]),
    ("Slice", {"x": ((0, 4), F)}, ["y"], {"starts": [0, 1], "ends": [-1, 3]}, [(0, 2)]),
    ("Tile", {"x": ((2, 2), F)}, ["y"], {"tiles": 0, "axis": 0}, [(0, 2)]),
    ("Flatten", {"x": ((0, 2, 3), F)}, ["y"], {}, [(0, 6)]),
    ("ExpandDims", {"x": ((0, 2), F)}, ["y"], {"dims": [0]}, [(1, 0, 2)]),
    # index and lookup
    ("Gather", {"x": ((3, 2), F), "i": ((0,), I)}, ["y"], {}, [(0, 2)]),
    ("Gather", {"x": ((0, 2), F), "i": ((1,), I)}, ["y"], {}, "index 1 at position 0 out of range"),
    ("SparseLengthsSum", {"x": ((3, 2), F), "i": ((0,), I), "l": ((0,), I)}, ["y"], {}, [(0, 2)]),
    ("TopK", {"x": ((0, 4), F)}, ["v", "i"], {"k": 2}, [(0, 2), (0, 2)]),
    # linear algebra
    ("FC", {"x": ((0, 4), F), "w": ((3, 4), F), "b": ((3,), F)}, ["y"], {}, [(0, 3)]),
    ("FC", {"x": ((2, 4), F), "w": ((0, 4), F), "b": ((0,), F)}, ["y"], {}, [(2, 0)]),
    ("MatMul", {"a": ((2, 0), F), "b": ((0, 2), F)}, ["y"], {}, [(2, 2)]),
    ("BatchMatMul", {"a": ((0, 2, 3), F), "b": ((0, 3, 2), F)}, ["y"], {}, [(0, 2, 2)]),
    # convolution, pooling, normalization in inference
    (
        "Conv",
        {"x": ((0, 1, 5, 5), F), "w": ((2, 1, 3, 3), F), "b": ((2,), F)},
        ["y"],
        {"kernel": 3},
        [(0, 2, 3, 3)],
    ),
    (
        "ConvTranspose",
        {"x": ((0, 1, 3, 3), F), "w": ((1, 2, 3, 3), F), "b": ((2,), F)},
        ["y"],
        {"kernel": 3},
        [(0, 2, 5, 5)],
    ),
    (
        "SpatialBN",
        {"x": ((0, 2, 3, 3), F), "s": ((2,), F), "b": ((2,), F), "m": ((2,), F), "v": ((2,), F)},
        ["y"],
        {"is_test": 1},
        [(0, 2, 3, 3)],
    ),
    ("LayerNorm", {"x": ((0, 4), F)}, ["y", "mean", "std"], {}, [(0, 4), (0, 1), (0, 1)]),
    ("LRN", {"x": ((0, 3, 2, 2), F)}, ["y", "scale"], {"size": 3}, [(0, 3, 2, 2), (0, 3, 2, 2)]),
    # sums
    ("ReduceSum", {"x": ((0, 3), F)}, ["y"], {"axes": [0]}, [(1, 3)]),
    ("SumSqrElements", {"x": ((0,), F)}, ["y"], {}, [()]),
    ("LengthsSum", {"x": ((0, 2), F), "l": ((0,), I)}, ["y"], {}, [(0, 2)]),
    # means, maxima, arg maxima, batch statistics
    ("ReduceMean", {"x": ((0, 3), F)}, ["y"], {"axes": [0]}, "the mean of 0 elements is undefined"),
    ("ReduceMean", {"x": ((0, 3), F)}, ["y"], {"axes": [1]}, [(0, 1)]),  # no mean to take
    ("SumElements", {"x": ((0,), F)}, ["y"], {"average": 1}, "cannot average an empty tensor (0,)"),
    ("AveragedLoss", {"x": ((0,), F)}, ["y"], {}, "cannot average an empty tensor (0,)"),
    ("ArgMax", {"x": ((2, 0), F)}, ["y"], {}, "cannot reduce the empty axis 1 of X (2, 0)"),
    ("TopK", {"x": ((2, 0), F)}, ["v", "i"], {"k": 1}, "k 1 is larger than dim 1 of X (2, 0)"),
    (
        "SpatialBN",
        {"x": ((0, 2, 3, 3), F), "s": ((2,), F), "b": ((2,), F), "m": ((2,), F), "v": ((2,), F)},
        ["y", "m", "v", "sm", "sv"],
        {"is_test": 0},
        "batch statistics of an empty batch (0, 2, 3, 3)",
    ),
    # losses and metrics weighted by the batch; per-sample losses
    ("SoftmaxWithLoss", {"x": ((0, 3), F), "l": ((0,), I)}, ["p", "loss"], {}, [(0, 3), ()]),
    ("Accuracy", {"x": ((0, 3), F), "l": ((0,), I)}, ["y"], {}, [()]),
    ("LabelCrossEntropy", {"x": ((0, 3), F), "l": ((0,), I)}, ["y"], {}, [(0,)]),
    ("SquaredL2Distance", {"a": ((0, 3), F), "b": ((0, 3), F)}, ["y"], {}, [(0,)]),
    # optimizers
    (
        "MomentumSGDUpdate",
        {"g": ((0,), F), "m": ((0,), F), "lr": ((1,), F), "p": ((0,), F)},
        ["g", "m", "p"],
        {},
        [(0,), (0,), (0,)],
    ),
    (
        "Adam",
        {
            "p": ((0,), F),
            "m1": ((0,), F),
            "m2": ((0,), F),
            "g": ((0,), F),
            "lr": ((1,), F),
            "it": ((1,), L),
        },
        ["p", "m1", "m2"],
        {},
        [(0,), (0,), (0,)],
    ),
    (
        "SparseAdagrad",
        {"p": ((3, 2), F), "m": ((3, 2), F), "i": ((0,), I), "g": ((0, 2), F), "lr": ((1,), F)},
        ["p", "m"],
        {},
        [(3, 2), (3, 2)],
    ),
]


@pytest.mark.parametrize(
    "op,inputs,outputs,args,expected",
    FAMILY_CASES,
    ids=["{}-{}".format(c[0], i) for i, c in enumerate(FAMILY_CASES)],
)
def test_each_family_follows_its_empty_input_rule(op, inputs, outputs, args, expected):
    for name, (shape, dtype) in inputs.items():
        workspace.FeedBlob(name, np.ones(shape, dtype=dtype))
    before = {name: workspace.FetchBlob(name).copy() for name in inputs}
    if isinstance(expected, str):
        assert_clear_error(
            lambda: run_op(op, list(inputs), outputs, **args), "[" + op + "]", expected
        )
    else:
        run_op(op, list(inputs), outputs, **args)
        assert [workspace.FetchBlob(o).shape for o in outputs] == expected
    # The values defined from nothing: sums are 0, weighted losses and metrics 0, optimizers change
    # nothing they were not given.
    if op in ("ReduceSum", "SumSqrElements", "Accuracy", "MatMul"):
        assert not workspace.FetchBlob(outputs[-1]).any()
    if op == "SoftmaxWithLoss":
        assert workspace.FetchBlob("loss") == 0
    if op == "SparseAdagrad":
        np.testing.assert_array_equal(workspace.FetchBlob("p"), before["p"])
    assert_usable()
