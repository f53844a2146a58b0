"""Cast, FloatToHalf, HalfToFloat: references, type names, gradients and bad input; device checks of
every type pair, names, in place, the gradient and float16 rounding, and of the float/half round
trip."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu, values

COVERED_CUDA_OPS = ["Cast", "FloatToHalf", "HalfToFloat"]

CPU = core.DeviceOption(0)

T = caffe2_pb2.TensorProto

TYPES = [
    (T.FLOAT, np.float32),
    (T.DOUBLE, np.float64),
    (T.INT32, np.int32),
    (T.INT64, np.int64),
    (T.INT8, np.int8),
    (T.UINT8, np.uint8),
    (T.INT16, np.int16),
    (T.UINT16, np.uint16),
    (T.BOOL, np.bool_),
    (T.FLOAT16, np.float16),
]


class TestCast(hu.HypothesisTestCase):
    @given(src=st.sampled_from(TYPES), dst=st.sampled_from(TYPES), by_name=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_reference(self, src, dst, by_name):
        X = (np.arange(12).reshape(3, 4) % 7).astype(src[1])
        to = T.DataType.Name(dst[0]) if by_name else dst[0]
        op = core.CreateOperator("Cast", ["X"], ["Y"], to=to)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.astype(dst[1])])

    def test_lowercase_name_and_in_place(self):
        X = np.array([1.7, -2.2, 0.0], np.float32)
        op = core.CreateOperator("Cast", ["X"], ["X"], to="int32")
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.astype(np.int32)])

    def test_gradient(self):
        X = np.random.randn(3, 2).astype(np.float32)
        op = core.CreateOperator("Cast", ["X"], ["Y"], to=T.DOUBLE, from_type=T.FLOAT)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops[0].type, "Cast")
        args = {a.name: a.i for a in ops[0].arg}
        self.assertEqual(args, {"to": T.FLOAT, "from_type": T.DOUBLE})
        op = core.CreateOperator("Cast", ["X"], ["Y"], to="FLOAT", from_type="FLOAT")
        self.assertGradientChecks(CPU, op, [X], 0, [0])
        op = core.CreateOperator("Cast", ["X"], ["Y"], to=T.DOUBLE)
        with self.assertRaisesRegex(Exception, "needs the 'from_type' argument"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])

    def test_bad_type(self):
        op = core.CreateOperator("Cast", ["X"], ["Y"], to="FLOATY")
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(2, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[Cast\] unknown data type name 'FLOATY'",
        )
        op = core.CreateOperator("Cast", ["X"], ["Y"], to=T.STRING)
        self.assertRunOpRaises(
            CPU, op, [np.zeros(2, np.float32)], exception=RuntimeError, regexp="cannot cast to"
        )


class TestHalf(hu.HypothesisTestCase):
    @given(X=hu.tensor(min_dim=1, max_dim=3))
    @settings(deadline=None, max_examples=5)
    def test_round_trip(self, X):
        op = core.CreateOperator("FloatToHalf", ["X"], ["Y"])
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X.astype(np.float16)])
        H = X.astype(np.float16)
        op = core.CreateOperator("HalfToFloat", ["H"], ["Y"])
        self.assertReferenceChecks(CPU, op, [H], lambda H: [H.astype(np.float32)])

    def test_gradients_and_bad_input(self):
        op = core.CreateOperator("FloatToHalf", ["X"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops[0].type, "HalfToFloat")
        op = core.CreateOperator("HalfToFloat", ["X"], ["Y"])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops[0].type, "FloatToHalf")
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(2, np.float32)],
            exception=RuntimeError,
            regexp=r"^\[HalfToFloat\] expects a float16 tensor",
        )


TP = caffe2_pb2.TensorProto

ALL_TYPES = [
    np.float32,
    np.float64,
    np.float16,
    np.int32,
    np.int64,
    np.int16,
    np.int8,
    np.uint16,
    np.uint8,
    np.bool_,
]


@needs_gpu
@pytest.mark.parametrize("src", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize(
    "to",
    [
        TP.FLOAT,
        TP.DOUBLE,
        TP.FLOAT16,
        TP.INT32,
        TP.INT64,
        TP.INT16,
        TP.INT8,
        TP.UINT16,
        TP.UINT8,
        TP.BYTE,
        TP.BOOL,
    ],
    ids=lambda t: TP.DataType.Name(t),
)
def test_cast_type_pairs(src, to):
    # Values every target type holds (negatives only for signed targets: a negative value cast
    # to an unsigned type is undefined in C++ and differs between the devices).
    x = values(src, 3, 5)
    unsigned_target = to in (TP.UINT16, TP.UINT8, TP.BYTE)
    if np.issubdtype(src, np.floating):
        x[0, :4] = [0, 0.5, -0.75, 99.5]  # truncation towards zero, a false bool
        if not unsigned_target:
            x[1, 0] = -42.9
    if src in (np.int32, np.int64, np.int16, np.int8):
        x[0, :2] = [0 if unsigned_target else -3, 0]
    op = core.CreateOperator("Cast", ["x"], ["y"], to=to)
    check_cpu_gpu(op, [x], rtol=0, atol=0)


@needs_gpu
def test_cast_by_name_in_place_and_gradient():
    x = values(np.float32, 4, 5) - 50
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["x"], to="int32"), [x], rtol=0, atol=0)
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["x"], to="FLOAT16"), [x], rtol=0, atol=0)
    check_cpu_gpu(
        core.CreateOperator("Cast", ["x"], ["y"], to=TP.DOUBLE),
        [values(np.float32, 300, 257)],
        rtol=0,
        atol=0,
    )
    check_gradient_cpu_gpu(
        core.CreateOperator("Cast", ["x"], ["y"], to=TP.DOUBLE, from_type=TP.FLOAT), [x]
    )


@needs_gpu
def test_cast_float16_rounding_matches_cpu():
    # Ties, subnormals, overflow and values that round differently through double and float.
    x = np.array(
        [
            1 + 2**-11,
            1 + 3 * 2**-11,
            65504,
            65520,
            1e6,
            -1e-7,
            6e-8,
            2**-25,
            1 / 3,
            np.inf,
            -np.inf,
            np.nan,
        ],
        np.float64,
    )
    check_cpu_gpu(core.CreateOperator("Cast", ["x"], ["y"], to=TP.FLOAT16), [x], rtol=0, atol=0)
    check_cpu_gpu(
        core.CreateOperator("Cast", ["x"], ["y"], to=TP.FLOAT16),
        [x.astype(np.float32)],
        rtol=0,
        atol=0,
    )


@needs_gpu
def test_float_half_round_trip():
    x = np.random.RandomState(5).randn(1000).astype(np.float32) * 100
    out = check_cpu_gpu(core.CreateOperator("FloatToHalf", ["x"], ["h"]), [x], rtol=0, atol=0)
    assert out[0].dtype == np.float16
    np.testing.assert_array_equal(out[0], x.astype(np.float16))
    check_cpu_gpu(core.CreateOperator("HalfToFloat", ["h"], ["y"]), [out[0]], rtol=0, atol=0)
