"""ScatterWeightedSum: reference and bad input; device checks of repeated rows against numpy."""
import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from sparse_optimizer_inputs import optimizer_inputs

COVERED_CUDA_OPS = ["ScatterWeightedSum"]

CPU = core.DeviceOption(0)


def f32(*shape, seed=0, pos=False):
    v = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return np.abs(v) + 0.1 if pos else v


class TestScatterWeightedSum(hu.HypothesisTestCase):
    def test_reference(self):
        X = f32(5, 3)
        idx = np.array([4, 0], np.int32)
        s1, s2 = f32(2, 3, seed=1), f32(2, 3, seed=2)
        w0, w1, w2 = (np.array([v], np.float32) for v in (0.5, 2.0, -1.0))

        def ref(X, w0, idx, s1, w1, s2, w2):
            X = X.copy()
            X[idx] = w0[0] * X[idx] + w1[0] * s1 + w2[0] * s2
            return [X]

        op = core.CreateOperator(
            "ScatterWeightedSum", ["X", "w0", "i", "s1", "w1", "s2", "w2"], ["X"]
        )
        self.assertReferenceChecks(CPU, op, [X, w0, idx, s1, w1, s2, w2], ref)

    def test_bad_input(self):
        op = core.CreateOperator("ScatterWeightedSum", ["X", "w0", "i", "s1", "w1"], ["X"])
        self.assertRunOpRaises(
            CPU,
            op,
            [
                f32(5, 3),
                np.ones(1, np.float32),
                np.array([0, 1]),
                f32(3, 3),
                np.ones(1, np.float32),
            ],
            exception=RuntimeError,
            regexp=r"slices input 3 \(3, 3\) must hold 2 rows of 3",
        )
        with self.assertRaisesRegex(RuntimeError, "ScatterWeightedSum"):
            workspace.RunOperatorOnce(
                core.CreateOperator("ScatterWeightedSum", ["X", "w0", "i", "s1", "w1"], ["Y"])
            )


@needs_gpu
def test_scatter_weighted_sum_repeated_rows_like_numpy():
    rng = np.random.RandomState(13)
    idx = [0, 2, 0]
    op, inputs, _ = optimizer_inputs("ScatterWeightedSum", (4, (3,), idx), np.int32, rng, pairs=2)
    x = np.array(inputs[0], np.float64)
    w0, s0, w1, s1, w2 = inputs[1][0], inputs[3], inputs[4][0], inputs[5], inputs[6][0]
    for k, r in enumerate(idx):
        x[r] = w0 * x[r] + w1 * s0[k] + w2 * s1[k]
    (out,) = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, x, rtol=1e-5, atol=1e-5)
