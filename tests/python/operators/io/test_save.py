"""Save from Python: an unknown DB type is a RuntimeError naming it. Save's round trips through Load
are in test_load.py and tests/cpp/db/test_save_load.cc."""
import numpy as np
import pytest

from caffe2.python import core, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.SwitchWorkspace("load_errors_test", True)
    workspace.ResetWorkspace()
    yield
    workspace.SwitchWorkspace("default", True)


def test_unknown_db_type(tmp_path):
    workspace.FeedBlob("x", np.zeros(1, np.float32))
    op = core.CreateOperator(
        "Save", ["x"], [], db=str(tmp_path / "x"), db_type="no_such_db", absolute_path=1
    )
    with pytest.raises(RuntimeError, match="no_such_db"):
        workspace.RunOperatorOnce(op)
