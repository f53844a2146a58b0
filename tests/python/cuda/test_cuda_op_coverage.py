"""Every op registered for CUDA is device-checked by a module of tests/python/cuda (its
COVERED_OPS list). Runs without a GPU: it reads the registry only."""
import importlib
import pathlib
import sys

import pytest

from cuda_test_util import gpu_module

HERE = pathlib.Path(__file__).parent

# Ops registered for CUDA that do their work on the host (I/O, stores, rendezvous), where a
# CPU-vs-GPU comparison means nothing; their own tests live beside their CPU tests.
HOST_SIDE_OPS = {
    "Checkpoint", "CreateDB", "DBReaderSkip", "Load", "Save",  # files and DB readers
    "TensorProtosDBInput",  # reads on the host, copies the batch (tests/python/io)
    "FileStoreHandlerCreate", "RedisStoreHandlerCreate",  # rendezvous stores
    # Gloo communicator types without an engine only say "give it engine='GLOO'"
    "Allgather", "Allreduce", "Barrier", "Broadcast", "CloneCommonWorld", "CreateCommonWorld",
    "DestroyCommonWorld", "ReceiveTensor", "Reduce", "ReduceScatter", "SendTensor",
    "CloneCommonWorld_ENGINE_GLOO", "CreateCommonWorld_ENGINE_GLOO",
}


def covered_ops():
    sys.path.insert(0, str(HERE))
    covered = {}
    for path in sorted(HERE.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        for op in getattr(module, "COVERED_OPS", []):
            covered.setdefault(op, path.name)
    return covered


@pytest.mark.skipif(gpu_module is None, reason="this build has no CUDA backend")
def test_every_cuda_operator_has_a_device_check():
    registered = set(gpu_module.registered_cuda_operators())
    missing = sorted(registered - set(covered_ops()) - HOST_SIDE_OPS)
    assert not missing, "CUDA ops without a device check in tests/python/cuda: {}".format(missing)


@pytest.mark.skipif(gpu_module is None, reason="this build has no CUDA backend")
def test_covered_ops_are_registered_for_cuda():
    registered = set(gpu_module.registered_cuda_operators())
    stale = {op: where for op, where in covered_ops().items() if op not in registered}
    assert not stale, "listed as covered but not registered for CUDA: {}".format(stale)
