"""ConvRelu: max(0, Conv) against numpy's Conv + Relu reference for the default and DNNL engines,
with and without bias, strides, pads, groups and NHWC; its schema's shape inference; no gradient."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def run(op_type, feeds, **kwargs):
    workspace.ResetWorkspace()
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(core.CreateOperator(op_type, list(feeds), ["Y"], **kwargs))
    return workspace.FetchBlob("Y")


class TestConvRelu(hu.HypothesisTestCase):
    @given(
        stride=st.integers(1, 2),
        pad=st.integers(0, 1),
        kernel=st.integers(1, 3),
        group=st.sampled_from([1, 2]),
        bias=st.booleans(),
        engine=st.sampled_from(["", "EIGEN", "DNNL"]),
        order=st.sampled_from(["NCHW", "NHWC"]),
        seed=st.integers(0, 50),
    )
    @settings(deadline=None, max_examples=25)
    def test_equals_conv_then_relu(self, stride, pad, kernel, group, bias, engine, order, seed):
        if order == "NHWC" and group > 1:
            group = 1  # grouped convolution is NCHW only
        rng = np.random.RandomState(seed)
        C, M = 2 * group, 2 * group
        X = rng.randn(2, C, 6, 5).astype(np.float32)
        W = rng.randn(M, C // group, kernel, kernel).astype(np.float32)
        if order == "NHWC":
            X, W = X.transpose(0, 2, 3, 1).copy(), W.transpose(0, 2, 3, 1).copy()
        feeds = {"X": X, "W": W}
        if bias:
            feeds["b"] = rng.randn(M).astype(np.float32)
        args = dict(kernel=kernel, stride=stride, pad=pad, group=group, order=order)
        conv = run("Conv", feeds, **args)
        fused = run("ConvRelu", feeds, engine=engine, **args)
        np.testing.assert_allclose(fused, np.maximum(conv, 0), rtol=1e-5, atol=1e-5)
        assert (fused == 0).any() and (fused > 0).any()  # both sides of the relu were exercised

    def test_shape_inference_and_no_gradient(self):
        op = core.CreateOperator("ConvRelu", ["X", "W", "b"], ["Y"], kernel=3, pad=1, stride=2)
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.zeros((1, 3, 8, 8), np.float32))
        workspace.FeedBlob("W", np.zeros((4, 3, 3, 3), np.float32))
        workspace.FeedBlob("b", np.zeros(4, np.float32))
        net = core.Net("infer")
        net.Proto().op.extend([op])
        shapes, _ = workspace.InferShapesAndTypes([net])
        assert shapes["Y"] == [1, 4, 4, 4]
        with pytest.raises(Exception, match="ConvRelu"):
            core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])


HAS_DNNL = "ConvRelu_ENGINE_DNNL" in workspace.C.registered_operators()


@pytest.mark.skipif(not HAS_DNNL, reason="this build has no oneDNN")
def test_every_dnnl_variant_applies_the_relu(autotune_file):
    """Each variant forced through the autotune cache: the gemm variant's relu after the GEMM and
    the oneDNN post-op of the others give max(0, Conv)."""
    rng = np.random.RandomState(3)
    feeds = {
        "X": rng.randn(2, 16, 9, 9).astype(np.float32),
        "W": (rng.randn(16, 16, 3, 3) * 0.2).astype(np.float32),
        "b": rng.randn(16).astype(np.float32),
    }
    expected = np.maximum(run("Conv", feeds, kernel=3, pad=1, engine="EIGEN"), 0)
    workspace.GlobalInit(["test", "--caffe2_exhaustive_search"])
    run("ConvRelu", feeds, kernel=3, pad=1, engine="DNNL")
    workspace.GlobalInit(["test", "--nocaffe2_exhaustive_search"])
    with open(autotune_file) as f:
        machine, key, _ = f.readline().rstrip("\n").split("\t")
    assert key.startswith("conv_dnnl.forward_relu "), key
    variants = ["gemm", "direct", "blocked"] + (["winograd"] if "+avx512f" in machine else [])
    for variant in variants:
        with open(autotune_file, "w") as f:
            f.write("%s\t%s\t%s\n" % (machine, key, variant))
        workspace.C.autotune_forget()
        got = run("ConvRelu", feeds, kernel=3, pad=1, engine="DNNL")
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=variant)
