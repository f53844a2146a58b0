"""data_parallel_model: single-process multi-device CPU training checked against one device on the
whole batch, and the error cases (the helpers and the nets' structure on CPU devices are in
test_data_parallel_model_helpers.py, the nets of the GPU and multi-host paths in
test_data_parallel_model_nets.py; multi-process Gloo runs in tests/python/distributed)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace
from caffe2.python import data_parallel_model as dpm

from dpm_test_util import (
    args,
    assert_same_training,
    BATCH,
    conv_bn_forward,
    conv_data,
    DIM_IN,
    fc_data,
    fc_forward,
    no_input,
    ops_of,
    sgd,
    train,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


# ------------------------------------------------- CPU numerical checks


@pytest.mark.parametrize("devices", [[0, 1], [0, 1, 2, 3]])
def test_cpu_devices_match_one_device_on_the_whole_batch(devices):
    ref = train(fc_forward, fc_data(), [0])
    got = train(fc_forward, fc_data(), devices)
    assert_same_training(ref, got)
    assert ref[1][0] != ref[1][-1]  # the parameters do move


@pytest.mark.parametrize("devices", [[0, 1], [0, 1, 2, 3]])
def test_combine_spatial_bn_matches_one_device_bn(devices):
    ref = train(conv_bn_forward, conv_data(), [0])
    model, _, _ = got = train(conv_bn_forward, conv_data(), devices, combine_spatial_bn=True)
    assert_same_training(ref, got)
    types = [op.type for op in model.net.Proto().op]
    assert types.count("ChannelStats") == len(devices)
    assert types.count("ChannelBackpropStats") == len(devices)
    bn = ops_of(model.net, "SpatialBN")
    assert [op.input[5:] for op in bn] == [
        ["cpu_0/conv_sums_combined", "cpu_0/conv_sumsq_combined"]
    ] * len(devices)
    assert all(args(op)["num_batches"] == len(devices) for op in bn)
    bn_grad = ops_of(model.net, "SpatialBNGradient")
    assert all(len(op.input) == 7 and args(op)["num_batches"] == len(devices) for op in bn_grad)
    sums = [op for op in ops_of(model.net, "Sum") if op.output[0].endswith("_combined")]
    assert sorted(op.output[0] for op in sums) == [
        "cpu_0/bn_b_grad_combined",
        "cpu_0/bn_s_grad_combined",
        "cpu_0/conv_sums_combined",
        "cpu_0/conv_sumsq_combined",
    ]


def test_combine_spatial_bn_running_stats_match_one_device():
    train(conv_bn_forward, conv_data(), [0], iters=2)
    ref = {s: workspace.FetchBlob("cpu_0/" + s) for s in ("bn_rm", "bn_riv")}
    workspace.ResetWorkspace()
    train(conv_bn_forward, conv_data(), [0, 1], iters=2, combine_spatial_bn=True)
    for d in (0, 1):
        for s, value in ref.items():
            np.testing.assert_allclose(
                workspace.FetchBlob("cpu_{}/{}".format(d, s)), value, rtol=1e-5, atol=1e-7
            )


def test_spatial_bn_without_combining_normalizes_per_device():
    ref = train(conv_bn_forward, conv_data(), [0])
    got = train(conv_bn_forward, conv_data(), [0, 1])
    assert not np.allclose(got[1], ref[1], rtol=1e-5)


def test_shared_model_keeps_one_copy_and_matches_one_device():
    ref = train(fc_forward, fc_data(), [0])
    model, losses, finals = got = train(fc_forward, fc_data(), [0, 1], shared_model=True)
    assert_same_training(ref, got)
    assert not workspace.HasBlob("cpu_1/fc1_w")
    assert [str(p) for p in model.params] == [
        "cpu_0/fc1_w",
        "cpu_0/fc1_b",
        "cpu_0/fc2_w",
        "cpu_0/fc2_b",
    ]
    assert len(ops_of(model.net, "MomentumSGDUpdate")) == 4
    replicas = {"cpu_1/fc1_w", "cpu_1/fc1_b", "cpu_1/fc2_w", "cpu_1/fc2_b"}
    for net in (model.net, model.param_init_net):
        assert not any(replicas & set(list(op.input) + list(op.output)) for op in net.Proto().op)
    fc = [op for op in ops_of(model.net, "FC") if op.output[0] == "cpu_1/fc1"]
    assert list(fc[0].input) == ["cpu_1/data", "cpu_0/fc1_w", "cpu_0/fc1_b"]
    # Gradients are summed into the master copy, never copied back.
    assert len(ops_of(model.net, "Copy")) == 0


@pytest.mark.parametrize("input_shapes", [None, {"data": [BATCH // 2, DIM_IN]}])
def test_optimize_gradient_memory_keeps_the_results(input_shapes):
    ref = train(fc_forward, fc_data(), [0])
    before = []

    def optimize(model):
        before.extend(op.type for op in model.net.Proto().op)
        dpm.OptimizeGradientMemory(model, input_shapes, {"relu_grad"}, False)

    model, _, _ = got = train(fc_forward, fc_data(), [0, 1], after=optimize)
    assert [op.type for op in model.net.Proto().op] == before
    outputs = {b for op in model.net.Proto().op for b in op.output}
    assert any("__m" in b and "shared" in b for b in outputs)
    assert {"cpu_0/relu_grad", "cpu_1/relu_grad"} <= outputs
    assert_same_training(ref, got)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(dynamic_memory_management=True, blobs_to_keep=["scaled_loss"]),
        dict(optimize_gradient_memory=True),
    ],
)
def test_memory_options_keep_the_trajectory(kwargs):
    ref = train(fc_forward, fc_data(), [0])
    got = train(fc_forward, fc_data(), [0, 1], **kwargs)
    assert_same_training(ref, got)
    if "dynamic_memory_management" in kwargs:
        assert ops_of(got[0].net, "Free")


def test_memory_options_are_exclusive():
    with pytest.raises(AssertionError):
        dpm.Parallelize_CPU(
            model_helper.ModelHelper(),
            no_input,
            fc_forward,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
            optimize_gradient_memory=True,
            dynamic_memory_management=True,
        )


# ---------------------------------------------------------- error cases


def test_non_cpu_device_scope_is_rejected():
    model = model_helper.ModelHelper()
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        with pytest.raises(AssertionError, match="device-scope"):
            dpm.Parallelize_CPU(model, no_input, fc_forward, optimizer_builder_fun=sgd, devices=[0])


def test_cpu_device_scope_is_accepted():
    model = model_helper.ModelHelper()
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        dpm.Parallelize_CPU(model, no_input, fc_forward, optimizer_builder_fun=sgd, devices=[0])
    assert model._grad_names


def test_forward_builder_must_return_a_list_of_losses():
    def forward(model, loss_scale):
        return fc_forward(model, loss_scale)[0]

    with pytest.raises(AssertionError, match="list of loss blobs"):
        dpm.Parallelize_CPU(
            model_helper.ModelHelper(), no_input, forward, optimizer_builder_fun=sgd, devices=[0, 1]
        )

    def forward_strings(model, loss_scale):
        return [str(fc_forward(model, loss_scale)[0])]

    with pytest.raises(AssertionError, match="list of loss blobs"):
        dpm.Parallelize_CPU(
            model_helper.ModelHelper(),
            no_input,
            forward_strings,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
        )


def test_param_update_and_optimizer_are_exclusive():
    with pytest.raises(AssertionError, match="only specify one"):
        dpm.Parallelize_CPU(
            model_helper.ModelHelper(),
            no_input,
            fc_forward,
            param_update_builder_fun=lambda m: None,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
        )


def test_shared_model_is_cpu_only():
    with pytest.raises(AssertionError, match="Shared model"):
        dpm.Parallelize_GPU(
            model_helper.ModelHelper(),
            no_input,
            fc_forward,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
            shared_model=True,
        )
