"""NCCLReduce (distributed/nccl/nccl_reduce_op.cc): every root over 2 to 4 GPUs, in place on input
0, and in place with another root refused. The checks shared with the other NCCL ops are in
test_nccl_ops.py."""
import numpy as np
import pytest

from nccl_test_util import GROUP_SIZES, blob_gpu, feed, needs_two_gpus, per_gpu, run

COVERED_CUDA_OPS = ["NCCLReduce"]

pytestmark = pytest.mark.device_check


@needs_two_gpus
def test_reduce_in_place_needs_root_zero():
    names = feed(per_gpu(2))
    with pytest.raises(
        RuntimeError, match=r"in place, which can hold the sum only with root 0; " r"got root 1"
    ):
        run("NCCLReduce", names, ["x0"], root=1)


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_reduce(n):
    xs = per_gpu(n, (6,), seed=4)
    for root in range(n):
        names = feed(xs)
        y = run("NCCLReduce", names, ["y"], root=root)[0]
        np.testing.assert_allclose(y, np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)
        assert blob_gpu("y") == root
    names = feed(xs)
    y = run("NCCLReduce", names, ["x0"])[0]  # in place on input 0, root 0
    np.testing.assert_allclose(y, np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)
