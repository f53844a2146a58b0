"""hypothesis_test_util, gradient_checker and device_checker, on the CPU
operators every build has."""
import os

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, device_checker, gradient_checker, workspace
import caffe2.python.hypothesis_test_util as hu


def test_dev_profile_is_default():
    if os.getenv("CAFFE2_HYPOTHESIS_PROFILE", "dev") == "dev":
        assert settings.default.max_examples == 10


def test_device_lists_without_gpu():
    assert hu.cpu_do.device_type == caffe2_pb2.CPU
    assert hu.gpu_do.device_type == caffe2_pb2.CUDA
    if not workspace.has_gpu_support:
        assert hu.device_options == [hu.cpu_do]
        assert hu.expanded_device_options == [hu.cpu_do]
    assert set(hu.gcs) == {"gc", "dc"}


@given(X=hu.tensor(), data=st.data())
def test_tensor_strategies(X, data):
    assert X.dtype == np.float32 and 1 <= X.ndim <= 4
    assert np.all(np.abs(X) <= 1)
    ints = data.draw(hu.tensor(dtype=np.int32, min_dim=2, max_dim=2))
    assert ints.dtype == np.int32 and ints.ndim == 2
    lengths = data.draw(hu.lengths(10))
    assert lengths.sum() == 10 and np.all(lengths >= 0)
    ids = data.draw(hu.segment_ids(6, is_sorted=True))
    assert ids[0] == 0 and np.all(np.diff(ids) >= 0)
    data_, segments = data.draw(hu.segmented_tensor(min_dim=2))
    assert len(segments) == data_.shape[0]
    values, indices, lengths = data.draw(hu.sparse_lengths_tensor())
    assert indices.dtype == np.int64
    assert np.all(indices < values.shape[0]) and lengths.sum() == len(indices)
    same_shape = data.draw(hu.tensors(n=3))
    assert len({a.shape for a in same_shape}) == 1
    assert data.draw(hu.tensor1d(max_len=4)).ndim == 1


def test_temp_workspace():
    original = workspace.CurrentWorkspace()
    with hu.temp_workspace():
        assert workspace.CurrentWorkspace() == "temp_ws"
        workspace.FeedBlob("x", np.ones(1, np.float32))
    assert workspace.CurrentWorkspace() == original
    with hu.temp_workspace():
        assert not workspace.HasBlob("x")


def _sum_gradient_checker():
    return gradient_checker.GradientChecker(stepsize=0.05, threshold=0.005, device_option=hu.cpu_do)


def test_gradient_checker_on_sum():
    op = core.CreateOperator("Sum", ["X1", "X2"], ["Y"])
    inputs = [np.random.rand(2, 3).astype(np.float32) for _ in range(2)]
    original = workspace.CurrentWorkspace()
    ok, grad, estimate = _sum_gradient_checker().CheckSimple(op, inputs, 0, [0])
    assert ok
    np.testing.assert_allclose(grad, inputs[0] + inputs[1], rtol=1e-5)
    assert workspace.CurrentWorkspace() == original


def test_device_checker_compares_devices():
    op = core.CreateOperator("Sum", ["X1", "X2"], ["Y"])
    inputs = [np.ones(3, np.float32), np.ones(3, np.float32)]
    checker = device_checker.DeviceChecker(0.01, [hu.cpu_do, hu.cpu_do])
    assert checker.CheckSimple(op, inputs, [0])
    net = core.Net("device_check_net")
    net.Sum(["X1", "X2"], "Y")
    assert checker.CheckNet(net, {"X1": inputs[0], "X2": inputs[1]})


class TestHypothesisTestCase(hu.HypothesisTestCase):
    @given(X=hu.tensor(), Y=hu.tensor(), **hu.gcs)
    @settings(max_examples=3)
    def test_reference_device_and_gradient_checks(self, X, Y, gc, dc):
        op = core.CreateOperator("Sum", ["X", "X2"], ["Y"])
        self.assertReferenceChecks(gc, op, [X, X], lambda a, b: [a + b])
        self.assertDeviceChecks(dc, op, [X, X], [0])
        self.assertGradientChecks(gc, op, [X, X], 0, [0])

    def test_reference_check_failure(self):
        op = core.CreateOperator("Copy", ["X"], ["Y"])
        X = np.ones(3, np.float32)
        with self.assertRaises(AssertionError):
            self.assertReferenceChecks(hu.cpu_do, op, [X], lambda x: [x + 1])

    def test_reference_check_with_strings(self):
        op = core.CreateOperator("GivenTensorStringFill", [], ["Y"], shape=[2], values=["a", "b"])
        self.assertReferenceChecks(
            hu.cpu_do, op, [], lambda: [np.array([b"a", b"b"], dtype=object)]
        )

    def test_grad_reference(self):
        op = core.CreateOperator("Copy", ["X"], ["Y"])
        X = np.arange(3).astype(np.float32)

        def grad_reference(output_grad, ref_outputs, inputs):
            return [output_grad]

        self.assertReferenceChecks(
            hu.cpu_do, op, [X], lambda x: [x], output_to_grad="Y", grad_reference=grad_reference
        )

    def test_validation_and_raises(self):
        op = core.CreateOperator("Copy", ["X"], ["Y"])
        X = np.ones(2, np.float32)
        seen = {}

        def validator(X, Y):
            seen["ok"] = np.array_equal(X, Y)

        self.assertValidationChecks(hu.cpu_do, op, [X], validator)
        assert seen["ok"]
        bad = core.CreateOperator("Sum", ["A", "B"], ["C"])
        self.assertRunOpRaises(
            hu.cpu_do, bad, [np.ones(2, np.float32), np.ones(3, np.float32)], exception=RuntimeError
        )

    def test_run_op_benchmark(self):
        op = core.CreateOperator("Copy", ["X"], ["Y"])
        times = hu.runOpBenchmark(hu.cpu_do, op, [np.ones(4, np.float32)], iterations=2)
        assert len(times) >= 1


@given(X=hu.tensor(elements=hu.floats(min_value=-5, max_value=5)), x=hu.floats(width=64))
@settings(deadline=None, max_examples=20)
def test_floats_fill_float32_tensors_as_upstreams_tests_use_them(X, x):
    """hu.floats is 32 bits wide by default, so its values fill float32 arrays exactly."""
    assert X.dtype == np.float32 and np.all((X >= -5) & (X <= 5))
    assert isinstance(x, float)
