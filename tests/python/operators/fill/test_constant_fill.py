"""ConstantFill: output types, the shape from an input, extra_shape and input_as_shape, and the
shape rules."""
import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestFillers(hu.HypothesisTestCase):
    def test_constant_fill_types(self):
        for value, dtype, expected in [
            (2.5, None, np.float32),
            (3, None, np.int64),
            (1, core.DataType.INT32, np.int32),
            (1.0, core.DataType.DOUBLE, np.float64),
            (1, core.DataType.BOOL, np.bool_),
            (7, core.DataType.UINT8, np.uint8),
        ]:
            kwargs = {"shape": [2, 3], "value": value}
            if dtype is not None:
                kwargs["dtype"] = dtype
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["y"], **kwargs))
            y = workspace.FetchBlob("y")
            self.assertEqual(y.dtype, expected)
            np.testing.assert_array_equal(y, np.full((2, 3), value, dtype=expected))

    def test_constant_fill_from_input_shape_and_extra_shape(self):
        workspace.FeedBlob("like", np.zeros((2, 4), np.float32))
        workspace.RunOperatorOnce(
            core.CreateOperator("ConstantFill", ["like"], ["y"], value=1.0, extra_shape=[3])
        )
        self.assertEqual(workspace.FetchBlob("y").shape, (2, 4, 3))
        workspace.FeedBlob("shape", np.array([5, 2], dtype=np.int64))
        workspace.RunOperatorOnce(
            core.CreateOperator("ConstantFill", ["shape"], ["z"], value=1.0, input_as_shape=1)
        )
        self.assertEqual(workspace.FetchBlob("z").shape, (5, 2))
        workspace.RunOperatorOnce(
            core.CreateOperator("ConstantFill", [], ["s"], shape=[], value=4.0)
        )
        self.assertEqual(workspace.FetchBlob("s").shape, ())

    def test_filler_shape_rules_are_enforced(self):
        workspace.FeedBlob("like", np.zeros(2, np.float32))
        with self.assertRaisesRegex(
            RuntimeError, r"^\[ConstantFill\] 'shape' cannot be given together"
        ):
            workspace.RunOperatorOnce(
                core.CreateOperator("ConstantFill", ["like"], ["y"], shape=[2])
            )
        with self.assertRaisesRegex(RuntimeError, "extra_shape"):
            workspace.RunOperatorOnce(
                core.CreateOperator("ConstantFill", [], ["y"], extra_shape=[2])
            )
        with self.assertRaisesRegex(RuntimeError, "list of ints"):
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["y"], shape=3))
