"""resnet50_trainer.py with hybrid parallelism (--model vgg --model_parallel_fc fc6,fc7,fc8): two
CPU shards train the small VGG-style net on the small Fashion-MNIST LMDB with fc6-fc8 split across
the shards, start where pure data parallelism starts (same seed, same batches), keep only whole
checkpoints, and a run stopped after an epoch resumes from the checkpoint and the shards' parts to
the bits of an uninterrupted one."""
import os
import subprocess
import uuid

import numpy as np

from resnet50_test_util import env, shard_cmd

HYBRID = ["--model_parallel_fc", "fc6,fc7,fc8"]


def run_two_shards(dbs, store, *extra):
    """Both shards of one run, to the end; returns their outputs (fails with them otherwise)."""
    store.mkdir(exist_ok=True)
    run_id = uuid.uuid4().hex
    flags = ["--model", "vgg", "--fc_width", "32", "--seed", "7", "--print_every", "4"]
    flags += ["--params_npz", str(store / "params_{shard_id}.npz")] + list(extra)
    procs = []
    for shard in range(2):
        cmd = shard_cmd(dbs, store, shard, 2, run_id, *flags)
        out = open(str(store / "shard{}.out".format(shard)), "a")
        procs.append((subprocess.Popen(cmd, env=env(), stdout=out, stderr=subprocess.STDOUT), out))
    outputs = []
    for proc, out in procs:
        code = proc.wait(timeout=600)
        out.close()
        with open(out.name) as f:
            outputs.append(f.read())
        assert code == 0, outputs[-1][-4000:]
    return outputs


def gathered(store, split=True):
    """Every parameter and momentum: the split ones joined from both shards' slices."""
    parts = [np.load(str(store / "params_{}.npz".format(s))) for s in range(2)]
    out = {}
    for name in parts[0].files:
        if split and name.split("_")[0] in ("fc6", "fc7", "fc8"):
            out[name] = np.concatenate([p[name] for p in parts])
        else:
            out[name] = parts[0][name]
    return out


def metrics_losses(store, shard):
    (path,) = [p for p in os.listdir(str(store)) if p.endswith("shard{}.metrics.csv".format(shard))]
    with open(str(store / path)) as f:
        rows = f.read().splitlines()[1:]
    return [float(row.split(",")[4]) for row in rows]


def test_hybrid_matches_data_parallel_and_resumes_to_the_same_bits(small_dbs, tmp_path):
    run_two_shards(small_dbs, tmp_path / "dp", "--num_epochs", "2")
    outputs = run_two_shards(
        small_dbs, tmp_path / "hybrid", "--num_epochs", "2", "--checkpoint_every", "3", *HYBRID
    )
    assert all("Final test accuracy" in out for out in outputs)
    dp, hybrid = gathered(tmp_path / "dp", split=False), gathered(tmp_path / "hybrid")
    assert sorted(dp) == sorted(hybrid)
    assert hybrid["fc6_w"].shape == (32, 128 * 3 * 3) and hybrid["fc8_b"].shape == (10,)
    np.testing.assert_equal(np.load(str(tmp_path / "hybrid" / "params_1.npz"))["fc8_b"].shape, (5,))
    # Data parallel and hybrid compute the same sums in other orders. The max poolings turn
    # those last-bit differences into different routes for the gradient within a few iterations
    # (a near tie in a pooling window goes the other way), so only the first iterations are
    # compared, and the runs are compared to their resumed selves bit for bit below. The exact
    # comparison with one process is tests/python/distributed/hybrid/test_hybrid_training.py.
    for shard in range(2):
        losses = [metrics_losses(tmp_path / run, shard) for run in ("dp", "hybrid")]
        assert len(losses[0]) == len(losses[1]) == 16
        np.testing.assert_allclose(losses[1][:2], losses[0][:2], rtol=1e-5)
    # the newest two checkpoints remain, each with both shards' parts
    checkpoints = sorted(f for f in os.listdir(str(tmp_path / "hybrid")) if ".mdl" in f)
    assert checkpoints == [
        "m_1.mdl",
        "m_1.mdl.part0",
        "m_1.mdl.part1",
        "m_1_it15.mdl",
        "m_1_it15.mdl.part0",
        "m_1_it15.mdl.part1",
    ]

    halves = tmp_path / "halves"
    run_two_shards(small_dbs, halves, "--num_epochs", "1", *HYBRID)
    outputs = run_two_shards(small_dbs, halves, "--num_epochs", "2", "--resume_latest", *HYBRID)
    for out in outputs:
        assert "Resuming from the newest checkpoint {}".format(halves / "m_0.mdl") in out
        assert "Resumed at epoch 1 (iteration 8)" in out
    for shard in range(2):
        a = np.load(str(tmp_path / "hybrid" / "params_{}.npz".format(shard)))
        b = np.load(str(halves / "params_{}.npz".format(shard)))
        assert sorted(a.files) == sorted(b.files)
        assert [k for k in a.files if a[k].tobytes() != b[k].tobytes()] == []


def test_a_checkpoint_missing_a_part_is_not_resumed(small_dbs, tmp_path):
    store = tmp_path / "run"
    run_two_shards(small_dbs, store, "--num_epochs", "2", "--checkpoint_every", "3", *HYBRID)
    os.remove(str(store / "m_1.mdl.part1"))  # as if shard 1 died while writing it
    outputs = run_two_shards(small_dbs, store, "--num_epochs", "2", "--resume_latest", *HYBRID)
    for out in outputs:
        assert "Resuming from the newest checkpoint {}".format(store / "m_1_it15.mdl") in out
