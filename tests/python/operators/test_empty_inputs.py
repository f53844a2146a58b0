"""What ops do with empty inputs: an empty result where the result is defined (Softmax of a (2, 0) or
(0, 3) input), a clear error where it is not (the mean of no elements, pooling an empty image); the
process stays usable."""
import os
import sys

import numpy as np
import pytest

from caffe2.python import workspace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
from reliability_util import assert_clear_error, assert_usable, run_op, fresh_workspace_fixture  # noqa: E402


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
    assert_clear_error(lambda: run_op("ReduceBackMean", ["x"], ["y"]), "[ReduceBackMean]", "(3, 0)",
                       "mean of 0 elements")
    assert_clear_error(lambda: run_op("ReduceFrontMean", ["x"], ["y"], num_reduce_dim=2), "[ReduceFrontMean]")
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
    assert_clear_error(lambda: run_op(pool, ["x"], ["y"], global_pooling=1), "[" + pool + "]",
                       "(1, 1, 0, 0)", "empty image")
    # No images at all is fine: an empty batch gives an empty output.
    workspace.FeedBlob("x0", np.zeros((0, 2, 4, 4), np.float32))
    run_op(pool, ["x0"], ["y0"], kernel=2)
    assert workspace.FetchBlob("y0").shape == (0, 2, 3, 3)
