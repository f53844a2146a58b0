"""Shared by the bad-input tests: an error must be a RuntimeError whose message names what went
wrong, and the process must stay usable afterwards."""
import numpy as np
import pytest

from caffe2.python import core, workspace


def assert_clear_error(fn, *needles, error=RuntimeError):
    """fn() raises `error` mentioning every needle; then an ordinary op still runs."""
    with pytest.raises(error) as info:
        fn()
    message = str(info.value)
    for needle in needles:
        assert needle in message, "%r not in: %s" % (needle, message)
    assert len(message) < 5000, "a %d-character message" % len(message)
    assert_usable()
    return message


def assert_usable():
    workspace.RunOperatorOnce(
        core.CreateOperator("ConstantFill", [], ["usable_check"], shape=[2], value=3.0)
    )
    np.testing.assert_array_equal(workspace.FetchBlob("usable_check"), [3.0, 3.0])


def fresh_workspace_fixture(name):
    """An autouse fixture giving each test an empty workspace `name` (the default one
    afterwards)."""

    @pytest.fixture(autouse=True)
    def fresh_workspace():
        workspace.SwitchWorkspace(name, True)
        workspace.ResetWorkspace()
        yield
        workspace.SwitchWorkspace("default", True)

    return fresh_workspace


def run_op(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(core.CreateOperator(op_type, inputs, outputs, **kwargs))
