"""Hybrid parallelism end to end: data-parallel conv and FC layers with model-parallel FC layers
(Parallelize(..., model_parallel_fc=...)) across real processes over a file store, against one
process training the same global batch on one device; checkpoints of the split layers per shard;
a gathered single-device model for inference."""
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from caffe2.python import brew, model_helper, workspace
from caffe2.python import data_parallel_model as dpm
from caffe2.python import predictor_exporter as pred_exp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, HERE)
import hybrid_worker  # noqa: E402

ITERATIONS = 4


def run_shards(out_dir, num_shards, devices, first=0, last=ITERATIONS):
    """Runs the shards (num_shards 0: the reference) to completion; fails with their logs."""
    run_id = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    procs = []
    for shard in range(max(num_shards, 1)):
        log_path = os.path.join(out_dir, "shard{}_{}.log".format(shard, first))
        log = open(log_path, "w")
        cmd = [sys.executable, os.path.join(HERE, "hybrid_worker.py"), str(out_dir)]
        cmd += [str(num_shards), str(shard), str(devices), str(first), str(last), run_id]
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    failures = []
    for shard, (proc, log) in enumerate(procs):
        proc.wait(timeout=240)
        log.close()
        if proc.returncode != 0:
            with open(log.name) as f:
                failures.append("shard {} exited {}:\n{}".format(shard, proc.returncode, f.read()))
    return failures


def gathered(out_dir, num_shards, devices):
    """Device 0's data-parallel parameters of shard 0 and the whole split ones, joined from every
    shard's slices in global device order."""
    parts = [
        dict(np.load(os.path.join(out_dir, "params_{}.npz".format(s)))) for s in range(num_shards)
    ]
    params = {k: v for k, v in parts[0].items() if "/" not in k}
    for name in {k.split("/", 1)[1] for k in parts[0] if "/" in k}:
        slices = [p["cpu_{}/{}".format(d, name)] for p in parts for d in range(devices)]
        params[name] = np.concatenate(slices)
    return params, parts


@pytest.mark.parametrize("num_shards,devices", [(2, 1), (2, 2), (3, 1), (3, 2)])
def test_matches_one_process_with_the_global_batch(tmp_path, num_shards, devices):
    ref_dir, hyb_dir = tmp_path / "ref", tmp_path / "hybrid"
    ref_dir.mkdir()
    hyb_dir.mkdir()
    assert run_shards(ref_dir, 0, num_shards * devices) == []
    assert run_shards(hyb_dir, num_shards, devices) == []
    ref_losses = np.load(ref_dir / "losses_ref_0.npy")
    losses = sum(np.load(hyb_dir / "losses_{}_0.npy".format(s)) for s in range(num_shards))
    assert len(losses) == ITERATIONS
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, atol=1e-5)
    assert losses[-1] < losses[0]  # it trains
    ref = dict(np.load(ref_dir / "params_ref.npz"))
    params, parts = gathered(hyb_dir, num_shards, devices)
    assert sorted(params) == sorted(ref)
    for name in ref:
        np.testing.assert_allclose(params[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for part in parts[1:]:  # the data-parallel parameters agree bit for bit across shards
        for name in (k for k in part if "/" not in k):
            np.testing.assert_array_equal(part[name], parts[0][name], err_msg=name)
    for layer, width in (("fc6", 10), ("fc7", 7)):  # uneven splits: first devices one row more
        rows = [
            parts[s]["cpu_{}/{}_w".format(d, layer)].shape[0]
            for s in range(num_shards)
            for d in range(devices)
        ]
        assert rows == dpm.SplitRows(width, num_shards * devices)


def test_resume_restores_the_split_layers_of_every_shard(tmp_path):
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    whole.mkdir()
    halves.mkdir()
    assert run_shards(whole, 2, 2) == []
    assert run_shards(halves, 2, 2, first=0, last=2) == []
    assert sorted(f for f in os.listdir(halves) if f.startswith("ckpt")) == [
        "ckpt_part0.minidb",
        "ckpt_part1.minidb",
        "ckpt_shard0.minidb",
    ]
    assert run_shards(halves, 2, 2, first=2, last=ITERATIONS) == []  # new processes
    for s in range(2):
        np.testing.assert_array_equal(
            np.load(halves / "losses_{}_2.npy".format(s)),
            np.load(whole / "losses_{}_0.npy".format(s))[2:],
        )
        a = np.load(whole / "params_{}.npz".format(s))
        b = np.load(halves / "params_{}.npz".format(s))
        assert sorted(a.keys()) == sorted(b.keys())
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_a_part_from_another_layout_is_refused(tmp_path):
    assert run_shards(tmp_path, 2, 2, first=0, last=1) == []
    failures = run_shards(tmp_path, 2, 1, first=1, last=2)
    assert len(failures) == 2
    for text in failures:
        assert "was saved by shard" in text and "2 shard(s) x 2 device(s)" in text
        assert "2 shard(s) x 1 device(s)" in text


def test_gathered_parts_export_a_single_device_predictor(tmp_path):
    ref_dir, hyb_dir = tmp_path / "ref", tmp_path / "hybrid"
    ref_dir.mkdir()
    hyb_dir.mkdir()
    assert run_shards(ref_dir, 0, 4) == []
    assert run_shards(hyb_dir, 2, 2) == []
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="hybrid_predict", init_params=False)
    model.net.AddExternalInput("data")
    model.net.Softmax([hybrid_worker.build_logits(model)], ["softmax"])
    parts = [
        dpm.ReadModelParallelPart(str(hyb_dir / "ckpt_part{}.minidb".format(s))) for s in (1, 0)
    ]
    whole = dpm.GatherModelParallelParts(parts)
    with pytest.raises(ValueError, match="the parts are of shards \\[1\\]; a run of 2 shards"):
        dpm.GatherModelParallelParts(parts[:1])
    assert whole["fc6_w"].shape == (10, 48) and whole["fc7_b_momentum"].shape == (7,)
    dp = dict(np.load(hyb_dir / "params_0.npz"))
    for name in ["conv1_w", "conv1_b", "fc8_w", "fc8_b"]:
        workspace.FeedBlob(name, dp[name])
    for name in ["fc6_w", "fc6_b", "fc7_w", "fc7_b"]:
        workspace.FeedBlob(name, whole[name])
    meta = pred_exp.PredictorExportMeta(
        predict_net=model.net.Proto(),
        parameters=[str(p) for p in model.GetParams()],
        inputs=["data"],
        outputs=["softmax"],
    )
    data, _ = hybrid_worker.global_batch(99, 4)
    workspace.FeedBlob("data", data)
    workspace.RunNetOnce(model.net)
    db = str(tmp_path / "predictor.minidb")
    pred_exp.save_to_db("minidb", db, meta)
    workspace.ResetWorkspace()
    net = pred_exp.prepare_prediction_net(db, "minidb")
    workspace.FeedBlob("data", data)
    workspace.RunNet(net, 1)
    exported = workspace.FetchBlob("softmax")
    ref = dict(np.load(ref_dir / "params_ref.npz"))
    workspace.ResetWorkspace()
    for name in ["conv1_w", "conv1_b", "fc6_w", "fc6_b", "fc7_w", "fc7_b", "fc8_w", "fc8_b"]:
        workspace.FeedBlob(name, ref[name])
    workspace.FeedBlob("data", data)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(exported, workspace.FetchBlob("softmax"), rtol=1e-4, atol=1e-6)


def test_bad_layer_names_and_splits_are_refused():
    def build(layers, devices=2):
        model = model_helper.ModelHelper(name="bad_%s" % uuid.uuid4().hex[:6])
        dpm.Parallelize(
            model,
            input_builder_fun=lambda m: None,
            forward_pass_builder_fun=hybrid_worker.build_forward,
            param_update_builder_fun=lambda m: None,
            devices=list(range(devices)),
            cpu_device=True,
            model_parallel_fc=layers,
        )

    with pytest.raises(ValueError, match="no FC op writes 'cpu_0/fc9'.*fc6, fc7, fc8"):
        build(["fc9"])
    with pytest.raises(ValueError, match="'fc8' has 5 outputs, fewer than the 6 devices"):
        build(["fc8"], devices=6)
    with pytest.raises(NotImplementedError, match="CPU devices"):
        model = model_helper.ModelHelper(name="gpu_hybrid")
        dpm.Parallelize(
            model,
            input_builder_fun=lambda m: None,
            forward_pass_builder_fun=hybrid_worker.build_forward,
            param_update_builder_fun=lambda m: None,
            devices=[0],
            cpu_device=False,
            model_parallel_fc=["fc6"],
        )
    assert brew  # brew builds the workers' model
