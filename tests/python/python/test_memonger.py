"""memonger: the C++ blob-recycling passes give nets that compute
bit-identical results with fewer blobs."""
import copy
import importlib.util

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, memonger, model_helper, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


DIMS = [5, 8, 8, 8, 8, 3]


def mlp(name, scope="gpu_0", with_grads=True):
    rng = np.random.RandomState(0)
    model = model_helper.ModelHelper(name=name)
    with core.NameScope(scope):
        x = "data"
        for i in range(len(DIMS) - 1):
            w = rng.randn(DIMS[i + 1], DIMS[i]).astype(np.float32)
            x = brew.fc(
                model,
                x,
                "fc%d" % i,
                DIMS[i],
                DIMS[i + 1],
                weight_init=("GivenTensorFill", {"values": w}),
            )
        loss = model.AveragedLoss(x, "loss")
    if with_grads:
        model.AddGradientOperators([loss])
    workspace.FeedBlob(
        (scope + "/" if scope else "") + "data", rng.randn(4, DIMS[0]).astype(np.float32)
    )
    workspace.RunNetOnce(model.param_init_net)
    return model, loss


def blob_names(netdef):
    return {b for op in netdef.op for b in list(op.input) + list(op.output)}


def run_and_fetch(netdef, names):
    workspace.RunNetOnce(netdef)
    return {n: workspace.FetchBlob(n) for n in names}


@pytest.mark.parametrize("net_type", ["simple", "dag"])
@pytest.mark.parametrize("share_activations", [False, True])
def test_share_grad_blobs_is_bit_identical(net_type, share_activations):
    model, loss = mlp("mem_%s_%d" % (net_type, share_activations))
    model.net.Proto().type = net_type
    model.net.Proto().num_workers = 4
    grads = [str(g) for g in model.param_to_grad.values()]
    expected = run_and_fetch(model.net.Proto(), grads + [str(loss)])

    optim = memonger.share_grad_blobs(
        model.net,
        [loss],
        set(model.param_to_grad.values()),
        "gpu_0",
        share_activations=share_activations,
    )
    shared = sorted(b for b in blob_names(optim) if b.endswith("_shared"))
    assert shared and all(b.startswith("gpu_0/__m") for b in shared)
    assert len(blob_names(optim)) < len(blob_names(model.net.Proto()))
    # Parameter gradients, parameters and the loss keep their names.
    for name in grads + [str(p) for p in model.params] + [str(loss)]:
        assert name in blob_names(optim)
    assert memonger.verify_graph_equality(model.net.Proto(), optim)
    assert memonger.verify_inplace_blobs(model.net.Proto(), optim)

    workspace.RunNetOnce(model.param_init_net)
    got = run_and_fetch(optim, grads + [str(loss)])
    for name in expected:
        assert np.array_equal(expected[name], got[name]), name

    # The caller installs the result, as upstream scripts do.
    model.net._net = optim
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net, overwrite=True)
    workspace.RunNet(model.net)
    for name in grads:
        assert np.array_equal(expected[name], workspace.FetchBlob(name))


def test_activations_are_only_shared_on_request():
    model, loss = mlp("act")
    grads_only = memonger.share_grad_blobs(
        model.net, [loss], set(model.param_to_grad.values()), "gpu_0/"
    )
    activations = {"gpu_0/fc%d" % i for i in range(5)}
    assert activations <= blob_names(grads_only)  # activations untouched
    with_act = memonger.share_grad_blobs(
        model.net, [loss], set(model.param_to_grad.values()), "gpu_0/", share_activations=True
    )
    assert len(blob_names(with_act)) <= len(blob_names(grads_only))
    renamed = activations - blob_names(with_act)
    # The last two activations are kept (usually read afterwards).
    assert renamed <= {"gpu_0/fc0", "gpu_0/fc1", "gpu_0/fc2"}


def test_dont_share_blobs_and_blob_shapes():
    model, loss = mlp("dont")
    keep = {"gpu_0/fc2_grad", "gpu_0/fc1_grad"}
    shapes = {"gpu_0/fc%d_grad" % i: [4, DIMS[i + 1]] for i in range(5)}
    optim = memonger.share_grad_blobs(
        model.net,
        [loss],
        set(model.param_to_grad.values()),
        "gpu_0",
        dont_share_blobs=keep,
        blob_shapes=shapes,
    )
    assert keep <= blob_names(optim)


def test_other_namescope_is_not_shared():
    model, loss = mlp("other")
    optim = memonger.share_grad_blobs(model.net, [loss], set(model.param_to_grad.values()), "gpu_1")
    assert optim == model.net.Proto()


def test_optimize_inference_fast_is_bit_identical():
    model, _ = mlp("inf", scope="", with_grads=False)
    proto = model.net.Proto()
    proto.external_output.extend(["fc4"])
    expected = run_and_fetch(proto, ["fc4"])
    statics = [str(p) for p in model.params] + ["data"]
    optim = memonger.optimize_inference_fast(proto, statics)
    names = blob_names(optim)
    assert {"__m0_shared", "fc4", "data"} <= names
    assert not {"fc0", "fc1", "fc2"} & names
    assert memonger.verify_graph_equality(proto, optim)
    assert np.array_equal(run_and_fetch(optim, ["fc4"])["fc4"], expected["fc4"])


def test_optimize_inference_for_dag():
    model, _ = mlp("infdag", scope="", with_grads=False)
    proto = model.net.Proto()
    proto.external_output.extend(["loss"])
    expected = run_and_fetch(proto, ["loss"])
    optim = memonger.optimize_inference_for_dag(model.net, ["data"])
    assert len(blob_names(optim)) < len(blob_names(proto))
    assert np.array_equal(run_and_fetch(optim, ["loss"])["loss"], expected["loss"])


def test_verify_graph_equality_detects_changes():
    model, loss = mlp("verify")
    proto = model.net.Proto()
    broken = copy.deepcopy(proto)
    # Make the second FC read the first FC's input instead of its output.
    broken.op[1].input[0] = broken.op[0].input[0]
    assert not memonger.verify_graph_equality(proto, broken)
    fewer = copy.deepcopy(proto)
    del fewer.op[-1]
    assert not memonger.verify_graph_equality(proto, fewer)
    inplace = copy.deepcopy(proto)
    inplace.op[0].output[0] = inplace.op[0].input[0]
    assert not memonger.verify_inplace_blobs(proto, inplace)


def test_release_blobs_when_used():
    model, _ = mlp("free", scope="", with_grads=False)
    proto = model.net.Proto()
    released = memonger.release_blobs_when_used(proto, {"fc1"})
    types = [op.type for op in released.op]
    assert types.count("Free") == 4  # fc0, fc2, fc3, fc4 (not fc1)
    frees = {op.input[0]: i for i, op in enumerate(released.op) if op.type == "Free"}
    assert set(frees) == {"fc0", "fc2", "fc3", "fc4"}
    for blob, index in frees.items():
        later = released.op[index + 1 :]
        assert all(blob not in op.input for op in later)
    assert len(proto.op) == 6  # the input is not modified


def test_bad_op_index_is_an_error():
    model, loss = mlp("bad")
    with pytest.raises(RuntimeError, match="op index 99 out of range"):
        workspace.C.memonger_compute_blob_recycling_for_dag(
            model.net.Proto().SerializeToString(), [str(loss)], [99], set(), "", set(), {}
        )


def test_estimate_memory_usage():
    model, _ = mlp("est", scope="", with_grads=False)
    shapes, types = workspace.InferShapesAndTypes([model.net])
    total, peak, by_op = memonger.estimate_memory_usage(
        [copy.deepcopy(model.net.Proto())], shapes, types, caffe2_pb2.DeviceOption()
    )
    assert total >= peak > 0 and by_op["FC"] > 0


@pytest.mark.skipif(
    importlib.util.find_spec("networkx") is None, reason="needs networkx (python3-networkx)"
)
def test_optimize_interference_python_pass():
    model, _ = mlp("nx", scope="", with_grads=False)
    proto = model.net.Proto()
    expected = run_and_fetch(proto, ["loss"])
    statics = {str(p) for p in model.params} | {"data", "loss"}
    result = memonger.optimize_interference(proto, statics)
    memonger.verify_assignments(result.assignments)
    assert result.blob_assignments
    assert np.array_equal(run_and_fetch(result.net, ["loss"])["loss"], expected["loss"])


def test_fan_out_gradient_accumulation_is_bit_identical():
    """A blob read by two ops gets its gradient summed from two
    contributions (`_<grad>_autosplit_0` + Sum): shared blobs must keep
    that intact."""
    rng = np.random.RandomState(3)
    model = model_helper.ModelHelper(name="fanout")
    with core.NameScope("gpu_0"):
        init = lambda shape: ("GivenTensorFill", {"values": rng.randn(*shape).astype(np.float32)})
        h = brew.fc(model, "data", "h", 4, 6, weight_init=init((6, 4)))
        a = brew.fc(model, h, "a", 6, 3, weight_init=init((3, 6)))
        b = brew.fc(model, h, "b", 6, 3, weight_init=init((3, 6)))
        s = model.net.Sum([a, b], "s")
        c = brew.fc(model, s, "c", 3, 2, weight_init=init((2, 3)))
        loss = model.AveragedLoss(c, "loss")
    model.AddGradientOperators([loss])
    assert any("autosplit" in o for op in model.net.Proto().op for o in op.output)
    workspace.FeedBlob("gpu_0/data", rng.randn(5, 4).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    grads = [str(g) for g in model.param_to_grad.values()]
    expected = run_and_fetch(model.net.Proto(), grads)
    optim = memonger.share_grad_blobs(
        model.net, [loss], set(model.param_to_grad.values()), "gpu_0", share_activations=True
    )
    assert any(b.endswith("_shared") for b in blob_names(optim))
    workspace.RunNetOnce(model.param_init_net)
    got = run_and_fetch(optim, grads)
    for name in grads:
        assert np.array_equal(expected[name], got[name]), name


def test_blobs_on_different_devices_are_not_shared():
    net = caffe2_pb2.NetDef()
    net.name = "devices"
    net.external_input.extend(["x"])
    net.external_output.extend(["out"])
    cpu = core.DeviceOption(caffe2_pb2.CPU, 0)
    gpu = core.DeviceOption(caffe2_pb2.CUDA, 0)
    chain = [
        ("x", "a", cpu),
        ("a", "b", cpu),
        ("b", "c", gpu),
        ("c", "d", gpu),
        ("d", "e", cpu),
        ("e", "out", cpu),
    ]
    for src, dst, dev in chain:
        net.op.extend([core.CreateOperator("Copy", [src], [dst], device_option=dev)])
    optim = memonger.optimize_inference_fast(net, [])
    device_of = {dst: dev.device_type for _, dst, dev in chain}
    slots = {}
    for op, (_, orig, _) in zip(optim.op, chain):
        slots.setdefault(op.output[0], set()).add(device_of[orig])
    assert all(len(devices) == 1 for devices in slots.values())
    assert len(slots) < len(chain)  # the CPU blobs a, d, e share
    assert optim.op[-1].output[0] == "out"


def test_blobs_of_ops_with_subnets_are_not_shared():
    net = caffe2_pb2.NetDef()
    net.external_input.extend(["x"])
    net.external_output.extend(["out"])
    sub = caffe2_pb2.NetDef()
    sub.op.extend([core.CreateOperator("Copy", ["b"], ["inner"])])
    net.op.extend(
        [
            core.CreateOperator("Copy", ["x"], ["a"]),
            core.CreateOperator("Copy", ["a"], ["b"]),
            core.CreateOperator("If", ["cond", "b"], ["c"], then_net=sub),
            core.CreateOperator("Copy", ["c"], ["d"]),
            core.CreateOperator("Copy", ["d"], ["out"]),
        ]
    )
    optim = memonger.optimize_inference_fast(net, [])
    names = blob_names(optim)
    assert {"b", "c"} <= names  # touched by the op with a sub-net
    assert "a" not in names and "d" not in names  # a and d share
