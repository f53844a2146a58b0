"""Conv and ConvGradient on every CPU engine: the default choice (engine DNNL when the build has it,
see get_build_options()["USE_DNNL"]), DNNL named, and EIGEN (im2col + GEMM), each against the numpy
reference (forward and all gradients) and against each other, over strides, asymmetric pads,
dilation, groups, 1x1, 1-D and 3-D, with and without bias and dX; the cached plan of a shape seen
before; every variant of the DNNL engine forced through the autotune cache; and the engine chosen
from Python (docs/determinism.md)."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import conv_grad_nchw, conv_nchw, geometry

CPU = core.DeviceOption(0)
HAS_DNNL = workspace.C.get_build_options()["USE_DNNL"] == "ON"
ENGINES = ("", "EIGEN", "DNNL") if HAS_DNNL else ("", "EIGEN")


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


class TestConvBothPaths(hu.HypothesisTestCase):
    def check(self, X, W, b, strides, pads, dilations=None, group=1, grads=True, **kw):
        """Forward and gradient reference checks of both engines, then the two engines against each
        other. `pads` is [heads..., tails...]; kw may give the args in another form."""
        n = X.ndim - 2
        dilations = dilations or [1] * n
        args = kw or dict(strides=strides, pads=pads, dilations=dilations)
        if group > 1:
            args["group"] = group
        _, heads, tails = geometry(
            X.shape[2:], list(W.shape[2:]), strides, dilations, pads[:n], pads[n:]
        )
        Y = conv_nchw(X, W, b, strides, dilations, heads, tails, group)
        dY = rand(np.random.RandomState(X.size), *Y.shape)
        dW, db, dX = conv_grad_nchw(X, W, dY, strides, dilations, heads, tails, group)
        inputs = [X, W] + ([b] if b is not None else [])
        results = {}
        for engine in ENGINES:
            op = core.CreateOperator(
                "Conv",
                ["X", "W", "b"][: len(inputs)],
                ["Y"],
                kernels=list(W.shape[2:]),
                engine=engine,
                **args,
            )
            fwd = self.assertReferenceChecks(
                CPU, op, inputs, lambda *a: [Y], threshold=1e-3, atol=1e-3
            )
            outs = ["dW", "db", "dX"] if b is not None else ["dW", "dX"]
            grad = core.CreateOperator(
                "ConvGradient",
                ["X", "W", "dY"],
                outs,
                kernels=list(W.shape[2:]),
                engine=engine,
                no_bias=int(b is None),
                **args,
            )
            ref = [dW, db, dX] if b is not None else [dW, dX]
            bwd = self.assertReferenceChecks(
                CPU, grad, [X, W, dY], lambda *a: ref, threshold=1e-3, atol=1e-3
            )
            # Without dX (no_gradient_to_input): the weights pass alone.
            grad_w = core.CreateOperator(
                "ConvGradient",
                ["X", "W", "dY"],
                outs[:-1],
                kernels=list(W.shape[2:]),
                engine=engine,
                no_bias=int(b is None),
                **args,
            )
            self.assertReferenceChecks(
                CPU, grad_w, [X, W, dY], lambda *a: ref[:-1], threshold=1e-3, atol=1e-3
            )
            if grads:
                for i in range(len(inputs)):
                    self.assertGradientChecks(CPU, op, inputs, i, [0])
            results[engine] = fwd + bwd
        for engine in ENGINES[1:]:
            for a, e in zip(results[""], results[engine]):
                np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4)

    def test_build_option(self):
        self.assertIn(workspace.C.get_build_options()["USE_DNNL"], ("ON", "OFF"))

    @given(
        n=st.integers(1, 3),
        c=st.integers(1, 20),
        m=st.integers(1, 20),
        h=st.integers(4, 9),
        w=st.integers(4, 9),
        k=st.integers(1, 3),
        stride=st.integers(1, 3),
        dilation=st.integers(1, 2),
        pads=st.lists(st.integers(0, 2), min_size=4, max_size=4),
        bias=st.booleans(),
        seed=st.integers(0, 99),
    )
    @settings(deadline=None, max_examples=12)
    def test_2d(self, n, c, m, h, w, k, stride, dilation, pads, bias, seed):
        if dilation * (k - 1) + 1 > min(h + pads[0] + pads[2], w + pads[1] + pads[3]):
            dilation = 1
        rng = np.random.RandomState(seed)
        self.check(
            rand(rng, n, c, h, w),
            rand(rng, m, c, k, k),
            rand(rng, m) if bias else None,
            [stride, stride],
            pads,
            [dilation, dilation],
            grads=False,
        )

    def test_asymmetric_pads_given_as_t_l_b_r(self):
        rng = np.random.RandomState(1)
        X, W, b = rand(rng, 2, 3, 7, 6), rand(rng, 4, 3, 3, 2), rand(rng, 4)
        self.check(
            X,
            W,
            b,
            [2, 1],
            [1, 0, 2, 1],
            pad_t=1,
            pad_l=0,
            pad_b=2,
            pad_r=1,
            stride_h=2,
            stride_w=1,
        )

    def test_strides_and_dilation(self):
        rng = np.random.RandomState(2)
        self.check(
            rand(rng, 2, 4, 9, 8), rand(rng, 3, 4, 3, 3), rand(rng, 3), [2, 3], [1, 1, 1, 1], [2, 1]
        )

    def test_groups_and_depthwise(self):
        rng = np.random.RandomState(3)
        self.check(
            rand(rng, 2, 6, 6, 6),
            rand(rng, 4, 3, 3, 3),
            rand(rng, 4),
            [1, 1],
            [1, 1, 1, 1],
            group=2,
        )
        self.check(
            rand(rng, 2, 32, 7, 7),
            rand(rng, 32, 1, 3, 3),
            None,
            [2, 2],
            [1, 1, 1, 1],
            group=32,
            grads=False,
        )

    def test_pointwise(self):
        rng = np.random.RandomState(4)
        self.check(
            rand(rng, 3, 16, 5, 4),
            rand(rng, 32, 16, 1, 1),
            rand(rng, 32),
            [1, 1],
            [0, 0, 0, 0],
            grads=False,
        )
        self.check(rand(rng, 2, 8, 6, 6), rand(rng, 5, 8, 1, 1), None, [2, 2], [0, 0, 0, 0])

    def test_blocked_channel_counts(self):
        # Channel counts that are multiples of oneDNN's 16-channel blocks, and one that is not.
        rng = np.random.RandomState(5)
        self.check(
            rand(rng, 4, 32, 8, 8),
            rand(rng, 32, 32, 3, 3),
            rand(rng, 32),
            [1, 1],
            [1, 1, 1, 1],
            grads=False,
        )
        self.check(
            rand(rng, 2, 17, 7, 7),
            rand(rng, 33, 17, 3, 3),
            rand(rng, 33),
            [2, 2],
            [1, 0, 0, 1],
            grads=False,
        )

    def test_3x3_stride_1_where_the_rule_picks_winograd(self):
        # The shapes of a ResNet 3x3 layer, where the DNNL engine's rule picks oneDNN's Winograd
        # variant for both passes.
        rng = np.random.RandomState(11)
        X, W, b = rand(rng, 4, 64, 14, 14), rand(rng, 64, 64, 3, 3) * 0.1, rand(rng, 64)
        self.check(X, W, b, [1, 1], [1, 1, 1, 1], grads=False)

    def test_1d_and_3d(self):
        rng = np.random.RandomState(6)
        self.check(rand(rng, 2, 3, 9), rand(rng, 4, 3, 3), rand(rng, 4), [2], [1, 2])
        self.check(
            rand(rng, 1, 2, 4, 5, 5),
            rand(rng, 4, 1, 2, 2, 3),
            rand(rng, 4),
            [1, 2, 1],
            [1, 0, 1, 0, 1, 1],
            group=2,
        )

    def test_cached_plan_follows_new_data(self):
        # The second call of a shape reuses the cached primitives: its results must follow the new
        # data.
        rng = np.random.RandomState(7)
        op = core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], kernel=3, pad=1)
        for _ in range(3):
            X, W, b = rand(rng, 2, 16, 6, 6), rand(rng, 16, 16, 3, 3), rand(rng, 16)
            self.assertReferenceChecks(
                CPU,
                op,
                [X, W, b],
                lambda X, W, b: [conv_nchw(X, W, b, [1, 1], [1, 1], [1, 1], [1, 1])],
                threshold=1e-3,
                atol=1e-3,
            )


def run_conv(X, W, b, dY, engine="", **kw):
    """Y and the gradients of one Conv case, with freshly created ops."""
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("W", W)
    workspace.FeedBlob("b", b)
    workspace.FeedBlob("dY", dY)
    workspace.RunOperatorOnce(
        core.CreateOperator("Conv", ["X", "W", "b"], ["Y"], kernel=3, pad=1, engine=engine, **kw)
    )
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "ConvGradient",
            ["X", "W", "dY"],
            ["dW", "db", "dX"],
            kernel=3,
            pad=1,
            engine=engine,
            **kw,
        )
    )
    return [workspace.FetchBlob(n) for n in ("Y", "dW", "db", "dX")]


def winograd_case():
    rng = np.random.RandomState(21)
    X, W, b = rand(rng, 4, 32, 10, 10), rand(rng, 32, 32, 3, 3) * 0.1, rand(rng, 32)
    return X, W, b, rand(rng, 4, 32, 10, 10)


def reference(X, W, b, dY):
    Y = conv_nchw(X, W, b, [1, 1], [1, 1], [1, 1], [1, 1])
    return [Y] + list(conv_grad_nchw(X, W, dY, [1, 1], [1, 1], [1, 1], [1, 1], 1))


def records(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


@pytest.mark.skipif(
    not HAS_DNNL, reason="this build has no oneDNN (get_build_options()['USE_DNNL'])"
)
def test_every_dnnl_variant_matches_the_reference(autotune_file):
    X, W, b, dY = winograd_case()
    expected = reference(X, W, b, dY)
    # Timing once writes this machine's records of the two cases (forward, backward).
    workspace.GlobalInit(["test", "--caffe2_exhaustive_search"])
    run_conv(X, W, b, dY, engine="DNNL")
    workspace.GlobalInit(["test", "--nocaffe2_exhaustive_search"])
    recs = records(autotune_file)
    assert sorted(r[1].split(" ")[0] for r in recs) == [
        "conv_dnnl.backward",
        "conv_dnnl.forward",
    ], recs
    machine = workspace.C.autotune_machine()
    assert all(r[0] == machine for r in recs)
    fwd_key = [r[1] for r in recs if r[1].startswith("conv_dnnl.forward")][0]
    bwd_key = [r[1] for r in recs if r[1].startswith("conv_dnnl.backward")][0]
    # oneDNN 2.x offers Winograd on AVX-512 machines only.
    variants = ["gemm", "direct", "blocked"] + (["winograd"] if "+avx512f" in machine else [])
    outputs = {}
    for v in variants:
        bwd = "gemm" if v == "gemm" else v + "+" + v
        with open(autotune_file, "w") as f:
            f.write("%s\t%s\t%s\n%s\t%s\t%s\n" % (machine, fwd_key, v, machine, bwd_key, bwd))
        workspace.C.autotune_forget()
        outputs[v] = run_conv(X, W, b, dY, engine="DNNL")
        for got, want, name in zip(outputs[v], expected, ("Y", "dW", "db", "dX")):
            np.testing.assert_allclose(
                got, want, rtol=1e-3, atol=1e-3, err_msg="%s with %s" % (name, v)
            )
    # The records did change the kernels: not every variant rounds alike.
    distinct = {outputs[v][0].tobytes() for v in variants}
    assert len(distinct) >= 2


@pytest.mark.skipif(
    not HAS_DNNL, reason="this build has no oneDNN (get_build_options()['USE_DNNL'])"
)
def test_timing_runs_the_recorded_choice_and_reuses_the_record(autotune_file):
    X, W, b, dY = winograd_case()
    tuned = run_conv(X, W, b, dY, engine="DNNL", exhaustive_search=1)
    recs = records(autotune_file)
    assert len(recs) == 2
    # The same choices without timing, from the records, give the same bits.
    workspace.C.autotune_forget()
    again = run_conv(X, W, b, dY, engine="DNNL")
    for t, a in zip(tuned, again):
        assert t.tobytes() == a.tobytes()
    assert records(autotune_file) == recs  # nothing timed again, nothing appended


@pytest.fixture
def default_engine_pref():
    """The default engine preferences for one test (upstream's TestCase clears them for op
    tests)."""
    saved = workspace.C.global_engine_pref()
    core.SetPerOpEnginePref({})
    core.SetGlobalEnginePref({caffe2_pb2.CPU: ["DNNL"], caffe2_pb2.CUDA: ["CUDNN"]})
    yield
    core.SetPerOpEnginePref({})
    core.SetGlobalEnginePref(saved)


@pytest.mark.skipif(
    not HAS_DNNL, reason="this build has no oneDNN (get_build_options()['USE_DNNL'])"
)
def test_engine_is_chosen_from_python(default_engine_pref):
    X, W, b, dY = winograd_case()
    dnnl = run_conv(X, W, b, dY, engine="DNNL")
    eigen = run_conv(X, W, b, dY, engine="EIGEN")
    default = run_conv(X, W, b, dY)
    # The rule runs Winograd here, whose rounding differs from im2col's: the engines are told apart.
    assert dnnl[0].tobytes() != eigen[0].tobytes()
    assert all(d.tobytes() == e.tobytes() for d, e in zip(default, dnnl))
    # brew puts engine="CUDNN" on CPU nets: an engine the device lacks falls through to the
    # preference.
    assert run_conv(X, W, b, dY, engine="CUDNN")[0].tobytes() == dnnl[0].tobytes()
    core.SetGlobalEnginePref({caffe2_pb2.CPU: []})
    assert run_conv(X, W, b, dY)[0].tobytes() == eigen[0].tobytes()
    core.SetOpEnginePref("Conv", {caffe2_pb2.CPU: ["DNNL"]})
    assert run_conv(X, W, b, dY)[0].tobytes() == dnnl[0].tobytes()


def test_nhwc_falls_back_to_the_default_engine():
    rng = np.random.RandomState(22)
    X, W, b = rand(rng, 2, 6, 6, 16), rand(rng, 16, 3, 3, 16), rand(rng, 16)
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("W", W)
    workspace.FeedBlob("b", b)
    outs = []
    for engine in ("DNNL", "EIGEN"):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "Conv", ["X", "W", "b"], ["Y"], kernel=3, pad=1, order="NHWC", engine=engine
            )
        )
        outs.append(workspace.FetchBlob("Y"))
    assert outs[0].tobytes() == outs[1].tobytes()
    want = conv_nchw(
        X.transpose(0, 3, 1, 2), W.transpose(0, 3, 1, 2), b, [1, 1], [1, 1], [1, 1], [1, 1]
    )
    np.testing.assert_allclose(outs[0], want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    import unittest

    unittest.main()
