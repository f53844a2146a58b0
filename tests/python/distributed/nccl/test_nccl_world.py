"""NCCL common worlds and the NCCL engine of the collectives across real processes, rendezvoused
through a file store (distributed/nccl/nccl_world.h). Every process needs GPUs of its own, so these
tests skip without enough GPUs; the store half of the rendezvous is tested without a GPU by
tests/cpp/distributed/test_nccl_rendezvous.cc."""
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from caffe2.python import core, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
WORKER = os.path.join(HERE, "nccl_worker.py")

NUM_GPUS = workspace.NumCudaDevices()
HAS_NCCL = core.IsOperatorWithEngine("Allreduce", "NCCL")
pytestmark = pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL")


def needs_gpus(n):
    return pytest.mark.skipif(NUM_GPUS < n, reason="needs {} GPU(s), found {}".format(n, NUM_GPUS))


def start(scenario, rank, size, store_dir, run_id, gpus, timeout_ms=20000):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.Popen(
        [
            sys.executable,
            WORKER,
            scenario,
            str(rank),
            str(size),
            str(store_dir),
            run_id,
            str(timeout_ms),
            ",".join(str(g) for g in gpus),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    assert lines, "worker printed no result (rc {}):\n{}\n{}".format(proc.returncode, out, err)
    return proc.returncode, json.loads(lines[-1]), err


def run_processes(scenario, size, gpus_per_process, store_dir, timeout_ms=20000):
    run_id = uuid.uuid4().hex
    procs = [
        start(
            scenario,
            p,
            size,
            store_dir,
            run_id,
            list(range(p * gpus_per_process, (p + 1) * gpus_per_process)),
            timeout_ms,
        )
        for p in range(size)
    ]
    return [result(proc) for proc in procs]


@pytest.mark.parametrize(
    "size,k",
    [
        pytest.param(1, 1, marks=needs_gpus(1)),  # a world of one process on one GPU
        pytest.param(2, 1, marks=needs_gpus(2)),
        pytest.param(1, 2, marks=needs_gpus(2)),  # one process, two NCCL ranks
        pytest.param(2, 2, marks=needs_gpus(4)),
    ],
)
def test_collectives(tmp_path, size, k):
    results = run_processes("collectives", size, k, tmp_path)
    for rc, out, err in results:
        assert rc == 0, (out, err)
    n = size * k  # NCCL ranks; process p, buffer i is rank p * k + i
    arange = np.arange(5, dtype=np.float64)
    for p, (_, out, _) in enumerate(results):
        assert len(out["allreduce"]) == k
        for i in range(k):
            np.testing.assert_allclose(out["allreduce"][i], arange * n * (n + 1) / 2)
            np.testing.assert_allclose(out["allreduce_again"][i], arange * n * n * (n + 1) / 2)
            np.testing.assert_allclose(out["allreduce_half"][i], [n * n / 2.0] * 4, rtol=1e-3)
            root_rank = (size - 1) * k
            assert out["broadcast"][i] == [10 * root_rank, 10 * root_rank + 1]
            column = np.arange(2 * size) * n + n * (n - 1) / 2.0
            np.testing.assert_allclose(out["reduce_scatter"][i], column[2 * p : 2 * p + 2])
            assert out["clone_allreduce"][i] == [n * (n - 1) / 2.0]
        gathered = []
        for r in range(n):
            gathered += [r, 100 + r]
        assert out["allgather"] == gathered
        assert out["status_created"]


@needs_gpus(1)
def test_missing_process_times_out_naming_it(tmp_path):
    rc, out, _ = result(start("rendezvous", 0, 2, tmp_path, "lonely", [0], timeout_ms=1500))
    assert rc == 3
    assert out["error_type"].endswith("StoreHandlerTimeoutError"), out
    assert "NCCL rendezvous 'cw_op': rank(s) 1 of 2 never arrived" in out["error"]
    assert "--run_id" in out["error"]
    assert out["status"] == [1]


@needs_gpus(1)
def test_two_processes_on_one_gpu_are_refused(tmp_path):
    run_id = uuid.uuid4().hex
    procs = [start("rendezvous", p, 2, tmp_path, run_id, [0], timeout_ms=10000) for p in range(2)]
    for rc, out, _ in [result(p) for p in procs]:
        assert rc == 3, out
        assert "is used by rank 0" in out["error"] and "and by rank 1" in out["error"], out
        assert "give the shards on one host different GPUs" in out["error"]


@needs_gpus(2)
def test_dead_peer_stops_the_others(tmp_path):
    """Process 1 exits after the first allreduce: process 0's next allreduce fails (by the
    deadline at the latest) instead of hanging, with an IoError naming the world, and sets the
    status blob."""
    results = run_processes("dead_peer", 2, 1, tmp_path, timeout_ms=5000)
    (rc0, out0, err0), (rc1, out1, _) = results
    assert rc1 == 0 and out1 == {"exited": True}
    assert rc0 == 3, (out0, err0)
    assert out0["error_type"] == "gloo.python.IoError", out0
    assert "Allreduce" in out0["error"] and "common world 'cw_op'" in out0["error"], out0
    # the deadline passed, or NCCL (or, over peer GPU memory, CUDA) saw the peer go
    assert any(
        what in out0["error"]
        for what in ("did not finish within 5000 ms", "NCCL error", "CUDA error")
    ), out0
    assert "communicators were aborted" in out0["error"]
    assert out0["status"] == [1]
