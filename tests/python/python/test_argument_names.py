"""Argument names an op's schema does not declare are refused when the op is created from Python,
with the closest names (core_arguments); upstream's ambient arguments, pattern families and model
files read from bytes are accepted, and CAFFE2_ALLOW_UNKNOWN_ARGUMENTS=1 restores upstream's
silence."""
import os
import subprocess
import sys

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def test_a_misspelt_argument_names_the_op_and_close_names():
    with pytest.raises(ValueError) as e:
        core.CreateOperator("Conv", ["X", "w"], ["Y"], kernal=3)
    message = str(e.value)
    assert message.startswith("[Conv] has no argument 'kernal' (did you mean 'kernel'")
    assert "kernel_h" in message and "CAFFE2_ALLOW_UNKNOWN_ARGUMENTS=1" in message
    net = core.Net("typo")
    with pytest.raises(ValueError, match=r"\[Relu\] has no argument 'inplace'"):
        net.Relu(["x"], ["y"], inplace=1)
    assert len(net.Proto().op) == 0  # nothing half-added


def test_declared_ambient_and_pattern_arguments_pass():
    core.CreateOperator("Conv", ["X", "w"], ["Y"], kernel_h=3, kernel_w=1, pad_t=1, order="NCHW")
    core.CreateOperator("Relu", ["x"], ["y"], order="NCHW", use_cudnn=True, is_test=1)
    core.CreateOperator(
        "LearningRate",
        ["it"],
        ["lr"],
        base_lr=0.1,
        policy="composite",
        sub_policy_num_iters=[2, 1],
        sub_policy_0_policy="fixed",
        sub_policy_1_policy="step",
        sub_policy_1_stepsize=3,
    )
    core.CreateOperator("NoSuchOpType", ["x"], ["y"], anything=1)  # no schema: not checked


def test_upstream_model_helpers_and_tutorial_arguments_pass():
    model = model_helper.ModelHelper(
        name="upstream_style", arg_scope={"order": "NCHW", "use_cudnn": True, "ws_nbytes_limit": 1}
    )
    brew.conv(model, "data", "conv", 1, 2, kernel=3, no_bias=1)
    brew.max_pool(model, "conv", "pool", kernel=2, stride=2)
    brew.fc(model, "pool", "fc", 2, 3, freeze_bias=True)
    brew.group_conv(model, "data4", "gconv", 4, 4, kernel=1, group=2)
    model.net.GaussianFill([], ["X"], mean=0.0, std=1.0, shape=[2, 3], run_once=0)


def test_nets_from_bytes_are_not_checked():
    op = caffe2_pb2.OperatorDef(type="Relu", input=["x"], output=["y"])
    op.arg.add(name="legacy_extra", i=1)  # a model file may carry names this runtime never reads
    net = caffe2_pb2.NetDef(name="from_bytes", op=[op])
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", np.array([-1.0, 2.0], np.float32))
    workspace.RunNetOnce(net.SerializeToString())
    np.testing.assert_array_equal(workspace.FetchBlob("y"), [0.0, 2.0])


def test_allow_unknown_arguments_restores_upstream():
    core.AllowUnknownArguments(True)
    try:
        op = core.CreateOperator("Conv", ["X", "w"], ["Y"], kernal=3)
        assert [a.name for a in op.arg] == ["kernal"]
    finally:
        core.AllowUnknownArguments(False)
    with pytest.raises(ValueError):
        core.CreateOperator("Conv", ["X", "w"], ["Y"], kernal=3)


@pytest.mark.parametrize("value,accepted", [("1", True), ("0", False), ("", False)])
def test_the_environment_switch_in_a_fresh_process(value, accepted):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env["CAFFE2_ALLOW_UNKNOWN_ARGUMENTS"] = value
    code = (
        "from caffe2.python import core\ncore.CreateOperator('Conv', ['X', 'w'], ['Y'], kernal=3)"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (proc.returncode == 0) == accepted, proc.stderr
    if not accepted:
        assert "has no argument 'kernal'" in proc.stderr
