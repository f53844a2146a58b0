"""The C++ log lines go through glog, with --caffe2_log_level mapped onto it: INFO lines for net
creation and executor, rendezvous steps and checkpoint paths, a verbose line (level -1) for the
engine an op runs on, nothing below the level set. Each case runs in a fresh process, because the
level is per process and glog writes to the process's stderr."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

SCRIPT = r"""
import sys
import numpy as np
from caffe2.python import core, workspace
workspace.GlobalInit(["caffe2", "--caffe2_log_level=" + sys.argv[1]])
tmp = sys.argv[2]
workspace.FeedBlob("x", np.ones((1, 1, 3, 3), np.float32))
workspace.FeedBlob("w", np.ones((1, 1, 1, 1), np.float32))
net = core.Net("logged")
net.Conv(["x", "w"], "y", kernel=1, engine="EIGEN")
workspace.RunNetOnce(net)
workspace.RunOperatorOnce(core.CreateOperator(
    "Save", ["y"], [], db=tmp + "/ckpt.minidb", db_type="minidb", absolute_path=1))
workspace.RunOperatorOnce(core.CreateOperator(
    "Load", [], ["y"], db=tmp + "/ckpt.minidb", db_type="minidb", absolute_path=1))
workspace.RunOperatorOnce(core.CreateOperator(
    "FileStoreHandlerCreate", [], ["store"], path=tmp, prefix="logging"))
workspace.RunOperatorOnce(core.CreateOperator(
    "CreateCommonWorld", ["store"], ["cw"], name="logged_cw", engine="GLOO", size=1, rank=0))
print("done")
"""

# glog's prefix: severity letter, yyyymmdd hh:mm:ss.micros, thread id, file:line]
PREFIX = r"^I\d{8} \d\d:\d\d:\d\d\.\d{6} +\d+ "


def run(level, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(level), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr
    return proc.stderr


def test_info_lines_at_level_0(tmp_path):
    err = run(0, tmp_path)
    expected = [
        r"net_simple\.cc:\d+\] Created net 'logged': simple executor, 1 ops in order$",
        r"save_op\.cc:\d+\] Save: wrote 1 blob\(s\) to minidb DB '.*/ckpt\.minidb'$",
        r"load_op\.cc:\d+\] Load: read 1 blob\(s\) from minidb DB '.*/ckpt\.minidb'$",
        r"common_world\.cc:\d+\] rendezvous 'logged_cw': rank 0 of 1 claimed \(host '.*', pid "
        r"\d+, address .*\), waiting for the others$",
        r"common_world\.cc:\d+\] rendezvous 'logged_cw': all 1 ranks arrived; connecting the "
        r"pairs$",
        r"common_world\.cc:\d+\] rendezvous 'logged_cw': rank 0 of 1 connected over tcp$",
    ]
    for pattern in expected:
        assert re.search(PREFIX + r".*" + pattern, err, re.M), (pattern, err)
    assert "runs on engine" not in err  # verbose, level -1
    assert "Logging before InitGoogleLogging" not in err


def test_verbose_line_names_the_engine(tmp_path):
    err = run(-1, tmp_path)
    assert re.search(PREFIX + r"operator\.cc:\d+\] Conv '' runs on engine EIGEN$", err, re.M), err


def test_default_level_prints_no_info(tmp_path):
    err = run(2, tmp_path)
    assert not re.search(r"^I\d{8} ", err, re.M), err
    assert not os.listdir("/tmp") or not any(
        name.startswith("caffe2.") and ".log." in name for name in os.listdir("/tmp")
    )  # glog writes no log files
