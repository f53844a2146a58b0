"""NCCLBroadcast (distributed/nccl/nccl_broadcast_op.cc): every root over 2 to 4 GPUs. The checks
shared with the other NCCL ops are in test_nccl_ops.py."""
import numpy as np
import pytest

from nccl_test_util import GROUP_SIZES, feed, needs_two_gpus, per_gpu, run

COVERED_CUDA_OPS = ["NCCLBroadcast"]

pytestmark = pytest.mark.device_check


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_broadcast(n):
    xs = per_gpu(n, (4, 3), seed=3)
    for root in range(n):
        names = feed(xs)
        for y in run("NCCLBroadcast", names, names, root=root):
            np.testing.assert_array_equal(y, xs[root])
