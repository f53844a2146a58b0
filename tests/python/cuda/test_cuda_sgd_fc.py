"""Device checks of the CUDA optimizer updates (momentum, weighted sum), FC through cuBLAS and the
float/half conversions."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from cuda_test_util import check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_OPS = [
    "MomentumSGD", "MomentumSGDUpdate", "FP32MomentumSGDUpdate", "FP16MomentumSGDUpdate",
    "WeightedSum", "FC", "FCGradient", "FCTransposed", "FCTransposedGradient", "FloatToHalf",
    "HalfToFloat", "Adam", "Adagrad", "RmsProp", "UnscaleGradients", "UpdateLossScale",
    "MatMul", "BatchMatMul",
]

pytestmark = needs_gpu
HOST = caffe2_pb2.DeviceOption()


@pytest.mark.parametrize("nesterov", [0, 1])
@pytest.mark.parametrize("lr_on_host", [False, True])
def test_momentum_sgd_update(nesterov, lr_on_host):
    rng = np.random.RandomState(0)
    g, m, p = (rng.randn(37, 5).astype(np.float32) for _ in range(3))
    lr = np.array([0.1], dtype=np.float32)
    options = {"lr": HOST} if lr_on_host else {}
    op = core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"],
                             momentum=0.9, nesterov=nesterov)
    check_cpu_gpu(op, [g, m, lr, p], rtol=1e-5, atol=1e-6, input_device_options=options)
    op = core.CreateOperator("MomentumSGD", ["g", "m", "lr"], ["g2", "m2"], momentum=0.9,
                             nesterov=nesterov)
    check_cpu_gpu(op, [g, m, lr], rtol=1e-5, atol=1e-6, input_device_options=options)


@pytest.mark.parametrize("op_type,dtype,tol", [("FP32MomentumSGDUpdate", np.float32, 1e-5),
                                               ("FP16MomentumSGDUpdate", np.float16, 2e-3)])
@pytest.mark.parametrize("nesterov", [0, 1])
def test_momentum_with_weight_decay(op_type, dtype, tol, nesterov):
    rng = np.random.RandomState(1)
    g, m, p = (rng.randn(64).astype(dtype) for _ in range(3))
    lr = np.array([0.05], dtype=np.float32)
    op = core.CreateOperator(op_type, ["g", "m", "lr", "p"], ["g", "m", "p"], momentum=0.9,
                             weight_decay=1e-2, nesterov=nesterov)
    check_cpu_gpu(op, [g, m, lr, p], rtol=tol, atol=tol)


@pytest.mark.parametrize("in_place", [False, True])
def test_weighted_sum(in_place):
    rng = np.random.RandomState(2)
    x0, x1, x2 = (rng.randn(3, 11).astype(np.float32) for _ in range(3))
    w0, w1, w2 = (np.array([v], dtype=np.float32) for v in (0.5, -2.0, 3.0))
    op = core.CreateOperator("WeightedSum", ["x0", "w0", "x1", "w1", "x2", "w2"],
                             ["x0" if in_place else "y"])
    check_cpu_gpu(op, [x0, w0, x1, w1, x2, w2], rtol=1e-5, atol=1e-6,
                  input_device_options={"w1": HOST})


@pytest.mark.parametrize("with_inf", [False, True])
def test_dynamic_loss_scaling_ops(with_inf):
    rng = np.random.RandomState(8)
    g32 = (rng.randn(1000) * 1024).astype(np.float32)
    g16 = (rng.randn(7, 9) * 64).astype(np.float16)
    if with_inf:
        g16[3, 4] = np.inf
    s = np.array([1024.0], np.float32)
    out = check_cpu_gpu(core.CreateOperator("UnscaleGradients", ["s", "g32", "g16"],
                                            ["g32", "g16", "found"]), [s, g32, g16],
                        rtol=1e-3, atol=1e-3)
    assert out[2].tolist() == [with_inf]
    for found in (False, True):
        check_cpu_gpu(core.CreateOperator("UpdateLossScale", ["s", "good", "found"],
                                          ["s", "good"], growth_interval=2),
                      [s, np.array([1], np.int64), np.array([found])], rtol=0, atol=0)
    g, m, p = (rng.randn(50).astype(np.float16) for _ in range(3))
    check_cpu_gpu(core.CreateOperator("FP16MomentumSGDUpdate", ["g", "m", "lr", "p", "skip"],
                                      ["g", "m", "p"], momentum=0.9),
                  [g, m, np.array([0.1], np.float32), p, np.array([with_inf])],
                  rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("lr_on_host", [False, True])
def test_adaptive_updates_in_place(lr_on_host):
    rng = np.random.RandomState(7)
    p, m1, g = (rng.randn(300).astype(np.float32) for _ in range(3))
    m2 = rng.rand(300).astype(np.float32)
    lr = np.array([-0.01], np.float32)
    it = np.array([41], np.int64)
    host = {"lr": HOST} if lr_on_host else {}
    check_cpu_gpu(core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"],
                                      ["p", "m1", "m2"], beta1=0.8, epsilon=1e-4),
                  [p, m1, m2, g, lr, it], rtol=1e-5, atol=1e-6,
                  input_device_options=dict(host, it=HOST))
    check_cpu_gpu(core.CreateOperator("Adagrad", ["p", "m2", "g", "lr"], ["p", "m2"],
                                      decay=0.9),
                  [p, m2, g, lr], rtol=1e-5, atol=1e-6, input_device_options=host)
    check_cpu_gpu(core.CreateOperator("RmsProp", ["g", "m2", "m1", "lr"], ["g", "m2", "m1"],
                                      momentum=0.5),
                  [g, m2, m1, lr], rtol=1e-5, atol=1e-6, input_device_options=host)


@pytest.mark.parametrize("op_type", ["FC", "FCTransposed"])
@pytest.mark.parametrize("x_shape,axis", [((5, 7), 1), ((2, 3, 4, 2), 1), ((2, 3, 4), 2),
                                          ((1, 1), 1)])
def test_fc_forward_and_gradient(op_type, x_shape, axis):
    rng = np.random.RandomState(3)
    x = rng.randn(*x_shape).astype(np.float32)
    k = int(np.prod(x_shape[axis:]))
    n = 6
    w = rng.randn(*((k, n) if op_type == "FCTransposed" else (n, k))).astype(np.float32)
    b = rng.randn(n).astype(np.float32)
    op = core.CreateOperator(op_type, ["x", "w", "b"], ["y"], axis=axis)
    check_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-4)


def test_large_fc_matches_cpu():
    rng = np.random.RandomState(4)
    x = rng.randn(64, 2048).astype(np.float32)
    w = (rng.randn(1000, 2048) * 0.01).astype(np.float32)
    b = rng.randn(1000).astype(np.float32)
    op = core.CreateOperator("FC", ["x", "w", "b"], ["y"])
    check_cpu_gpu(op, [x, w, b], rtol=1e-4, atol=1e-4)
    check_gradient_cpu_gpu(op, [x, w, b], rtol=1e-3, atol=1e-3)


def test_float_half_round_trip():
    x = np.random.RandomState(5).randn(1000).astype(np.float32) * 100
    out = check_cpu_gpu(core.CreateOperator("FloatToHalf", ["x"], ["h"]), [x], rtol=0, atol=0)
    assert out[0].dtype == np.float16
    np.testing.assert_array_equal(out[0], x.astype(np.float16))
    check_cpu_gpu(core.CreateOperator("HalfToFloat", ["h"], ["y"]), [out[0]], rtol=0, atol=0)


@gpu_semantics
def test_float16_fc_and_gradient_match_numpy():
    """The CPU FC takes float only: float16 on the GPU is checked against numpy."""
    rng = np.random.RandomState(6)
    x = rng.randn(8, 16).astype(np.float16)
    w = (rng.randn(5, 16) * 0.2).astype(np.float16)
    b = rng.randn(5).astype(np.float16)
    dy = rng.randn(8, 5).astype(np.float16)
    workspace.ResetWorkspace()
    for name, value in (("x", x), ("w", w), ("b", b), ("dy", dy)):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(core.CreateOperator("FC", ["x", "w", "b"], ["y"],
                                                  device_option=gpu()))
    workspace.RunOperatorOnce(core.CreateOperator("FCGradient", ["x", "w", "dy"],
                                                  ["dw", "db", "dx"], device_option=gpu()))
    x32, w32, dy32 = (v.astype(np.float32) for v in (x, w, dy))
    expected = {"y": x32 @ w32.T + b.astype(np.float32), "dw": dy32.T @ x32,
                "db": dy32.sum(axis=0), "dx": dy32 @ w32}
    for name, value in expected.items():
        out = workspace.FetchBlob(name)
        assert out.dtype == np.float16, name
        np.testing.assert_allclose(out.astype(np.float32), value, rtol=1e-2, atol=2e-2,
                                   err_msg=name)


@pytest.mark.parametrize("a_shape,b_shape,args", [
    ((3, 4), (4, 5), {}), ((4, 3), (4, 5), {"trans_a": 1}), ((3, 4), (5, 4), {"trans_b": 1}),
    ((2, 3, 4), (5, 4), {"axis_a": 2, "trans_b": 1}),
])
def test_matmul(a_shape, b_shape, args):
    rng = np.random.RandomState(9)
    a, b = rng.randn(*a_shape).astype(np.float32), rng.randn(*b_shape).astype(np.float32)
    op = core.CreateOperator("MatMul", ["a", "b"], ["y"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
    check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("a_shape,b_shape,args", [
    ((5, 3, 4), (5, 4, 2), {}), ((5, 4, 3), (5, 2, 4), {"trans_a": 1, "trans_b": 1}),
    ((2, 5, 3, 4), (4, 2), {"broadcast": 1}), ((4,), (3, 4, 2), {"broadcast": 1}),
    ((2, 1, 3, 4), (3, 4, 6), {"broadcast": 1}), ((3, 4), (3,), {"broadcast": 1, "trans_a": 1}),
])
def test_batch_matmul(a_shape, b_shape, args):
    rng = np.random.RandomState(10)
    a, b = rng.randn(*a_shape).astype(np.float32), rng.randn(*b_shape).astype(np.float32)
    op = core.CreateOperator("BatchMatMul", ["a", "b"], ["y"], **args)
    check_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
    if not args.get("broadcast"):
        check_gradient_cpu_gpu(op, [a, b], rtol=1e-4, atol=1e-5)
