"""SequenceMask: numpy references of the six modes over 2-d to 4-d inputs (axis, batch,
repeat_from_axis, fill_val), its gradient (the same mask on dY, filled with 0) by finite
differences and as an op, the errors, and the device check (CUDA runs the CPU kernel)."""
import numpy as np
import pytest
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["SequenceMask"]

CPU = core.DeviceOption(0)
CONDITIONS = {
    "upper": lambda i, j: j < i,
    "lower": lambda i, j: j > i,
    "upperdiag": lambda i, j: j <= i,
    "lowerdiag": lambda i, j: j >= i,
}


def mask_ref(
    X, values=None, mode="sequence", axis=1, batch=-1, repeat_from_axis=-1, radius=10, fill=-np.inf
):
    nd = X.ndim
    rep = nd if repeat_from_axis < 0 else repeat_from_axis
    rows, cols = int(np.prod(X.shape[:axis])), int(np.prod(X.shape[axis:rep]))
    per_entry = 1 if batch < 0 else int(np.prod(X.shape[batch:axis]))
    Y = X.reshape(rows, cols, -1).copy()
    for i in range(rows):
        k, r = (i, i) if batch < 0 else (i // per_entry, i % per_entry)
        for j in range(cols):
            if mode == "sequence":
                masked = j >= values[k]
            elif mode == "window":
                masked = abs(j - values[k]) > radius
            else:
                masked = CONDITIONS[mode](r, j)
            if masked:
                Y[i, j, :] = fill
    return Y.reshape(X.shape)


class TestSequenceMask(hu.HypothesisTestCase):
    @given(
        shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
        mode=st.sampled_from(["sequence", "window", "upper", "lower", "upperdiag", "lowerdiag"]),
        seed=st.integers(0, 50),
        data=st.data(),
    )
    @settings(deadline=None, max_examples=30)
    def test_reference(self, shape, mode, seed, data):
        nd = len(shape)
        axis = data.draw(st.integers(1, nd - 1))
        batch = data.draw(st.sampled_from([-1] + list(range(axis))))
        repeat = -1
        if mode == "sequence" and batch < 0:
            repeat = data.draw(st.sampled_from([-1] + list(range(axis, nd))))
        rng = np.random.RandomState(seed)
        X = rng.randn(*shape).astype(np.float32)
        kwargs = dict(mode=mode, axis=axis, batch=batch, repeat_from_axis=repeat, radius=1)
        inputs = [X]
        if mode in ("sequence", "window"):
            count = int(np.prod(shape[:axis])) if batch < 0 else int(np.prod(shape[:batch]))
            inputs.append(rng.randint(0, 4, count).astype(np.int32))
        op = core.CreateOperator("SequenceMask", ["X", "L"][: len(inputs)], ["Y"], **kwargs)
        ref_kwargs = {k: v for k, v in kwargs.items() if k != "radius"}
        self.assertReferenceChecks(
            CPU, op, inputs, lambda X, L=None: [mask_ref(X, L, radius=1, **ref_kwargs)]
        )
        fill_op = core.CreateOperator(
            "SequenceMask", ["X", "L"][: len(inputs)], ["Y"], fill_val=-7.0, **kwargs
        )
        self.assertReferenceChecks(
            CPU,
            fill_op,
            inputs,
            lambda X, L=None: [mask_ref(X, L, radius=1, fill=-7.0, **ref_kwargs)],
        )
        self.assertGradientChecks(CPU, fill_op, inputs, 0, [0])

    def test_gradient_is_the_mask_of_dy_with_zeros(self):
        op = core.CreateOperator("SequenceMask", ["X", "L"], ["Y"])
        grad_ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        (g,) = grad_ops
        assert (g.type, list(g.input), list(g.output)) == (
            "SequenceMask",
            ["Y_grad", "L"],
            ["X_grad"],
        )
        assert {a.name: a.i for a in g.arg if a.name == "grad"} == {"grad": 1}
        workspace.ResetWorkspace()
        workspace.FeedBlob("Y_grad", np.ones((2, 3), np.float32))
        workspace.FeedBlob("L", np.array([1, 3], np.int32))
        workspace.RunOperatorOnce(g)
        np.testing.assert_array_equal(workspace.FetchBlob("X_grad"), [[1, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize(
    "inputs,kwargs,message",
    [
        (["X"], {}, "mode sequence takes 2 input"),
        (["X", "L"], {"mode": "upper"}, "mode upper takes 1 input"),
        (["X", "L"], {"mode": "diagonal"}, "unknown mode 'diagonal'"),
        (["X", "Lbad"], {}, "sequence_lengths must hold 2 int32 values"),
    ],
)
def test_errors(inputs, kwargs, message):
    workspace.ResetWorkspace()
    workspace.FeedBlob("X", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("L", np.zeros(2, np.int32))
    workspace.FeedBlob("Lbad", np.zeros(3, np.int32))
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(core.CreateOperator("SequenceMask", inputs, ["Y"], **kwargs))


@needs_gpu
def test_device_check():
    rng = np.random.RandomState(0)
    X = rng.randn(3, 5).astype(np.float32)
    L = np.array([0, 2, 5], np.int32)
    op = core.CreateOperator("SequenceMask", ["X", "L"], ["Y"], fill_val=-1.0)
    check_cpu_gpu(op, [X, L])
    check_gradient_cpu_gpu(op, [X, L])
