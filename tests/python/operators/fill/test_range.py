"""Range: numpy.arange for one, two and three inputs of every type (negative steps included, where
upstream counted one value short), empty ranges, the errors, and the device check (CUDA runs the
CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["Range"]

CPU = core.DeviceOption(0)


class TestRange(hu.HypothesisTestCase):
    @given(
        start=st.integers(-20, 20),
        stop=st.integers(-20, 20),
        step=st.integers(-7, 7).filter(lambda s: s != 0),
        dtype=st.sampled_from([np.int32, np.int64, np.float32, np.float64]),
        n_inputs=st.integers(1, 3),
    )
    @settings(deadline=None, max_examples=40)
    def test_matches_numpy_arange(self, start, stop, step, dtype, n_inputs):
        args = [stop] if n_inputs == 1 else [start, stop, step][:n_inputs]
        values = [np.array([v], dtype) for v in args]
        names = ["start", "stop", "step"][: len(values)]
        op = core.CreateOperator("Range", names, ["out"])
        self.assertReferenceChecks(
            CPU, op, values, lambda *v: [np.arange(*[x[0] for x in v]).astype(dtype)]
        )

    def test_fractional_float_steps(self):
        op = core.CreateOperator("Range", ["start", "stop", "step"], ["out"])
        for args in ((0.0, 1.0, 0.3), (1.0, 0.0, -0.25), (0.5, 0.5, 1.0)):
            values = [np.array([v], np.float64) for v in args]
            self.assertReferenceChecks(CPU, op, values, lambda *v: [np.arange(*args)])

    def test_negative_integer_step_counts_as_numpy(self):
        workspace.ResetWorkspace()
        for name, v in zip(["a", "b", "c"], [10, 0, -3]):
            workspace.FeedBlob(name, np.array([v], np.int32))
        workspace.RunOperatorOnce(core.CreateOperator("Range", ["a", "b", "c"], ["out"]))
        np.testing.assert_array_equal(workspace.FetchBlob("out"), [10, 7, 4, 1])


@pytest.mark.parametrize(
    "feeds,message",
    [
        (
            [np.array([0], np.int32), np.array([5], np.int32), np.array([0], np.int32)],
            "step must not be 0",
        ),
        (
            [np.array([0], np.int32), np.array([5], np.int64)],
            "input 1 must be a one-element int tensor like input 0",
        ),
        ([np.array([1, 2], np.int32)], "input 0 must be a one-element int tensor"),
        ([np.array([True])], r"unsupported type bool \(supported: int, long, float, double\)"),
    ],
)
def test_bad_inputs_are_clear_errors(feeds, message):
    workspace.ResetWorkspace()
    names = ["x{}".format(i) for i in range(len(feeds))]
    for name, value in zip(names, feeds):
        workspace.FeedBlob(name, value)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(core.CreateOperator("Range", names, ["out"]))


def test_no_gradient():
    op = core.CreateOperator("Range", ["stop"], ["out"])
    grad_ops, grads = core.GradientRegistry.GetGradientForOp(op, ["out_grad"])
    assert grad_ops == [] and grads == [None]


@needs_gpu
def test_device_check():
    values = [np.array([v], np.float32) for v in (1.0, 9.0, 1.5)]
    check_cpu_gpu(core.CreateOperator("Range", ["a", "b", "c"], ["out"]), values)
