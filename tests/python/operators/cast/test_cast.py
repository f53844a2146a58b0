"""Cast, FloatToHalf, HalfToFloat: references, type names, gradients and bad input."""
import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)
T = caffe2_pb2.TensorProto
TYPES = [(T.FLOAT, np.float32), (T.DOUBLE, np.float64), (T.INT32, np.int32), (T.INT64, np.int64),
         (T.INT8, np.int8), (T.UINT8, np.uint8), (T.INT16, np.int16), (T.UINT16, np.uint16),
         (T.BOOL, np.bool_), (T.FLOAT16, np.float16)]


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
        self.assertRunOpRaises(CPU, op, [np.zeros(2, np.float32)], exception=RuntimeError,
                               regexp=r"^\[Cast\] unknown data type name 'FLOATY'")
        op = core.CreateOperator("Cast", ["X"], ["Y"], to=T.STRING)
        self.assertRunOpRaises(CPU, op, [np.zeros(2, np.float32)], exception=RuntimeError,
                               regexp="cannot cast to")


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
        self.assertRunOpRaises(CPU, op, [np.zeros(2, np.float32)], exception=RuntimeError,
                               regexp=r"^\[HalfToFloat\] expects a float16 tensor")
