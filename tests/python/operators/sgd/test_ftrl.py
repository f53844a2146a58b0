"""Ftrl and SparseFtrl: numpy references of the FTRL-Proximal update (several steps, with and
without the alpha input, weights driven to exactly 0 by lambda1), the in-place contract, the SIMD
engine names, optimizer.build_ftrl training a linear model end to end (dense and sparse
gradients), and the errors."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import brew, core, model_helper, optimizer, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)
ARGS = dict(alpha=0.1, beta=1.0, lambda1=0.05, lambda2=0.01)


def ftrl_ref(w, nz, g, alpha=0.1, beta=1.0, lambda1=0.05, lambda2=0.01):
    w, n, z = w.astype(np.float64), nz[..., 0].astype(np.float64), nz[..., 1].astype(np.float64)
    n_new = n + g * g
    z = z + g - (np.sqrt(n_new) - np.sqrt(n)) / alpha * w
    w = np.where(
        np.abs(z) <= lambda1,
        0.0,
        (lambda1 * np.sign(z) - z) / ((beta + np.sqrt(n_new)) / alpha + lambda2),
    )
    return w.astype(np.float32), np.stack([n_new, z], axis=-1).astype(np.float32)


def state(shape, seed):
    rng = np.random.RandomState(seed)
    w = rng.randn(*shape).astype(np.float32)
    nz = np.stack([rng.rand(*shape), rng.randn(*shape) * 0.1], axis=-1).astype(np.float32)
    return w, nz, (rng.randn(*shape) * 0.5).astype(np.float32)


class TestFtrl(hu.HypothesisTestCase):
    @given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 100))
    @settings(deadline=None, max_examples=15)
    def test_dense_reference(self, shape, seed):
        w, nz, g = state(shape, seed)
        for engine in ("", "SIMD"):
            op = core.CreateOperator("Ftrl", ["w", "nz", "g"], ["w", "nz"], engine=engine, **ARGS)
            self.assertReferenceChecks(CPU, op, [w, nz, g], ftrl_ref)
        op = core.CreateOperator("Ftrl", ["w", "nz", "g", "alpha"], ["w", "nz"], **ARGS)
        self.assertReferenceChecks(
            CPU,
            op,
            [w, nz, g, np.array([0.3], np.float32)],
            lambda w, nz, g, a: ftrl_ref(w, nz, g, alpha=0.3),
        )

    @given(rows=st.integers(1, 6), cols=st.integers(1, 3), seed=st.integers(0, 100))
    @settings(deadline=None, max_examples=15)
    def test_sparse_reference(self, rows, cols, seed):
        w, nz, _ = state((rows, cols), seed)
        rng = np.random.RandomState(seed + 1)
        indices = rng.choice(rows, size=rng.randint(1, rows + 1), replace=False).astype(np.int64)
        g = rng.randn(len(indices), cols).astype(np.float32)

        def ref(w, nz, indices, g):
            w, nz = w.copy(), nz.copy()
            w[indices], nz[indices] = ftrl_ref(w[indices], nz[indices], g)
            return w, nz

        op = core.CreateOperator(
            "SparseFtrl", ["w", "nz", "i", "g"], ["w", "nz"], engine="SIMD", **ARGS
        )
        self.assertReferenceChecks(CPU, op, [w, nz, indices, g], ref)


def test_l1_drives_small_weights_to_exactly_zero():
    workspace.ResetWorkspace()
    workspace.FeedBlob("w", np.zeros(3, np.float32))  # so that z = g after one step
    workspace.FeedBlob("nz", np.zeros((3, 2), np.float32))
    workspace.FeedBlob("g", np.array([0.01, -0.02, 3.0], np.float32))
    op = core.CreateOperator("Ftrl", ["w", "nz", "g"], ["w", "nz"], alpha=1.0, lambda1=0.5)
    workspace.RunOperatorOnce(op)
    w = workspace.FetchBlob("w")
    assert w[0] == 0.0 and w[1] == 0.0 and w[2] != 0.0


@pytest.mark.parametrize("sparse", [False, True])
def test_build_ftrl_trains_a_linear_model(sparse):
    """y = X w_true; FTRL on the squared loss brings the loss down."""
    workspace.ResetWorkspace()
    rng = np.random.RandomState(0)
    X = rng.randn(32, 4).astype(np.float32)
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0], np.float32)).reshape(-1, 1)
    model = model_helper.ModelHelper(name="ftrl_linear_%d" % sparse)
    if sparse:
        model.param_init_net.GaussianFill([], "table", shape=[4, 1], std=0.1)
        model.params.append(core.BlobReference("table"))
        rows = model.net.Gather(["table", "feature_ids"], "rows")
        weighted = model.net.Mul([rows, "X_flat"], "weighted")
        pred = model.net.Reshape(weighted, ["pred_rows", "old_shape"], shape=[32, 4])[0]
        pred = model.net.ReduceBackSum(pred, "pred_sum")
        pred = model.net.ExpandDims(pred, "pred", dims=[1])
        workspace.FeedBlob("feature_ids", np.tile(np.arange(4, dtype=np.int64), 32))
        workspace.FeedBlob("X_flat", X.reshape(-1, 1))
    else:
        pred = brew.fc(model, "X", "pred", 4, 1)
    dist = model.net.SquaredL2Distance([pred, "y"], "dist")
    loss = model.net.AveragedLoss(dist, "loss")
    model.AddGradientOperators([loss])
    optimizer.build_ftrl(model, alpha=0.5, beta=1.0, lambda1=0.0, lambda2=0.0)
    assert any(op.type == ("SparseFtrl" if sparse else "Ftrl") for op in model.net.Proto().op)
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("y", y)
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    losses = []
    for _ in range(60):
        workspace.RunNet(model.net)
        losses.append(float(workspace.FetchBlob("loss")))
    assert losses[-1] < 0.1 * losses[0], losses[::10]


@pytest.mark.parametrize(
    "feeds,message",
    [
        (
            {"nz": np.zeros((3,), np.float32)},
            r"nz must have var's shape plus a last dimension of 2",
        ),
        ({"g": np.zeros((4,), np.float32)}, r"var \(3,\) and grad \(4,\) must have the same shape"),
        ({"alpha": np.zeros(1, np.float32)}, "alpha must be positive, got 0"),
    ],
)
def test_bad_inputs_are_clear_errors(feeds, message):
    workspace.ResetWorkspace()
    values = {"w": np.ones(3, np.float32), "nz": np.zeros((3, 2), np.float32)}
    values["g"] = np.ones(3, np.float32)
    values.update(feeds)
    for name, value in values.items():
        workspace.FeedBlob(name, value)
    inputs = ["w", "nz", "g"] + (["alpha"] if "alpha" in feeds else [])
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(core.CreateOperator("Ftrl", inputs, ["w", "nz"]))
