"""Adam, SparseAdam and RowWiseSparseAdam: numpy references over several steps, in place, sparse and
row-wise rows, a bad iteration counter; device checks of the sparse forms with the counter on the
GPU. The dense Adam's device check is in test_sgd_ops.py."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu
from sparse_optimizer_inputs import INDEX_CASES, optimizer_inputs

COVERED_CUDA_OPS = ["SparseAdam", "RowWiseSparseAdam"]

CPU = core.DeviceOption(0)


def f32(*shape, seed=0, pos=False):
    v = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    return np.abs(v) + 0.1 if pos else v


def adam_ref(p, m1, m2, g, lr, it, b1=0.9, b2=0.999, eps=1e-5):
    t = it + 1
    corr = np.sqrt(1 - b2**t) / (1 - b1**t)
    m1 = b1 * m1 + (1 - b1) * g
    m2 = b2 * m2 + (1 - b2) * g * g
    return p + lr * corr * m1 / (np.sqrt(m2) + eps), m1, m2


class TestAdam(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), in_place=st.booleans())
    @settings(deadline=None, max_examples=6)
    def test_several_steps(self, seed, in_place):
        p, m1, m2 = (
            f32(3, 4, seed=seed),
            f32(3, 4, seed=seed + 1),
            f32(3, 4, seed=seed + 2, pos=True),
        )
        lr = np.array([-0.01], np.float32)
        outs = ["p", "m1", "m2"] if in_place else ["p", "m1", "m2"]
        workspace.FeedBlob("p", p)
        workspace.FeedBlob("m1", m1)
        workspace.FeedBlob("m2", m2)
        workspace.FeedBlob("lr", lr)
        op = core.CreateOperator(
            "Adam", ["p", "m1", "m2", "g", "lr", "it"], outs, beta1=0.8, beta2=0.99, epsilon=1e-4
        )
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
        args = [
            f32(5),
            f32(5, seed=1),
            f32(5, seed=2, pos=True),
            f32(5, seed=3),
            np.array([-0.1], np.float32),
            np.array([3], np.int64),
        ]
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

        op = core.CreateOperator(
            "SparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"]
        )
        self.assertReferenceChecks(CPU, op, [p, m1, m2, idx, g, lr, it], ref)

        m2r = f32(4, seed=4, pos=True)

        def ref_rw(p, m1, m2, idx, g, lr, it):
            p, m1, m2 = p.copy(), m1.copy(), m2.copy()
            t = it[0] + 1
            corr = np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
            m1[idx] = 0.9 * m1[idx] + 0.1 * g
            m2[idx] = 0.999 * m2[idx] + 0.001 * (g * g).mean(axis=1)
            p[idx] += lr[0] * corr * m1[idx] / (np.sqrt(m2[idx])[:, None] + 1e-5)
            return [p, m1, m2]

        op = core.CreateOperator(
            "RowWiseSparseAdam", ["p", "m1", "m2", "i", "g", "lr", "it"], ["p", "m1", "m2"]
        )
        self.assertReferenceChecks(CPU, op, [p, m1, m2r, idx, g, lr, it], ref_rw)

    def test_bad_iter(self):
        op = core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"])
        self.assertRunOpRaises(
            CPU,
            op,
            [f32(2), f32(2), f32(2), f32(2), np.ones(1, np.float32), np.array([1], np.int32)],
            exception=RuntimeError,
            regexp=r"iter must be a one-element int64",
        )


@needs_gpu
def test_adam_iteration_counter_on_the_gpu():
    """iter fed on the GPU is read on the host (copied) for the bias correction."""
    for op_type in ("SparseAdam", "RowWiseSparseAdam"):
        op, inputs, _ = optimizer_inputs(
            op_type, INDEX_CASES[1], np.int64, np.random.RandomState(10)
        )
        check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-5)
