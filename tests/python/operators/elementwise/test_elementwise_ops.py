"""What Add, Sub, Mul and Div share (the legacy Caffe2 broadcast, in-place rules, element types and
their errors) and what Mean, Max and Min share (n same-shaped inputs and their gradient ops),
each checked over the ops together: numpy references, finite-difference gradients, device checks
against the CPU kernels. Checks of one op alone are in its own test_<op>.py."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Max",
    "Min",
    "Mean",
    "MaxGradient",
    "MinGradient",
    "MeanGradient",
]

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
    @given(
        op_type=st.sampled_from(sorted(NP_OPS)),
        shape=hu.dims(1, 4).flatmap(lambda n: st.lists(st.integers(1, 4), min_size=n, max_size=n)),
        seed=st.integers(0, 1000),
    )
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
            for op_type, fn in [
                ("Add", np.add),
                ("Sub", np.subtract),
                ("Mul", np.multiply),
                ("Div", np.floor_divide),
            ]:
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
                    CPU, op, [A, B], lambda A, B: [fn(A, legacy_broadcast(A, B, axis))]
                )

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
            self.assertReferenceChecks(
                CPU, op, [A, B], lambda A, B: [fn(A, legacy_broadcast(A, B, 1))]
            )
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


class TestErrors(hu.HypothesisTestCase):
    def raises(self, op, A, B, regexp):
        self.assertRunOpRaises(CPU, op, [A, B], exception=RuntimeError, regexp=regexp)

    def test_shape_mismatch_without_broadcast(self):
        A, B = inputs((2, 3), (3,))
        for op_type in NP_OPS:
            self.raises(
                core.CreateOperator(op_type, ["A", "B"], ["C"]),
                A,
                B,
                r"^\[%s\] A \(2, 3\) and B \(3,\) differ in shape; set broadcast=1" % op_type,
            )

    def test_axis_without_broadcast(self):
        A, B = inputs((2, 3), (2, 3))
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"], axis=0),
            A,
            B,
            r"^\[Add\] axis or axis_str is set but broadcast is not enabled",
        )
        self.raises(
            core.CreateOperator("Mul", ["A", "B"], ["C"], axis_str="C"),
            A,
            B,
            r"^\[Mul\] axis or axis_str is set but broadcast is not enabled",
        )

    def test_in_place_b_with_broadcast(self):
        A, B = inputs((2, 3), (3,))
        for op_type in ("Add", "Sub", "Mul"):
            self.raises(
                core.CreateOperator(op_type, ["A", "B"], ["B"], broadcast=1),
                A,
                B,
                r"in-place with B as the output is not allowed when broadcasting",
            )

    def test_unsupported_dtype(self):
        A = np.ones((2, 3), dtype=bool)
        self.raises(
            core.CreateOperator("Add", ["A", "B"], ["C"]),
            A,
            A,
            r"^\[Add\] unsupported type bool \(supported: float, double, int, long\)",
        )
        A = np.ones((2, 3), dtype=np.uint8)
        self.raises(
            core.CreateOperator("Mul", ["A", "B"], ["C"]),
            A,
            A,
            r"^\[Mul\] unsupported type unsigned char",
        )


BINARY = ["Add", "Sub", "Mul", "Div"]


@needs_gpu
@pytest.mark.parametrize("op_type", BINARY)
@pytest.mark.parametrize(
    "b_shape,args",
    [
        ((2, 3, 4, 5), {}),
        ((4, 5), {"broadcast": 1}),
        ((3, 4), {"broadcast": 1, "axis": 1}),
        ((3,), {"broadcast": 1, "axis_str": "C", "order": "NCHW"}),
        ((1,), {"broadcast": 1}),
    ],
)
def test_binary_with_broadcast(op_type, b_shape, args):
    rng = np.random.RandomState(2)
    a = rng.randn(2, 3, 4, 5).astype(np.float32)
    b = (rng.rand(*b_shape) + 0.5).astype(np.float32)
    op = core.CreateOperator(op_type, ["a", "b"], ["c"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-5, atol=1e-6)
    if op_type != "Div" or not args:
        check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_add_mul_other_types(dtype):
    rng = np.random.RandomState(3)
    a = (rng.randn(5, 6) * 10).astype(dtype)
    b = (rng.randn(6) * 10).astype(dtype)
    for op_type in ("Add", "Sub", "Mul"):
        check_cpu_gpu(
            core.CreateOperator(op_type, ["a", "b"], ["c"], broadcast=1), [a, b], rtol=0, atol=0
        )


REFS = {
    "Mean": lambda *xs: np.mean(xs, axis=0),
    "Max": lambda *xs: np.max(xs, axis=0),
    "Min": lambda *xs: np.min(xs, axis=0),
}


def distinct_inputs(n, shape, seed):
    """Inputs whose elements differ by at least 0.2 at every position, so max/min are stable under
    the finite-difference step."""
    rng = np.random.RandomState(seed)
    size = int(np.prod(shape))
    base = np.stack([rng.permutation(n) for _ in range(size)], axis=1).astype(np.float32) * 0.5
    return [(b.reshape(shape) + rng.uniform(-0.1, 0.1, shape)).astype(np.float32) for b in base]


class TestMeanMinMax(hu.HypothesisTestCase):
    @given(
        op_type=st.sampled_from(sorted(REFS)),
        n=st.integers(1, 4),
        shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
        seed=st.integers(0, 100),
        in_place=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, op_type, n, shape, seed, in_place):
        xs = distinct_inputs(n, shape, seed)
        names = ["X%d" % i for i in range(n)]
        op = core.CreateOperator(op_type, names, ["X0" if in_place else "Y"])
        self.assertReferenceChecks(CPU, op, xs, lambda *xs: [REFS[op_type](*xs)])
        if in_place and n > 1:
            return
        for i in range(n):
            self.assertGradientChecks(CPU, op, xs, i, [0])

    def test_every_op_all_inputs(self):
        xs = distinct_inputs(3, (2, 3), 7)
        for op_type, ref in REFS.items():
            op = core.CreateOperator(op_type, ["A", "B", "C"], ["Y"])
            self.assertReferenceChecks(CPU, op, xs, lambda *xs: [ref(*xs)])
            for i in range(3):
                self.assertGradientChecks(CPU, op, xs, i, [0])

    def test_gradient_ops(self):
        op = core.CreateOperator("Max", ["A", "B"], ["Y"])
        ops, g = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("MaxGradient", ["Y", "Y_grad", "A", "B"], ["A_grad", "B_grad"])],
        )
        op = core.CreateOperator("Min", ["A", "B"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops[0].type, "MinGradient")
        op = core.CreateOperator("Mean", ["A", "B", "C"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("MeanGradient", ["Y_grad"], ["A_grad", "B_grad", "C_grad"])],
        )

    def test_errors(self):
        for op_type in REFS:
            op = core.CreateOperator(op_type, ["A", "B"], ["Y"])
            self.assertRunOpRaises(
                CPU,
                op,
                [np.zeros((2, 3), np.float32), np.zeros(3, np.float32)],
                exception=RuntimeError,
                regexp=r"^\[%s\] input 1 has shape \(3,\) but input 0 has \(2, 3\)" % op_type,
            )
            self.assertRunOpRaises(
                CPU,
                op,
                [np.zeros(3, np.float32), np.zeros(3, np.float64)],
                exception=RuntimeError,
                regexp=r"^\[%s\] input 1 has type double but input 0 has float" % op_type,
            )
            self.assertRunOpRaises(
                CPU,
                op,
                [np.zeros(3, np.int32), np.zeros(3, np.int32)],
                exception=RuntimeError,
                regexp=r"^\[%s\] unsupported type int \(supported: float, double\)" % op_type,
            )


@needs_gpu
@pytest.mark.parametrize("op_type", ["Max", "Min", "Mean"])
@pytest.mark.parametrize("n_inputs,in_place", [(1, False), (2, False), (3, True)])
def test_nary(op_type, n_inputs, in_place):
    rng = np.random.RandomState(11)
    xs = [rng.randn(4, 5).astype(np.float32) for _ in range(n_inputs)]
    xs[0][0, 0] = xs[-1][0, 0]  # a tie
    names = ["x%d" % i for i in range(n_inputs)]
    op = core.CreateOperator(op_type, names, ["x0" if in_place else "y"])
    check_cpu_gpu(op, xs, rtol=1e-6, atol=1e-6)
    if not in_place:
        check_gradient_cpu_gpu(op, xs, rtol=1e-6, atol=1e-6)
    check_cpu_gpu(op, [x.astype(np.float64) for x in xs], rtol=1e-12, atol=1e-12)
