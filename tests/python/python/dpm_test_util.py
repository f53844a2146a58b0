"""Shared models, data and helpers of the data_parallel_model tests."""
import numpy as np

from caffe2.python import brew, core, model_helper, optimizer, workspace
from caffe2.python import data_parallel_model as dpm
from op_registry_util import pretend_registered  # noqa: F401 (re-exported to the tests)

COLLECTIVES = (
    "CreateCommonWorld",
    "CloneCommonWorld",
    "Allreduce",
    "Broadcast",
    "Barrier",
    "NCCLAllreduce",
    "NCCLBroadcast",
)
GLOO = dict(kv_handler="store_handler", shard_id=0, num_shards=2, engine="GLOO")
BATCH, DIM_IN, HIDDEN, CLASSES = 8, 5, 6, 3


def args(op):
    out = {}
    for a in op.arg:
        if a.HasField("f"):
            out[a.name] = a.f
        elif a.HasField("i"):
            out[a.name] = a.i
        elif a.HasField("s"):
            out[a.name] = a.s.decode()
        else:
            out[a.name] = list(a.ints) or list(a.floats)
    return out


def ops_of(net, op_type):
    return [op for op in net.Proto().op if op.type == op_type]


# ---------------------------------------------------------------- models


def no_input(model):
    pass


def fc_forward(model, loss_scale):
    fc1 = brew.fc(model, "data", "fc1", DIM_IN, HIDDEN)
    relu = brew.relu(model, fc1, "relu")
    fc2 = brew.fc(model, relu, "fc2", HIDDEN, CLASSES)
    _, loss = model.SoftmaxWithLoss([fc2, "label"], ["softmax", "loss"])
    return [model.Scale(loss, "scaled_loss", scale=loss_scale)]


def conv_bn_forward(model, loss_scale):
    conv = brew.conv(model, "data", "conv", 2, 4, kernel=3, pad=1)
    bn = brew.spatial_bn(model, conv, "bn", 4, epsilon=1e-3, momentum=0.9, is_test=False)
    relu = brew.relu(model, bn, "relu")
    fc = brew.fc(model, relu, "fc", 4 * 4 * 4, CLASSES)
    _, loss = model.SoftmaxWithLoss([fc, "label"], ["softmax", "loss"])
    return [model.Scale(loss, "scaled_loss", scale=loss_scale)]


def sgd(model):
    return optimizer.build_sgd(model, 0.1, momentum=0.9)


def fc_data(seed=0):
    rng = np.random.RandomState(seed)
    return (
        rng.randn(BATCH, DIM_IN).astype(np.float32),
        rng.randint(0, CLASSES, BATCH).astype(np.int32),
    )


def conv_data(seed=0):
    rng = np.random.RandomState(seed)
    return (
        rng.randn(BATCH, 2, 4, 4).astype(np.float32),
        rng.randint(0, CLASSES, BATCH).astype(np.int32),
    )


def feed_shards(model, x, y):
    devices = model._devices
    n = len(x) // len(devices)
    for i, d in enumerate(devices):
        workspace.FeedBlob("cpu_{}/data".format(d), x[i * n : (i + 1) * n])
        workspace.FeedBlob("cpu_{}/label".format(d), y[i * n : (i + 1) * n])


def params_of(model, device):
    prefix = "cpu_{}/".format(device)
    return {str(p)[len(prefix) :]: workspace.FetchBlob(str(p)) for p in model.GetParams(prefix)}


def train(forward, data, devices, iters=3, after=None, **kwargs):
    """Trains a Parallelize_CPU model on `data` split over `devices`, from
    fixed initial parameters; returns (model, per-iteration global losses,
    final parameters of every device). after(model) runs after
    Parallelize."""
    model = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(
        model, no_input, forward, optimizer_builder_fun=sgd, devices=devices, **kwargs
    )
    if after is not None:
        after(model)
    x, y = data
    feed_shards(model, x, y)
    dpm.RunInitNet(model)
    rng = np.random.RandomState(42)
    for name in sorted(params_of(model, devices[0])):
        value = workspace.FetchBlob("cpu_{}/{}".format(devices[0], name))
        fixed = rng.uniform(-0.5, 0.5, value.shape).astype(np.float32)
        for d in devices:
            if not (kwargs.get("shared_model") and d != devices[0]):
                workspace.FeedBlob("cpu_{}/{}".format(d, name), fixed)
    losses = []
    for _ in range(iters):
        dpm.RunNet(model, 1)
        losses.append(
            sum(float(workspace.FetchBlob("cpu_{}/scaled_loss".format(d))) for d in devices)
        )
    finals = {
        d: params_of(model, d)
        for d in devices
        if not (kwargs.get("shared_model") and d != devices[0])
    }
    return model, losses, finals


def assert_same_training(ref, got):
    _, ref_losses, ref_params = ref
    _, losses, params = got
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    for d in params:
        assert sorted(params[d]) == sorted(ref_params[0])
        for name, value in params[d].items():
            np.testing.assert_allclose(
                value, ref_params[0][name], rtol=1e-5, atol=1e-6, err_msg=name
            )


def built_model(devices=(0, 1), forward=fc_forward, **kwargs):
    model = model_helper.ModelHelper(name="dpm_test")
    dpm.Parallelize_CPU(
        model, no_input, forward, optimizer_builder_fun=sgd, devices=list(devices), **kwargs
    )
    return model


def run_init(model):
    feed_shards(model, *fc_data())
    dpm.RunInitNet(model)


# Nets built for devices or hosts this machine lacks (the collectives pretend to be registered).


def gpu_model(devices, **kwargs):
    model = model_helper.ModelHelper(name="dpm_gpu")
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(
            model, no_input, fc_forward, optimizer_builder_fun=sgd, devices=devices, **kwargs
        )
    return model


def gloo_model(devices=(0, 1), forward=fc_forward, rendezvous=None, **kwargs):
    model = model_helper.ModelHelper(name="dpm_gloo")
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_CPU(
            model,
            no_input,
            forward,
            optimizer_builder_fun=sgd,
            devices=list(devices),
            rendezvous=rendezvous or dict(GLOO),
            **kwargs,
        )
    return model


# Whether this build has the NCCL engine of the collectives.
HAS_NCCL = core.IsOperatorWithEngine("Allreduce", "NCCL")
