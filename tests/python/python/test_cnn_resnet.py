"""cnn.CNNModelHelper and models/resnet: the nets they build, and (once
the CNN operators exist) the Multi-GPU tutorial's single-GPU flow on CPU."""
import logging

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, cnn, core, memonger, model_helper, workspace
from caffe2.python.models import resnet
from op_registry_util import pretend_registered

CNN_OPS = [
    "Conv",
    "SpatialBN",
    "Relu",
    "MaxPool",
    "AveragePool",
    "Softmax",
    "SoftmaxWithLoss",
    "MSRAFill",
    "XavierFill",
]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def test_cnn_model_helper(caplog):
    with caplog.at_level(logging.WARNING):
        model = cnn.CNNModelHelper(order="NHWC", ws_nbytes_limit=64)
    assert "DEPRECATE" in caplog.text
    assert model.name == "CNN"
    assert model.arg_scope == {
        "order": "NHWC",
        "use_cudnn": True,
        "cudnn_exhaustive_search": False,
        "ws_nbytes_limit": 64,
    }
    with pytest.raises(ValueError, match="storage order"):
        cnn.CNNModelHelper(order="CHWN")
    assert model.XavierInit == ("XavierFill", {})
    assert model.MSRAInit == ("MSRAFill", {})
    assert model.ConstantInit(2) == ("ConstantFill", {"value": 2})
    assert model.CPU.device_type == caffe2_pb2.CPU
    assert model.GPU.device_type == caffe2_pb2.CUDA
    with pretend_registered(*CNN_OPS):
        conv = model.Conv("data", "conv", 3, 8, 3)
        model.Relu(conv, conv)
        model.MaxPool(conv, "pool", kernel=2)
        fc = model.FC("pool", "fc", 8, 2, weight_init=model.ConstantInit(1.0))
        model.Softmax(fc, "sm")
    ops = model.net.Proto().op
    assert [op.type for op in ops] == ["Conv", "Relu", "MaxPool", "FC", "Softmax"]
    assert ops[0].engine == "CUDNN"
    assert {a.name for a in ops[0].arg} >= {
        "order",
        "kernel",
        "ws_nbytes_limit",
        "exhaustive_search",
    }
    # NHWC weights
    shape = [a for a in model.param_init_net.Proto().op[0].arg if a.name == "shape"][0]
    assert list(shape.ints) == [8, 3, 3, 3]


def test_resnet50_structure():
    with pretend_registered(*CNN_OPS):
        model = model_helper.ModelHelper(name="resnet50")
        out = resnet.create_resnet50(model, "data", 3, 10, no_bias=1, no_loss=True)
    assert str(out) == "last_out_L10"
    types = [op.type for op in model.net.Proto().op]
    assert types.count("Conv") == 53 and types.count("SpatialBN") == 53
    assert types.count("Sum") == 16
    assert len(model.params) == 53 + 53 * 2 + 2
    assert len(model.GetComputedParams("")) == 53 * 2
    names = {o for op in model.net.Proto().op for o in op.output}
    for name in [
        "conv1",
        "conv1_spatbn_relu",
        "pool1",
        "comp_0_conv_1",
        "comp_0_spatbn_3",
        "shortcut_projection_0",
        "shortcut_projection_3_spatbn",
        "comp_15_sum_3",
        "final_avg",
    ]:
        assert name in names, name
    first = model.net.Proto().op[0]
    assert list(first.input) == ["data", "conv1_w"]  # no bias
    pool = [op for op in model.net.Proto().op if op.type == "AveragePool"][0]
    assert {a.name: a.i for a in pool.arg}["global_pooling"] == 1

    with pretend_registered(*CNN_OPS):
        model = model_helper.ModelHelper(name="resnet50_loss")
        softmax, loss = resnet.create_resnet50(model, "data", 3, 10, label="label")
    assert (str(softmax), str(loss)) == ("softmax", "loss")
    assert model.net.Proto().op[-1].type == "SoftmaxWithLoss"


def test_resnet_32x32_structure():
    with pretend_registered(*CNN_OPS):
        model = model_helper.ModelHelper(name="resnet32")
        out = resnet.create_resnet_32x32(model, "data", 3, 1, 10)
    assert str(out) == "softmax"
    types = [op.type for op in model.net.Proto().op]
    assert types.count("Conv") == 1 + 6 * 2 + 2  # two projections
    assert types.count("Sum") == 6


needs_cnn_ops = pytest.mark.skipif(
    not all(
        workspace.C.OpSchema.get(op) for op in CNN_OPS + ["Accuracy", "Scale", "MomentumSGDUpdate"]
    ),
    reason="needs the CNN operators (Conv, SpatialBN, pools, softmax...) " "and MomentumSGDUpdate",
)


@needs_cnn_ops
def test_tutorial_single_gpu_section_on_cpu():
    """Spec §4: the calls of the Multi-GPU tutorial's single-GPU section,
    on the CPU and with synthetic data instead of ImageInput."""
    train_model = model_helper.ModelHelper(name="resnet_test")
    device_opt = core.DeviceOption(caffe2_pb2.CPU, 0)
    batch, num_labels, prefix = 2, 10, "imonaboat"
    with core.NameScope(prefix), core.DeviceScope(device_opt):
        rng = np.random.RandomState(0)
        workspace.FeedBlob(
            prefix + "/data", rng.randn(batch, 3, 64, 64).astype(np.float32), device_opt
        )
        workspace.FeedBlob(
            prefix + "/label", rng.randint(0, num_labels, batch).astype(np.int32), device_opt
        )
        data = core.ScopedBlobReference("data")
        train_model.net.StopGradient(data, data)
        softmax, loss = resnet.create_resnet50(
            train_model, "data", num_input_channels=3, num_labels=num_labels, label="label"
        )
        loss = train_model.net.Scale(loss, prefix + "_loss", scale=1.0)
        brew.accuracy(train_model, [softmax, "label"], prefix + "_accuracy")
        losses = [loss]
        blobs_to_gradients = train_model.AddGradientOperators(losses)
        assert (
            str(blobs_to_gradients[losses[0]]) == "imonaboat/imonaboat/imonaboat_loss_autogen_grad"
        )
        brew.add_weight_decay(train_model, 0.004)
        it = brew.iter(train_model, "iter")
        lr = train_model.net.LearningRate(
            [it], "lr", base_lr=0.01, policy="step", stepsize=10, gamma=0.1
        )
        for param in train_model.GetParams():
            param_grad = train_model.param_to_grad[param]
            param_momentum = train_model.param_init_net.ConstantFill(
                [param], param + "_momentum", value=0.0
            )
            train_model.net.MomentumSGDUpdate(
                [param_grad, param_momentum, lr, param],
                [param_grad, param_momentum, param],
                momentum=0.9,
                nesterov=1,
            )
    train_model.net._net = memonger.share_grad_blobs(
        train_model.net,
        losses,
        set(train_model.param_to_grad.values()),
        namescope=prefix,
        share_activations=False,
    )
    workspace.RunNetOnce(train_model.param_init_net)
    workspace.CreateNet(train_model.net, overwrite=True)
    for _ in range(3):
        workspace.RunNet(train_model.net.Proto().name)
    assert np.isfinite(workspace.FetchBlob(prefix + "/" + prefix + "_loss"))
