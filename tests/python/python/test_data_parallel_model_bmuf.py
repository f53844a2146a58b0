"""data_parallel_model BMUF (block-wise model update filtering): the block update averaging the
replicas, momentum and Nesterov structure, and forward-only shared models."""
import numpy as np
import pytest

from caffe2.python import brew, model_helper, workspace
from caffe2.python import data_parallel_model as dpm

from dpm_test_util import (
    args,
    fc_data,
    fc_forward,
    feed_shards,
    no_input,
    params_of,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


# ----------------------------------------------------------------- BMUF


def test_bmuf_cpu_block_update_averages_the_replicas():
    def update(model):
        lr = model.param_init_net.ConstantFill([], "lr", shape=[1], value=-0.1)
        one = model.param_init_net.ConstantFill([], "one", shape=[1], value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name="bmuf")
    dpm.Parallelize_CPU_BMUF(
        model,
        no_input,
        fc_forward,
        update,
        devices=[0, 1],
        block_learning_rate=1.0,
        block_momentum=0.0,
    )
    nets = model._data_parallel_model_nets
    assert nets[0] is model.net and nets[1][1] == 1
    assert nets[1][0].Proto().name == "global_model"
    assert [n.Proto().name for n in model._data_parallel_model_init_nets] == [
        model.param_init_net.Proto().name,
        "global_model_init",
    ]
    x, y = fc_data()
    feed_shards(model, x, y)
    dpm.RunInitNet(model)
    start = params_of(model, 0)
    workspace.RunNet(model.net)
    local = [params_of(model, d) for d in (0, 1)]
    for name in start:
        assert not np.allclose(local[0][name], local[1][name]) or name.endswith("_b")
    workspace.RunNet("global_model")
    for name in start:
        avg = (local[0][name] + local[1][name]) / 2
        for d in (0, 1):
            np.testing.assert_allclose(
                workspace.FetchBlob("cpu_{}/{}".format(d, name)),
                avg,
                rtol=1e-5,
                atol=1e-7,
                err_msg=name,
            )


def test_bmuf_momentum_and_nesterov_structure():
    def update(model):
        lr = model.param_init_net.ConstantFill([], "lr", shape=[1], value=-0.1)
        one = model.param_init_net.ConstantFill([], "one", shape=[1], value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name="bmuf")
    dpm.Parallelize_CPU_BMUF(
        model, no_input, fc_forward, update, devices=[0, 1, 2, 3], nesterov=True
    )
    init_out = [op.output[0] for op in model._global_model_init_net.Proto().op]
    assert "cpu_0/fc1_w_v" in init_out and "cpu_0/fc1_w_g" in init_out
    assert "cpu_0/fc1_w_prev" in init_out
    scales = [
        args(op)["scale"]
        for op in model._global_model_param_updates_net.Proto().op
        if op.type == "Scale" and op.output[0] == "cpu_0/fc1_w_v"
    ]
    assert scales == [pytest.approx(0.75)]  # 1 - 1/#devices


def test_forward_only_shared_model_reads_master_params():
    """Beyond upstream: a test model parallelized with shared_model reads cpu_0's params on every
    device (upstream left cpu_1/... inputs that a shared training model never creates)."""
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="fwd_shared", init_params=False)

    def forward(m, loss_scale):
        brew.fc(m, "data", "fc", 4, 2)
        return []

    dpm.Parallelize(
        model,
        input_builder_fun=lambda m: None,
        forward_pass_builder_fun=forward,
        devices=[0, 1],
        cpu_device=True,
        shared_model=True,
    )
    inputs = [i for op in model.net.Proto().op for i in op.input]
    assert "cpu_0/fc_w" in inputs and "cpu_1/data" in inputs
    assert not any(i.startswith("cpu_1/fc_") for i in inputs)
