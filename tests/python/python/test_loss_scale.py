"""Dynamic loss scaling (beyond upstream): the UnscaleGradients / UpdateLossScale ops and the skip
input of the fp16 updates against numpy, and build_fp16_sgd(dynamic_loss_scale=True) training a
small model on the CPU: same parameters as without scaling, a step with an Inf skipped, the scale
backing off and growing."""
import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, optimizer, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def run_op(op_type, inputs, outputs, **kwargs):
    for name, value in inputs.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(core.CreateOperator(op_type, list(inputs), outputs, **kwargs))
    return [workspace.FetchBlob(o) for o in outputs]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_unscale_gradients_divides_and_flags_non_finite(dtype):
    g0 = np.array([2.0, -4.0, 8.0], dtype)
    g1 = np.array([[1.0, 3.0]], dtype)
    out = run_op(
        "UnscaleGradients",
        {"s": np.array([4.0], np.float32), "g0": g0, "g1": g1},
        ["g0", "g1", "found"],
    )
    np.testing.assert_array_equal(out[0], g0 / 4)
    np.testing.assert_array_equal(out[1], g1 / 4)
    assert out[0].dtype == dtype and out[2].tolist() == [False]
    g1[0, 1] = np.inf
    out = run_op(
        "UnscaleGradients",
        {"s": np.array([4.0], np.float32), "g0": g0, "g1": g1},
        ["g0", "g1", "found"],
    )
    assert out[2].tolist() == [True]
    g0[1] = np.nan
    out = run_op("UnscaleGradients", {"s": np.array([4.0], np.float32), "g0": g0}, ["g0", "found"])
    assert out[1].tolist() == [True]


def test_unscale_gradients_errors():
    workspace.FeedBlob("s", np.array([4.0], np.float32))
    workspace.FeedBlob("g", np.ones(3, np.float32))
    workspace.FeedBlob("i", np.ones(3, np.int32))
    with pytest.raises(
        RuntimeError,
        match=r"UnscaleGradients.*input 1 \('g'\) and output 0 "
        r"\('other'\) must be the same blob",
    ):
        workspace.RunOperatorOnce(
            core.CreateOperator("UnscaleGradients", ["s", "g"], ["other", "found"])
        )
    with pytest.raises(RuntimeError, match="must be float or float16"):
        workspace.RunOperatorOnce(
            core.CreateOperator("UnscaleGradients", ["s", "i"], ["i", "found"])
        )
    workspace.FeedBlob("s", np.array([4.0, 2.0], np.float32))
    with pytest.raises(RuntimeError, match="loss scale must be a one-element float tensor"):
        workspace.RunOperatorOnce(
            core.CreateOperator("UnscaleGradients", ["s", "g"], ["g", "found"])
        )


def test_update_loss_scale_backs_off_and_grows():
    args = dict(
        growth_factor=2.0,
        backoff_factor=0.25,
        growth_interval=3,
        min_loss_scale=2.0,
        max_loss_scale=64.0,
    )
    workspace.FeedBlob("s", np.array([16.0], np.float32))
    workspace.FeedBlob("good", np.array([0], np.int64))
    op = core.CreateOperator("UpdateLossScale", ["s", "good", "found"], ["s", "good"], **args)
    history = []
    for found in [False, False, False, False, True, True, True, False, False, False] + [False] * 15:
        workspace.FeedBlob("found", np.array([found]))
        workspace.RunOperatorOnce(op)
        history.append((float(workspace.FetchBlob("s")[0]), int(workspace.FetchBlob("good")[0])))
    assert history[:10] == [
        (16, 1),
        (16, 2),
        (32, 0),
        (32, 1),
        (8, 0),
        (2, 0),
        (2, 0),
        (2, 1),
        (2, 2),
        (4, 0),
    ]
    assert history[-1] == (64, 0)  # capped at max_loss_scale


def test_update_loss_scale_rejects_bad_arguments():
    workspace.FeedBlob("s", np.array([16.0], np.float32))
    workspace.FeedBlob("good", np.array([0], np.int64))
    workspace.FeedBlob("found", np.array([False]))
    with pytest.raises(RuntimeError, match="growth_interval must be >= 1"):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "UpdateLossScale", ["s", "good", "found"], ["s", "good"], growth_interval=0
            )
        )
    workspace.FeedBlob("good", np.array([0], np.int32))
    with pytest.raises(RuntimeError, match="good_steps must be a one-element int64 tensor"):
        workspace.RunOperatorOnce(
            core.CreateOperator("UpdateLossScale", ["s", "good", "found"], ["s", "good"])
        )


@pytest.mark.parametrize(
    "op_type,dtype", [("FP32MomentumSGDUpdate", np.float32), ("FP16MomentumSGDUpdate", np.float16)]
)
def test_updates_skip_when_told(op_type, dtype):
    g, m, p = (np.array([1.0, -2.0], dtype) for _ in range(3))
    lr = np.array([0.1], np.float32)
    for skip, changed in ((True, False), (False, True)):
        out = run_op(
            op_type,
            {"g": g, "m": m, "lr": lr, "p": p, "skip": np.array([skip])},
            ["g", "m", "p"],
            momentum=0.9,
        )
        assert (not np.array_equal(out[2], p)) == changed


def model_and_data(dynamic, **scale_args):
    model = model_helper.ModelHelper(name="ls_%d" % dynamic)
    rng = np.random.RandomState(0)
    fc1 = brew.fc(
        model,
        "data",
        "fc1",
        4,
        8,
        weight_init=("GivenTensorFill", {"values": rng.randn(8, 4).astype(np.float32)}),
    )
    relu = brew.relu(model, fc1, "relu")
    fc2 = brew.fc(
        model,
        relu,
        "fc2",
        8,
        3,
        weight_init=("GivenTensorFill", {"values": rng.randn(3, 8).astype(np.float32)}),
    )
    _, loss = model.SoftmaxWithLoss([fc2, "label"], ["softmax", "loss"])
    model.AddGradientOperators([loss])
    optimizer.build_fp16_sgd(
        model,
        0.05,
        momentum=0.9,
        weight_decay=0.0,
        dynamic_loss_scale=dynamic,
        loss_scale_args=scale_args or None,
    )
    workspace.FeedBlob("data", rng.randn(16, 4).astype(np.float32))
    workspace.FeedBlob("label", rng.randint(0, 3, 16).astype(np.int32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    return model


def params(model):
    return {str(p): workspace.FetchBlob(str(p)).copy() for p in model.params}


def test_net_scales_the_seed_and_unscales_before_the_updates():
    model = model_and_data(True)
    types = [op.type for op in model.net.Proto().op]
    seed = types.index("ConstantFill")
    assert types[seed + 1] == "Mul"  # the loss-gradient seed times the loss scale
    assert types.index("UnscaleGradients") < types.index("FP32MomentumSGDUpdate")
    assert types[-1] == "UpdateLossScale"
    unscale = model.net.Proto().op[types.index("UnscaleGradients")]
    assert unscale.input[0] == "loss_scale_cpu" and unscale.output[-1] == "found_nonfinite_cpu"
    assert sorted(unscale.input[1:]) == sorted(str(g) for g in model.param_to_grad.values())


def test_training_matches_unscaled_training_and_skips_non_finite_steps():
    plain = model_and_data(False)
    workspace.RunNet(plain.net, 5)
    expected = params(plain)
    workspace.ResetWorkspace()
    scaled = model_and_data(True, init_scale=1024.0, growth_interval=3)
    workspace.RunNet(scaled.net, 5)
    for name, value in params(scaled).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert workspace.FetchBlob("loss_scale_cpu").item() == 2048.0  # grew after 3 good steps
    before = params(scaled)
    data = workspace.FetchBlob("data")
    data[0, 0] = np.inf
    workspace.FeedBlob("data", data)
    workspace.RunNet(scaled.net)
    assert workspace.FetchBlob("found_nonfinite_cpu").tolist() == [True]
    for name, value in params(scaled).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    assert workspace.FetchBlob("loss_scale_cpu").item() == 1024.0  # backed off


def test_data_parallel_model_on_two_cpu_devices_skips_together():
    from caffe2.python import data_parallel_model as dpm

    def forward(model, loss_scale):
        fc = brew.fc(model, "data", "fc", 4, 3)
        _, loss = model.SoftmaxWithLoss([fc, "label"], ["softmax", "loss"])
        return [model.Scale(loss, "scaled_loss", scale=loss_scale)]

    model = model_helper.ModelHelper(name="dpm_ls")
    dpm.Parallelize_CPU(
        model,
        input_builder_fun=lambda m: None,
        forward_pass_builder_fun=forward,
        optimizer_builder_fun=lambda m: optimizer.build_fp16_sgd(
            m, 0.1, momentum=0.9, dynamic_loss_scale=True, loss_scale_args=dict(init_scale=256.0)
        ),
        devices=[0, 1],
    )
    types = [op.type for op in model.net.Proto().op]
    assert types.count("UnscaleGradients") == 1 and types.count("UpdateLossScale") == 1
    assert types.count("Mul") == 2  # both devices' loss-gradient seeds
    rng = np.random.RandomState(1)
    for d in (0, 1):
        workspace.FeedBlob("cpu_%d/data" % d, rng.randn(4, 4).astype(np.float32))
        workspace.FeedBlob("cpu_%d/label" % d, rng.randint(0, 3, 4).astype(np.int32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net, 2)
    before = {d: workspace.FetchBlob("cpu_%d/fc_w" % d).copy() for d in (0, 1)}
    np.testing.assert_allclose(before[0], before[1], rtol=1e-6)
    data = workspace.FetchBlob("cpu_1/data")
    data[2, 1] = np.nan
    workspace.FeedBlob("cpu_1/data", data)
    workspace.RunNet(model.net)
    for d in (0, 1):  # one device's NaN skips the step everywhere
        np.testing.assert_array_equal(workspace.FetchBlob("cpu_%d/fc_w" % d), before[d])
    assert workspace.FetchBlob("loss_scale_cpu").item() == 128.0
