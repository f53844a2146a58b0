"""Gather and SparseToDense: references, gradients and their defs, string data and a bad index."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestGather(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), idx_type=st.sampled_from([np.int32, np.int64]),
           idx_shape=st.sampled_from([(3,), (2, 2)]))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradients(self, seed, idx_type, idx_shape):
        rng = np.random.RandomState(seed)
        data = rng.randn(5, 3).astype(np.float32)
        idx = rng.randint(0, 5, size=idx_shape).astype(idx_type)
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        self.assertReferenceChecks(CPU, op, [data, idx], lambda d, i: [d[i]])
        if len(idx_shape) == 1:
            self.assertGradientChecks(CPU, op, [data, idx], 0, [0])
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"], dense_gradient=True)
        self.assertGradientChecks(CPU, op, [data, idx], 0, [0])

    def test_gradient_defs(self):
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops, [])
        self.assertEqual((grads[0].indices, grads[0].values), ("I", "Y_grad"))
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"], dense_gradient=1)
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual([o.type for o in ops], ["SparseToDense"])
        self.assertEqual(list(ops[0].input), ["I", "Y_grad", "D"])

    def test_sparse_to_dense(self):
        op = core.CreateOperator("SparseToDense", ["I", "V"], ["Y"])
        I = np.array([3, 1, 3], np.int64)
        V = rand(3, 2)

        def ref(I, V):
            out = np.zeros((4, 2), np.float32)
            np.add.at(out, I, V)
            return [out]
        self.assertReferenceChecks(CPU, op, [I, V], ref)

    def test_string_data_and_bad_index(self):
        data = np.array([b"a", b"bb", b"ccc"], dtype=object)
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        self.assertReferenceChecks(CPU, op, [data, np.array([2, 0], np.int32)], lambda d, i: [d[i]])
        self.assertRunOpRaises(CPU, op, [rand(3, 2), np.array([0, 3], np.int64)], exception=RuntimeError,
                               regexp=r"^\[Gather\] index 3 at position 1 out of range for DATA \(3, 2\)")
