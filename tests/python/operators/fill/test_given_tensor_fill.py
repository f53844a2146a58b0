"""GivenTensorFill and its typed variants (Double, Int, Int64, Bool, String): references and a value
count that does not match the shape; device checks against the CPU kernels."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = [
    "GivenTensorFill",
    "GivenTensorDoubleFill",
    "GivenTensorBoolFill",
    "GivenTensorIntFill",
    "GivenTensorInt64Fill",
]

CPU = core.DeviceOption(0)


class TestFillers(hu.HypothesisTestCase):
    @given(values=st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=6))
    @settings(deadline=None, max_examples=10)
    def test_given_tensor_fill(self, values):
        op = core.CreateOperator("GivenTensorFill", [], ["y"], shape=[len(values)], values=values)
        self.assertReferenceChecks(CPU, op, [], lambda: [np.array(values, dtype=np.float32)])

    def test_typed_given_tensor_fills(self):
        cases = [
            ("GivenTensorDoubleFill", [1.5, 2.5], np.float64),
            ("GivenTensorIntFill", [1, -2], np.int32),
            ("GivenTensorInt64Fill", [1, 2**40], np.int64),
            ("GivenTensorBoolFill", [1, 0], np.bool_),
            ("GivenTensorStringFill", [b"a", b"bc"], object),
        ]
        for op_type, values, dtype in cases:
            workspace.RunOperatorOnce(
                core.CreateOperator(op_type, [], ["y"], shape=[2], values=values)
            )
            y = workspace.FetchBlob("y")
            self.assertEqual(y.dtype, dtype)
            self.assertEqual(list(y), list(np.array(values, dtype=dtype)))
        with self.assertRaisesRegex(RuntimeError, "'values' has 2 elements but the output"):
            workspace.RunOperatorOnce(
                core.CreateOperator("GivenTensorFill", [], ["y"], shape=[3], values=[1.0, 2.0])
            )


@needs_gpu
@pytest.mark.parametrize(
    "op_type,dtype,values",
    [
        ("GivenTensorFill", np.float32, [1.5, -2.0, 3.25, 4.0, 0.0, 7.0]),
        ("GivenTensorDoubleFill", np.float64, [1.5, -2.0, 3.25, 4.0, 0.0, 7.0]),
        ("GivenTensorIntFill", np.int32, [1, -2, 3, 4, 0, 7]),
        ("GivenTensorInt64Fill", np.int64, [1, -2, 3, 4, 0, 2**40]),
        ("GivenTensorBoolFill", np.bool_, [True, False, True, True, False, False]),
    ],
)
def test_given_tensor_fills(op_type, dtype, values):
    op = core.CreateOperator(op_type, [], ["y"], shape=[2, 3], values=values)
    out = check_cpu_gpu(op, [])
    np.testing.assert_array_equal(out[0], np.array(values, dtype=dtype).reshape(2, 3))
