"""UnscaleGradients and UpdateLossScale (dynamic loss scaling), with the skip input of
FP16MomentumSGDUpdate: device checks against the CPU kernels, with and without an Inf gradient."""
import numpy as np
import pytest

from caffe2.python import core

from device_check import check_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["UnscaleGradients", "UpdateLossScale", "FP16MomentumSGDUpdate"]


@needs_gpu
@pytest.mark.parametrize("with_inf", [False, True])
def test_dynamic_loss_scaling_ops(with_inf):
    rng = np.random.RandomState(8)
    g32 = (rng.randn(1000) * 1024).astype(np.float32)
    g16 = (rng.randn(7, 9) * 64).astype(np.float16)
    if with_inf:
        g16[3, 4] = np.inf
    s = np.array([1024.0], np.float32)
    out = check_cpu_gpu(
        core.CreateOperator("UnscaleGradients", ["s", "g32", "g16"], ["g32", "g16", "found"]),
        [s, g32, g16],
        rtol=1e-3,
        atol=1e-3,
    )
    assert out[2].tolist() == [with_inf]
    for found in (False, True):
        check_cpu_gpu(
            core.CreateOperator(
                "UpdateLossScale", ["s", "good", "found"], ["s", "good"], growth_interval=2
            ),
            [s, np.array([1], np.int64), np.array([found])],
            rtol=0,
            atol=0,
        )
    g, m, p = (rng.randn(50).astype(np.float16) for _ in range(3))
    check_cpu_gpu(
        core.CreateOperator(
            "FP16MomentumSGDUpdate", ["g", "m", "lr", "p", "skip"], ["g", "m", "p"], momentum=0.9
        ),
        [g, m, np.array([0.1], np.float32), p, np.array([with_inf])],
        rtol=2e-3,
        atol=2e-3,
    )
