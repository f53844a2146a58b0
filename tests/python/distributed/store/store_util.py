"""Helpers for the store tests: run store ops in this process or in fresh worker processes."""
import os
import subprocess
import sys

import numpy as np

from caffe2.python import core, workspace

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)
PYTHON_DIR = os.path.join(ROOT, "python")


def create_handler(kind, blob="handler", **kwargs):
    op_type = "FileStoreHandlerCreate" if kind == "file" else "RedisStoreHandlerCreate"
    workspace.RunOperatorOnce(core.CreateOperator(op_type, [], [blob], **kwargs))
    return blob


def store_set(handler, name, value):
    workspace.FeedBlob(name, np.asarray(value))
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", [handler, name], []))


def store_get(handler, name, out=None, **kwargs):
    out = out or name
    workspace.RunOperatorOnce(
        core.CreateOperator("StoreGet", [handler], [out], blob_name=name, **kwargs)
    )
    return workspace.FetchBlob(out)


def store_add(handler, name, value=1):
    workspace.RunOperatorOnce(
        core.CreateOperator("StoreAdd", [handler], ["counter"], blob_name=name, add_value=value)
    )
    return workspace.FetchBlob("counter")


def run_worker(script, *args, timeout=60):
    """Runs `script` (Python source) in a fresh interpreter with argv args; returns the process."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.Popen(
        [sys.executable, "-c", script] + [str(a) for a in args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, "worker failed (rc {}):\n{}\n{}".format(proc.returncode, out, err)
    return out
