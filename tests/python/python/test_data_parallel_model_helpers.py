"""data_parallel_model on CPU devices: the parallelized model's attributes and net settings, the
single-host gradient reduction and parameter sync, and the module's helpers (checkpoint params,
FinalizeAfterCheckpoint, learning-rate blob names, param update and post-sync builders, blob sync,
ConvertNetForDevice, ExtractPredictorNet, stripBlobName, _InterleaveOps). Training against one
device and the error cases are in test_data_parallel_model.py."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace
from caffe2.python import data_parallel_model as dpm

from dpm_test_util import (
    args,
    BATCH,
    built_model,
    CLASSES,
    conv_bn_forward,
    DIM_IN,
    fc_data,
    fc_forward,
    feed_shards,
    HIDDEN,
    no_input,
    ops_of,
    params_of,
    run_init,
    sgd,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


# --------------------------------------------------------------- helpers


def test_model_attributes_and_net_settings():
    model = built_model()
    assert model._device_type == caffe2_pb2.CPU
    assert model._device_prefix == "cpu"
    assert model._devices == [0, 1]
    assert model._shared_model is False
    assert model._rendezvous is None
    assert model._grad_names == ["fc1_w_grad", "fc1_b_grad", "fc2_w_grad", "fc2_b_grad"]
    assert model._param_names == ["fc1_w", "fc1_b", "fc2_w", "fc2_b"]
    assert model.net.Proto().type == "dag"
    assert model.net.Proto().num_workers == 8
    assert args(model.net.Proto())["first_iter_only_one_worker"] == 1
    assert model._data_parallel_model_nets == [model.net]
    assert model._data_parallel_model_init_nets == [model.param_init_net]
    seeds = [
        op for op in ops_of(model.net, "ConstantFill") if op.output[0].endswith("scaled_loss_grad")
    ]
    assert [(op.input[0], op.device_option.cuda_gpu_id) for op in seeds] == [
        ("cpu_0/scaled_loss", 0),
        ("cpu_1/scaled_loss", 1),
    ]
    scales = {
        op.output[0]: args(op)["scale"]
        for op in ops_of(model.net, "Scale")
        if "grad" not in op.output[0]
    }
    assert scales == {"cpu_0/scaled_loss": 0.5, "cpu_1/scaled_loss": 0.5}


def test_single_host_cpu_reduction_is_sum_then_copy_in_reverse_order():
    model = built_model()
    sums = [op for op in ops_of(model.net, "Sum")]
    assert [list(op.input) for op in sums] == [
        ["cpu_0/{}".format(g), "cpu_1/{}".format(g)]
        for g in ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    ]
    assert all(list(op.output) == [op.input[0]] for op in sums)
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, "Copy")]
    assert copies == [
        ("cpu_0/{}".format(g), "cpu_1/{}".format(g))
        for g in ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    ]
    init_copies = [(op.input[0], op.output[0]) for op in ops_of(model.param_init_net, "Copy")]
    assert init_copies == [
        ("cpu_0/" + b, "cpu_1/" + b)
        for b in sorted(
            [
                "fc1_w",
                "fc1_b",
                "fc2_w",
                "fc2_b",
                "fc1_w_momentum",
                "fc1_b_momentum",
                "fc2_w_momentum",
                "fc2_b_momentum",
            ]
        )
    ]


def test_initial_sync_makes_replicas_equal():
    model = built_model()
    run_init(model)
    for name, value in params_of(model, 0).items():
        np.testing.assert_array_equal(workspace.FetchBlob("cpu_1/" + name), value)


def test_computed_params_are_broadcast_every_iteration():
    model = built_model(forward=conv_bn_forward)
    assert model._computed_param_names == ["bn_rm", "bn_riv"]
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, "Copy")]
    assert copies[:2] == [("cpu_0/bn_rm", "cpu_1/bn_rm"), ("cpu_0/bn_riv", "cpu_1/bn_riv")]
    model2 = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(
        model2,
        no_input,
        conv_bn_forward,
        optimizer_builder_fun=sgd,
        devices=[0, 1],
        broadcast_computed_params=False,
    )
    assert not any(op.input[0].startswith("cpu_0/bn_r") for op in ops_of(model2.net, "Copy"))


def test_get_checkpoint_params():
    model = built_model()
    names = sorted(str(b) for b in dpm.GetCheckpointParams(model))
    expected = sorted(
        ["cpu_0/" + p for p in ["fc1_w", "fc1_b", "fc2_w", "fc2_b"]]
        + ["cpu_0/" + p + "_momentum" for p in ["fc1_w", "fc1_b", "fc2_w", "fc2_b"]]
        + ["optimizer_iteration"]
    )
    assert names == expected


def test_finalize_after_checkpoint_copies_master_to_replicas():
    model = built_model()
    run_init(model)
    loaded = {}
    for b in dpm.GetCheckpointParams(model):
        name = str(b)
        if name.startswith("cpu_0/"):
            value = workspace.FetchBlob(name)
            loaded[name] = np.full_like(value, 0.25)
            workspace.FeedBlob(name, loaded[name])
    dpm.FinalizeAfterCheckpoint(model)
    for name, value in loaded.items():
        np.testing.assert_array_equal(workspace.FetchBlob(name.replace("cpu_0/", "cpu_1/")), value)
    # Later calls rerun the same net.
    workspace.FeedBlob("cpu_0/fc1_b", np.full(HIDDEN, 3.0, np.float32))
    dpm.FinalizeAfterCheckpoint(model)
    np.testing.assert_array_equal(
        workspace.FetchBlob("cpu_1/fc1_b"), np.full(HIDDEN, 3.0, np.float32)
    )
    assert model._checkpoint_net.Proto().name == "checkpoint_sync_net"


def test_finalize_after_checkpoint_with_given_blobs():
    model = built_model()
    run_init(model)
    workspace.FeedBlob("cpu_0/extra", np.arange(3, dtype=np.float32))
    workspace.FeedBlob("cpu_1/extra", np.zeros(3, np.float32))
    dpm.FinalizeAfterCheckpoint(model, blobs=["cpu_0/extra", "cpu_0/fc1_w"])
    np.testing.assert_array_equal(
        workspace.FetchBlob("cpu_1/extra"), np.arange(3, dtype=np.float32)
    )
    assert model._device_grouped_blobs["extra"] == {0: "cpu_0/extra", 1: "cpu_1/extra"}


def test_learning_rate_blob_names():
    model = built_model()
    assert dpm.GetLearningRateBlobNames(model) == [
        "SgdOptimizer_{}_lr_cpu".format(model._optimizer._instance_num)
    ]
    assert [
        op.output[0] for op in ops_of(model.net, "LearningRate")
    ] == dpm.GetLearningRateBlobNames(model)


def test_learning_rate_blob_names_without_optimizer_builder():
    def update(model):
        lr = model.param_init_net.ConstantFill([], "lr", shape=[1], value=-0.1)
        one = model.param_init_net.ConstantFill([], "one", shape=[1], value=1.0)
        model.net.LearningRate(["iter_in"], "lr_out", base_lr=-0.1, policy="fixed")
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(
        model, no_input, fc_forward, param_update_builder_fun=update, devices=[0, 1]
    )
    assert dpm.GetLearningRateBlobNames(model) == ["cpu_0/lr_out", "cpu_1/lr_out"]


def test_param_update_builder_runs_per_device_scope():
    seen = []

    def update(model):
        seen.append((core.scope.CurrentNameScope(), core.scope.CurrentDeviceScope().cuda_gpu_id))
        lr = model.param_init_net.ConstantFill([], "lr", shape=[1], value=-0.1)
        one = model.param_init_net.ConstantFill([], "one", shape=[1], value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(
        model, no_input, fc_forward, param_update_builder_fun=update, devices=[0, 1]
    )
    assert seen == [("cpu_0/", 0), ("cpu_1/", 1)]
    assert not hasattr(model, "_optimizer")
    # lr and one are per-device blobs, so they are synced too.
    assert {"lr", "one"} <= dpm._ComputeBlobsToSync(model)[1]
    updates = ops_of(model.net, "WeightedSum")
    assert [(op.output[0], op.device_option.cuda_gpu_id) for op in updates] == [
        ("cpu_{}/{}".format(d, p), d) for d in (0, 1) for p in ("fc1_w", "fc1_b", "fc2_w", "fc2_b")
    ]
    run_init(model)
    dpm.RunNet(model, 2)
    for name, value in params_of(model, 0).items():
        np.testing.assert_array_equal(workspace.FetchBlob("cpu_1/" + name), value)


def test_post_sync_builder_runs_after_the_sync():
    calls = []

    def post(model):
        calls.append(core.scope.CurrentNameScope())
        model.param_init_net.Copy("fc1_w", "fc1_w_snapshot")

    model = built_model(post_sync_builder_fun=post)
    assert calls == ["cpu_0/", "cpu_1/"]
    types = [op.type for op in model.param_init_net.Proto().op]
    assert types.index("Copy") < len(types) - 2
    assert model.param_init_net.Proto().op[-1].output[0] == "cpu_1/fc1_w_snapshot"


def test_add_blob_sync():
    model = built_model()
    run_init(model)
    workspace.FeedBlob("cpu_0/counter", np.array([7.0], np.float32))
    workspace.FeedBlob("cpu_1/counter", np.array([0.0], np.float32))
    net = core.Net("blob_sync")
    dpm.AddBlobSync(model, ["counter"], net=net)
    assert [(op.type, op.input[0], op.output[0]) for op in net.Proto().op] == [
        ("Copy", "cpu_0/counter", "cpu_1/counter")
    ]
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob("cpu_1/counter"), [7.0])
    with pytest.raises(AssertionError):
        dpm.AddBlobSync(model, ["cpu_0/counter"])
    n_ops = len(model.net.Proto().op)
    dpm.AddBlobSync(model, ["counter"])
    assert len(model.net.Proto().op) == n_ops + 1


def test_add_distributed_blob_sync_is_a_noop_on_one_host():
    model = built_model()
    n_ops = len(model.net.Proto().op)
    dpm.AddDistributedBlobSync(model, ["cpu_0/fc1_w"])
    assert len(model.net.Proto().op) == n_ops


def test_synchronize_is_a_noop_on_one_host():
    model = built_model()
    before = dpm.barrier_instance
    dpm.Synchronize(model)
    assert dpm.barrier_instance == before


def test_convert_net_for_device():
    net = core.Net("other")
    net.AddExternalInput("x")
    y = net.Relu("x", "y")
    op = core.CreateOperator("Relu", [y], ["z"], control_input=["x"])
    net.Proto().op.extend([op])
    net.AddExternalOutput(core.BlobReference("z"))
    cpu = dpm.ConvertNetForDevice(net, core.DeviceOption(caffe2_pb2.CPU, 3))
    assert [list(o.input) for o in cpu.Proto().op] == [["cpu_3/x"], ["cpu_3/y"]]
    assert [list(o.output) for o in cpu.Proto().op] == [["cpu_3/y"], ["cpu_3/z"]]
    assert list(cpu.Proto().op[1].control_input) == ["cpu_3/x"]
    assert list(cpu.Proto().external_input) == ["cpu_3/x"]
    assert list(cpu.Proto().external_output) == ["cpu_3/z"]
    assert all(o.device_option.cuda_gpu_id == 3 for o in cpu.Proto().op)
    assert [o.input[0] for o in net.Proto().op] == ["x", "y"]  # a copy
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
        gpu = dpm.ConvertNetForDevice(net)
    assert gpu.Proto().op[0].input[0] == "gpu_1/x"
    assert gpu.Proto().op[0].device_option.device_type == caffe2_pb2.CUDA
    rnn = core.Net("rnn")
    rnn.Proto().op.extend([core.CreateOperator("RecurrentNetwork", [], [])])
    with pytest.raises(NotImplementedError):
        dpm.ConvertNetForDevice(rnn, core.DeviceOption(caffe2_pb2.CPU, 0))


def test_extract_predictor_net_matches_the_test_model():
    def forward(model, loss_scale):
        fc1 = brew.fc(model, "data", "fc1", DIM_IN, HIDDEN)
        relu = brew.relu(model, fc1, "relu")
        fc2 = brew.fc(model, relu, "fc2", HIDDEN, CLASSES)
        model.Softmax(fc2, "softmax")

    model = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(model, no_input, forward, devices=[0, 1])
    x, y = fc_data()
    feed_shards(model, x, y)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    predict_net, export = dpm.ExtractPredictorNet(
        model, ["data"], ["softmax"], core.DeviceOption(caffe2_pb2.CPU)
    )
    assert sorted(export) == ["cpu_0/fc1_b", "cpu_0/fc1_w", "cpu_0/fc2_b", "cpu_0/fc2_w"]
    assert predict_net.Proto().op[0].input[0] == "data"
    assert predict_net.Proto().op[-1].output[0] == "softmax"
    assert all(
        not b.startswith("cpu_1/")
        for op in predict_net.Proto().op
        for b in list(op.input) + list(op.output)
    )
    workspace.FeedBlob("data", x[: BATCH // 2])
    workspace.RunNetOnce(predict_net)
    np.testing.assert_allclose(
        workspace.FetchBlob("softmax"), workspace.FetchBlob("cpu_0/softmax"), rtol=1e-6
    )


def test_forward_only_model_gets_no_gradients_or_sync():
    def forward(model, loss_scale):
        brew.fc(model, "data", "fc1", DIM_IN, HIDDEN)

    model = model_helper.ModelHelper(name="test_model", init_params=False)
    dpm.Parallelize_CPU(model, no_input, forward, devices=[0, 1])
    assert not model.gradient_ops_added
    assert model._grad_names == []
    assert model._blob_to_device["cpu_1/fc1"].cuda_gpu_id == 1
    assert not ops_of(model.param_init_net, "Copy")


def test_strip_blob_name():
    assert dpm.stripBlobName("gpu_0/conv1_w") == "conv1_w"
    assert dpm.stripBlobName(core.BlobReference("cpu_1/a/b")) == "a/b"
    assert dpm.stripBlobName(core.GradientSlice("gpu_0/i", "gpu_0/v")) == "i:v"


def test_interleave_ops_groups_op_j_of_every_device():
    model2 = model_helper.ModelHelper(name="interleave")
    model2._devices = [2, 5]
    for d in (2, 5):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, d)):
            model2.net.Relu("a{}".format(d), "b{}".format(d))
            model2.net.Sigmoid("b{}".format(d), "c{}".format(d))
    dpm._InterleaveOps(model2)
    assert [(op.type, op.device_option.cuda_gpu_id) for op in model2.net.Proto().op] == [
        ("Relu", 2),
        ("Relu", 5),
        ("Sigmoid", 2),
        ("Sigmoid", 5),
    ]
    del model2.net.Proto().op[-1]
    with pytest.raises(AssertionError):
        dpm._InterleaveOps(model2)
