"""The main job's example trains, checkpoints, reloads and predicts (run as a real process)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_example_converges_and_round_trips():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    result = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "train_linear_regression.py"),
            "--iters",
            "150",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "reloaded from" in result.stdout and result.stdout.strip().endswith("OK")
