"""FC, SquaredL2Distance, AveragedLoss, WeightedSum and LearningRate: numpy references,
finite-difference gradients, shape inference and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestFC(hu.HypothesisTestCase):
    @given(m=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 4), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, m, k, n, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(m, k).astype(np.float32)
        W = rng.randn(n, k).astype(np.float32)
        b = rng.randn(n).astype(np.float32)
        op = core.CreateOperator("FC", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X @ W.T + b])
        for i in range(3):
            self.assertGradientChecks(CPU, op, [X, W, b], i, [0])

    def test_axis_flattens_leading_dims(self):
        X = np.random.randn(2, 3, 4).astype(np.float32)
        W = np.random.randn(5, 12).astype(np.float32)
        b = np.zeros(5, np.float32)
        op = core.CreateOperator("FC", ["X", "W", "b"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X, W, b], lambda X, W, b: [X.reshape(2, 12) @ W.T + b])
        op2 = core.CreateOperator("FC", ["X", "W2", "b"], ["Y"], axis=2)
        W2 = np.random.randn(5, 4).astype(np.float32)
        self.assertReferenceChecks(CPU, op2, [X, W2, b], lambda X, W, b: [X @ W.T + b])

    def test_mismatched_shapes_name_the_op_and_dims(self):
        workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
        workspace.FeedBlob("W", np.zeros((4, 5), np.float32))
        workspace.FeedBlob("b", np.zeros(4, np.float32))
        with self.assertRaisesRegex(RuntimeError, r"^\[FC\] X \(2, 3\) has 3 features per row but W \(4, 5\)"):
            workspace.RunOperatorOnce(core.CreateOperator("FC", ["X", "W", "b"], ["Y"]))


class TestLosses(hu.HypothesisTestCase):
    @given(n=st.integers(1, 5), d=st.integers(1, 5), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_squared_l2_distance(self, n, d, seed):
        rng = np.random.RandomState(seed)
        X = rng.randn(n, d).astype(np.float32)
        Y = rng.randn(n, d).astype(np.float32)
        op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
        self.assertReferenceChecks(CPU, op, [X, Y], lambda X, Y: [0.5 * ((X - Y) ** 2).sum(axis=1)])
        self.assertGradientChecks(CPU, op, [X, Y], 0, [0])
        self.assertGradientChecks(CPU, op, [X, Y], 1, [0])

    @given(X=hu.tensor(min_dim=1, max_dim=3))
    @settings(deadline=None, max_examples=10)
    def test_averaged_loss(self, X):
        op = core.CreateOperator("AveragedLoss", ["X"], ["loss"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.mean(), dtype=np.float32)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_shape_mismatch(self):
        op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
        self.assertRunOpRaises(CPU, op, [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)],
                               exception=RuntimeError, regexp="must have the same shape")


class TestWeightedSum(hu.HypothesisTestCase):
    @given(n=st.integers(1, 3), size=st.integers(1, 8), seed=st.integers(0, 1000), in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, size, seed, in_place):
        rng = np.random.RandomState(seed)
        inputs, names = [], []
        for i in range(n):
            inputs += [rng.randn(size).astype(np.float32), rng.randn(1).astype(np.float32)]
            names += ["X%d" % i, "w%d" % i]
        op = core.CreateOperator("WeightedSum", names, ["X0" if in_place else "Y"])

        def ref(*args):
            return [sum(args[2 * i] * args[2 * i + 1][0] for i in range(n))]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        if not in_place:
            for i in range(n):
                self.assertGradientChecks(CPU, op, inputs, 2 * i, [0])

    def test_grad_on_w_gradient(self):
        X = np.random.randn(4).astype(np.float32)
        w = np.array([0.5], np.float32)
        op = core.CreateOperator("WeightedSum", ["X", "w"], ["Y"], grad_on_w=1)
        self.assertGradientChecks(CPU, op, [X, w], 1, [0])

    def test_bad_weight(self):
        op = core.CreateOperator("WeightedSum", ["X", "w"], ["Y"])
        self.assertRunOpRaises(CPU, op, [np.zeros(3, np.float32), np.zeros(2, np.float32)],
                               exception=RuntimeError, regexp="1-element float")


class TestLearningRate(hu.HypothesisTestCase):
    def run_lr(self, it, **kwargs):
        workspace.FeedBlob("it", np.array([it], dtype=np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], **kwargs))
        lr = workspace.FetchBlob("lr")
        self.assertEqual(lr.shape, ())
        return float(lr)

    def test_policies(self):
        self.assertAlmostEqual(self.run_lr(7, base_lr=-0.1, policy="fixed"), -0.1, places=6)
        self.assertAlmostEqual(self.run_lr(25, base_lr=1.0, policy="step", stepsize=10, gamma=0.5), 0.25)
        self.assertAlmostEqual(self.run_lr(3, base_lr=1.0, policy="exp", gamma=0.5), 0.125)
        self.assertAlmostEqual(self.run_lr(4, base_lr=2.0, policy="inv", gamma=0.25, power=1.0), 1.0)
        self.assertAlmostEqual(self.run_lr(5, base_lr=1.0, policy="poly", power=2.0, max_iter=10), 0.25)
        self.assertAlmostEqual(self.run_lr(5, base_lr=1.0, policy="linearWarmup",
                                           start_multiplier=0.5, num_iter=10), 0.75)
        self.assertAlmostEqual(self.run_lr(20, base_lr=1.0, policy="linearWarmup",
                                           start_multiplier=0.5, num_iter=10), 1.0)
        self.assertAlmostEqual(self.run_lr(3, base_lr=1.0, policy="constantWarmup",
                                           multiplier=0.2, num_iter=10), 0.2, places=6)
        self.assertEqual(self.run_lr(1, base_lr=1.0, policy="alter", active_period=2, inactive_period=3), 1.0)
        self.assertEqual(self.run_lr(3, base_lr=1.0, policy="alter", active_period=2, inactive_period=3), 0.0)
        self.assertAlmostEqual(self.run_lr(12, base_lr=1.0, policy="hill", num_iter=10, start_multiplier=0.1,
                                           gamma=0.5, power=1.0, end_multiplier=0.1), 0.5)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(RuntimeError, "unknown learning rate policy 'nope'"):
            self.run_lr(1, base_lr=1.0, policy="nope")
        with self.assertRaisesRegex(RuntimeError, "positive 'stepsize'"):
            self.run_lr(1, base_lr=1.0, policy="step")
        with self.assertRaisesRegex(RuntimeError, "base_lr"):
            self.run_lr(1, policy="fixed")
