"""resnet50_trainer.py as users run it: shards as real processes joined through a file store (or
Redis), on a small Fashion-MNIST Datum LMDB: checkpoints by shard 0 only and resuming, shards that
stay bitwise equal, the main job's launcher, and training on GPUs (skipped without them). Flag
parsing is checked in test_resnet50_trainer_flags.py, killed runs and shards in
test_resnet50_trainer_faults.py."""
import csv
import glob
import json
import os
import subprocess
import sys
import uuid

import pytest

from resnet50_test_util import DATA_DIR, ROOT, env, shard_cmd


def run_shards(dbs, store, num_shards, *extra):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(dbs, store, s, num_shards, run_id, *extra),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    return [p.returncode for p in procs], outs


def metrics_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def checkpoint_blobs(path):
    """Every blob of a checkpoint, loaded here (not in the trainer's process)."""
    import numpy as np
    from caffe2.python import core, workspace

    previous = workspace.CurrentWorkspace()
    workspace.SwitchWorkspace("checkpoint_check", True)
    try:
        workspace.ResetWorkspace()
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "Load", [], [], db=path, db_type="minidb", load_all=1, absolute_path=1
            )
        )
        return {
            b: workspace.FetchBlob(b)
            for b in workspace.Blobs()
            if isinstance(workspace.FetchBlob(b), np.ndarray)
        }
    finally:
        workspace.SwitchWorkspace(previous)


def test_two_shards_train_checkpoint_and_resume(small_dbs, tmp_path):
    codes, outs = run_shards(
        small_dbs,
        tmp_path,
        2,
        "--num_epochs",
        "2",
        "--params_npz",
        str(tmp_path / "params_{shard_id}.npz"),
    )
    assert codes == [0, 0], "\n".join(outs)
    # The checkpoint holds every weight and momentum (not only SpatialBN's statistics), equal to the
    # trainer's own values at the end of the run.
    import numpy as np

    saved = checkpoint_blobs(str(tmp_path / "m_1.mdl"))
    final = np.load(tmp_path / "params_0.npz")
    for name in final.files:
        assert saved["cpu_0/" + name].tobytes() == final[name].tobytes(), name
    assert "cpu_0/conv1_w" in saved and "cpu_0/conv1_w_momentum" in saved
    assert saved["optimizer_iteration"].reshape(-1)[0] == 16
    for out in outs:
        assert "epoch 2/2 iter 8/8 |" in out
        assert "Final test accuracy" in out
    # shard 0 alone saves, and only the last epoch's checkpoint is kept
    assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "*.mdl"))) == ["m_1.mdl"]
    assert "Saved checkpoint" in outs[0] and "Saved checkpoint" not in outs[1]
    # upstream's per-epoch log (both shards' in the same file when they start in the same second,
    # as upstream): every row counts this epoch's 128 images of its shard, at a rate above 0
    rows = []
    for log in glob.glob(str(tmp_path / "*.log")):
        with open(log) as f:
            lines = f.read().splitlines()
        assert lines[0].startswith("# Namespace(")
        header = next(line.split(",") for line in lines if line.startswith("time_spent,"))
        assert header[-1] == "test_accuracy"
        rows += [dict(zip(header, line.split(","))) for line in lines if line[:1].isdigit()]
    assert len(rows) == 4
    assert {(r["input_count"], r["cumulative_input_count"]) for r in rows} == {
        ("128", "128"),
        ("128", "256"),
    }
    assert all(float(r["inputs_per_sec"]) > 0 for r in rows)
    # the per-iteration metrics log and the arguments of each shard
    name = str(tmp_path / "resnet50_gpu1_b16_L10_lr0.05_v2_shard{}")
    for shard in (0, 1):
        rows = metrics_rows(name.format(shard) + ".metrics.csv")
        assert [r["global_iteration"] for r in rows] == [str(g) for g in range(1, 17)]
        assert {r["shard"] for r in rows} == {str(shard)}
        assert [g for g, r in enumerate(rows, 1) if r["test_accuracy"]] == [8, 16]
        with open(name.format(shard) + ".args.json") as f:
            assert json.load(f)["num_epochs"] == 2
    # resuming continues with the next epoch and the saved iteration counter
    codes, outs = run_shards(
        small_dbs, tmp_path, 2, "--num_epochs", "3", "--load_model_path", str(tmp_path / "m_1.mdl")
    )
    assert codes == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Resumed at epoch 2 (iteration 16)" in out
        assert "Reader advanced past 256 records" in out
        assert "epoch 3/3 iter 8/8 |" in out and "epoch 1/3 iter" not in out
    # the metrics logs go on
    for shard in (0, 1):
        rows = metrics_rows(name.format(shard) + ".metrics.csv")
        assert [r["global_iteration"] for r in rows] == [str(g) for g in range(1, 25)]


def test_two_shards_stay_bitwise_equal_for_20_steps(small_dbs, tmp_path):
    # The main job's model and flags; 20 iterations of a global batch of 32 (docs/determinism.md).
    # Each shard runs 2 kernel threads here, so the processes compete for the cores.
    npz = str(tmp_path / "params_{shard_id}.npz")
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(
                small_dbs,
                tmp_path,
                s,
                2,
                run_id,
                "--num_epochs",
                "1",
                "--epoch_size",
                "640",
                "--bucket_size_mb",
                "4",
                "--params_npz",
                npz,
            ),
            env=dict(env(), OMP_NUM_THREADS="2"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(2)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outs)
    for out in outs:
        assert "epoch 1/1 iter 20/20 |" in out
    import numpy as np

    a, b = np.load(npz.format(shard_id=0)), np.load(npz.format(shard_id=1))
    assert sorted(a.files) == sorted(b.files)
    assert any(k.endswith("_momentum") for k in a.files) and any(k.endswith("_rm") for k in a.files)
    # SpatialBN's running statistics are each shard's own (computed on its data, as upstream), so
    # they differ; every parameter and momentum is the same to the bit.
    local = [k for k in a.files if k.endswith("_rm") or k.endswith("_riv")]
    assert [k for k in a.files if k not in local and a[k].tobytes() != b[k].tobytes()] == []
    assert all(np.abs(a[k]).max() > 0 for k in a.files if k.endswith("_w_momentum"))  # it trained


def test_main_job_launcher_runs_two_shards(tmp_path):
    if not os.path.exists(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST (Debian dataset-fashion-mnist) is not installed")
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "distributed_fashion_mnist.py"),
            "--data_dir",
            str(tmp_path / "data"),
            "--data_limit",
            "256",
            "--epoch_size",
            "256",
            "--epochs",
            "1",
            "--batch_size",
            "16",
            "--work_dir",
            str(tmp_path / "work"),
            "--print_every",
            "1",
        ],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "[shard 0] epoch 1/1 iter 8/8 |" in out
    assert "[shard 1] epoch 1/1 iter 8/8 |" in out
    assert "shard 0: test accuracy" in out and "shard 1: test accuracy" in out
    assert "checkpoints: fashion_resnet_0.mdl" in out
    # the plot of both shards' metrics
    png = str(tmp_path / "work" / "fashion_resnet.png")
    assert "plot: {}\n".format(png) in out
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_redis_rendezvous_with_two_devices_per_shard(small_dbs, tmp_path, redis_server):
    host, port = redis_server
    codes, outs = run_shards(
        small_dbs,
        tmp_path,
        2,
        "--num_epochs",
        "1",
        "--num_gpus",
        "2",
        "--redis_host",
        host,
        "--redis_port",
        str(port),
    )
    assert codes == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Running on devices: [0, 1]" in out
        assert "epoch 1/1 iter 8/8 |" in out and "Final test accuracy" in out


# ---- on GPUs (skip without them) ----


def _num_gpus():
    from caffe2.python import workspace

    return workspace.NumCudaDevices() if workspace.has_gpu_support else 0


def gpu_cmd(dbs, store, shard, num_shards, run_id, *extra):
    cmd = shard_cmd(dbs, store, shard, num_shards, run_id, *extra)
    i = cmd.index("--use_cpu")
    return cmd[:i] + cmd[i + 2 :]


@pytest.mark.skipif(_num_gpus() < 1, reason="no GPU")
@pytest.mark.parametrize(
    "flags",
    [
        ["--dtype", "float"],
        ["--dtype", "float16"],
        ["--dtype", "float16", "--float16_compute", "--dynamic_loss_scale"],
    ],
)
def test_trains_on_a_gpu(small_dbs, tmp_path, flags):
    """cuDNN convolutions, the GPU image transform, fp16 data and fp16 compute with
    FP16MomentumSGDUpdate and dynamic loss scaling."""
    cmd = gpu_cmd(small_dbs, tmp_path, 0, 1, uuid.uuid4().hex, "--num_epochs", "2", *flags)
    out = subprocess.run(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout
    assert "epoch 2/2 iter 16/16 |" in out.stdout
    assert "Final test accuracy" in out.stdout


@pytest.mark.skipif(_num_gpus() < 2, reason="fewer than 2 GPUs")
def test_two_gpu_shards_join_through_nccl(small_dbs, tmp_path):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            gpu_cmd(small_dbs, tmp_path, s, 2, run_id, "--num_epochs", "1"),
            env=dict(env(), CUDA_VISIBLE_DEVICES=str(s)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(2)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outs)
    for out in outs:
        assert "Final test accuracy" in out
