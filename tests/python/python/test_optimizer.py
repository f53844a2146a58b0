"""optimizer: update ops, blob names and learning rates.

Updates made of operators that exist now (WeightedSum, LearningRate,
AtomicIter) are run and compared with numpy. The others are checked on the
NetDef they produce (their op types registered in Python only for the
test); their numeric checks skip themselves until the operators exist."""

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, optimizer, workspace
from caffe2.python.modeling.initializers import PseudoFP16Initializer
from caffe2.python.optimizer_context import UseOptimizer
from op_registry_util import pretend_registered


def args(op):
    out = {}
    for a in op.arg:
        if a.HasField("f"):
            out[a.name] = round(a.f, 6)  # stored as float32
        elif a.HasField("i"):
            out[a.name] = a.i
        elif a.HasField("s"):
            out[a.name] = a.s.decode()
        else:
            out[a.name] = list(a.ints) or list(a.floats)
    return out


def ops_of(net, op_type):
    return [op for op in net.Proto().op if op.type == op_type]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


W0 = np.array([[0.5, -0.25, 1.0]], dtype=np.float32)
X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=np.float32)


def linear_model(name):
    """fc (1 output) on X with AveragedLoss; dloss/dW = mean of X rows...
    summed over the batch with weight 1/2."""
    model = model_helper.ModelHelper(name=name)
    fc = brew.fc(
        model,
        "data",
        "fc",
        3,
        1,
        weight_init=("GivenTensorFill", {"values": W0}),
        bias_init=("ConstantFill", {"value": 0.0}),
    )
    model.AddGradientOperators([model.AveragedLoss(fc, "loss")])
    workspace.FeedBlob("data", X)
    return model


W_GRAD = X.sum(axis=0, keepdims=True) / 2.0  # constant: loss is linear


def run(model, iters):
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net, iters)


def test_plain_sgd_matches_numpy():
    model = linear_model("sgd")
    opt = optimizer.build_sgd(model, base_learning_rate=0.1)
    run(model, 3)
    np.testing.assert_allclose(workspace.FetchBlob("fc_w"), W0 - 3 * 0.1 * W_GRAD, rtol=1e-5)
    lr_name = opt.get_cpu_blob_name("lr")
    assert lr_name == "SgdOptimizer_%d_lr_cpu" % opt._instance_num
    # Plain SGD keeps the negative rate (WeightedSum adds lr * grad).
    np.testing.assert_allclose(workspace.FetchBlob(lr_name), -0.1)
    assert workspace.FetchBlob("optimizer_iteration").tolist() == [3]

    ws = ops_of(model.net, "WeightedSum")
    assert [list(o.input) for o in ws] == [
        ["fc_w", "ONE_0_0", "fc_w_grad", lr_name],
        ["fc_b", "ONE_0_0", "fc_b_grad", lr_name],
    ]
    init_out = [o.output[0] for o in model.param_init_net.Proto().op]
    assert init_out.count("ONE_0_0") == 1
    assert "optimizer_iteration" in init_out and "iteration_mutex" in init_out
    it_op = ops_of(model.net, "AtomicIter")[0]
    assert list(it_op.input) == ["iteration_mutex", "optimizer_iteration"]
    shared = [str(b) for b in opt.get_auxiliary_parameters().shared]
    assert set(shared) == {"ONE_0_0"}


def test_step_policy_kwargs_reach_learning_rate():
    model = linear_model("step")
    opt = optimizer.build_sgd(model, 0.5, policy="step", stepsize=2, gamma=0.1)
    lr_op = ops_of(model.net, "LearningRate")[0]
    assert args(lr_op) == {"base_lr": -0.5, "policy": "step", "stepsize": 2, "gamma": 0.1}
    lr = opt.get_cpu_blob_name("lr")
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    seen = []
    for _ in range(4):
        workspace.RunNet(model.net)
        seen.append(float(workspace.FetchBlob(lr)))
    # Iterations 1..4: steps at 2 and 4.
    np.testing.assert_allclose(seen, [-0.5, -0.05, -0.05, -0.005], rtol=1e-5)


def test_linear_scaling_with_gradual_warmup():
    model = linear_model("warm")
    opt = optimizer.build_sgd(model, 0.1, batch_size=1024, reference_batch_size=256, warmup_iters=4)
    lr = opt.get_cpu_blob_name("lr")
    types = [o.type for o in model.net.Proto().op if o.output[0].startswith(lr)]
    assert types == ["LearningRate", "LearningRate", "WeightedSum"]
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    seen = []
    for _ in range(6):
        workspace.RunNet(model.net)
        seen.append(float(workspace.FetchBlob(lr)))
    # Scaled rate 0.4, ramped from the unscaled 0.1 over 4 iterations.
    expected = [-0.4 * min(1.0, 0.25 + 0.75 * i / 4) for i in range(1, 7)]
    np.testing.assert_allclose(seen, expected, rtol=1e-5)

    opt = optimizer.SgdOptimizer(0.1, batch_size=128)
    assert opt.base_learning_rate == pytest.approx(0.05)
    with pytest.raises(AssertionError, match="positive"):
        optimizer.SgdOptimizer(0.1, batch_size=0)


def test_zero_learning_rate_adds_nothing():
    model = linear_model("zero")
    optimizer.build_sgd(model, 0.0)
    assert not ops_of(model.net, "WeightedSum")


def test_weight_decay_builder_matches_numpy():
    model = linear_model("wd")
    optimizer.add_weight_decay(model, 0.5)
    ws = ops_of(model.net, "WeightedSum")
    assert len(ws) == 1  # weights only
    assert list(ws[0].input) == ["fc_w_grad", "ONE_0_0", "fc_w", "wd_0_0"]
    run(model, 1)
    np.testing.assert_allclose(workspace.FetchBlob("fc_w_grad"), W_GRAD + 0.5 * W0, rtol=1e-6)


def test_momentum_sgd_net_structure():
    with pretend_registered("MomentumSGDUpdate"):
        model = linear_model("mom")
        opt = optimizer.build_sgd(
            model, 0.1, momentum=0.9, nesterov=1, policy="step", stepsize=10, gamma=0.5
        )
    lr = opt.get_cpu_blob_name("lr")
    # Negated twice: MomentumSGDUpdate takes a positive rate.
    assert args(ops_of(model.net, "LearningRate")[0])["base_lr"] == 0.1
    upd = ops_of(model.net, "MomentumSGDUpdate")
    assert [list(o.input) for o in upd] == [
        ["fc_w_grad", "fc_w_momentum", lr, "fc_w"],
        ["fc_b_grad", "fc_b_momentum", lr, "fc_b"],
    ]
    assert list(upd[0].output) == ["fc_w_grad", "fc_w_momentum", "fc_w"]
    assert args(upd[0]) == {"momentum": 0.9, "nesterov": 1}
    mom_init = [o for o in model.param_init_net.Proto().op if o.output[0] == "fc_w_momentum"][0]
    assert list(mom_init.input) == ["fc_w"] and args(mom_init)["value"] == 0
    local = [str(b) for b in opt.get_auxiliary_parameters().local]
    assert local == ["fc_w_momentum", "fc_b_momentum"]


def test_gpu_device_scope_blob_names():
    with pretend_registered("MomentumSGDUpdate"):
        model = model_helper.ModelHelper(name="gpu")
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
            fc = brew.fc(model, "d", "fc", 2, 1, weight_init=("ConstantFill", {"value": 1.0}))
            model.AddGradientOperators([model.AveragedLoss(fc, "l")])
        opt = optimizer.build_multi_precision_sgd(model, 0.1, momentum=0.9)
    name = opt.get_gpu_blob_name("lr", 1, "")
    assert name == "MultiPrecisionSgdOptimizer_%d_lr_gpu1" % opt._instance_num
    upd = ops_of(model.net, "MomentumSGDUpdate")[0]
    assert list(upd.input)[2] == name
    assert upd.device_option.device_type == caffe2_pb2.CUDA
    assert upd.device_option.cuda_gpu_id == 1
    assert "ONE_1_1" in [o.output[0] for o in model.param_init_net.Proto().op]
    # The iteration counter stays on the CPU.
    it_init = [o for o in model.param_init_net.Proto().op if o.output[0] == "optimizer_iteration"][
        0
    ]
    assert it_init.device_option.device_type == caffe2_pb2.CPU


def test_multi_precision_sgd_on_pseudo_fp16_params():
    with pretend_registered("FloatToHalf", "HalfToFloat", "MomentumSGDUpdate", "XavierFill"):
        model = model_helper.ModelHelper(name="mp")
        fc = brew.fc(
            model,
            "d",
            "fc",
            2,
            1,
            WeightInitializer=PseudoFP16Initializer,
            BiasInitializer=PseudoFP16Initializer,
        )
        model.AddGradientOperators([model.AveragedLoss(fc, "l")])
        info = model.get_param_info(model.params[0])
        assert str(info.blob_copy[core.DataType.FLOAT]) == "fc_w_fp32"
        init = [(o.type, o.output[0]) for o in model.param_init_net.Proto().op][:2]
        assert init == [("XavierFill", "fc_w_fp32"), ("FloatToHalf", "fc_w")]
        optimizer.build_multi_precision_sgd(model, 0.1, momentum=0.9)
    types = [o.type for o in model.net.Proto().op[-3:]]
    assert types == ["HalfToFloat", "MomentumSGDUpdate", "FloatToHalf"]
    h2f, upd, f2h = model.net.Proto().op[-3:]
    assert list(h2f.output) == ["fc_b_grad_fp32"]
    assert list(upd.input)[3] == "fc_b_fp32"
    assert (list(f2h.input), list(f2h.output)) == (["fc_b_fp32"], ["fc_b"])


def test_fp16_sgd_uses_fp32_update_for_spatbn():
    with pretend_registered(
        "FloatToHalf", "FP16MomentumSGDUpdate", "FP32MomentumSGDUpdate", "SpatialBN"
    ):
        model = model_helper.ModelHelper(name="fp16")
        out = brew.fc(
            model,
            "d",
            "fc",
            2,
            2,
            WeightInitializer=PseudoFP16Initializer,
            weight_init=("ConstantFill", {}),
            bias_init=("ConstantFill", {}),
            BiasInitializer=PseudoFP16Initializer,
        )
        out = brew.spatial_bn(model, out, "spatbn", 2, is_test=False)
        # SpatialBN has no gradient maker yet: name the gradients by hand.
        model.gradient_ops_added = True
        model.grad_map = {str(p): core.BlobReference(str(p) + "_grad") for p in model.params}
        optimizer.build_fp16_sgd(model, 0.1, momentum=0.9, weight_decay=1e-4)
    fp16 = ops_of(model.net, "FP16MomentumSGDUpdate")
    fp32 = ops_of(model.net, "FP32MomentumSGDUpdate")
    assert [list(o.input)[3] for o in fp16] == ["fc_w", "fc_b"]
    assert [list(o.input)[3] for o in fp32] == ["spatbn_s", "spatbn_b"]
    assert args(fp16[0])["weight_decay"] == pytest.approx(1e-4)


def test_adam_adagrad_rmsprop_structure():
    with pretend_registered("Adam", "Adagrad", "RmsProp", "MomentumSGDUpdate"):
        model = linear_model("adam")
        opt = optimizer.build_adam(model, 0.01, beta1=0.8)
        adam = ops_of(model.net, "Adam")[0]
        lr = opt.get_cpu_blob_name("lr")
        assert list(adam.input) == [
            "fc_w",
            "fc_w_first_moment",
            "fc_w_second_moment",
            "fc_w_grad",
            lr,
            "optimizer_iteration",
        ]
        assert list(adam.output) == ["fc_w", "fc_w_first_moment", "fc_w_second_moment"]
        assert args(adam)["beta1"] == pytest.approx(0.8)
        assert args(ops_of(model.net, "LearningRate")[0])["base_lr"] == pytest.approx(-0.01)

        workspace.ResetWorkspace()
        model = linear_model("adagrad")
        opt = optimizer.build_adagrad(model, 0.1, epsilon=1e-6)
        ada = ops_of(model.net, "Adagrad")[0]
        assert list(ada.input)[:3] == ["fc_w", "fc_w_squared_sum", "fc_w_grad"]
        assert args(ada) == {"epsilon": pytest.approx(1e-6), "decay": 1.0}

        workspace.ResetWorkspace()
        model = linear_model("rms")
        optimizer.build_rms_prop(model, 0.1, decay=0.95)
        rms = ops_of(model.net, "RmsProp")[0]
        assert list(rms.input) == ["fc_w_grad", "fc_w_mean_squares", "fc_w_momentum", "ONE_0_0"]
        assert list(rms.output)[0] == "fc_w_grad_o"
        assert ops_of(model.net, "MomentumSGDUpdate")


def test_gradient_clipping_and_lr_injection_structure():
    with pretend_registered("SumSqrElements", "Pow", "Max", "Div", "Mul"):
        model = linear_model("clip")
        opt = optimizer.build_sgd(model, 0.1, max_gradient_norm=1.0, allow_lr_injection=True)
    names = [o.output[0] for o in model.net.Proto().op]
    for blob in [
        "norm_clipped_grad_update/grad_0_squared_sum",
        "norm_clipped_grad_update/grad_squared_full_sum",
        "norm_clipped_grad_update/global_norm",
        "norm_clipped_grad_update/max_norm",
        "norm_clipped_grad_update/norm_ratio",
        "lr_multiplier",
        opt.get_cpu_blob_name("scaled_lr"),
    ]:
        assert blob in names, blob
    init = [o.output[0] for o in model.param_init_net.Proto().op]
    assert "lr_injection" in init
    assert "norm_clipped_grad_update/clip_norm" in init
    ws = ops_of(model.net, "WeightedSum")[0]
    assert list(ws.input)[3] == opt.get_cpu_blob_name("scaled_lr")


def test_lr_injection_feed_and_fetch():
    optimizer.set_lr_injection(0.5)
    assert optimizer.get_lr_injection().tolist() == [0.5]


def test_optimizer_context_attaches_per_param_optimizer():
    model = model_helper.ModelHelper(name="ctx")
    special = optimizer.SgdOptimizer(0.5)
    with UseOptimizer({"WEIGHT": special}):
        fc = brew.fc(model, "data", "fc", 3, 1, weight_init=("GivenTensorFill", {"values": W0}))
    assert model.get_param_info(model.params[0]).optimizer is special
    assert model.get_param_info(model.params[1]).optimizer is None
    model.AddGradientOperators([model.AveragedLoss(fc, "loss")])
    default = optimizer.build_sgd(model, 0.1)
    lrs = [list(o.input)[3] for o in ops_of(model.net, "WeightedSum")]
    assert lrs == [special.get_cpu_blob_name("lr"), default.get_cpu_blob_name("lr")]


def test_optimizer_call_with_param_and_grad():
    net, init = core.Net("call"), core.Net("call_init")
    init.ConstantFill([], "w", shape=[2], value=1.0)
    net.ConstantFill([], "w_grad", shape=[2], value=2.0)
    optimizer.SgdOptimizer(0.25)(net, init, "w", "w_grad")
    workspace.RunNetOnce(init)
    workspace.RunNetOnce(net)
    np.testing.assert_allclose(workspace.FetchBlob("w"), [0.5, 0.5])


def test_instance_counter_per_class():
    a, b = optimizer.AdamOptimizer(), optimizer.AdamOptimizer()
    assert b._instance_num == a._instance_num + 1
    assert a.get_cpu_blob_name("lr", "n1") == "AdamOptimizer_%d_lrn1_cpu" % a._instance_num


def _needs(*ops):
    missing = [op for op in ops if not workspace.C.OpSchema.get(op)]
    return pytest.mark.skipif(bool(missing), reason="needs operators {}".format(missing))


def _run_two_steps(model):
    run(model, 2)
    return workspace.FetchBlob("fc_w")


@_needs("MomentumSGDUpdate")
@pytest.mark.parametrize("nesterov", [0, 1])
def test_momentum_sgd_matches_numpy(nesterov):
    model = linear_model("mom_run_%d" % nesterov)
    optimizer.build_sgd(model, 0.1, momentum=0.9, nesterov=nesterov)
    w, m = W0.copy(), np.zeros_like(W0)
    for _ in range(2):
        if nesterov:
            m_new = 0.9 * m + 0.1 * W_GRAD
            w = w - ((1 + 0.9) * m_new - 0.9 * m)
            m = m_new
        else:
            m = 0.9 * m + 0.1 * W_GRAD
            w = w - m
    np.testing.assert_allclose(_run_two_steps(model), w, rtol=1e-5)


@_needs("Adam")
def test_adam_matches_numpy():
    model = linear_model("adam_run")
    optimizer.build_adam(model, 0.01)
    w = W0.copy()
    m1, m2 = np.zeros_like(w), np.zeros_like(w)
    for it in (1, 2):  # optimizer_iteration after AtomicIter
        t = it + 1
        m1 = 0.9 * m1 + 0.1 * W_GRAD
        m2 = 0.999 * m2 + 0.001 * W_GRAD**2
        corr = np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w = w - 0.01 * corr * m1 / (np.sqrt(m2) + 1e-8)
    np.testing.assert_allclose(_run_two_steps(model), w, rtol=1e-4)


@_needs("Adagrad")
def test_adagrad_matches_numpy():
    model = linear_model("adagrad_run")
    optimizer.build_adagrad(model, 0.1)
    w, h = W0.copy(), np.zeros_like(W0)
    for _ in range(2):
        h = h + W_GRAD**2
        w = w - 0.1 * W_GRAD / (np.sqrt(h) + 1e-4)
    np.testing.assert_allclose(_run_two_steps(model), w, rtol=1e-4)


@_needs("SumSqrElements", "Pow", "Max", "Div", "Mul")
def test_gradient_clipping_matches_numpy():
    model = linear_model("clip_run")
    optimizer.build_sgd(model, 0.1, max_gradient_norm=0.5)
    norm = np.sqrt((W_GRAD**2).sum() + 1.0**2)  # fc_b grad: two rows x 0.5
    ratio = 0.5 / max(norm, 0.5)
    np.testing.assert_allclose(_run_two_steps(model), W0 - 2 * 0.1 * ratio * W_GRAD, rtol=1e-5)
