"""MomentumSGD, MomentumSGDUpdate and SparseMomentumSGDUpdate: numpy references over several steps,
in place, nesterov, sparse rows, bad input; device checks against the CPU kernels (lr on the
host, repeated sparse rows in order)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from sparse_optimizer_inputs import optimizer_inputs

COVERED_CUDA_OPS = ["MomentumSGD", "MomentumSGDUpdate", "SparseMomentumSGDUpdate"]

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
        m, p = f32(6, seed=seed + 1), f32(6, seed=seed + 2)
        lr = np.array([0.1], np.float32)
        workspace.FeedBlob("m", m)
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator(
            "MomentumSGDUpdate",
            ["g", "m", "lr", "p"],
            ["g", "m", "p"],
            momentum=momentum,
            nesterov=int(nesterov),
        )
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

        op = core.CreateOperator(
            "MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g2", "m2", "p2"], momentum=0.9
        )
        self.assertReferenceChecks(CPU, op, [g, m, lr, p], ref)
        op = core.CreateOperator("MomentumSGD", ["g", "m", "lr"], ["g", "m"], momentum=0.9)
        self.assertReferenceChecks(CPU, op, [g, m, lr], lambda g, m, lr: ref(g, m, lr, p)[:2])

    def test_sparse(self):
        m, p = f32(5, 2), f32(5, 2, seed=1)
        g = f32(2, 2, seed=2)
        idx = np.array([3, 0], np.int64)
        lr = np.array([0.1], np.float32)
        op = core.CreateOperator(
            "SparseMomentumSGDUpdate",
            ["g", "m", "lr", "p", "i"],
            ["g", "m", "p"],
            momentum=0.5,
            nesterov=1,
        )

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
            run(
                "SparseMomentumSGDUpdate",
                ["g", "m", "lr", "p", "i"],
                ["g", "m2", "p"],
                {"g": f32(1, 2), "lr": np.ones(1, np.float32), "p": f32(5, 2), "i": np.array([0])},
            )
        op = core.CreateOperator(
            "SparseMomentumSGDUpdate", ["g", "m", "lr", "p", "i"], ["g", "m", "p"]
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [f32(1, 2), f32(5, 2), np.ones(1, np.float32), f32(5, 2), np.array([7], np.int64)],
            exception=RuntimeError,
            regexp=r"index 7 at position 0 out of range for 5 rows",
        )

    def test_bad_lr_and_shapes(self):
        op = core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"])
        self.assertRunOpRaises(
            CPU,
            op,
            [f32(3), f32(3), np.ones(2, np.float32), f32(3)],
            exception=RuntimeError,
            regexp=r"^\[MomentumSGDUpdate\] lr must be a one-element float",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [f32(3), f32(4), np.ones(1, np.float32), f32(3)],
            exception=RuntimeError,
            regexp=r"grad \(3,\) and moment \(4,\) must have the same shape",
        )


HOST = caffe2_pb2.DeviceOption()


@needs_gpu
@pytest.mark.parametrize("nesterov", [0, 1])
@pytest.mark.parametrize("lr_on_host", [False, True])
def test_momentum_sgd_update(nesterov, lr_on_host):
    rng = np.random.RandomState(0)
    g, m, p = (rng.randn(37, 5).astype(np.float32) for _ in range(3))
    lr = np.array([0.1], dtype=np.float32)
    options = {"lr": HOST} if lr_on_host else {}
    op = core.CreateOperator(
        "MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"], momentum=0.9, nesterov=nesterov
    )
    check_cpu_gpu(op, [g, m, lr, p], rtol=1e-5, atol=1e-6, input_device_options=options)
    op = core.CreateOperator(
        "MomentumSGD", ["g", "m", "lr"], ["g2", "m2"], momentum=0.9, nesterov=nesterov
    )
    check_cpu_gpu(op, [g, m, lr], rtol=1e-5, atol=1e-6, input_device_options=options)


@needs_gpu
def test_momentum_repeated_rows_like_numpy():
    rng = np.random.RandomState(12)
    idx = [1, 3, 1, 1]
    op, inputs, _ = optimizer_inputs(
        "SparseMomentumSGDUpdate", (5, (3,), idx), np.int64, rng, momentum=0.9
    )
    g, m, lr, p, _ = [np.array(x, np.float64) for x in inputs]
    g_out = np.zeros_like(g)
    for k, r in enumerate(idx):
        step = lr[0] * g[k] + 0.9 * m[r]
        m[r] = step
        p[r] -= step
        g_out[k] = step
    out = check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
    for actual, expected in zip(out, (g_out, m, p)):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
