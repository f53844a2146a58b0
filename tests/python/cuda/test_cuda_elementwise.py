"""Device checks of the CUDA elementwise ops (operators/elementwise/*.cu): every op against its
CPU kernel, forward and gradient, with and without the legacy broadcast."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import (check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics,
                            needs_gpu)

UNARY_WITH_GRADIENT = {  # op -> (args, input filter)
    "Relu": ({}, None), "Sigmoid": ({}, None), "Tanh": ({}, None), "Abs": ({}, None),
    "Softplus": ({}, None), "Softsign": ({}, None), "LeakyRelu": ({"alpha": 0.2}, None),
    "Elu": ({"alpha": 0.7}, None), "Clip": ({"min": -0.3, "max": 0.4}, None),
}
UNARY_FORWARD = {
    "Exp": None, "Log": np.abs, "Sqrt": np.abs, "Sqr": None, "Negative": None,
    "Scale": None,
}
BINARY = ["Add", "Sub", "Mul", "Div"]
COMPARE = ["LT", "LE", "GT", "GE", "EQ"]
LOGICAL = ["And", "Or", "Xor"]

COVERED_OPS = (
    list(UNARY_WITH_GRADIENT) + [op + "Gradient" for op in UNARY_WITH_GRADIENT] +
    list(UNARY_FORWARD) + BINARY + COMPARE + LOGICAL +
    ["Not", "Sum", "Max", "Min", "Mean", "MaxGradient", "MinGradient", "MeanGradient", "Pow",
     "PRelu", "PReluGradient", "ElementwiseLinear", "ElementwiseLinearGradient"])

pytestmark = needs_gpu


def _away_from_kinks(x):
    """Moves values off 0 and the Clip bounds, where a gradient is not smooth."""
    x = np.where(np.abs(x) < 0.05, 0.1, x)
    for bound in (-0.3, 0.4):
        x = np.where(np.abs(x - bound) < 0.05, bound + 0.1, x)
    return x.astype(np.float32)


@pytest.mark.parametrize("op_type", sorted(UNARY_WITH_GRADIENT))
@pytest.mark.parametrize("shape", [(7,), (3, 5, 4), (1000, 33)])
def test_unary_forward_and_gradient(op_type, shape):
    args, _ = UNARY_WITH_GRADIENT[op_type]
    x = _away_from_kinks(np.random.RandomState(0).randn(*shape))
    op = core.CreateOperator(op_type, ["x"], ["y"], **args)
    check_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)
    check_gradient_cpu_gpu(op, [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", sorted(UNARY_FORWARD))
def test_unary_forward(op_type):
    x = np.random.RandomState(1).randn(4, 6).astype(np.float32)
    prepare = UNARY_FORWARD[op_type]
    if prepare is not None:
        x = prepare(x) + 0.1
    args = {"scale": 2.5} if op_type == "Scale" else {}
    check_cpu_gpu(core.CreateOperator(op_type, ["x"], ["y"], **args), [x], rtol=1e-5, atol=1e-6)
    check_cpu_gpu(core.CreateOperator(op_type, ["x"], ["y"], **args), [x.astype(np.float64)],
                  rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op_type", BINARY)
@pytest.mark.parametrize("b_shape,args", [
    ((2, 3, 4, 5), {}),
    ((4, 5), {"broadcast": 1}),
    ((3, 4), {"broadcast": 1, "axis": 1}),
    ((3,), {"broadcast": 1, "axis_str": "C", "order": "NCHW"}),
    ((1,), {"broadcast": 1}),
])
def test_binary_with_broadcast(op_type, b_shape, args):
    rng = np.random.RandomState(2)
    a = rng.randn(2, 3, 4, 5).astype(np.float32)
    b = (rng.rand(*b_shape) + 0.5).astype(np.float32)
    op = core.CreateOperator(op_type, ["a", "b"], ["c"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-5, atol=1e-6)
    if op_type != "Div" or not args:
        check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_add_mul_other_types(dtype):
    rng = np.random.RandomState(3)
    a = (rng.randn(5, 6) * 10).astype(dtype)
    b = (rng.randn(6) * 10).astype(dtype)
    for op_type in ("Add", "Sub", "Mul"):
        check_cpu_gpu(core.CreateOperator(op_type, ["a", "b"], ["c"], broadcast=1), [a, b],
                      rtol=0, atol=0)


@pytest.mark.parametrize("op_type", COMPARE)
def test_comparisons(op_type):
    rng = np.random.RandomState(4)
    a = rng.randint(-3, 3, (4, 5)).astype(np.float32)
    b = rng.randint(-3, 3, (5,)).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator(op_type, ["a", "b"], ["c"], broadcast=1), [a, b])
    assert out[0].dtype == np.bool_


@pytest.mark.parametrize("op_type", LOGICAL)
def test_logical(op_type):
    rng = np.random.RandomState(5)
    a, b = rng.rand(6, 7) > 0.5, rng.rand(6, 7) > 0.5
    check_cpu_gpu(core.CreateOperator(op_type, ["a", "b"], ["c"]), [a, b])
    check_cpu_gpu(core.CreateOperator("Not", ["a"], ["c"]), [a])


def test_in_place_add():
    a = np.random.rand(10).astype(np.float32)
    b = np.random.rand(10).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator("Add", ["a", "b"], ["a"]), [a, b])
    np.testing.assert_allclose(out[0], a + b, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n_inputs", [1, 2, 5])
def test_sum(dtype, n_inputs):
    rng = np.random.RandomState(6)
    xs = [(rng.randn(3, 7) * 4).astype(dtype) for _ in range(n_inputs)]
    names = ["x%d" % i for i in range(n_inputs)]
    check_cpu_gpu(core.CreateOperator("Sum", names, ["y"]), xs, rtol=1e-6, atol=1e-6)
    check_cpu_gpu(core.CreateOperator("Sum", names, ["x0"]), xs, rtol=1e-6, atol=1e-6)


@gpu_semantics
def test_float16_sum_matches_numpy():
    rng = np.random.RandomState(6)
    xs = [rng.randn(3, 7).astype(np.float16) for _ in range(3)]
    workspace.ResetWorkspace()
    for i, x in enumerate(xs):
        workspace.FeedBlob("x%d" % i, x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Sum", ["x0", "x1", "x2"], ["y"],
                                                  device_option=gpu()))
    y = workspace.FetchBlob("y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), sum(x.astype(np.float32) for x in xs),
                               rtol=5e-3, atol=5e-3)


def test_sum_of_an_input_fed_on_the_host():
    from caffe2.proto import caffe2_pb2
    x = np.random.rand(4).astype(np.float32)
    out = check_cpu_gpu(core.CreateOperator("Sum", ["a", "b"], ["y"]), [x, x],
                        input_device_options={"b": caffe2_pb2.DeviceOption()})
    np.testing.assert_allclose(out[0], 2 * x, rtol=1e-6)


@gpu_semantics
@pytest.mark.parametrize("op_type,reference", [
    ("Relu", lambda x: np.maximum(x, 0)),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("Tanh", np.tanh),
    ("Negative", np.negative),
])
def test_float16_unary_matches_numpy(op_type, reference):
    """The CPU ops take float types only: float16 on the GPU is checked against numpy."""
    x = np.random.RandomState(8).randn(257).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x, gpu())
    workspace.RunOperatorOnce(core.CreateOperator(op_type, ["x"], ["y"], device_option=gpu()))
    y = workspace.FetchBlob("y")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), reference(x.astype(np.float32)),
                               rtol=2e-3, atol=2e-3)


@gpu_semantics
def test_float16_add_with_broadcast_matches_numpy():
    rng = np.random.RandomState(9)
    a = rng.randn(4, 3, 5).astype(np.float16)
    b = rng.randn(3, 5).astype(np.float16)
    workspace.ResetWorkspace()
    workspace.FeedBlob("a", a, gpu())
    workspace.FeedBlob("b", b, gpu())
    workspace.RunOperatorOnce(core.CreateOperator("Add", ["a", "b"], ["c"], broadcast=1,
                                                  device_option=gpu()))
    np.testing.assert_allclose(workspace.FetchBlob("c").astype(np.float32),
                               (a.astype(np.float32) + b.astype(np.float32)), rtol=2e-3,
                               atol=2e-3)


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


@pytest.mark.parametrize("e_shape,args", [(None, {"exponent": 3.0}), (None, {"exponent": 0.5}),
                                          ((3, 4), {}), ((4,), {"broadcast": 1})])
def test_pow(e_shape, args):
    rng = np.random.RandomState(12)
    x = (rng.rand(3, 4) + 0.5).astype(np.float32)
    inputs = [x] if e_shape is None else [x, rng.randn(*e_shape).astype(np.float32)]
    op = core.CreateOperator("Pow", ["x", "e"][:len(inputs)], ["y"], **args)
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-6)
    if e_shape is None:
        check_gradient_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape,slope_shape,order", [
    ((2, 3, 4, 5), (3,), "NCHW"), ((2, 4, 5, 3), (3,), "NHWC"), ((6, 7), (1,), "NCHW"),
    ((3, 5), (5,), "NHWC"),
])
def test_prelu(x_shape, slope_shape, order):
    rng = np.random.RandomState(13)
    x = _away_from_kinks(rng.randn(*x_shape))
    slope = rng.rand(*slope_shape).astype(np.float32)
    op = core.CreateOperator("PRelu", ["x", "slope"], ["y"], order=order)
    check_cpu_gpu(op, [x, slope], rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(op, [x, slope], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape,axis", [((4, 5), 1), ((2, 3, 4), 1), ((2, 3, 4), 2),
                                          ((300, 70), 1)])
def test_elementwise_linear(x_shape, axis):
    rng = np.random.RandomState(14)
    x = rng.randn(*x_shape).astype(np.float32)
    d = int(np.prod(x_shape[axis:]))
    w, b = rng.randn(d).astype(np.float32), rng.randn(d).astype(np.float32)
    op = core.CreateOperator("ElementwiseLinear", ["x", "w", "b"], ["y"], axis=axis)
    check_cpu_gpu(op, [x, w, b], rtol=1e-6, atol=1e-6)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-5, atol=1e-5)
