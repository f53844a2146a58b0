"""FP16MomentumSGDUpdate / FP32MomentumSGDUpdate on the CPU against numpy, and device checks of the
CUDA kernels (weight decay, nesterov) against the CPU kernels."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["FP32MomentumSGDUpdate", "FP16MomentumSGDUpdate"]


def reference(g, m, lr, p, momentum, weight_decay, nesterov):
    g, m, p = (v.astype(np.float32) for v in (g, m, p))
    g = g + weight_decay * p
    if nesterov:
        m_new = momentum * m + lr * g
        step = (1 + momentum) * m_new - momentum * m
    else:
        step = lr * g + momentum * m
        m_new = step
    return step, m_new, p - step


@pytest.mark.parametrize(
    "op_type,dtype", [("FP32MomentumSGDUpdate", np.float32), ("FP16MomentumSGDUpdate", np.float16)]
)
@pytest.mark.parametrize("nesterov", [0, 1])
def test_matches_numpy(op_type, dtype, nesterov):
    rng = np.random.RandomState(0)
    g, m, p = (rng.randn(5, 7).astype(dtype) for _ in range(3))
    lr = np.array([0.1], dtype=np.float32)
    workspace.ResetWorkspace()
    for name, value in zip("gmlp", (g, m, lr, p)):
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(
        core.CreateOperator(
            op_type,
            ["g", "m", "l", "p"],
            ["g", "m", "p"],
            momentum=0.9,
            weight_decay=0.01,
            nesterov=nesterov,
        )
    )
    tol = 2e-3 if dtype == np.float16 else 1e-6
    for name, expected in zip("gmp", reference(g, m, 0.1, p, 0.9, 0.01, nesterov)):
        out = workspace.FetchBlob(name)
        assert out.dtype == dtype
        np.testing.assert_allclose(out.astype(np.float32), expected, rtol=tol, atol=tol)


def test_rejects_mixed_types():
    workspace.ResetWorkspace()
    workspace.FeedBlob("g", np.ones(3, np.float32))
    workspace.FeedBlob("m", np.ones(3, np.float16))
    workspace.FeedBlob("l", np.ones(1, np.float32))
    workspace.FeedBlob("p", np.ones(3, np.float16))
    with pytest.raises(
        RuntimeError,
        match=r"FP16MomentumSGDUpdate.*input 0 \('g'\) must be a \S*" r"float16 tensor",
    ):
        workspace.RunOperatorOnce(
            core.CreateOperator("FP16MomentumSGDUpdate", ["g", "m", "l", "p"], ["g", "m", "p"])
        )


@needs_gpu
@pytest.mark.parametrize(
    "op_type,dtype,tol",
    [("FP32MomentumSGDUpdate", np.float32, 1e-5), ("FP16MomentumSGDUpdate", np.float16, 2e-3)],
)
@pytest.mark.parametrize("nesterov", [0, 1])
def test_momentum_with_weight_decay(op_type, dtype, tol, nesterov):
    rng = np.random.RandomState(1)
    g, m, p = (rng.randn(64).astype(dtype) for _ in range(3))
    lr = np.array([0.05], dtype=np.float32)
    op = core.CreateOperator(
        op_type,
        ["g", "m", "lr", "p"],
        ["g", "m", "p"],
        momentum=0.9,
        weight_decay=1e-2,
        nesterov=nesterov,
    )
    check_cpu_gpu(op, [g, m, lr, p], rtol=tol, atol=tol)
