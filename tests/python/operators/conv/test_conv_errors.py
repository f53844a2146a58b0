"""Conv's refusals (spec ops §1.2.2): inputs of the wrong shape or type, bad or contradicting
arguments, an in-place output, and an engine this build lacks falling back to the default kernel.
The references and gradients are checked in test_conv.py."""
import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import conv_nchw

CPU = core.DeviceOption(0)


def rand(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


class TestConvErrors(hu.HypothesisTestCase):
    def raises(self, inputs, regexp, op_type="Conv", **kw):
        names = ["X", "W", "b"][: len(inputs)]
        op = core.CreateOperator(op_type, names, ["Y"], **kw)
        self.assertRunOpRaises(CPU, op, inputs, exception=RuntimeError, regexp=regexp)

    def test_shape_errors(self):
        X = np.zeros((1, 3, 5, 5), np.float32)
        self.raises(
            [X, np.zeros((2, 2, 3, 3), np.float32)],
            r"^\[Conv\] X \(1, 3, 5, 5\) has 3 channels but filter \(2, 2, 3, 3\) expects 2\n",
            kernel=3,
        )
        self.raises(
            [np.zeros((1, 4, 5, 5), np.float32), np.zeros((2, 1, 3, 3), np.float32)],
            r"X \(1, 4, 5, 5\) has 4 channels but filter \(2, 1, 3, 3\) expects 1 per group "
            r"x group 2 = 2",
            kernel=3,
            group=2,
        )
        self.raises(
            [np.zeros((1, 4, 5, 5), np.float32), np.zeros((3, 2, 3, 3), np.float32)],
            r"filter \(3, 2, 3, 3\) has 3 output channels, not divisible by group 2",
            kernel=3,
            group=2,
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32)],
            r"filter \(2, 3, 3, 3\) has kernel \(3, 3\) but the op's kernel is \(2, 2\)",
            kernel=2,
        )
        self.raises(
            [X, np.zeros((2, 3, 3), np.float32)],
            r"filter \(2, 3, 3\) must have 4 dims like X",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32), np.zeros(3, np.float32)],
            r"bias \(3,\) must hold 2 floats",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 7, 7), np.float32)],
            r"kernel 7 is larger than the padded input 6 \(size 5 \+ pads 1 \+ 0\) "
            r"in spatial dim 0",
            kernel=7,
            pads=[1, 0, 0, 0],
        )
        self.raises(
            [X, np.zeros((2, 3, 3, 3), np.float32)],
            r"kernel 3 \(dilated 7\) is larger than the padded input 5",
            kernel=3,
            dilation=3,
        )
        self.raises(
            [np.zeros((3, 5), np.float32), np.zeros((2, 3), np.float32)],
            r"X \(3, 5\) must have 3 to 5 dims",
            kernel=3,
        )
        self.raises(
            [X.astype(np.float64), np.zeros((2, 3, 3, 3), np.float32)],
            r"X must be a float tensor, got double",
            kernel=3,
        )
        self.raises(
            [X, np.zeros((2, 3, 3), np.float32)],
            r"'kernels' gives 1 kernel sizes but the input has 2 spatial dims",
            kernels=[3],
        )

    def test_argument_errors(self):
        X, W = np.zeros((1, 3, 5, 5), np.float32), np.zeros((2, 3, 3, 3), np.float32)
        self.raises([X, W], r"^\[Conv\] the kernel size is not set")
        self.raises(
            [X, W],
            r"legacy_pad VALID computes the pads itself; remove the explicit 'pad'",
            kernel=3,
            pad=1,
            legacy_pad=1,
        )
        self.raises(
            [X, W],
            r"legacy_pad SAME computes the pads itself; remove the explicit 'pads'",
            kernel=3,
            pads=[0, 0, 0, 0],
            legacy_pad=2,
        )
        self.raises(
            [X, W],
            r"legacy_pad SAME computes the pads itself; remove the explicit 'pad_t'/",
            kernel=3,
            pad_t=0,
            pad_l=0,
            pad_b=0,
            pad_r=0,
            legacy_pad=2,
        )
        self.raises(
            [X, W],
            r"legacy_pad must be 0 \(NOTSET\), 1 \(VALID\), 2 \(SAME\) or 3",
            kernel=3,
            legacy_pad=4,
        )
        self.raises(
            [X, W], r"legacy_pad SAME does not support dilation", kernel=3, dilation=2, legacy_pad=2
        )
        self.raises([X, W], r"group 3 needs order NCHW", kernel=3, group=3, order="NHWC")
        self.raises(
            [X, W], r"group 3 cannot be combined with dilation", kernel=3, group=3, dilation=2
        )
        self.raises([X, W], r"group must be at least 1, got 0", kernel=3, group=0)
        self.raises(
            [X, W], r"order must be \"NCHW\" or \"NHWC\", got \"CHW\"", kernel=3, order="CHW"
        )
        self.raises(
            [X, W],
            r"'kernel_h' and 'kernel_w' must be given together, got only 'kernel_h'",
            kernel_h=3,
        )
        self.raises(
            [X, W],
            r"'kernels' = \(3, 3\) and 'kernel' = 5 disagree; give one of 'kernel', "
            r"'kernel_h'/'kernel_w' or 'kernels'",
            kernel=5,
            kernels=[3, 3],
        )
        self.raises(
            [X, W],
            r"'pad_t'/'pad_l'/'pad_b'/'pad_r' = \(1, 1, 1, 0\) and 'pad' = 1 disagree",
            kernel=3,
            pad=1,
            pad_t=1,
            pad_l=1,
            pad_b=1,
            pad_r=0,
        )
        self.raises(
            [X, W],
            r"'strides' = \(1, 2\) and 'stride_h'/'stride_w' = \(2, 1\) disagree",
            kernel=3,
            strides=[1, 2],
            stride_h=2,
            stride_w=1,
        )
        self.raises(
            [X, W],
            r"'pad_t', 'pad_l', 'pad_b' and 'pad_r' must be given together, got only 2",
            kernel=3,
            pad_t=1,
            pad_b=1,
        )
        self.raises(
            [X, W], r"strides must be positive, got 'strides' = \(1, 0\)", kernel=3, strides=[1, 0]
        )
        # (core's argument reader currently rejects every negative int before the op sees it)
        self.raises(
            [X, W],
            r"pads must be non-negative, got 'pad' = -1|Argument 'pad' value -1",
            kernel=3,
            pad=-1,
        )
        self.raises(
            [X, W],
            r"kernel sizes must be positive, got 'kernel_h'/'kernel_w' = \(3, 0\)",
            kernel_h=3,
            kernel_w=0,
        )
        self.raises(
            [X, W],
            r"'pads' gives 2 pads but the input has 2 spatial dims \(pads hold heads then tails\)",
            kernel=3,
            pads=[1, 1],
        )
        self.raises(
            [X, W], r"Argument 'stride' does not have the right field", kernel=3, stride=1.0
        )

    def test_not_in_place(self):
        op = core.CreateOperator("Conv", ["X", "W"], ["X"], kernel=1)
        with self.assertRaises(RuntimeError):
            workspace.FeedBlob("X", np.zeros((1, 1, 2, 2), np.float32))
            workspace.FeedBlob("W", np.zeros((1, 1, 1, 1), np.float32))
            workspace.RunOperatorOnce(op)

    def test_engine_falls_back(self):
        rng = np.random.RandomState(9)
        X, W = rand(rng, 1, 2, 4, 4), rand(rng, 2, 2, 3, 3)
        op = core.CreateOperator(
            "Conv",
            ["X", "W"],
            ["Y"],
            kernel=3,
            engine="CUDNN",
            exhaustive_search=1,
            ws_nbytes_limit=1024,
            use_cudnn=True,
        )
        self.assertReferenceChecks(
            CPU,
            op,
            [X, W],
            lambda X, W: [conv_nchw(X, W, None, [1, 1], [1, 1], [0, 0], [0, 0])],
            threshold=1e-3,
        )


if __name__ == "__main__":
    import unittest

    unittest.main()
