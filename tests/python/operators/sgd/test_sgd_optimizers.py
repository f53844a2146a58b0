"""Optimizer update ops: numpy references over several steps, in-place variants, sparse rows,
no-gradient rules and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def f32(*shape, seed=0, pos=False):
    v = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return np.abs(v) + 0.1 if pos else v


def run(op_type, inputs, outputs, feeds, steps=1, **kwargs):
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    op = core.CreateOperator(op_type, inputs, outputs, **kwargs)
    for _ in range(steps):
        workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(o) for o in outputs]


class TestMomentumSGD(hu.HypothesisTestCase):
    @given(momentum=st.floats(0.0, 0.95), nesterov=st.booleans(), seed=st.integers(0, 100))
    @settings(deadline=None, max_examples=10)
    def test_update_several_steps_in_place(self, momentum, nesterov, seed):
        g, m, p = f32(6, seed=seed), f32(6, seed=seed + 1), f32(6, seed=seed + 2)
        lr = np.array([0.1], np.float32)
        workspace.FeedBlob("m", m)
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"],
                                 momentum=momentum, nesterov=int(nesterov))
        rm, rp = m.copy(), p.copy()
        for step in range(3):
            grad = f32(6, seed=seed + 10 + step)
            workspace.FeedBlob("g", grad)
            workspace.RunOperatorOnce(op)
            if nesterov:
                m_new = momentum * rm + lr[0] * grad
                gp = (1 + momentum) * m_new - momentum * rm
            else:
                gp = lr[0] * grad + momentum * rm
                m_new = gp
            rm, rp = m_new, rp - gp
            np.testing.assert_allclose(workspace.FetchBlob("g"), gp, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("m"), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("p"), rp, rtol=1e-5, atol=1e-6)

    def test_reference_not_in_place_and_momentum_sgd(self):
        g, m, p = f32(2, 3), f32(2, 3, seed=1), f32(2, 3, seed=2)
        lr = np.array([0.5], np.float32)

        def ref(g, m, lr, p):
            gp = lr[0] * g + 0.9 * m
            return [gp, gp, p - gp]
        op = core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g2", "m2", "p2"], momentum=0.9)
        self.assertReferenceChecks(CPU, op, [g, m, lr, p], ref)
        op = core.CreateOperator("MomentumSGD", ["g", "m", "lr"], ["g", "m"], momentum=0.9)
        self.assertReferenceChecks(CPU, op, [g, m, lr], lambda g, m, lr: ref(g, m, lr, p)[:2])

    def test_sparse(self):
        m, p = f32(5, 2), f32(5, 2, seed=1)
        g = f32(2, 2, seed=2)
        idx = np.array([3, 0], np.int64)
        lr = np.array([0.1], np.float32)
        op = core.CreateOperator("SparseMomentumSGDUpdate", ["g", "m", "lr", "p", "i"], ["g", "m", "p"],
                                 momentum=0.5, nesterov=1)

        def ref(g, m, lr, p, i):
            m, p = m.copy(), p.copy()
            m_new = 0.5 * m[i] + lr[0] * g
            gp = 1.5 * m_new - 0.5 * m[i]
            m[i] = m_new
            p[i] -= gp
            return [gp, m, p]
        self.assertReferenceChecks(CPU, op, [g, m, lr, p, idx], ref)

    def test_sparse_requires_in_place_and_checks_indices(self):
        with self.assertRaisesRegex(RuntimeError, "SparseMomentumSGDUpdate"):
            workspace.FeedBlob("m", f32(5, 2))
            run("SparseMomentumSGDUpdate", ["g", "m", "lr", "p", "i"], ["g", "m2", "p"],
                {"g": f32(1, 2), "lr": np.ones(1, np.float32), "p": f32(5, 2), "i": np.array([0])})
        op = core.CreateOperator("SparseMomentumSGDUpdate", ["g", "m", "lr", "p", "i"], ["g", "m", "p"])
        self.assertRunOpRaises(CPU, op, [f32(1, 2), f32(5, 2), np.ones(1, np.float32), f32(5, 2),
                                         np.array([7], np.int64)],
                               exception=RuntimeError, regexp=r"index 7 at position 0 out of range for 5 rows")

    def test_bad_lr_and_shapes(self):
        op = core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"])
        self.assertRunOpRaises(CPU, op, [f32(3), f32(3), np.ones(2, np.float32), f32(3)],
                               exception=RuntimeError, regexp=r"^\[MomentumSGDUpdate\] lr must be a one-element float")
        self.assertRunOpRaises(CPU, op, [f32(3), f32(4), np.ones(1, np.float32), f32(3)],
                               exception=RuntimeError, regexp=r"grad \(3,\) and moment \(4,\) must have the same shape")

    def test_no_gradient(self):
        for op_type, ins, outs in [("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"]),
                                   ("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"]),
                                   ("Adagrad", ["p", "h", "g", "lr"], ["p", "h"]),
                                   ("RmsProp", ["g", "ms", "mom", "lr"], ["g", "ms", "mom"])]:
            op = core.CreateOperator(op_type, ins, outs)
            with self.assertRaisesRegex(Exception, "should not have a gradient"):
                core.GradientRegistry.GetGradientForOp(op, [o + "_grad" for o in outs])


def adam_ref(p, m1, m2, g, lr, it, b1=0.9, b2=0.999, eps=1e-5):
    t = it + 1
    corr = np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    m1 = b1 * m1 + (1 - b1) * g
    m2 = b2 * m2 + (1 - b2) * g * g
    return p + lr * corr * m1 / (np.sqrt(m2) + eps), m1, m2


class TestAdam(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), in_place=st.booleans())
    @settings(deadline=None, max_examples=6)
    def test_several_steps(self, seed, in_place):
        p, m1, m2 = f32(3, 4, seed=seed), f32(3, 4, seed=seed + 1), f32(3, 4, seed=seed + 2, pos=True)
        lr = np.array([-0.01], np.float32)
        outs = ["p", "m1", "m2"] if in_place else ["p", "m1", "m2"]
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("m1", m1)
        workspace.FeedBlob("m2", m2)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"], outs, beta1=0.8, beta2=0.99,
                                 epsilon=1e-4)
        rp, r1, r2 = p.astype(np.float64), m1.astype(np.float64), m2.astype(np.float64)
        for it in range(4):
            g = f32(3, 4, seed=seed + 20 + it)
            workspace.FeedBlob("g", g)
            workspace.FeedBlob("it", np.array([it], np.int64))
            workspace.RunOperatorOnce(op)
            rp, r1, r2 = adam_ref(rp, r1, r2, g, lr[0], it, 0.8, 0.99, 1e-4)
        for name, ref in zip(outs, [rp, r1, r2]):
            np.testing.assert_allclose(workspace.FetchBlob(name), ref, rtol=1e-4, atol=1e-5)

    def test_reference_out_of_place(self):
        args = [f32(5), f32(5, seed=1), f32(5, seed=2, pos=True), f32(5, seed=3),
                np.array([-0.1], np.float32), np.array([3], np.int64)]
        op = core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["po", "m1o", "m2o"])
        self.assertReferenceChecks(CPU, op, args, lambda *a: adam_ref(*a[:5], a[5][0]))

    def test_sparse_and_rowwise(self):
        p, m1, m2 = f32(4, 3), f32(4, 3, seed=1), f32(4, 3, seed=2, pos=True)
        idx = np.array([2, 0], np.int32)
        g = f32(2, 3, seed=3)
        lr = np.array([-0.1], np.float32)
        it = np.array([5], np.int64)

        def ref(p, m1, m2, idx, g, lr, it):
            p, m1, m2 = p.copy(), m1.copy(), m2.copy()
            p[idx], m1[idx], m2[idx] = adam_ref(p[idx], m1[idx], m2[idx], g, lr[0], it[0])
            return [p, m1, m2]
        op = core.CreateOperator("SparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"])
        self.assertReferenceChecks(CPU, op, [p, m1, m2, idx, g, lr, it], ref)

        m2r = f32(4, seed=4, pos=True)

        def ref_rw(p, m1, m2, idx, g, lr, it):
            p, m1, m2 = p.copy(), m1.copy(), m2.copy()
            t = it[0] + 1
            corr = np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            m1[idx] = 0.9 * m1[idx] + 0.1 * g
            m2[idx] = 0.999 * m2[idx] + 0.001 * (g * g).mean(axis=1)
            p[idx] += lr[0] * corr * m1[idx] / (np.sqrt(m2[idx])[:, None] + 1e-5)
            return [p, m1, m2]
        op = core.CreateOperator("RowWiseSparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"])
        self.assertReferenceChecks(CPU, op, [p, m1, m2r, idx, g, lr, it], ref_rw)

    def test_bad_iter(self):
        op = core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"])
        self.assertRunOpRaises(CPU, op, [f32(2), f32(2), f32(2), f32(2), np.ones(1, np.float32),
                                         np.array([1], np.int32)],
                               exception=RuntimeError, regexp=r"iter must be a one-element int64")


class TestAdagrad(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), decay=st.sampled_from([1.0, 0.9]))
    @settings(deadline=None, max_examples=6)
    def test_several_steps(self, seed, decay):
        p, h = f32(2, 5, seed=seed), f32(2, 5, seed=seed + 1, pos=True)
        lr = np.array([-0.05], np.float32)
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("h", h)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator("Adagrad", ["p", "h", "g", "lr"], ["p", "h"], decay=decay, epsilon=1e-4)
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
        self.assertRunOpRaises(CPU, op, [f32(5, 2), f32(5, 2), np.array([1, 2]), f32(3, 2),
                                         np.ones(1, np.float32)],
                               exception=RuntimeError, regexp=r"grad \(3, 2\) must hold 2 rows of 2 values")


class TestRmsProp(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), momentum=st.floats(0.0, 0.9))
    @settings(deadline=None, max_examples=6)
    def test_several_steps_in_place(self, seed, momentum):
        ms, mom = f32(7, seed=seed, pos=True), f32(7, seed=seed + 1)
        lr = np.array([0.01], np.float32)
        workspace.FeedBlob("ms", ms)
        workspace.FeedBlob("mom", mom)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator("RmsProp", ["g", "ms", "mom", "lr"], ["g", "ms", "mom"],
                                 decay=0.8, momentum=momentum, epsilon=1e-4)
        rs, rm = ms.astype(np.float64), mom.astype(np.float64)
        for step in range(3):
            g = f32(7, seed=seed + 40 + step)
            workspace.FeedBlob("g", g)
            workspace.RunOperatorOnce(op)
            rs = rs + 0.2 * (g * g - rs)
            rm = momentum * rm + lr[0] * g / np.sqrt(1e-4 + rs)
            np.testing.assert_allclose(workspace.FetchBlob("g"), rm, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("ms"), rs, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(workspace.FetchBlob("mom"), rm, rtol=1e-5, atol=1e-6)


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
        op = core.CreateOperator("ScatterWeightedSum", ["X", "w0", "i", "s1", "w1", "s2", "w2"], ["X"])
        self.assertReferenceChecks(CPU, op, [X, w0, idx, s1, w1, s2, w2], ref)

    def test_bad_input(self):
        op = core.CreateOperator("ScatterWeightedSum", ["X", "w0", "i", "s1", "w1"], ["X"])
        self.assertRunOpRaises(CPU, op, [f32(5, 3), np.ones(1, np.float32), np.array([0, 1]), f32(3, 3),
                                         np.ones(1, np.float32)],
                               exception=RuntimeError, regexp=r"slices input 3 \(3, 3\) must hold 2 rows of 3")
        with self.assertRaisesRegex(RuntimeError, "ScatterWeightedSum"):
            workspace.RunOperatorOnce(core.CreateOperator(
                "ScatterWeightedSum", ["X", "w0", "i", "s1", "w1"], ["Y"]))


class TestLearningRatePolicies(hu.HypothesisTestCase):
    def lr(self, it, **kwargs):
        workspace.FeedBlob("it", np.array([it], dtype=np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], **kwargs))
        return float(workspace.FetchBlob("lr"))

    def test_multistep(self):
        kw = dict(base_lr=1.0, policy="multistep", stepsizes=[10, 25, 40], gamma=0.5)
        for it, want in [(0, 1.0), (9, 1.0), (10, 0.5), (24, 0.5), (25, 0.25), (100, 0.125)]:
            self.assertAlmostEqual(self.lr(it, **kw), want, places=6)

    def test_composite(self):
        kw = dict(base_lr=2.0, policy="composite", sub_policy_num_iters=[5, 10],
                  sub_policy_0_policy="linearWarmup", sub_policy_0_start_multiplier=0.5,
                  sub_policy_0_num_iter=5,
                  sub_policy_1_policy="step", sub_policy_1_stepsize=4, sub_policy_1_gamma=0.1,
                  sub_policy_1_lr_scale=0.5)
        self.assertAlmostEqual(self.lr(0, **kw), 1.0, places=6)
        self.assertAlmostEqual(self.lr(4, **kw), 2.0 * (0.5 + 0.5 * 4 / 5), places=6)
        self.assertAlmostEqual(self.lr(5, **kw), 1.0, places=6)
        self.assertAlmostEqual(self.lr(9, **kw), 0.1, places=6)
        # The last sub-policy keeps running past its count.
        self.assertAlmostEqual(self.lr(5 + 12, **kw), 1.0 * 0.1 ** 3, places=6)

    def test_bad_policies(self):
        with self.assertRaisesRegex(RuntimeError, r"'stepsizes' must be increasing, got 10 before 5"):
            self.lr(0, base_lr=1.0, policy="multistep", stepsizes=[10, 5], gamma=0.5)
        with self.assertRaisesRegex(RuntimeError, r"missing 'sub_policy_1_policy'"):
            self.lr(0, base_lr=1.0, policy="composite", sub_policy_num_iters=[3, 3],
                    sub_policy_0_policy="fixed")
        with self.assertRaisesRegex(RuntimeError, r"policy 'step' needs a positive 'stepsize'"):
            self.lr(0, base_lr=1.0, policy="composite", sub_policy_num_iters=[3],
                    sub_policy_0_policy="step")
        with self.assertRaisesRegex(RuntimeError, r"cannot contain another composite"):
            self.lr(0, base_lr=1.0, policy="composite", sub_policy_num_iters=[3],
                    sub_policy_0_policy="composite")


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
