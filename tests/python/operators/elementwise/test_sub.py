"""Sub: the gradient ops emitted. The checks Sub shares with Add, Mul and Div are in
test_elementwise_ops.py."""
import unittest

from caffe2.python import core


class TestGradientOps(unittest.TestCase):
    def grad(self, op):
        return core.GradientRegistry.GetGradientForOp(op, ["C_grad"])

    def test_sub(self):
        ops, g = self.grad(core.CreateOperator("Sub", ["A", "B"], ["C"]))
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [("Negative", ["C_grad"], ["B_grad"])],
        )
        self.assertEqual(g, ["C_grad", "B_grad"])
        ops, g = self.grad(core.CreateOperator("Sub", ["A", "B"], ["C"], broadcast=1, axis_str="C"))
        self.assertEqual(
            [(o.type, list(o.input), list(o.output)) for o in ops],
            [
                ("Negative", ["C_grad"], ["B_grad_autogen_pre_red"]),
                ("SumReduceLike", ["B_grad_autogen_pre_red", "B"], ["B_grad"]),
            ],
        )
        self.assertEqual(len(ops[0].arg), 0)
        self.assertEqual({a.name for a in ops[1].arg}, {"axis_str"})
