"""Fixtures of the convolution tests."""
import pytest

from caffe2.python import workspace


@pytest.fixture
def autotune_file(tmp_path):
    """A fresh --caffe2_autotune_cache file for one test; the flags are reset afterwards."""
    path = str(tmp_path / "autotune.txt")
    workspace.GlobalInit(["test", "--caffe2_autotune_cache=" + path])
    workspace.C.autotune_forget()
    yield path
    workspace.GlobalInit(["test", "--caffe2_autotune_cache=", "--nocaffe2_exhaustive_search"])
    workspace.C.autotune_forget()
