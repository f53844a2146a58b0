"""Sizes are checked, never wrapped (core/tensor.h): fills and ops given shapes whose element or
byte count does not fit raise an error naming the op and the dims, instead of crashing, spinning or
"succeeding" without data; the process stays usable."""
import numpy as np
import pytest

from caffe2.python import workspace
from reliability_util import assert_clear_error, run_op, fresh_workspace_fixture

BIG = 2**31


fresh_workspace = fresh_workspace_fixture("checked_sizes_test")


@pytest.mark.parametrize(
    "fill", ["GaussianFill", "UniformFill", "XavierFill", "ConstantFill", "RangeFill"]
)
def test_fills_larger_than_memory_can_address(fill):
    assert_clear_error(
        lambda: run_op(fill, [], ["y"], shape=[BIG, BIG]),
        "[" + fill + "]",
        "(2147483648, 2147483648)",
    )


def test_element_count_past_int64():
    assert_clear_error(
        lambda: run_op("GaussianFill", [], ["y"], shape=[3, 2**63 - 1]),
        "[GaussianFill]",
        "more than 2^63 - 1 elements",
    )
    assert_clear_error(
        lambda: run_op("ConstantFill", [], ["y"], shape=[2**63 - 1, 3]), "[ConstantFill]"
    )


def test_tile_past_int64():
    workspace.FeedBlob("x", np.ones((2, 3), np.float32))
    assert_clear_error(
        lambda: run_op("Tile", ["x"], ["y"], tiles=2**61, axis=0),
        "[Tile]",
        "more than 2^63 - 1 elements",
    )


def test_empty_dims_are_still_fine():
    run_op("ConstantFill", [], ["y"], shape=[BIG, 0, 5])
    assert workspace.FetchBlob("y").shape == (BIG, 0, 5)
