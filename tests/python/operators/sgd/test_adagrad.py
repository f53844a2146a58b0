"""Adagrad, SparseAdagrad and RowWiseSparseAdagrad: numpy references over several steps, decay,
sparse and row-wise rows, bad input, and a sparse training step (Gather's gradient slice into
SparseAdagrad); device checks of repeated rows applied in order. The dense Adagrad's device check
is in test_sgd_ops.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from sparse_optimizer_inputs import optimizer_inputs

COVERED_CUDA_OPS = ["SparseAdagrad", "RowWiseSparseAdagrad"]

CPU = core.DeviceOption(0)


def f32(*shape, seed=0, pos=False):
    v = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return np.abs(v) + 0.1 if pos else v


class TestAdagrad(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), decay=st.sampled_from([1.0, 0.9]))
    @settings(deadline=None, max_examples=6)
    def test_several_steps(self, seed, decay):
        p, h = f32(2, 5, seed=seed), f32(2, 5, seed=seed + 1, pos=True)
        lr = np.array([-0.05], np.float32)
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("h", h)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator(
            "Adagrad", ["p", "h", "g", "lr"], ["p", "h"], decay=decay, epsilon=1e-4
        )
        rp, rh = p.astype(np.float64), h.astype(np.float64)
        for step in range(3):
            g = f32(2, 5, seed=seed + 30 + step)
            workspace.FeedBlob("g", g)
            workspace.RunOperatorOnce(op)
            rh = decay * rh + g * g
            rp = rp + lr[0] * g / (np.sqrt(rh) + 1e-4)
        np.testing.assert_allclose(workspace.FetchBlob("p"), rp, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("h"), rh, rtol=1e-5, atol=1e-6)

    def test_sparse_and_rowwise(self):
        p, h = f32(5, 2), f32(5, 2, seed=1, pos=True)
        idx = np.array([4, 1, 2], np.int64)
        g = f32(3, 2, seed=2)
        lr = np.array([-0.1], np.float32)

        def ref(p, h, idx, g, lr):
            p, h = p.copy(), h.copy()
            h[idx] += g * g
            p[idx] += lr[0] * g / (np.sqrt(h[idx]) + 1e-5)
            return [p, h]

        op = core.CreateOperator("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"])
        self.assertReferenceChecks(CPU, op, [p, h, idx, g, lr], ref)

        hr = f32(5, seed=3, pos=True)

        def ref_rw(p, h, idx, g, lr):
            p, h = p.copy(), h.copy()
            h[idx] += (g * g).mean(axis=1)
            p[idx] += lr[0] * g / (np.sqrt(h[idx])[:, None] + 1e-5)
            return [p, h]

        op = core.CreateOperator("RowWiseSparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"])
        self.assertReferenceChecks(CPU, op, [p, hr, idx, g, lr], ref_rw)

    def test_bad_grad_rows(self):
        op = core.CreateOperator("SparseAdagrad", ["p", "h", "i", "g", "lr"], ["p", "h"])
        self.assertRunOpRaises(
            CPU,
            op,
            [f32(5, 2), f32(5, 2), np.array([1, 2]), f32(3, 2), np.ones(1, np.float32)],
            exception=RuntimeError,
            regexp=r"grad \(3, 2\) must hold 2 rows of 2 values",
        )


class TestSparseTrainingStep(hu.HypothesisTestCase):
    def test_gather_gradient_slice_feeds_sparse_adagrad(self):
        # Y = Gather(W, I); loss = mean(Y); the sparse gradient of W goes into SparseAdagrad.
        W = f32(6, 2)
        idx = np.array([4, 1], np.int64)
        net = core.Net("sparse_step")
        y = net.Gather(["W", "I"], "Y")
        loss = net.AveragedLoss(y, "loss")
        grad_map = net.AddGradientOperators([loss])
        g = grad_map["W"]
        self.assertIsInstance(g, core.GradientSlice)
        net.SparseAdagrad(["W", "h", g.indices, g.values, "lr"], ["W", "h"], epsilon=1e-4)
        workspace.FeedBlob("W", W)
        workspace.FeedBlob("I", idx)
        workspace.FeedBlob("h", np.zeros((6, 2), np.float32))
        workspace.FeedBlob("lr", np.array([-0.5], np.float32))
        workspace.RunNetOnce(net)
        grad = np.full((2, 2), 1.0 / 4, np.float32)
        want = W.copy()
        want[idx] += -0.5 * grad / (np.sqrt(grad * grad) + 1e-4)
        np.testing.assert_allclose(workspace.FetchBlob("W"), want, rtol=1e-5, atol=1e-6)


@needs_gpu
def test_repeated_rows_apply_in_order_like_numpy():
    """SparseAdagrad and RowWiseSparseAdagrad with repeated rows against a sequential numpy
    reference: the GPU must reproduce the CPU's in-order application."""
    rng = np.random.RandomState(11)
    idx = np.array([2, 0, 2, 2, 5, 0], np.int32)
    for op_type in ("SparseAdagrad", "RowWiseSparseAdagrad"):
        op, inputs, _ = optimizer_inputs(op_type, (6, (4,), list(idx)), np.int32, rng)
        p, h, _, g, lr = [np.array(x, np.float64) for x in inputs]
        for k, r in enumerate(idx):
            if op_type == "SparseAdagrad":
                h[r] += g[k] ** 2
                p[r] += lr[0] * g[k] / (np.sqrt(h[r]) + 1e-5)
            else:
                h[r] += np.mean(g[k] ** 2)
                p[r] += lr[0] * g[k] / (np.sqrt(h[r]) + 1e-5)
        p_gpu, h_gpu = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(p_gpu, p, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h_gpu, h, rtol=1e-5, atol=1e-5)
