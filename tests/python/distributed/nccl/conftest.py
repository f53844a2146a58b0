"""Fixtures of the NCCL op tests: each test starts and ends with an empty workspace."""
import pytest

from caffe2.python import workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()
