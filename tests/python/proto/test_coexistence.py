"""Another package that ships its own caffe2.proto (PyTorch does) can share the process with ours,
imported before or after: no abort from libprotobuf, and our modules keep our field names."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT_OURS = """
from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
assert "cuda_gpu_id" in caffe2_pb2.DeviceOption.DESCRIPTOR.fields_by_name
workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["x"], shape=[2], value=3.0))
assert list(workspace.FetchBlob("x")) == [3.0, 3.0]
print("ok")
"""


@pytest.mark.parametrize("torch_first", [True, False])
def test_torch_and_caffe2_in_one_process(torch_first):
    pytest.importorskip("torch")
    script = (
        ("import torch\n" + SCRIPT_OURS)
        if torch_first
        else (SCRIPT_OURS + "import torch\nprint('ok')\n")
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ok" in result.stdout
