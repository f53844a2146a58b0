"""LpNorm: sum |x| (p=1) or sum x^2 (p=2, the squared norm, as upstream), optionally averaged;
its gradient LpNormGradient against a numpy reference and finite differences; argument and type
errors; device checks (CUDA runs the CPU kernels)."""
import unittest

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_gradient_cpu_gpu, needs_gpu

COVERED_CUDA_OPS = ["LpNorm", "LpNormGradient"]

CPU = core.DeviceOption(0)


def lp_norm_ref(X, p, average):
    x = X.astype(np.float64)
    total = np.abs(x).sum() if p == 1 else (x * x).sum()
    if average and x.size:
        total /= x.size
    return np.array([total], np.float32)


def lp_norm_grad_ref(X, dZ, p, average):
    g = dZ[0] / X.size if average else dZ[0]
    sign = np.where(np.abs(X) > 1e-12, np.sign(X), 0)  # as upstream: 0 within 1e-12 of 0
    return (sign * g if p == 1 else 2 * X * g).astype(np.float32)


def away_from_zero(X):
    """Finite differences of |x| need every x farther than the step from the kink at 0."""
    return np.where(X >= 0, X + 0.2, X - 0.2).astype(np.float32)


class TestLpNorm(hu.HypothesisTestCase):
    @given(X=hu.tensor(max_dim=3), p=st.sampled_from([1, 2]), average=st.booleans())
    @settings(deadline=None, max_examples=20)
    def test_reference(self, X, p, average):
        op = core.CreateOperator("LpNorm", ["X"], ["Z"], p=p, average=average)
        self.assertReferenceChecks(
            CPU,
            op,
            [X],
            lambda X: [lp_norm_ref(X, p, average)],
            output_to_grad="Z",
            grad_reference=lambda dZ, outs, ins: [lp_norm_grad_ref(ins[0], dZ, p, average)],
        )

    @given(
        X=hu.tensor(max_dim=2, max_value=4),
        p=st.sampled_from([1, 2]),
        average=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_gradient(self, X, p, average):
        op = core.CreateOperator("LpNorm", ["X"], ["Z"], p=p, average=average)
        self.assertGradientChecks(CPU, op, [away_from_zero(X)], 0, [0], stepsize=0.01)

    def test_known_values_and_default_p(self):
        X = np.array([[3.0, -4.0], [0.0, 0.0]], np.float32)
        for kwargs, expected in [
            ({}, 25.0),  # p defaults to 2: the squared 2-norm
            ({"p": 2}, 25.0),
            ({"p": 1}, 7.0),
            ({"p": 1, "average": True}, 1.75),
            ({"p": 2, "average": True}, 6.25),
        ]:
            op = core.CreateOperator("LpNorm", ["X"], ["Z"], **kwargs)
            self.assertReferenceChecks(CPU, op, [X], lambda X: [np.array([expected], np.float32)])

    def test_empty_input_is_zero(self):
        op = core.CreateOperator("LpNorm", ["X"], ["Z"], p=1, average=True)
        X = np.zeros((0, 3), np.float32)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [np.zeros(1, np.float32)])

    def test_gradient_op(self):
        op = core.CreateOperator("LpNorm", ["X"], ["Z"], p=1, average=True)
        grad_ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Z_grad"])
        assert [(g.type, list(g.input), list(g.output)) for g in grad_ops] == [
            ("LpNormGradient", ["X", "Z_grad"], ["X_grad"])
        ]
        assert {a.name: a.i for a in grad_ops[0].arg} == {"p": 1, "average": 1}
        assert [str(g) for g in grads] == ["X_grad"]
        # Within 1e-12 of 0 the sign is 0.
        workspace.ResetWorkspace()
        workspace.FeedBlob("X", np.array([0.0, 1e-13, -2.0, 5.0], np.float32))
        workspace.FeedBlob("Z_grad", np.array([8.0], np.float32))
        workspace.RunOperatorOnce(grad_ops[0])
        np.testing.assert_array_equal(workspace.FetchBlob("X_grad"), [0.0, 0.0, -2.0, 2.0])

    def test_errors(self):
        X = np.ones(3, np.float32)
        for p in (0, 3):
            self.assertRunOpRaises(
                CPU,
                core.CreateOperator("LpNorm", ["X"], ["Z"], p=p),
                [X],
                exception=RuntimeError,
                regexp="p must be 1 or 2, got {}".format(p),
            )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("LpNorm", ["X"], ["Z"]),
            [np.ones(3, np.float64)],
            exception=RuntimeError,
            regexp="X must be a float tensor",
        )
        self.assertRunOpRaises(
            CPU,
            core.CreateOperator("LpNormGradient", ["X", "dZ"], ["dX"]),
            [X, np.ones(2, np.float32)],
            exception=RuntimeError,
            regexp="dZ must be a one-element float tensor",
        )


R = np.random.RandomState(0)


@needs_gpu
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("average", [False, True])
def test_device_check(p, average):
    X = R.randn(7, 5).astype(np.float32)
    op = core.CreateOperator("LpNorm", ["X"], ["Z"], p=p, average=average)
    check_cpu_gpu(op, [X])
    check_gradient_cpu_gpu(op, [away_from_zero(X)])


if __name__ == "__main__":
    unittest.main()
