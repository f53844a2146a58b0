"""Reshape, Transpose, Flatten, FlattenToVec, ResizeLike, Squeeze, ExpandDims, NHWC2NCHW,
NCHW2NHWC, Shape, Size: references, gradients, shape inference, in-place and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestReshape(hu.HypothesisTestCase):
    @given(shape=st.sampled_from([[0, -1], [-1, 4], [2, 3, 4], [1, 0, -1], [24]]),
           in_place=st.booleans(), as_input=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, shape, in_place, as_input):
        X = rand(2, 3, 4)
        # (in place with a shape input, shape inference cannot know the result and keeps X's dims)
        out = "X" if in_place and not as_input else "Y"
        if as_input:
            op = core.CreateOperator("Reshape", ["X", "shape"], [out, "old"])
            inputs = [X, np.array(shape, np.int64)]
        else:
            op = core.CreateOperator("Reshape", ["X"], [out, "old"], shape=shape)
            inputs = [X]
        resolved = [X.shape[i] if s == 0 else s for i, s in enumerate(shape)]

        def ref(X, *unused):
            return [X.reshape(resolved), np.array(X.shape, np.int64)]
        self.assertReferenceChecks(CPU, op, inputs, ref)
        if not in_place:
            self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_gradient_def(self):
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[-1])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None])
        self.assertEqual(ops[0].type, "Reshape")
        self.assertEqual(list(ops[0].input), ["Y_grad", "old"])
        self.assertEqual(list(ops[0].output), ["X_grad", "_X_grad_dims"])
        self.assertEqual(len(ops[0].arg), 0)

    def test_bad_input(self):
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[5, -1])
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError,
                               regexp=r"^\[Reshape\] cannot reshape \(2, 3\) \(6 elements\) into \(5, -1\)")
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[-1, -1])
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError, regexp="more than one -1")
        op = core.CreateOperator("Reshape", ["X", "s"], ["Y", "old"], shape=[6])
        self.assertRunOpRaises(CPU, op, [rand(2, 3), np.array([6])], exception=RuntimeError,
                               regexp="either as the 'shape' argument or as input 1")


class TestTranspose(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=4), seed=st.integers(0, 100), default=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, X, seed, default):
        axes = None if default else list(np.random.RandomState(seed).permutation(X.ndim))
        op = core.CreateOperator("Transpose", ["X"], ["Y"], **({} if default else {"axes": axes}))
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.transpose(X, axes)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_element_types_and_row_copies(self):
        for dtype in [np.int8, np.float16, np.int32, np.float64, np.bool_]:
            X = (np.arange(60) % 5).reshape(3, 4, 5).astype(dtype)
            for axes in ([1, 0, 2], [2, 1, 0], [0, 2, 1]):
                op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=axes)
                self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(axes)])
        S = np.array([[b"a", b"bb"], [b"ccc", b"d"]], dtype=object)
        op = core.CreateOperator("Transpose", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [S], lambda S: [S.T])

    def test_int_and_bad_axes(self):
        X = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[1, 2, 0])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(1, 2, 0)])
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[0, 0, 1])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError,
                               regexp=r"^\[Transpose\] axes is not a permutation of 0..2")
        op = core.CreateOperator("Transpose", ["X"], ["Y"], axes=[1, 0])
        self.assertRunOpRaises(CPU, op, [X], exception=RuntimeError, regexp="axes has 2 entries but X has 3 dims")


class TestFlatten(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=4), axis=st.integers(0, 4))
    @settings(deadline=None, max_examples=10)
    def test_flatten(self, X, axis):
        axis = min(axis, X.ndim)
        op = core.CreateOperator("Flatten", ["X"], ["Y"], axis=axis)
        rows = int(np.prod(X.shape[:axis]))
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(rows, -1 if rows else 0)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    @given(X=hu.tensor(min_dim=1, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_flatten_to_vec(self, X):
        op = core.CreateOperator("FlattenToVec", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(-1)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_resize_like(self):
        X, like = rand(6), rand(2, 3, seed=1)
        op = core.CreateOperator("ResizeLike", ["X", "like"], ["X"])
        self.assertReferenceChecks(CPU, op, [X, like], lambda X, like: [X.reshape(2, 3)])
        op = core.CreateOperator("ResizeLike", ["X", "like"], ["Y"])
        self.assertRunOpRaises(CPU, op, [rand(5), like], exception=RuntimeError,
                               regexp=r"^\[ResizeLike\] X \(5,\) has 5 elements but the shape source \(2, 3\) has 6")

    def test_flatten_bad_axis(self):
        op = core.CreateOperator("Flatten", ["X"], ["Y"], axis=3)
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError,
                               regexp=r"axis 3 out of range for X \(2, 3\)")


class TestSqueezeExpandDims(hu.HypothesisTestCase):
    @given(in_place=st.booleans())
    @settings(deadline=None, max_examples=2)
    def test_squeeze_and_expand(self, in_place):
        X = rand(1, 3, 1, 2)
        out = "X" if in_place else "Y"
        op = core.CreateOperator("Squeeze", ["X"], [out], dims=[2, 0, 2])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.reshape(3, 2)])
        if not in_place:
            self.assertGradientChecks(CPU, op, [X], 0, [0])
        Z = rand(3, 2)
        op = core.CreateOperator("ExpandDims", ["X"], [out], dims=[0, 3])
        self.assertReferenceChecks(CPU, op, [Z], lambda X: [X.reshape(1, 3, 2, 1)])
        if not in_place:
            self.assertGradientChecks(CPU, op, [Z], 0, [0])

    def test_bad_dims(self):
        op = core.CreateOperator("Squeeze", ["X"], ["Y"], dims=[1])
        self.assertRunOpRaises(CPU, op, [rand(1, 3)], exception=RuntimeError,
                               regexp=r"^\[Squeeze\] dim 1 of X \(1, 3\) has size 3, only size-1 dims")
        op = core.CreateOperator("ExpandDims", ["X"], ["Y"], dims=[5])
        self.assertRunOpRaises(CPU, op, [rand(1, 3)], exception=RuntimeError, regexp="dims entry 5 out of range")
        op = core.CreateOperator("Squeeze", ["X"], ["Y"])
        self.assertRunOpRaises(CPU, op, [rand(1, 3)], exception=RuntimeError, regexp="'dims'")


class TestOrderSwitch(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=4, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_both_directions(self, X):
        op = core.CreateOperator("NHWC2NCHW", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(0, 3, 1, 2)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])
        op = core.CreateOperator("NCHW2NHWC", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.transpose(0, 2, 3, 1)])
        self.assertGradientChecks(CPU, op, [X], 0, [0])

    def test_not_4d(self):
        op = core.CreateOperator("NCHW2NHWC", ["X"], ["Y"])
        self.assertRunOpRaises(CPU, op, [rand(2, 3)], exception=RuntimeError,
                               regexp=r"^\[NCHW2NHWC\] X must be 4-D, got \(2, 3\)")


class TestShapeSize(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=0, max_dim=4))
    @settings(deadline=None, max_examples=5)
    def test_shape_and_size(self, X):
        op = core.CreateOperator("Shape", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.shape, np.int64)])
        op = core.CreateOperator("Size", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array(X.size, np.int64)])

    def test_shape_should_not_do_gradient(self):
        op = core.CreateOperator("Shape", ["X"], ["Y"])
        with self.assertRaisesRegex(Exception, "should not have a gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
