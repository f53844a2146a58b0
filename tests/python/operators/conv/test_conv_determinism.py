"""Same inputs, same outputs, across processes (docs/determinism.md): a CNN's forward, backward and
SGD steps in two fresh processes, one with the other core kept busy, are bitwise equal; a process
given the autotune cache of a tuning process (exhaustive search) computes bitwise what it computed,
without timing; and a Predictor loaded in a fresh process with that cache reproduces the tuning
process's predictions. Runs determinism_worker.py as real processes."""
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
WORKER = os.path.join(HERE, "determinism_worker.py")


def run_worker(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run(
        [sys.executable, WORKER] + [str(a) for a in args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stderr


def assert_bitwise_equal(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    assert sorted(a.files) == sorted(b.files)
    differ = [k for k in a.files if a[k].tobytes() != b[k].tobytes()]
    assert differ == [], "differ: %s" % differ


def busy_core():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def test_two_processes_are_bitwise_equal_one_of_them_under_load(tmp_path):
    quiet, loaded = tmp_path / "quiet", tmp_path / "loaded"
    quiet.mkdir()
    loaded.mkdir()
    run_worker("train", quiet)
    spinner = busy_core()
    try:
        run_worker("train", loaded)
    finally:
        spinner.kill()
        spinner.wait()
    assert_bitwise_equal(quiet / "train.npz", loaded / "train.npz")
    assert len(np.load(quiet / "train.npz").files) > 30  # activations, gradients, params, momenta
    np.testing.assert_array_equal(
        np.load(quiet / "predict_train.npy"), np.load(loaded / "predict_train.npy")
    )


def test_autotune_cache_makes_other_processes_compute_what_the_tuning_process_did(tmp_path):
    cache = tmp_path / "autotune.txt"
    tuned, replay = tmp_path / "tuned", tmp_path / "replay"
    tuned.mkdir()
    replay.mkdir()
    spinner = busy_core()  # timing under load: choices the rule may not make
    try:
        log = run_worker("train", tuned, "--cache", cache, "--exhaustive")
    finally:
        spinner.kill()
        spinner.wait()
    assert "timed conv_dnnl." in log
    lines = cache.read_text().splitlines()
    # Forward and backward of the four training convolutions, forward of the four at predict batch
    # size.
    assert len(lines) == 12, lines
    # Another process with the cache and no timing: no timing happens, the recorded choices are made
    # and every bit is the same.
    log = run_worker("train", replay, "--cache", cache)
    assert "timed " not in log
    recorded = dict(line.split("\t")[1:] for line in lines)
    made = dict(
        line.split("(DNNL) ", 1)[1].rsplit(": ", 1)
        for line in log.splitlines()
        if "(DNNL) " in line
    )
    assert made == recorded
    assert_bitwise_equal(tuned / "train.npz", replay / "train.npz")
    assert cache.read_text().splitlines() == lines
    # A Predictor in a fresh process, given the cache, reproduces the tuning process's predictions.
    log = run_worker("predict", tuned, "--cache", cache)
    assert "timed " not in log
    np.testing.assert_array_equal(
        np.load(tuned / "predict_loaded.npy"), np.load(tuned / "predict_train.npy")
    )
    assert (
        np.load(tuned / "predict_loaded.npy").tobytes()
        == np.load(tuned / "predict_train.npy").tobytes()
    )


def test_a_predictor_without_the_cache_still_matches_a_rule_following_trainer(tmp_path):
    run_worker("train", tmp_path)
    run_worker("predict", tmp_path)
    assert (
        np.load(tmp_path / "predict_loaded.npy").tobytes()
        == np.load(tmp_path / "predict_train.npy").tobytes()
    )


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
