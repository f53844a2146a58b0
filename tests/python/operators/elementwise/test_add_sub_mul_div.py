"""Add, Sub, Mul, Div with the legacy Caffe2 broadcast: numpy references, finite-difference
gradients, in-place variants, the gradient ops emitted, and bad input."""
import unittest

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)
NP_OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def legacy_broadcast(A, B, axis=None):
    """B reshaped so numpy broadcasting reproduces Caffe2's legacy rule."""
    if B.size == 1:
        return B.reshape(())
    if axis is None:
        axis = A.ndim - B.ndim
    return B.reshape((1,) * axis + B.shape + (1,) * (A.ndim - axis - B.ndim))


def inputs(a_shape, b_shape, seed=0, positive_b=False):
    rng = np.random.RandomState(seed)
    A = rng.randn(*a_shape).astype(np.float32)
    B = rng.randn(*b_shape).astype(np.float32)
    if positive_b:
        B = (np.abs(B) + 1.0).astype(np.float32)
    return A, B


# (A shape, B shape, op arguments, axis for the reference)
BROADCAST_CASES = [
    ((2, 3, 4, 5), (4, 5), {}, None),
    ((2, 3, 4, 5), (4, 5), {"axis": -1}, None),
    ((2, 3, 4, 5), (3, 4), {"axis": 1}, 1),
    ((2, 3, 4, 5), (3,), {"axis_str": "C"}, 1),
    ((2, 3, 4, 5), (5,), {"axis_str": "C", "order": "NHWC"}, 3),
    ((2, 3, 4, 5), (1,), {}, None),
    ((2, 3, 4), (1, 1), {}, None),
    ((2, 3, 4, 5), (1, 3, 4, 1), {"axis": 0}, 0),
    ((2, 3, 4, 5), (3, 4, 1), {"axis": 1}, 1),
    ((2, 3, 4), (2, 3, 4), {}, None),
    ((2, 3), (2,), {"axis": 0}, 0),
]


class TestSameShape(hu.HypothesisTestCase):
    @given(op_type=st.sampled_from(sorted(NP_OPS)), shape=hu.dims(1, 4).flatmap(
        lambda n: st.lists(st.integers(1, 4), min_size=n, max_size=n)), seed=st.integers(0, 1000))
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, op_type, shape, seed):
        A, B = inputs(shape, shape, seed, positive_b=op_type == "Div")
        op = core.CreateOperator(op_type, ["A", "B"], ["C"])
        self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [NP_OPS[op_type](A, B)])
        for i in range(2):
            self.assertGradientChecks(CPU, op, [A, B], i, [0])

    def test_integer_types(self):
        for dtype in (np.int32, np.int64):
            A = np.arange(1, 13, dtype=dtype).reshape(3, 4)
            B = np.full((4,), 3, dtype=dtype)
            for op_type, fn in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
                                ("Div", np.floor_divide)]:
                op = core.CreateOperator(op_type, ["A", "B"], ["C"], broadcast=1)
                self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])

    def test_double(self):
        A, B = inputs((3, 4), (3, 4), positive_b=True)
        A, B = A.astype(np.float64), B.astype(np.float64)
        for op_type, fn in NP_OPS.items():
            op = core.CreateOperator(op_type, ["A", "B"], ["C"])
            self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])


class TestBroadcast(hu.HypothesisTestCase):
    def test_reference(self):
        for a_shape, b_shape, kwargs, axis in BROADCAST_CASES:
            A, B = inputs(a_shape, b_shape, positive_b=True)
            for op_type, fn in NP_OPS.items():
                op = core.CreateOperator(op_type, ["A", "B"], ["C"], broadcast=1, **kwargs)
                self.assertReferenceChecks(
                    CPU, op, [A, B], lambda A, B: [fn(A, legacy_broadcast(A, B, axis))])

    def test_gradients(self):
        for a_shape, b_shape, kwargs, _ in BROADCAST_CASES:
            A, B = inputs((2,) + a_shape[1:3] if len(a_shape) == 4 else a_shape, b_shape)
            if len(a_shape) == 4:
                A = np.random.RandomState(1).randn(2, 3, 4, 5).astype(np.float32)
            for op_type in ("Add", "Sub", "Mul"):
                op = core.CreateOperator(op_type, ["A", "B"], ["C"], broadcast=1, **kwargs)
                for i in range(2):
                    self.assertGradientChecks(CPU, op, [A, B], i, [0])

    def test_in_place_on_a(self):
        A, B = inputs((2, 3, 4), (3,), positive_b=True)
        for op_type, fn in NP_OPS.items():
            op = core.CreateOperator(op_type, ["A", "B"], ["A"], broadcast=1, axis=1)
            self.assertReferenceChecks(CPU, op, [A, B],
                                       lambda A, B: [fn(A, legacy_broadcast(A, B, 1))])
        # The checker re-feeds only the input it perturbs, so an in-place op is checked on that one.
        for op_type in ("Add", "Sub"):
            op = core.CreateOperator(op_type, ["A", "B"], ["A"], broadcast=1, axis=1)
            self.assertGradientChecks(CPU, op, [A, B], 0, [0])


class TestInPlace(hu.HypothesisTestCase):
    def test_output_is_a_or_b(self):
        A, B = inputs((3, 4), (3, 4), positive_b=True)
        for op_type, fn in NP_OPS.items():
            outs = ["A", "B"] if op_type != "Div" else ["A"]
            for out in outs:
                op = core.CreateOperator(op_type, ["A", "B"], [out])
                self.assertReferenceChecks(CPU, op, [A, B], lambda A, B: [fn(A, B)])
        # The checker re-feeds only the input it perturbs: check the overwritten one.
        for op_type in ("Add", "Sub"):
            for i, out in enumerate(("A", "B")):
                op = core.CreateOperator(op_type, ["A", "B"], [out])
                self.assertGradientChecks(CPU, op, [A, B], i, [0])
        op = core.CreateOperator("Div", ["A", "B"], ["A"])
        self.assertGradientChecks(CPU, op, [A, B], 0, [0])

    def test_same_blob_twice(self):
        A, _ = inputs((5,), (5,))
        op = core.CreateOperator("Mul", ["A", "A"], ["A"])
        self.assertReferenceChecks(CPU, op, [A, A], lambda A, _: [A * A])


class TestGradientOps(unittest.TestCase):
    def grad(self, op):
        return core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_add(self):
        ops, g = self.grad(core.CreateOperator("Add", ["A", "B"], ["C"]))
        self.assertEqual((ops, g), ([], ["C_grad", "C_grad"]))
        ops, g = self.grad(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=1))
        self.assertEqual([o.type for o in ops], ["SumReduceLike"])
        self.assertEqual((list(ops[0].input), list(ops[0].output)), (["C_grad", "B"], ["B_grad"]))
        self.assertEqual({a.name for a in ops[0].arg}, {"broadcast", "axis"})
        self.assertEqual(g, ["C_grad", "B_grad"])

    def test_sub(self):
        ops, g = self.grad(core.CreateOperator("Sub", ["A", "B"], ["C"]))
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("Negative", ["C_grad"], ["B_grad"])])
        self.assertEqual(g, ["C_grad", "B_grad"])
        ops, g = self.grad(core.CreateOperator("Sub", ["A", "B"], ["C"], broadcast=1, axis_str="C"))
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("Negative", ["C_grad"], ["B_grad_autogen_pre_red"]),
                          ("SumReduceLike", ["B_grad_autogen_pre_red", "B"], ["B_grad"])])
        self.assertEqual(len(ops[0].arg), 0)
        self.assertEqual({a.name for a in ops[1].arg}, {"axis_str"})

    def test_mul(self):
        ops, g = self.grad(core.CreateOperator("Mul", ["A", "B"], ["C"]))
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("Mul", ["C_grad", "B"], ["A_grad"]), ("Mul", ["C_grad", "A"], ["B_grad"])])
        ops, g = self.grad(core.CreateOperator("Mul", ["A", "B"], ["C"], broadcast=1, axis=0))
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("Mul", ["C_grad", "B"], ["A_grad"]),
                          ("Mul", ["C_grad", "A"], ["B_grad_autogen_pre_red"]),
                          ("SumReduceLike", ["B_grad_autogen_pre_red", "B"], ["B_grad"])])
        self.assertEqual({a.name for a in ops[0].arg}, {"broadcast", "axis"})
        self.assertEqual(len(ops[1].arg), 0)
        self.assertEqual({a.name for a in ops[2].arg}, {"axis"})

    def test_div(self):
        ops, g = self.grad(core.CreateOperator("Div", ["A", "B"], ["C"]))
        self.assertEqual([(o.type, list(o.input), list(o.output)) for o in ops],
                         [("DivGradient", ["B", "C", "C_grad"], ["A_grad", "B_grad"])])

    def test_mul_in_place_has_no_gradient(self):
        with self.assertRaisesRegex(Exception, r"\[Mul\] no gradient for in-place Mul"):
            self.grad(core.CreateOperator("Mul", ["A", "B"], ["A"]))

    def test_div_broadcast_has_no_gradient(self):
        with self.assertRaisesRegex(Exception, r"\[Div\] the gradient of a broadcasting Div is not supported"):
            self.grad(core.CreateOperator("Div", ["A", "B"], ["C"], broadcast=1))


class TestErrors(hu.HypothesisTestCase):
    def raises(self, op, A, B, regexp):
        self.assertRunOpRaises(CPU, op, [A, B], exception=RuntimeError, regexp=regexp)

    def test_shape_mismatch_without_broadcast(self):
        A, B = inputs((2, 3), (3,))
        for op_type in NP_OPS:
            self.raises(core.CreateOperator(op_type, ["A", "B"], ["C"]), A, B,
                        r"^\[%s\] A \(2, 3\) and B \(3,\) differ in shape; set broadcast=1" % op_type)

    def test_axis_without_broadcast(self):
        A, B = inputs((2, 3), (2, 3))
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], axis=0), A, B,
                    r"^\[Add\] axis or axis_str is set but broadcast is not enabled")
        self.raises(core.CreateOperator("Mul", ["A", "B"], ["C"], axis_str="C"), A, B,
                    r"^\[Mul\] axis or axis_str is set but broadcast is not enabled")

    def test_in_place_b_with_broadcast(self):
        A, B = inputs((2, 3), (3,))
        for op_type in ("Add", "Sub", "Mul"):
            self.raises(core.CreateOperator(op_type, ["A", "B"], ["B"], broadcast=1), A, B,
                        r"in-place with B as the output is not allowed when broadcasting")

    def test_div_in_place_b_is_rejected_by_schema(self):
        A, B = inputs((2, 3), (2, 3))
        self.raises(core.CreateOperator("Div", ["A", "B"], ["B"]), A, B,
                    r"^\[Div\] input 1 and output 0 are both .B., but this op cannot run in place")

    def test_unsupported_dtype(self):
        A = np.ones((2, 3), dtype=bool)
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"]), A, A,
                    r"^\[Add\] unsupported type bool \(supported: float, double, int, long\)")
        A = np.ones((2, 3), dtype=np.uint8)
        self.raises(core.CreateOperator("Mul", ["A", "B"], ["C"]), A, A,
                    r"^\[Mul\] unsupported type unsigned char")

    def test_type_mismatch(self):
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"]), np.ones(3, np.float32),
                    np.ones(3, np.int32), r"^\[Add\] A has type float but B has int\n")

    def test_broadcast_mismatches(self):
        A, B = inputs((2, 3, 4), (5,))
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1), A, B,
                    r"^\[Add\] B \(5,\) does not match A \(2, 3, 4\) at axis 2: B dim 0 is 5 but A dim 2 is 4")
        A, B = inputs((3, 4), (2, 3, 4))
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1), A, B,
                    r"B \(2, 3, 4\) has more dimensions than A \(3, 4\)")
        A, B = inputs((2, 3, 4), (3, 4))
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=2), A, B,
                    r"broadcast axis 2 out of range \[0, 1\]")
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis=1,
                                        axis_str="C"), A, B,
                    r"args axis and axis_str cannot be used together")
        self.raises(core.CreateOperator("Add", ["A", "B"], ["C"], broadcast=1, axis_str="X"), A, B,
                    r"axis_str 'X' is not a letter of order 'NCHW'")

    def test_integer_division_by_zero(self):
        self.raises(core.CreateOperator("Div", ["A", "B"], ["C"]), np.ones(3, np.int32),
                    np.array([1, 0, 2], np.int32), r"integer division by zero: B\[1\] is 0")


if __name__ == "__main__":
    unittest.main()
