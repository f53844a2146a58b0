"""mpirun as a launcher: CreateCommonWorld with mpi_rendezvous=1 takes rank and size from MPI and
needs no store (ops spec §3.5); Allreduce then works as with a store rendezvous."""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

SCRIPT = r"""
import json
import numpy as np
from caffe2.python import core, workspace
workspace.RunOperatorOnce(core.CreateOperator(
    "CreateCommonWorld", [], ["cw"], name="mpi_cw", engine="GLOO", mpi_rendezvous=True))
workspace.RunOperatorOnce(core.CreateOperator(
    "CloneCommonWorld", ["cw"], ["cw2"], name="mpi_cw2", engine="GLOO"))
rank = int(__import__("os").environ["OMPI_COMM_WORLD_RANK"])
workspace.FeedBlob("x", np.full(3, rank + 1, np.float32))
workspace.RunOperatorOnce(core.CreateOperator("Allreduce", ["cw2", "x"], ["x"], engine="GLOO"))
out_dir = __import__("os").environ["OUT_DIR"]
with open(out_dir + "/rank{}.json".format(rank), "w") as f:
    json.dump({"rank": rank, "x": workspace.FetchBlob("x").tolist()}, f)
"""


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI (openmpi-bin) not installed")
@pytest.mark.parametrize("ranks", [2, 3])
def test_mpirun_rendezvous_without_store(ranks, tmp_path):
    env = dict(
        os.environ,
        PYTHONPATH=os.path.join(ROOT, "python"),
        OUT_DIR=str(tmp_path),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_plm="isolated",
        OMPI_MCA_btl="self,tcp",
        OMPI_MCA_rmaps_base_oversubscribe="1",
    )
    result = subprocess.run(
        ["mpirun", "-np", str(ranks), "--oversubscribe", sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    outs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("rank*.json"))]
    assert sorted(o["rank"] for o in outs) == list(range(ranks))
    total = float(sum(range(1, ranks + 1)))
    for o in outs:
        assert o["x"] == [total] * 3


def test_size_mismatch_under_mpi_is_an_error(tmp_path):
    if shutil.which("mpirun") is None:
        pytest.skip("Open MPI (openmpi-bin) not installed")
    script = SCRIPT.replace("mpi_rendezvous=True", "mpi_rendezvous=True, size=5")
    env = dict(
        os.environ,
        PYTHONPATH=os.path.join(ROOT, "python"),
        OUT_DIR=str(tmp_path),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl="self,tcp",
    )
    result = subprocess.run(
        ["mpirun", "-np", "2", "--oversubscribe", sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "MPI_COMM_WORLD has 2 ranks" in result.stdout + result.stderr
