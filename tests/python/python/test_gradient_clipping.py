"""modeling.gradient_clipping.GradientClipping: every clipped gradient equals a numpy clip of the
gradient the unmodified net computes (by_norm with l2 / l1 norms, the parameter's norm as extra
threshold, the norm ratio blob, by_value), per-parameter selection, the ops and devices it adds,
sparse gradients left alone, and the errors of bad arguments."""
import copy

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.modeling.gradient_clipping import GradientClipping
from caffe2.python.modeling.net_modifier import NetModifier

PARAMS = ["fc1_w", "fc1_b", "fc2_w", "fc2_b"]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def build_model(name):
    """data (5, 4) -> fc1 -> Sigmoid -> fc2 -> SquaredL2Distance(label) -> AveragedLoss, with fixed
    weights; returns the model and {param: gradient} of its four parameters."""
    rng = np.random.RandomState(0)
    model = model_helper.ModelHelper(name=name)

    def given(*shape):
        return ("GivenTensorFill", {"values": (rng.randn(*shape) * 2).astype(np.float32)})

    data = model.net.AddExternalInput("data")
    label = model.net.AddExternalInput("label")
    fc1 = brew.fc(model, data, "fc1", 4, 3, weight_init=given(3, 4), bias_init=given(3))
    hidden = model.net.Sigmoid(fc1, "hidden")
    fc2 = brew.fc(model, hidden, "fc2", 3, 2, weight_init=given(2, 3), bias_init=given(2))
    dist = model.net.SquaredL2Distance([fc2, label], "dist")
    loss = model.net.AveragedLoss(dist, "loss")
    grad_map = model.AddGradientOperators([loss])
    return model, {param: grad_map[param] for param in PARAMS}


def feed_inputs(model):
    rng = np.random.RandomState(1)
    workspace.FeedBlob("data", rng.randn(5, 4).astype(np.float32))
    workspace.FeedBlob("label", rng.randn(5, 2).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)


def run(model, netdef):
    """Runs `netdef` on fresh inputs; returns {param: value} and {param: gradient value}."""
    workspace.ResetWorkspace()
    feed_inputs(model)
    workspace.RunNetOnce(netdef)
    values = {p: workspace.FetchBlob(p) for p in PARAMS}
    return values, {p: workspace.FetchBlob(p + "_grad") for p in PARAMS}


def clip_and_run(modifier, name, grad_map_filter=None):
    """Unclipped gradients (a copy of the net without the modifier), then the clipped ones."""
    model, grad_map = build_model(name)
    original = copy.deepcopy(model.net.Proto())
    n_ops = len(original.op)
    values, unclipped = run(model, original)
    returned = modifier(model.net, grad_map=grad_map)
    assert returned is model.net
    _, clipped = run(model, model.net.Proto())
    added = [op.type for op in model.net.Proto().op[n_ops:]]
    return values, unclipped, clipped, added


def norm(x, norm_type):
    x = x.astype(np.float64)
    return np.abs(x).sum() if norm_type == "l1_norm" else np.sqrt((x * x).sum())


def clip_by_norm(grad, threshold, grad_norm):
    return grad * (threshold / grad_norm) if grad_norm > threshold else grad


@pytest.mark.parametrize("norm_type", ["l2_norm", "l1_norm"])
def test_by_norm_matches_numpy(norm_type):
    threshold = 3.0
    modifier = GradientClipping("by_norm", clip_norm_type=norm_type, clip_threshold=threshold)
    _, unclipped, clipped, added = clip_and_run(modifier, "by_norm_" + norm_type)
    per_param = (
        ["LpNorm", "Pow", "ClipTensorByScaling"]
        if norm_type == "l2_norm"
        else [
            "LpNorm",
            "ClipTensorByScaling",
        ]
    )
    assert added == per_param * len(PARAMS)
    norms = {p: norm(unclipped[p], norm_type) for p in PARAMS}
    # The fixed model has gradients on both sides of the threshold.
    assert min(norms.values()) < threshold < max(norms.values()), norms
    for p in PARAMS:
        expected = clip_by_norm(unclipped[p], threshold, norms[p])
        np.testing.assert_allclose(clipped[p], expected, rtol=1e-5, atol=1e-7, err_msg=p)
        assert norm(clipped[p], norm_type) <= threshold * (1 + 1e-5) or norms[p] <= threshold


@pytest.mark.parametrize("norm_type", ["l2_norm", "l1_norm"])
def test_use_parameter_norm_scales_the_threshold(norm_type):
    threshold = 0.3
    modifier = GradientClipping(
        "by_norm", clip_norm_type=norm_type, clip_threshold=threshold, use_parameter_norm=True
    )
    values, unclipped, clipped, added = clip_and_run(modifier, "param_norm_" + norm_type)
    assert added.count("LpNorm") == 2 * len(PARAMS) and "Div" not in added
    limits = {p: threshold * norm(values[p], norm_type) for p in PARAMS}
    norms = {p: norm(unclipped[p], norm_type) for p in PARAMS}
    assert any(norms[p] > limits[p] for p in PARAMS)
    assert any(norms[p] <= limits[p] for p in PARAMS)
    for p in PARAMS:
        expected = clip_by_norm(unclipped[p], limits[p], norms[p])
        np.testing.assert_allclose(clipped[p], expected, rtol=1e-5, atol=1e-7, err_msg=p)


def test_compute_norm_ratio_writes_grad_norm_over_param_norm():
    modifier = GradientClipping(
        "by_norm", clip_threshold=0.1, use_parameter_norm=True, compute_norm_ratio=True
    )
    values, unclipped, _, added = clip_and_run(modifier, "norm_ratio")
    assert added.count("Div") == len(PARAMS)
    for p in PARAMS:
        ratio = workspace.FetchBlob(p + "_norm_ratio")
        expected = norm(unclipped[p], "l2_norm") / norm(values[p], "l2_norm")
        np.testing.assert_allclose(ratio, [expected], rtol=1e-5, err_msg=p)
    # Without the parameter's norm there is no ratio.
    modifier = GradientClipping("by_norm", compute_norm_ratio=True)
    assert "Div" not in clip_and_run(modifier, "no_ratio")[3]


def test_by_value_matches_numpy():
    modifier = GradientClipping("by_value", clip_max=0.3, clip_min=-0.2)
    _, unclipped, clipped, added = clip_and_run(modifier, "by_value")
    assert added == ["Clip"] * len(PARAMS)
    everything = np.concatenate([unclipped[p].ravel() for p in PARAMS])
    assert everything.max() > 0.3 and everything.min() < -0.2
    for p in PARAMS:
        np.testing.assert_array_equal(clipped[p], np.clip(unclipped[p], -0.2, 0.3), err_msg=p)


def test_blobs_to_include_and_exclude():
    threshold = 0.01  # clips every gradient of this model

    def check(modifier, name, expected_clipped):
        _, unclipped, clipped, _ = clip_and_run(modifier, name)
        for p in PARAMS:
            if p in expected_clipped:
                expected = clip_by_norm(unclipped[p], threshold, norm(unclipped[p], "l2_norm"))
                assert not np.allclose(expected, unclipped[p]), p
                np.testing.assert_allclose(clipped[p], expected, rtol=1e-5, err_msg=p)
            else:
                np.testing.assert_array_equal(clipped[p], unclipped[p], err_msg=p)

    check(
        GradientClipping("by_norm", clip_threshold=threshold, blobs_to_include=["fc1_w", "fc2_b"]),
        "include",
        {"fc1_w", "fc2_b"},
    )
    check(
        GradientClipping("by_norm", clip_threshold=threshold, blobs_to_exclude=["fc1_w"]),
        "exclude",
        {"fc1_b", "fc2_w", "fc2_b"},
    )
    check(
        GradientClipping(
            "by_norm",
            clip_threshold=threshold,
            blobs_to_include=["fc1_w", "fc2_w"],
            blobs_to_exclude=["fc2_w"],
        ),
        "both",
        {"fc1_w"},
    )


def test_grad_map_is_left_as_it_was():
    model, grad_map = build_model("grad_map")
    before = dict(grad_map)
    GradientClipping("by_value", blobs_to_exclude=["fc1_w"])(model.net, grad_map=grad_map)
    assert grad_map == before


def test_sparse_gradients_are_skipped_and_devices_are_followed():
    model, grad_map = build_model("sparse")
    n_ops = len(model.net.Proto().op)
    grad_map = {"fc1_w": grad_map["fc1_w"], "emb": core.GradientSlice("emb_idx", "emb_values")}
    gpu = core.DeviceOption(caffe2_pb2.CUDA, 1)
    GradientClipping("by_norm", clip_norm_type="l1_norm")(
        model.net, grad_map=grad_map, blob_to_device={"fc1_w": gpu}
    )
    added = model.net.Proto().op[n_ops:]
    assert [op.type for op in added] == ["LpNorm", "ClipTensorByScaling"]
    assert all(op.device_option == gpu for op in added)
    assert list(added[0].input) == ["fc1_w_grad"]
    assert list(added[1].input) == ["fc1_w_grad", str(added[0].output[0])]
    assert list(added[1].output) == ["fc1_w_grad"]
    assert all("emb" not in b for op in added for b in list(op.input) + list(op.output))


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="grad_clip_method 'by_magic' is not one of"):
        GradientClipping("by_magic")
    with pytest.raises(ValueError, match="clip_norm_type 'l3_norm' is not one of"):
        GradientClipping("by_norm", clip_norm_type="l3_norm")
    with pytest.raises(ValueError, match="by_norm needs a clip_norm_type"):
        GradientClipping("by_norm", clip_norm_type=None)
    GradientClipping("by_value", clip_norm_type=None)  # by_value needs none
    model, grad_map = build_model("bad")
    with pytest.raises(ValueError, match="param nope is not defined in net bad"):
        GradientClipping("by_norm", blobs_to_include=["nope"])(model.net, grad_map=grad_map)
    with pytest.raises(ValueError, match="param data has no gradient in grad_map"):
        GradientClipping("by_norm", blobs_to_include=["data"])(model.net, grad_map=grad_map)
    with pytest.raises(AssertionError, match="needs grad_map"):
        GradientClipping("by_norm")(model.net)


def test_net_modifier_is_abstract():
    with pytest.raises(TypeError):
        NetModifier()

    class AddsACopy(NetModifier):
        def modify_net(self, net, init_net=None, grad_map=None, blob_to_device=None, **kwargs):
            net.Copy("a", "b")

    net = core.Net("modified")
    assert AddsACopy()(net) is net
    assert [op.type for op in net.Proto().op] == ["Copy"]
