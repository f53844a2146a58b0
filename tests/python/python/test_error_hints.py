"""Errors that say what to do: a parameter used before the param_init_net ran, a net that was
never created, a misspelt blob or net name, a gradient target that no op writes."""
import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def test_parameter_before_param_init_net_hints_at_it():
    model = model_helper.ModelHelper(name="hints")
    brew.fc(model, "data", "fc1", dim_in=4, dim_out=2)
    workspace.FeedBlob("data", np.ones((1, 4), np.float32))
    with pytest.raises(RuntimeError) as info:
        workspace.RunNetOnce(model.net)
    message = str(info.value)
    assert "non-existing input blob: fc1_w" in message
    assert "param_init_net" in message and "FeedBlob" in message
    workspace.RunNetOnce(model.param_init_net)  # the hint's remedy works
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("fc1").shape == (1, 2)


def test_misspelt_blob_is_suggested():
    workspace.FeedBlob("weights", np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match=r"non-existing input blob: wieghts \(did you mean "):
        workspace.RunOperatorOnce(core.CreateOperator("Relu", ["wieghts"], ["y"]))


def test_missing_net_hints_at_create_net_and_suggests_names():
    net = core.Net("train_net")
    net.ConstantFill([], "x", shape=[1], value=1.0)
    with pytest.raises(RuntimeError, match=r"Can't find net train_net: create it first"):
        workspace.RunNet("train_net")
    workspace.CreateNet(net)
    with pytest.raises(RuntimeError, match=r"Can't find net trian_net \(did you mean 'train_net'"):
        workspace.RunNet("trian_net")
    assert workspace.RunNet("train_net")


def test_gradient_of_a_blob_no_op_writes_is_refused():
    net = core.Net("loss_net")
    net.FC(["x", "w", "b"], "y")
    net.AveragedLoss("y", "loss")
    with pytest.raises(ValueError, match=r"no op of the net writes 'los'.*did you mean 'loss'"):
        net.AddGradientOperators(["los"])
    with pytest.raises(ValueError, match=r"no op of the net writes 'x'"):
        net.AddGradientOperators({"x": None})  # an input: nothing upstream of it
    assert len(net.Proto().op) == 2  # nothing was appended by the refused calls
    grads = net.AddGradientOperators(["loss"])
    assert "w" in {str(k) for k in grads}
