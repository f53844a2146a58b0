"""resnet50_trainer.py when things go wrong: a run killed (SIGKILL) after a checkpoint resumes to
the bits of an uninterrupted one, a save killed mid-write leaves no partial file behind, and a shard
killed mid-run is named by the others, none of which hangs. The training runs are in
test_resnet50_trainer.py."""
import glob
import signal
import subprocess
import sys
import time
import uuid

import pytest

from resnet50_test_util import TRAINER, env, shard_cmd


def null_cmd(store, shard, num_shards, run_id, *extra):
    """A trainer on synthetic data (--train_data null: one fixed batch, no augmentation)."""
    return [
        sys.executable,
        TRAINER,
        "--train_data",
        "null",
        "--num_shards",
        str(num_shards),
        "--shard_id",
        str(shard),
        "--run_id",
        run_id,
        "--file_store_path",
        str(store),
        "--use_cpu",
        "1",
        "--model",
        "resnet",
        "--resnet_blocks",
        "1",
        "--num_channels",
        "1",
        "--image_size",
        "28",
        "--num_labels",
        "10",
        "--batch_size",
        "8",
        "--epoch_size",
        str(80 * num_shards),
        "--base_learning_rate",
        "0.05",
        "--save_model_name",
        "m",
        "--log_dir",
        str(store),
        "--seed",
        "7",
        "--params_npz",
        str(store / "params_{shard_id}.npz"),
    ] + list(extra)


def run_null(store, num_shards, *extra):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            null_cmd(store, s, num_shards, run_id, *extra),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * num_shards, "\n".join(outs)
    return outs


def run_procs(cmds):
    procs = [
        subprocess.Popen(c, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for c in cmds
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * len(cmds), "\n".join(outs)
    return outs


def lmdb_cmd(dbs):
    """A trainer on the LMDB with ImageInput's random mirroring, seeded (--seed) for comparison."""

    def cmd(store, shard, num_shards, run_id, *extra):
        return shard_cmd(
            dbs,
            store,
            shard,
            num_shards,
            run_id,
            "--seed",
            "7",
            "--params_npz",
            str(store / "params_{shard_id}.npz"),
            *extra,
        )

    return cmd


@pytest.mark.parametrize("data", ["null", "lmdb"])
@pytest.mark.parametrize("num_shards", [1, 2])
def test_killed_run_resumes_to_the_same_bits(request, tmp_path, num_shards, data):
    """Kill a run (SIGKILL) once it has a checkpoint, resume it, and compare its parameters and
    momenta after the next epoch with those of a run that was never interrupted. With the LMDB, the
    resumed reader skips the records already read and ImageInput augments each record as before."""
    cmd = null_cmd if data == "null" else lmdb_cmd(request.getfixturevalue("small_dbs"))
    iters_per_epoch = 10 if data == "null" else 256 // (16 * num_shards)
    killed = tmp_path / "killed"
    killed.mkdir()
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            cmd(killed, s, num_shards, run_id, "--num_epochs", "1000"),
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for s in range(num_shards)
    ]
    deadline = time.time() + 120
    try:
        while not glob.glob(str(killed / "m_*.mdl")) and time.time() < deadline:
            time.sleep(0.005)
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
    saved = sorted(glob.glob(str(killed / "m_*.mdl")), key=lambda p: int(p[:-4].rsplit("_", 1)[1]))
    assert saved, "no checkpoint within 120 s"
    epoch = int(saved[-1][:-4].rsplit("_", 1)[1])
    run_id = uuid.uuid4().hex
    outs = run_procs(
        [
            cmd(
                killed,
                s,
                num_shards,
                run_id,
                "--num_epochs",
                str(epoch + 2),
                "--load_model_path",
                saved[-1],
            )
            for s in range(num_shards)
        ]
    )
    assert (
        "Resumed at epoch {} (iteration {})".format(epoch + 1, iters_per_epoch * (epoch + 1))
        in outs[0]
    )

    straight = tmp_path / "straight"
    straight.mkdir()
    run_id = uuid.uuid4().hex
    run_procs(
        [
            cmd(straight, s, num_shards, run_id, "--num_epochs", str(epoch + 2))
            for s in range(num_shards)
        ]
    )
    import numpy as np

    for shard in range(num_shards):
        a, b = np.load(killed / "params_{}.npz".format(shard)), np.load(
            straight / "params_{}.npz".format(shard)
        )
        assert sorted(a.files) == sorted(b.files)
        assert any(k.endswith("_w_momentum") for k in a.files)
        # Every parameter and momentum is the uninterrupted run's, to the bit. So are SpatialBN's
        # running statistics on shard 0. Those of other shards are their own and not checkpointed
        # (only shard 0 saves, as upstream), so with real data they restart from shard 0's.
        local = [k for k in a.files if shard > 0 and data == "lmdb" and k.endswith(("_rm", "_riv"))]
        assert [k for k in a.files if k not in local and a[k].tobytes() != b[k].tobytes()] == []


def test_interrupted_saves_leave_no_partial_files(tmp_path):
    # A partial file of a save killed mid-write (its process is gone) is removed by the next save.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "m_0.mdl.tmp{}".format(dead.pid)
    stale.write_bytes(b"partial")
    run_null(tmp_path, 1, "--num_epochs", "1")
    assert not stale.exists()
    assert glob.glob(str(tmp_path / "*.tmp*")) == []
    assert (tmp_path / "m_0.mdl").exists()


@pytest.mark.parametrize("num_shards", [2, 3])
def test_killed_shard_is_named_and_nobody_hangs(small_dbs, tmp_path, num_shards):
    run_id = uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            shard_cmd(
                small_dbs,
                tmp_path,
                s,
                num_shards,
                run_id,
                "--num_epochs",
                "1000",
                "--print_every",
                "1",
            ),
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    # wait until training runs, then kill shard 1 without warning
    deadline = time.time() + 120
    seen = ""
    while "iter 3/" not in seen:
        line = procs[0].stdout.readline()
        assert line and time.time() < deadline, seen
        seen += line
    procs[1].send_signal(signal.SIGKILL)
    t0 = time.time()
    outs = {0: seen + procs[0].communicate(timeout=120)[0]}
    for s in range(1, num_shards):
        outs[s] = procs[s].communicate(timeout=120)[0]
    assert time.time() - t0 < 60  # well inside the 30 s collective timeout + the report grace
    for s in [0] + list(range(2, num_shards)):
        out = outs[s]
        assert procs[s].returncode not in (0, None), out[-3000:]
        assert "IoError" in out and "rank 1 (host" in out and "has exited" in out, out[-3000:]
        assert "Aborted" not in out and "core dumped" not in out
