"""Device checks of the deterministic fills together (ConstantFill, DiagonalFill, RangeFill) against
the CPU kernels. Each op's own checks are in its test_<op>.py."""
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["ConstantFill", "DiagonalFill", "RangeFill"]


@needs_gpu
@pytest.mark.parametrize(
    "op",
    [
        core.CreateOperator("ConstantFill", [], ["y"], shape=[4, 5], value=2.5),
        core.CreateOperator(
            "ConstantFill", [], ["y"], shape=[3], value=7, dtype=caffe2_pb2.TensorProto.INT64
        ),
        core.CreateOperator("DiagonalFill", [], ["y"], shape=[4, 4], value=3.0),
        core.CreateOperator("RangeFill", [], ["y"], shape=[2, 5]),
    ],
)
def test_deterministic_fills_match_cpu(op):
    check_cpu_gpu(op, [], rtol=0, atol=0)
