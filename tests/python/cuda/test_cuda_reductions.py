"""Device checks of the CUDA reductions (operators/common/reduce_cuda.cuh and its users):
ReduceFront/Back Sum/Mean and gradients, SumElements, SumSqrElements, SumReduceLike, DivGradient,
ChannelStats and ChannelBackpropStats, over the shapes and arguments their kernels distinguish."""
import numpy as np
import pytest

from caffe2.python import core

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_OPS = [
    "ReduceFrontSum", "ReduceFrontMean", "ReduceBackSum", "ReduceBackMean",
    "ReduceFrontSumGradient", "ReduceFrontMeanGradient", "ReduceBackSumGradient",
    "ReduceBackMeanGradient", "SumElements", "SumElementsGradient", "SumSqrElements",
    "SumReduceLike", "DivGradient", "ChannelStats", "ChannelBackpropStats", "ReduceSum",
    "ReduceMean",
]
pytestmark = needs_gpu
R = np.random.RandomState(0)


@pytest.mark.parametrize("op_type", ["ReduceFrontSum", "ReduceFrontMean", "ReduceBackSum",
                                     "ReduceBackMean"])
@pytest.mark.parametrize("shape,num_reduce_dim", [((4, 3, 5), 1), ((4, 3, 5), 2), ((7,), 1),
                                                  ((300, 700), 1), ((2, 0, 3), 1)])
def test_reduce_front_back(op_type, shape, num_reduce_dim):
    x = R.randn(*shape).astype(np.float32)
    op = core.CreateOperator(op_type, ["x"], ["y"], num_reduce_dim=num_reduce_dim)
    check_cpu_gpu(op, [x], rtol=1e-4, atol=1e-4)
    if 0 not in shape:
        check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", ["ReduceFrontSum", "ReduceBackMean"])
def test_reduce_with_lengths_runs_the_cpu_kernel(op_type):
    x = R.randn(4, 3).astype(np.float32)
    lengths = np.array([2, 0, 4] if op_type.startswith("ReduceFront") else [1, 3, 0, 2],
                       np.int32)
    op = core.CreateOperator(op_type, ["x", "lengths"], ["y"])
    check_cpu_gpu(op, [x, lengths], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n,average", [(1, False), (1000, True), (3 * 10 ** 6, False)])
def test_sum_elements(n, average):
    x = R.randn(n).astype(np.float32)
    op = core.CreateOperator("SumElements", ["x"], ["y"], average=average)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-4)
    if n <= 1000:
        check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("average", [False, True])
def test_sum_sqr_elements(dtype, average):
    x = R.randn(5000).astype(dtype)
    check_cpu_gpu(core.CreateOperator("SumSqrElements", ["x"], ["y"], average=average), [x],
                  rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("b_shape,args", [
    ((4, 5), {}), ((3, 4), {"axis": 1}), ((3,), {"axis_str": "C", "order": "NCHW"}),
    ((1,), {}), ((2, 3, 4, 5), {}),
])
def test_sum_reduce_like(dtype, b_shape, args):
    a = (R.randn(2, 3, 4, 5) * 10).astype(dtype)
    b = np.zeros(b_shape, dtype)
    check_cpu_gpu(core.CreateOperator("SumReduceLike", ["a", "b"], ["c"], **args), [a, b],
                  rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_div_gradient(dtype):
    b = (R.rand(6, 7) + 0.5).astype(dtype)
    c, dc = R.randn(6, 7).astype(dtype), R.randn(6, 7).astype(dtype)
    check_cpu_gpu(core.CreateOperator("DivGradient", ["b", "c", "dc"], ["da", "db"]), [b, c, dc],
                  rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("order,shape", [("NCHW", (2, 3, 4, 5)), ("NHWC", (2, 4, 5, 3)),
                                         ("NCHW", (3, 8, 7)), ("NHWC", (2, 2, 3, 4, 6))])
def test_channel_stats(order, shape):
    x = R.randn(*shape).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("ChannelStats", ["x"], ["sum", "sumsq"], order=order), [x],
                  rtol=1e-5, atol=1e-4)
    c = shape[1] if order == "NCHW" else shape[-1]
    mean, inv_std = R.randn(c).astype(np.float32), (R.rand(c) + 0.5).astype(np.float32)
    dy = R.randn(*shape).astype(np.float32)
    check_cpu_gpu(core.CreateOperator("ChannelBackpropStats", ["x", "mean", "inv_std", "dy"],
                                      ["dscale", "dbias"], order=order), [x, mean, inv_std, dy],
                  rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean"])
@pytest.mark.parametrize("axes,keepdims", [([], 1), ([0], 0), ([1, 2], 1), ([0, 2], 0),
                                           ([-1], 1), ([3, 1], 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_over_axes(op_type, axes, keepdims, dtype):
    x = R.randn(3, 4, 5, 6).astype(dtype)
    op = core.CreateOperator(op_type, ["x"], ["y"], axes=axes, keepdims=keepdims)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-5)
