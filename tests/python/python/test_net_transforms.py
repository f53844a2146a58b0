"""workspace.ApplyTransform / ApplyTransformIfFaster and the inference transforms of
caffe2.python.net_transforms: a small residual CNN gives the same outputs (by value, from bytes
too) after FoldSpatialBNIntoConv, FuseConvRelu, KeepDnnlBlockedLayout and OptimizeForInference
(its residual Sum and Relu fused into a blocked convolution), with exactly the ops that may be
rewritten rewritten (a blob read twice, an external output, a training-mode SpatialBN
and a CUDA op are left alone); the original net and weights are untouched; the errors; and the
threshold of ApplyTransformIfFaster deciding without timing."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace


def residual_cnn():
    m = model_helper.ModelHelper(name="res_cnn")
    c1 = brew.conv(m, "data", "c1", 3, 8, 3, pad=1)
    b1 = brew.spatial_bn(m, c1, "b1", 8, is_test=True)
    r1 = brew.relu(m, b1, b1)
    c2 = brew.conv(m, r1, "c2", 8, 8, 3, pad=1, no_bias=1)
    b2 = brew.spatial_bn(m, c2, "b2", 8, is_test=True)
    s = m.net.Sum([b2, r1], "sum")
    r2 = brew.relu(m, s, "r2")
    c3 = brew.conv(m, r2, "c3", 8, 4, 1)  # read twice: neither fused nor folded
    brew.relu(m, c3, "r3")
    m.net.Scale(c3, "c3_scaled", scale=2.0)
    c4 = brew.conv(m, r2, "c4", 8, 4, 1)  # an external output: left alone
    brew.relu(m, c4, "r4")
    m.net.AddExternalOutput(c4)
    for name in ("r2", "r3", "c3_scaled", "r4"):
        m.net.AddExternalOutput(core.BlobReference(name))
    return m


def prepare(m):
    workspace.ResetWorkspace()
    rng = np.random.RandomState(0)
    workspace.FeedBlob("data", rng.randn(2, 3, 6, 6).astype(np.float32))
    workspace.RunNetOnce(m.param_init_net)
    for bn in ("b1", "b2"):  # non-trivial statistics, so that folding changes the filters
        for suffix in ("_s", "_b", "_rm", "_riv"):
            workspace.FeedBlob(bn + suffix, (rng.rand(8) + 0.5).astype(np.float32))


OUTPUTS = ["r2", "r3", "c3_scaled", "r4", "c4"]


def outputs_of(net):
    for name in OUTPUTS:  # so that a blob the net no longer writes cannot pass for an output
        workspace.FeedBlob(name, np.full(1, np.nan, np.float32))
    workspace.RunNetOnce(net)
    return {name: workspace.FetchBlob(name).copy() for name in OUTPUTS}


FOLDED = ["Conv", "Relu", "Conv", "Sum", "Relu", "Conv", "Relu", "Scale", "Conv", "Relu"]
# The net as it is: FuseConvRelu finds no Conv whose output only a Relu reads (BNs sit between,
# c3 is read twice, c4 is an external output), KeepDnnlBlockedLayout no Conv feeding another.
UNCHANGED = ["Conv", "SpatialBN", "Relu", "Conv", "SpatialBN", "Sum", "Relu", "Conv", "Relu"]
UNCHANGED += ["Scale", "Conv", "Relu"]
OPTIMIZED = ["DnnlToBlocked", "DnnlBlockedConv", "DnnlBlockedConv", "DnnlBlockedConv"]
OPTIMIZED += ["DnnlToPlain", "Relu", "Scale", "DnnlBlockedConv", "DnnlToPlain", "Relu"]
OPTIMIZED += ["DnnlToPlain"]


@pytest.mark.parametrize(
    "name,expected_types",
    [
        ("FoldSpatialBNIntoConv", FOLDED),
        ("FuseConvRelu", UNCHANGED),
        ("KeepDnnlBlockedLayout", UNCHANGED),
        ("OptimizeForInference", OPTIMIZED),
    ],
)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_transforms_keep_the_outputs(name, expected_types, as_bytes):
    m = residual_cnn()
    prepare(m)
    before = m.net.Proto().SerializeToString()
    weights = {b: workspace.FetchBlob(b).copy() for b in ("c1_w", "c1_b", "c2_w")}
    expected = outputs_of(m.net)
    net = before if as_bytes else m.net.Proto()
    transformed = workspace.ApplyTransform(name, net)
    assert [op.type for op in transformed.op] == expected_types
    got = outputs_of(transformed)
    for blob in OUTPUTS:
        np.testing.assert_allclose(got[blob], expected[blob], rtol=1e-4, atol=1e-5, err_msg=blob)
    assert m.net.Proto().SerializeToString() == before  # the argument is left as it was
    for blob, value in weights.items():
        np.testing.assert_array_equal(workspace.FetchBlob(blob), value)


def test_folded_filters_are_new_blobs_named_after_the_filter():
    m = residual_cnn()
    prepare(m)
    transformed = workspace.ApplyTransform("FoldSpatialBNIntoConv", m.net.Proto())
    first = transformed.op[0]
    assert list(first.input) == ["data", "c1_w_bnfold", "c1_w_bnfold_b"]
    assert list(first.output) == ["b1"]
    assert {"c1_w_bnfold", "c2_w_bnfold_b"} <= set(transformed.external_input)


def test_optimize_for_inference_fuses_the_residual_sum_and_relu():
    m = residual_cnn()
    prepare(m)
    transformed = workspace.ApplyTransform("OptimizeForInference", m.net.Proto())
    second = transformed.op[2]
    assert list(second.input) == ["b1_dnnl", "c2_w_bnfold", "c2_w_bnfold_b", "b1_dnnl"]
    assert list(second.output) == ["r2_dnnl"]
    flags = {a.name: a.i for a in second.arg if a.name in ("relu", "summand")}
    assert flags == {"relu": 1, "summand": 1}


def test_training_mode_batch_norm_and_cuda_ops_are_left_alone():
    net = core.Net("left_alone")
    net.Conv(["x", "w"], "y", kernel=1)
    net.SpatialBN(["y", "s", "b", "m", "v"], ["z", "m", "v", "sm", "siv"], is_test=0)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        net.Conv(["z", "w2"], "u", kernel=1)
        net.Relu("u", "u")
    names = (
        "FoldSpatialBNIntoConv",
        "FuseConvRelu",
        "KeepDnnlBlockedLayout",
        "OptimizeForInference",
    )
    for name in names:
        transformed = workspace.ApplyTransform(name, net.Proto())
        assert [op.type for op in transformed.op] == ["Conv", "SpatialBN", "Conv", "Relu"]


def test_unknown_transform_and_missing_weights_are_clear_errors():
    m = residual_cnn()
    with pytest.raises(
        RuntimeError, match=r"unknown transform 'NoSuch'; registered: .*FuseConvRelu"
    ):
        workspace.ApplyTransform("NoSuch", m.net.Proto())
    workspace.ResetWorkspace()
    with pytest.raises(RuntimeError, match="blob 'c1_w' is not in the workspace; run the init net"):
        workspace.ApplyTransform("FoldSpatialBNIntoConv", m.net.Proto())


@pytest.mark.parametrize("threshold,transformed", [(0.0, True), (1e9, False)])
def test_apply_transform_if_faster_follows_its_threshold(threshold, transformed):
    m = residual_cnn()
    prepare(m)
    workspace.FeedBlob("data", np.ones((2, 3, 6, 6), np.float32))
    chosen = workspace.ApplyTransformIfFaster(
        "OptimizeForInference", m.net.Proto(), m.param_init_net.Proto(), 1, 2, threshold
    )
    assert ("DnnlBlockedConv" in [op.type for op in chosen.op]) == transformed
    assert chosen.name == m.net.Proto().name
