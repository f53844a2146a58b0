"""NCCLAllGather (distributed/nccl/nccl_all_gather_op.cc) over 2 to 4 GPUs. The checks shared with
the other NCCL ops are in test_nccl_ops.py."""
import numpy as np
import pytest

from nccl_test_util import GROUP_SIZES, blob_gpu, feed, needs_two_gpus, per_gpu, run

COVERED_CUDA_OPS = ["NCCLAllGather"]

pytestmark = pytest.mark.device_check


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_all_gather(n):
    xs = per_gpu(n, (2, 3), np.int32, seed=5)
    names = feed(xs)
    for i, y in enumerate(run("NCCLAllGather", names, ["y{}".format(i) for i in range(n)])):
        assert y.shape == (n, 2, 3) and blob_gpu("y{}".format(i)) == i
        np.testing.assert_array_equal(y, np.stack(xs))
