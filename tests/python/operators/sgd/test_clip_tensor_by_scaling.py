"""ClipTensorByScaling: input * threshold / val when val > threshold (threshold times the optional
additional_threshold input), else input; in place; its argument and input checks; no gradient;
device checks (CUDA runs the CPU kernel)."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["ClipTensorByScaling"]

CPU = core.DeviceOption(0)


def clip_ref(X, val, threshold, additional=None):
    limit = threshold * (additional[0] if additional is not None else 1.0)
    return [(X * (limit / val[0]) if val[0] > limit else X).astype(np.float32)]


positive = st.floats(min_value=0.1, max_value=3.0)


class TestClipTensorByScaling(hu.HypothesisTestCase):
    @given(X=hu.tensor(max_dim=3), val=positive, threshold=positive)
    @settings(deadline=None, max_examples=20)
    def test_reference_and_in_place(self, X, val, threshold):
        val = np.array([val], np.float32)
        op = core.CreateOperator("ClipTensorByScaling", ["X", "val"], ["Y"], threshold=threshold)
        self.assertReferenceChecks(CPU, op, [X, val], lambda X, v: clip_ref(X, v, threshold))
        in_place = core.CreateOperator(
            "ClipTensorByScaling", ["X", "val"], ["X"], threshold=threshold
        )
        self.assertReferenceChecks(CPU, in_place, [X, val], lambda X, v: clip_ref(X, v, threshold))

    @given(X=hu.tensor(max_dim=2), val=positive, threshold=positive, additional=positive)
    @settings(deadline=None, max_examples=20)
    def test_additional_threshold(self, X, val, threshold, additional):
        inputs = [X, np.array([val], np.float32), np.array([additional], np.float32)]
        op = core.CreateOperator(
            "ClipTensorByScaling", ["X", "val", "extra"], ["Y"], threshold=threshold
        )
        self.assertReferenceChecks(
            CPU, op, inputs, lambda X, v, a: clip_ref(X, v, threshold, a), threshold=1e-5
        )

    def test_known_values(self):
        X = np.array([[3.0, -4.0]], np.float32)
        for inputs, threshold, expected in [
            ([np.array([5.0], np.float32)], 1.0, [[0.6, -0.8]]),  # scaled to norm 1
            ([np.array([5.0], np.float32)], 5.0, [[3.0, -4.0]]),  # val == threshold: kept
            ([np.array([5.0], np.float32)], 6.0, [[3.0, -4.0]]),
            # threshold 0.5 * additional 4 = 2: scaled by 2 / 5
            ([np.array([5.0], np.float32), np.array([4.0], np.float32)], 0.5, [[1.2, -1.6]]),
        ]:
            names = ["X", "val", "extra"][: 1 + len(inputs)]
            op = core.CreateOperator("ClipTensorByScaling", names, ["Y"], threshold=threshold)
            self.assertReferenceChecks(
                CPU, op, [X] + inputs, lambda *args: [np.array(expected, np.float32)]
            )

    def test_errors(self):
        X = np.ones((2, 3), np.float32)
        one = np.ones(1, np.float32)
        for kwargs, inputs, message in [
            ({}, [X, one], "missing required argument .threshold."),
            ({"threshold": 0.0}, [X, one], "threshold must be positive, got 0"),
            ({"threshold": -1.0}, [X, one], "threshold must be positive, got -1"),
            ({"threshold": 1.0}, [X, np.ones(2, np.float32)], "val must be a one-element float"),
            ({"threshold": 1.0}, [X, np.ones((1, 2), np.float32)], "val must be a one-element"),
            ({"threshold": 1.0}, [X, np.ones(1, np.float64)], "val must be a one-element float"),
            (
                {"threshold": 1.0},
                [X, one, np.ones(3, np.float32)],
                "additional_threshold must be a one-element float",
            ),
            ({"threshold": 1.0}, [X.astype(np.float64), one], "input must be a float tensor"),
        ]:
            names = ["X", "val", "extra"][: len(inputs)]
            op = core.CreateOperator("ClipTensorByScaling", names, ["Y"], **kwargs)
            self.assertRunOpRaises(CPU, op, inputs, exception=RuntimeError, regexp=message)

    def test_no_gradient(self):
        op = core.CreateOperator("ClipTensorByScaling", ["X", "val"], ["Y"], threshold=1.0)
        with self.assertRaises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("val", [0.5, 4.0])
def test_device_check(val):
    X = R.randn(6, 5).astype(np.float32)
    val = np.array([val], np.float32)
    check_cpu_gpu(
        core.CreateOperator("ClipTensorByScaling", ["X", "val"], ["Y"], threshold=1.0), [X, val]
    )
    check_cpu_gpu(
        core.CreateOperator("ClipTensorByScaling", ["X", "val"], ["X"], threshold=1.0), [X, val]
    )
    check_cpu_gpu(
        core.CreateOperator("ClipTensorByScaling", ["X", "val", "extra"], ["Y"], threshold=0.5),
        [X, val, np.array([3.0], np.float32)],
    )


if __name__ == "__main__":
    unittest.main()
