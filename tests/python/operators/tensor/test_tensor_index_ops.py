"""Slice, Tile, Gather (+SparseToDense), OneHot, ArgMax/ArgMin, TopK, Where: references,
gradients, shape inference and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def py_range(start, end, dim):
    return slice(dim + 1 + start if start < 0 else start, dim + 1 + end if end < 0 else end)


class TestSlice(hu.HypothesisTestCase):
    @given(starts=st.sampled_from([[0], [1, 0], [-3, 1], [0, 0, 2]]),
           ends=st.sampled_from([[-1], [3, -1], [-2, 3], [2, -2, 4]]), as_inputs=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, starts, ends, as_inputs):
        n = min(len(starts), len(ends))
        starts, ends = starts[:n], ends[:n]
        X = rand(4, 3, 5)
        if as_inputs:
            op = core.CreateOperator("Slice", ["X", "s", "e"], ["Y"])
            inputs = [X, np.array(starts, np.int32), np.array(ends, np.int32)]
        else:
            op = core.CreateOperator("Slice", ["X"], ["Y"], starts=starts, ends=ends)
            inputs = [X]

        def ref(X, *unused):
            return [X[tuple(py_range(s, e, X.shape[i]) for i, (s, e) in enumerate(zip(starts, ends)))]]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_int_and_bad_ranges(self):
        X = np.arange(12, dtype=np.int64).reshape(3, 4)
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[1, 1], ends=[3, -2])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X[1:3, 1:3]])
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 3], ends=[2, 6])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[Slice\] slice \[3, 6\) of dim 1 is out of range for X \(3, 4\)")
        op = core.CreateOperator("Slice", ["X"], ["Y"], starts=[0, 1], ends=[2])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp="starts has 2 entries but ends has 1")


class TestTile(hu.HypothesisTestCase):
    @given(tiles=st.integers(1, 3), axis=st.integers(-3, 2), as_inputs=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, tiles, axis, as_inputs):
        X = rand(2, 3, 2)
        if as_inputs:
            op = core.CreateOperator("Tile", ["X", "t", "a"], ["Y"])
            inputs = [X, np.array([tiles], np.int32), np.array([axis], np.int32)]
        else:
            op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=tiles, axis=axis)
            inputs = [X]
        reps = [1, 1, 1]
        reps[axis] = tiles
        self.assertReferenceChecks(CPU, op, inputs, lambda X, *u: [np.tile(X, reps)])
        self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_bad_axis(self):
        op = core.CreateOperator("Tile", ["X"], ["Y"], tiles=2, axis=3)
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError,
                               regexp=r"^\[Tile\] axis 3 out of range for a 2-d input")


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


class TestOneHot(hu.HypothesisTestCase):
    def test_reference_and_bad_index(self):
        op = core.CreateOperator("OneHot", ["I", "n"], ["Y"])
        I = np.array([2, 0, 4], np.int64)
        self.assertReferenceChecks(CPU, op, [I, np.array(5, np.int64)],
                                   lambda I, n: [np.eye(5, dtype=np.float32)[I]])
        self.assertRunOpRaises(CPU, op, [np.array([5], np.int64), np.array(5, np.int64)], exception=RuntimeError,
                               regexp=r"^\[OneHot\] index 5 at position 0 out of range for index_size 5")


class TestArgMaxMin(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3), axis=st.integers(-3, 2), keepdims=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, X, axis, keepdims):
        axis = axis % X.ndim
        for op_type, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
            op = core.CreateOperator(op_type, ["X"], ["Y"], axis=axis, keepdims=keepdims)

            def ref(X):
                r = fn(X, axis=axis)
                return [np.expand_dims(r, axis) if keepdims else r]
            self.assertReferenceChecks(CPU, op, [X], ref)

    def test_ties_and_bad_axis(self):
        X = np.array([[1, 3, 3], [2, 2, 0]], np.int32)
        op = core.CreateOperator("ArgMax", ["X"], ["Y"], keepdims=0)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array([1, 0], np.int64)])
        op = core.CreateOperator("ArgMin", ["X"], ["Y"], axis=2)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[ArgMin\] axis 2 out of range for a 2-d input")


class TestTopK(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), k=st.integers(1, 4), axis=st.integers(-2, 1), flat=st.booleans())
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
                res.append(pos.astype(np.int64))
            return res
        self.assertReferenceChecks(CPU, op, [X], ref)
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_ties_and_bad_k(self):
        X = np.array([[1, 5, 5, 2]], np.float32)
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=2)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array([[5, 5]], np.float32),
                                                            np.array([[1, 2]], np.int64)])
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=5)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[TopK\] k 5 is larger than dim 1 of X \(1, 4\)")
        op = core.CreateOperator("TopK", ["X"], ["V", "I"])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp="missing required argument 'k'")
        op = core.CreateOperator("TopK", ["X"], ["V", "I"], k=-1)
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp="must be positive, got -1")


class TestWhere(hu.HypothesisTestCase):
    @given(seed=st.integers(0, 100), in_place=st.sampled_from([None, "X", "Y"]))
    @settings(deadline=None, max_examples=6)
    def test_reference(self, seed, in_place):
        rng = np.random.RandomState(seed)
        C = rng.rand(3, 4) > 0.5
        X, Y = rand(3, 4, seed=seed), rand(3, 4, seed=seed + 1)
        op = core.CreateOperator("Where", ["C", "X", "Y"], [in_place or "Z"])
        self.assertReferenceChecks(CPU, op, [C, X, Y], lambda C, X, Y: [np.where(C, X, Y)])
        rows = rng.rand(3) > 0.5
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"], broadcast_on_rows=1)
        self.assertReferenceChecks(CPU, op, [rows, X, Y], lambda C, X, Y: [np.where(C[:, None], X, Y)])

    def test_bad_input(self):
        op = core.CreateOperator("Where", ["C", "X", "Y"], ["Z"])
        self.assertRunOpRaises(CPU, op, [np.ones(3, bool), rand(3, 4), rand(3, 4)], exception=RuntimeError,
                               regexp=r"^\[Where\] C \(3,\) must have the dims of X \(3, 4\)")
        self.assertRunOpRaises(CPU, op, [np.ones(3, np.int32), rand(3), rand(3)], exception=RuntimeError,
                               regexp=r"C must be a bool tensor")
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["Z_grad"])
