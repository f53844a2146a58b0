"""Every op registered for CUDA is device-checked by some test file of tests/python (its
COVERED_CUDA_OPS list), and every op listed there is registered for CUDA. Runs without a GPU: it
reads the registry, and the lists from the files' source (ast), without importing them."""
import ast
import pathlib

import pytest

from device_check import gpu_module

TESTS = pathlib.Path(__file__).resolve().parents[1]  # tests/python

# Ops registered for CUDA that do their work on the host (I/O, stores, rendezvous), where a
# CPU-vs-GPU comparison means nothing; their own tests live beside their CPU tests.
HOST_SIDE_OPS = {
    "Checkpoint",
    "CreateDB",
    "DBReaderSkip",
    "Load",
    "Save",  # files and DB readers
    "TensorProtosDBInput",  # reads on the host, copies the batch (tests/python/operators/io)
    "FileStoreHandlerCreate",
    "RedisStoreHandlerCreate",  # rendezvous stores
    # Gloo communicator types without an engine only say "give it engine='GLOO'"
    "Allgather",
    "Allreduce",
    "Barrier",
    "Broadcast",
    "CloneCommonWorld",
    "CreateCommonWorld",
    "DestroyCommonWorld",
    "ReceiveTensor",
    "Reduce",
    "ReduceScatter",
    "SendTensor",
    "CloneCommonWorld_ENGINE_GLOO",
    "CreateCommonWorld_ENGINE_GLOO",
}


def covered_list(path):
    """The literal COVERED_CUDA_OPS list of the test file at `path`, or None."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COVERED_CUDA_OPS" for t in node.targets
        ):
            try:
                ops = ast.literal_eval(node.value)
            except ValueError:
                raise AssertionError(
                    "{}: COVERED_CUDA_OPS must be a literal list of op types".format(
                        path.relative_to(TESTS)
                    )
                )
            assert isinstance(ops, list) and all(isinstance(op, str) for op in ops), path
            return ops
    return None


def covered_ops():
    covered = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        for op in covered_list(path) or []:
            covered.setdefault(op, str(path.relative_to(TESTS)))
    return covered


def engine_of(op):
    return op.rsplit("_ENGINE_", 1)[1] if "_ENGINE_" in op else None


@pytest.mark.skipif(gpu_module is None, reason="this build has no CUDA backend")
def test_every_cuda_operator_has_a_device_check():
    registered = set(gpu_module.registered_cuda_operators())
    missing = sorted(registered - set(covered_ops()) - HOST_SIDE_OPS)
    assert not missing, "CUDA ops in no test file's COVERED_CUDA_OPS: {}".format(missing)


@pytest.mark.skipif(gpu_module is None, reason="this build has no CUDA backend")
def test_covered_ops_are_registered_for_cuda():
    registered = set(gpu_module.registered_cuda_operators())
    built_engines = {engine_of(op) for op in registered}
    # An op of an engine this build leaves out (NCCL without NCCL) cannot be registered.
    stale = {
        op: where
        for op, where in covered_ops().items()
        if op not in registered and engine_of(op) in built_engines
    }
    assert not stale, "listed as covered but not registered for CUDA: {}".format(stale)
