"""NCCLReduceScatter (distributed/nccl/nccl_reduce_scatter_op.cc) over 2 to 4 GPUs, and an input
without one block per input refused. The checks shared with the other NCCL ops are in
test_nccl_ops.py."""
import numpy as np
import pytest

from nccl_test_util import GROUP_SIZES, blob_gpu, feed, needs_gpu, needs_two_gpus, per_gpu, run

COVERED_CUDA_OPS = ["NCCLReduceScatter"]

pytestmark = pytest.mark.device_check


@needs_gpu
def test_reduce_scatter_needs_one_block_per_input():
    names = feed([np.ones((3, 2), np.float32)])
    with pytest.raises(
        RuntimeError,
        match=r"input 0 \('x0'\) has dims \(3, 2\); its first "
        r"dimension must be the number of inputs \(1\)",
    ):
        run("NCCLReduceScatter", names, ["y"])


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_reduce_scatter(n):
    xs = per_gpu(n, (n, 2, 3), seed=6)
    names = feed(xs)
    total = np.sum(xs, axis=0)
    outs = run("NCCLReduceScatter", names, ["y{}".format(i) for i in range(n)])
    for i, y in enumerate(outs):
        assert y.shape == (2, 3) and blob_gpu("y{}".format(i)) == i
        np.testing.assert_allclose(y, total[i], rtol=1e-5, atol=1e-5)
