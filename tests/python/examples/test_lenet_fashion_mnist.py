"""The LeNet Fashion-MNIST example trains above chance, its export reloads in a fresh process with
identical predictions, and it writes the experiment_util CSV log (run as a real process)."""
import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA_DIR = "/usr/share/datasets/fashion-mnist"
NAMES = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
]
HEADER = (
    "time_spent,cumulative_time_spent,input_count,cumulative_input_count,cumulative_batch_count,"
    "inputs_per_sec,accuracy,epoch,learning_rate,loss,test_accuracy"
)


@pytest.mark.skipif(
    not all(os.path.exists(os.path.join(DATA_DIR, n)) for n in NAMES),
    reason="Fashion-MNIST (Debian dataset-fashion-mnist) is not installed",
)
def test_lenet_trains_exports_and_reloads(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "lenet_fashion_mnist.py"),
            "--limit",
            "6000",
            "--test-limit",
            "5000",
            "--epochs",
            "1",
            "--out",
            str(tmp_path / "export"),
        ],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "train 6000 images, test 5000 images" in out

    acc = float(re.search(r"test accuracy ([0-9.]+)\n", out.replace("\r", "\n")).group(1))
    assert acc > 0.6, out  # chance is 0.1

    assert "predictions identical" in out, out
    assert out.strip().endswith("OK")
    assert os.path.exists(tmp_path / "export" / "lenet_fashion_mnist.minidb")

    logs = glob.glob(str(tmp_path / "lenet_fashion_mnist_*.log"))
    assert len(logs) == 1, logs
    with open(logs[0]) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("# Namespace(") and "limit=6000" in lines[0]
    assert lines[1] == HEADER
    assert len(lines) == 3  # one line per epoch
    values = lines[2].split(",")
    assert len(values) == len(HEADER.split(","))
    assert values[3] == "6000" and values[4] == "94"  # cumulative inputs, batches (ceil(6000 / 64))
    assert values[7] == "1" and float(values[8]) == pytest.approx(0.01)
    assert float(values[10]) == pytest.approx(acc)
