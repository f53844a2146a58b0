"""TopK: reference, gradient, ties, a bad k, and 1-D flatten_indices as upstream."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestTopK(hu.HypothesisTestCase):
    @given(
        seed=st.integers(0, 100), k=st.integers(1, 4), axis=st.integers(-2, 1), flat=st.booleans()
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, seed, k, axis, flat):
        X = np.random.RandomState(seed).permutation(40).reshape(4, 10).astype(np.float32)
        outs = ["V", "I", "F"] if flat else ["V", "I"]
        op = core.CreateOperator("TopK", ["X"], outs, k=k, axis=axis)

        def ref(X):
            order = np.argsort(-X, axis=axis, kind="stable")
            idx = np.take(order, np.arange(k), axis=axis)
            vals = np.take_along_axis(X, idx, axis=axis)
            res = [vals, idx.astype(np.int64)]
            if flat:
                ax = axis % 2
                rows, cols = np.indices(idx.shape)
                pos = np.where(ax == 1, rows * X.shape[1] + idx, idx * X.shape[1] + cols)
                res.append(pos.astype(np.int64).ravel())  # 1-D, in the order of the values
            return res

        self.assertReferenceChecks(CPU, op, [X], ref)
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_ties_and_bad_k(self):
        X = np.array([[1, 5, 5, 2]], np.float32)
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=2)
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array([[5, 5]], np.float32), np.array([[1, 2]], np.int64)]
        )
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=5)
        self.assertRunOpRaises(
            CPU,
            op,
            [X],
            exception=RuntimeError,
            regexp=r"^\[TopK\] k 5 is larger than dim 1 of X \(1, 4\)",
        )
        op = core.CreateOperator("TopK", ["X"], ["V", "I"])
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp="missing required argument 'k'"
        )
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=-1)
        self.assertRunOpRaises(
            CPU, op, [X], exception=RuntimeError, regexp="must be positive, got -1"
        )


def test_flatten_indices_are_one_dimensional_as_upstream():
    X = np.random.RandomState(3).rand(2, 3, 5).astype(np.float32)
    net = core.Net("topk")
    net.TopK(["X"], ["V", "I", "F"], k=2, axis=1)
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", X)
    workspace.RunNetOnce(net)
    values, flat = workspace.FetchBlob("V"), workspace.FetchBlob("F")
    assert flat.shape == (20,) and flat.dtype == np.int64
    np.testing.assert_array_equal(X.ravel()[flat], values.ravel())
    shapes, types = workspace.InferShapesAndTypes([net], {"X": [2, 3, 5]})
    assert shapes["F"] == [20] and shapes["V"] == [2, 2, 5]
