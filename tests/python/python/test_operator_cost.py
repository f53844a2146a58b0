"""workspace.GetOperatorCost: (flops, bytes moved) from the ops' cost inference, for the pointwise
model (Relu, Add) and for every op of a small residual CNN built with brew, from serialized bytes
and from the OperatorDef; an op without cost inference is a clear error."""
import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def test_pointwise_ops_count_one_flop_per_value_and_every_byte_read_and_written():
    workspace.FeedBlob("X", np.ones((2, 3), np.float32))
    workspace.FeedBlob("B", np.ones((2, 3), np.float32))
    relu = core.CreateOperator("Relu", ["X"], ["Y"])
    assert workspace.GetOperatorCost(relu, ["X"]) == (6, 48)
    add = core.CreateOperator("Add", ["X", "B"], ["Y"])
    assert workspace.GetOperatorCost(add.SerializeToString(), ["X", "B"]) == (6, 72)
    workspace.FeedBlob("D", np.ones((2, 3), np.float64))
    assert workspace.GetOperatorCost(relu, ["D"]) == (6, 96)


def test_every_op_of_a_small_residual_cnn_has_a_cost():
    model = model_helper.ModelHelper(name="cost_cnn")
    conv1 = brew.conv(model, "data", "conv1", dim_in=3, dim_out=8, kernel=3, pad=1)
    bn1 = brew.spatial_bn(model, conv1, "bn1", 8, epsilon=1e-3, is_test=False)
    relu1 = brew.relu(model, bn1, "relu1")
    conv2 = brew.conv(model, relu1, "conv2", dim_in=8, dim_out=8, kernel=3, pad=1)
    res = brew.sum(model, [conv2, relu1], "res")
    added = model.net.Add([res, relu1], "added")
    pool = brew.max_pool(model, added, "pool", kernel=2, stride=2)
    avg = brew.average_pool(model, pool, "avg", kernel=4)
    drop = brew.dropout(model, avg, "drop", ratio=0.5, is_test=True)
    fc = brew.fc(model, drop, "fc", dim_in=8, dim_out=4)
    brew.softmax(model, fc, "prob")
    workspace.FeedBlob("data", np.random.RandomState(0).rand(2, 3, 8, 8).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    types = set()
    for op in model.net.Proto().op:
        flops, bytes_moved = workspace.GetOperatorCost(op, list(op.input))
        assert bytes_moved > 0, op.type
        assert flops > 0 or op.type in ("MaxPool", "Dropout"), op.type
        types.add(op.type)
    assert {"Conv", "SpatialBN", "Relu", "Sum", "Add", "MaxPool", "AveragePool", "FC"} <= types


def test_an_op_without_cost_inference_says_so():
    workspace.FeedBlob("X", np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match=r"\[Transpose\] has no cost inference"):
        workspace.GetOperatorCost(core.CreateOperator("Transpose", ["X"], ["Y"]), ["X"])
