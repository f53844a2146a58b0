"""YellowFin: the op against a numpy transcription of its contract over several iterations (zero
debias on and off, Nesterov, the curvature window wrapping around), the in-place contract, the
errors, and optimizer.build_yellowfin training a linear model end to end."""
import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, optimizer, workspace

NAMES = ["param", "moment", "lr_avg", "mu_avg", "curv_win", "g_avg", "g2_avg", "scalars"]


def yellowfin_ref(state, g, t, width, beta=0.999, eps=1e-6, nesterov=False, zero_debias=True):
    s = {k: v.astype(np.float64).copy() for k, v in state.items()}
    debias = 1 - beta ** (t + 1) if zero_debias else 1.0

    def average(value, key, index=None):
        if index is None:
            s[key] = beta * s[key] + (1 - beta) * value
            return s[key] / debias
        s[key][index] = beta * s[key][index] + (1 - beta) * value
        return s[key][index] / debias

    g = g.astype(np.float64)
    h = float((g * g).sum())
    mean, square = average(g, "g_avg"), average(g * g, "g2_avg")
    variance = np.maximum(square - mean * mean, 0).sum()
    s["curv_win"][t % width] = h
    window = s["curv_win"][: min(t + 1, width)]
    h_max = average(window.max(), "scalars", 0)
    h_min = average(window.min(), "scalars", 1) + eps
    distance = average(np.sqrt(h), "scalars", 2) / (average(h, "scalars", 3) + eps)
    p = distance**2 * h_min**2 / (2 * (variance + eps))
    y = np.roots([1, 0, p, p])
    y = float(y[np.abs(y.imag) < 1e-9].real[0])
    ratio = np.sqrt(max(h_max + eps, h_min) / h_min)
    sqrt_mu = max(1 + y, (ratio - 1) / (ratio + 1))
    lr, mu = (1 - sqrt_mu) ** 2 / h_min, sqrt_mu**2
    s["lr_avg"] = beta * s["lr_avg"] + (1 - beta) * lr
    s["mu_avg"] = beta * s["mu_avg"] + (1 - beta) * mu
    s["moment"] = s["mu_avg"] * s["moment"] + s["lr_avg"] * g
    step = s["mu_avg"] * s["moment"] + s["lr_avg"] * g if nesterov else s["moment"]
    s["param"] = s["param"] - step
    return {k: v.astype(np.float32) for k, v in s.items()}


def initial_state(width, rng):
    shape = (3, 2)
    return {
        "param": rng.randn(*shape).astype(np.float32),
        "moment": np.zeros(shape, np.float32),
        "lr_avg": np.array([0.1], np.float32),
        "mu_avg": np.array([0.0], np.float32),
        "curv_win": np.zeros(width, np.float32),
        "g_avg": np.zeros(shape, np.float32),
        "g2_avg": np.zeros(shape, np.float32),
        "scalars": np.zeros(4, np.float32),
    }


@pytest.mark.parametrize("kwargs", [{}, {"zero_debias": False}, {"nesterov": True}, {"beta": 0.9}])
def test_matches_the_numpy_reference_over_iterations(kwargs):
    width = 3
    rng = np.random.RandomState(0)
    state = initial_state(width, rng)
    workspace.ResetWorkspace()
    for k, v in state.items():
        workspace.FeedBlob(k, v)
    op = core.CreateOperator(
        "YellowFin", NAMES + ["grad", "iter"], NAMES, curv_win_width=width, **kwargs
    )
    for t in range(7):  # the window of 3 wraps around twice
        g = rng.randn(3, 2).astype(np.float32)
        workspace.FeedBlob("grad", g)
        workspace.FeedBlob("iter", np.array([t], np.int64))
        workspace.RunOperatorOnce(op)
        ref_kwargs = dict(kwargs)
        state = yellowfin_ref(state, g, t, width, **ref_kwargs)
        for name in NAMES:
            np.testing.assert_allclose(
                workspace.FetchBlob(name),
                state[name],
                rtol=2e-4,
                atol=1e-6,
                err_msg="%s t=%d" % (name, t),
            )


def test_bad_state_is_a_clear_error():
    rng = np.random.RandomState(1)
    state = initial_state(3, rng)
    workspace.ResetWorkspace()
    for k, v in state.items():
        workspace.FeedBlob(k, v)
    workspace.FeedBlob("grad", np.zeros((3, 2), np.float32))
    workspace.FeedBlob("iter", np.array([0], np.int64))
    op = core.CreateOperator("YellowFin", NAMES + ["grad", "iter"], NAMES, curv_win_width=5)
    with pytest.raises(RuntimeError, match="curv_win must hold curv_win_width = 5 values"):
        workspace.RunOperatorOnce(op)
    workspace.FeedBlob("grad", np.zeros((2, 3), np.float32))
    op = core.CreateOperator("YellowFin", NAMES + ["grad", "iter"], NAMES, curv_win_width=3)
    with pytest.raises(RuntimeError, match=r"param \(3, 2\) and grad \(2, 3\) must have the same"):
        workspace.RunOperatorOnce(op)


def test_build_yellowfin_trains_a_linear_model():
    workspace.ResetWorkspace()
    rng = np.random.RandomState(0)
    X = rng.randn(64, 4).astype(np.float32)
    y = (X @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)).reshape(-1, 1)
    model = model_helper.ModelHelper(name="yellowfin_linear")
    pred = brew.fc(model, "X", "pred", 4, 1)
    loss = model.net.AveragedLoss(model.net.SquaredL2Distance([pred, "y"], "dist"), "loss")
    model.AddGradientOperators([loss])
    optimizer.build_yellowfin(model, base_learning_rate=0.05)
    assert [op.type for op in model.net.Proto().op].count("YellowFin") == 2  # weight and bias
    workspace.FeedBlob("X", X)
    workspace.FeedBlob("y", y)
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    losses = []
    for _ in range(300):
        workspace.RunNet(model.net)
        losses.append(float(workspace.FetchBlob("loss")))
    assert np.isfinite(losses).all() and losses[-1] < 0.05 * losses[0], losses[::50]
