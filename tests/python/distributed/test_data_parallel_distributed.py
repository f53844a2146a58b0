"""data_parallel_model across real processes (ops spec §3.7): N shards x D CPU devices joined by
Gloo, and N shards x D GPUs joined by NCCL, follow the same trajectory as one process on the same
global batch. The GPU runs skip without enough GPUs."""
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from caffe2.python import core, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
WORKER = os.path.join(HERE, "dpm_worker.py")
ITERS = 6
NUM_GPUS = workspace.NumCudaDevices()
HAS_NCCL = core.IsOperatorWithEngine("Allreduce", "NCCL")
needs_two_gpus_and_nccl = pytest.mark.skipif(
    NUM_GPUS < 2 or not HAS_NCCL, reason="needs 2 GPUs and NCCL ({} GPUs)".format(NUM_GPUS)
)


def launch(shard, num_shards, devices, kind, arg, run_id, bucket_mb=0.0, mode=""):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [
            sys.executable,
            WORKER,
            str(shard),
            str(num_shards),
            str(devices),
            kind,
            str(arg),
            run_id,
            str(ITERS),
            str(bucket_mb),
            mode,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def collect(proc):
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, "shard failed (rc {}):\n{}\n{}".format(proc.returncode, out, err)
    return json.loads([l for l in out.splitlines() if l.startswith("{")][-1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return collect(launch(0, 0, 1, "file", tmp_path_factory.mktemp("ref"), "ref"))


def check_against(reference, shards):
    # The loss of the global batch is the sum of every shard's scaled device losses.
    total = np.sum([s["losses"] for s in shards], axis=0)
    np.testing.assert_allclose(total, reference["losses"], rtol=1e-5, atol=1e-6)
    for s in shards:
        assert s["params"].keys() == reference["params"].keys()
        for name, value in reference["params"].items():
            np.testing.assert_allclose(s["params"][name], value, rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("num_shards,devices", [(2, 1), (2, 2), (3, 1)])
def test_file_store_matches_single_process(reference, tmp_path, num_shards, devices):
    run_id = uuid.uuid4().hex
    procs = [launch(s, num_shards, devices, "file", tmp_path, run_id) for s in range(num_shards)]
    check_against(reference, [collect(p) for p in procs])


@pytest.mark.parametrize("num_shards,devices", [(2, 2), (3, 1)])
def test_redis_store_matches_single_process(reference, redis_server, num_shards, devices):
    _, port = redis_server
    run_id = uuid.uuid4().hex + "/"
    procs = [launch(s, num_shards, devices, "redis", port, run_id) for s in range(num_shards)]
    check_against(reference, [collect(p) for p in procs])


def test_bucketed_gradients_match_single_process(reference, tmp_path):
    run_id = uuid.uuid4().hex
    procs = [launch(s, 2, 2, "file", tmp_path, run_id, bucket_mb=1.0) for s in range(2)]
    check_against(reference, [collect(p) for p in procs])


def test_multi_host_helpers(reference, tmp_path):
    """AddDistributedBlobSync, Synchronize, _RunComparison, FinalizeAfterCheckpoint and
    GetCheckpointParams across 3 shards x 2 devices."""
    run_id = uuid.uuid4().hex
    procs = [launch(s, 3, 2, "file", tmp_path, run_id, mode="helpers") for s in range(3)]
    shards = [collect(p) for p in procs]
    check_against(reference, shards)
    for s in shards:
        # summed over the 3 hosts once per iteration: 1 -> 3 -> 9 -> ...
        assert s["hosts_seen"] == [3.0**ITERS]
        assert s["compare_equal"] is True
        assert s["after_finalize"] == [0.0]  # shard 0, device 0's value everywhere
        assert "cpu_0/fc1_w" in s["checkpoint_params"]
        assert "optimizer_iteration" in s["checkpoint_params"]
        assert not any(p.startswith("cpu_1/") for p in s["checkpoint_params"])


@needs_two_gpus_and_nccl
def test_gpu_shards_joined_by_nccl_match_one_process_on_two_gpus(tmp_path):
    """2 processes x 1 GPU (rendezvous engine GLOO: a GPU model switches to the NCCL engine) follow
    one process on 2 GPUs (Sum tree), and FinalizeAfterCheckpoint broadcasts over NCCL."""
    reference = collect(launch(0, 0, 2, "file", tmp_path, "ref_gpu", mode="gpu"))
    run_id = uuid.uuid4().hex
    procs = [launch(s, 2, 1, "file", tmp_path, run_id, mode="gpu") for s in range(2)]
    shards = [collect(p) for p in procs]
    check_against(reference, shards)
    for s in shards:
        assert s["after_finalize"] == [1.0]  # shard 0, first GPU's value everywhere


@needs_two_gpus_and_nccl
def test_use_nccl_on_two_gpus_matches_the_sum_tree(tmp_path):
    reference = collect(launch(0, 0, 2, "file", tmp_path, "ref_gpu", mode="gpu"))
    nccl = collect(launch(0, 0, 2, "file", tmp_path, "nccl", mode="gpu,nccl"))
    check_against(reference, [nccl])
