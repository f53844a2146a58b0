"""The conv/pool arguments (spec ops §1.2.1): every form of kernel, stride, dilation and pads, the
output-size rule of every legacy_pad mode (from shape inference and from running the ops), and the
argument errors."""
import itertools

import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu
from conv_pool_reference import CAFFE_LEGACY_POOLING, NOTSET, SAME, VALID, out_size

CPU = core.DeviceOption(0)


class TestOutputSizes(hu.HypothesisTestCase):
    def test_every_mode_matches_the_spec_formula(self):
        """One net holds a MaxPool and a Conv per (size, kernel, stride, pad, mode) case; shape
        inference and the real outputs must both give the spec's sizes."""
        net = core.Net("sizes")
        expected, shapes_in = {}, {}
        rng = np.random.RandomState(0)
        cases = itertools.product(
            range(1, 8),
            range(1, 5),
            range(1, 4),
            range(0, 3),
            (NOTSET, VALID, SAME, CAFFE_LEGACY_POOLING),
        )
        for i, (n, k, s, p, mode) in enumerate(cases):
            if mode in (VALID, SAME) and p:
                continue
            h, ph, pt = out_size(n, k, s, 1, mode, p, p)
            w, _, _ = out_size(n + 1, k, s, 1, mode, p, p)
            if h < 1 or w < 1:
                continue
            args = dict(kernel=k, stride=s, legacy_pad=mode)
            if mode not in (VALID, SAME):
                args["pad"] = p
            x, wt = "x%d" % i, "w%d" % i
            workspace.FeedBlob(x, rng.randn(1, 2, n, n + 1).astype(np.float32))
            workspace.FeedBlob(wt, rng.randn(3, 2, k, k).astype(np.float32))
            shapes_in[x], shapes_in[wt] = [1, 2, n, n + 1], [3, 2, k, k]
            net.MaxPool([x], ["p%d" % i], **args)
            net.Conv([x, wt], ["c%d" % i], **args)
            expected["p%d" % i] = [1, 2, h, w]
            expected["c%d" % i] = [1, 3, h, w]
        self.assertGreater(len(expected), 500)
        inferred, _ = workspace.InferShapesAndTypes([net], shapes_in)
        workspace.RunNetOnce(net)
        for name, dims in expected.items():
            self.assertEqual(list(inferred[name]), dims, name)
            self.assertEqual(list(workspace.FetchBlob(name).shape), dims, name)

    def run_shape(self, in_hw, **args):
        workspace.FeedBlob("X", np.zeros((1, 1) + in_hw, np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("MaxPool", ["X"], ["Y"], **args))
        return workspace.FetchBlob("Y").shape[2:]

    def test_hand_computed_sizes(self):
        # CAFFE_LEGACY_POOLING: Caffe's ceil rule, e.g. the CIFAR-10 tutorial's 3x3/2 pooling of 32.
        self.assertEqual(self.run_shape((32, 32), kernel=3, stride=2, legacy_pad=3), (16, 16))
        self.assertEqual(self.run_shape((32, 32), kernel=3, stride=2), (15, 15))
        # ceil gives 4, but the 4th window would start in the tail pad: 3
        self.assertEqual(self.run_shape((5, 5), kernel=2, stride=2, pad=1, legacy_pad=3), (3, 3))
        self.assertEqual(self.run_shape((6, 6), kernel=3, stride=2, pad=1, legacy_pad=3), (4, 4))
        self.assertEqual(self.run_shape((6, 6), kernel=3, stride=2, pad=1), (3, 3))
        # legacy pooling reads only the head pads
        self.assertEqual(
            self.run_shape((6, 6), kernel=3, stride=2, pads=[1, 1, 0, 5], legacy_pad=3), (4, 4)
        )
        # SAME: ceil(in / stride); VALID: no pads
        self.assertEqual(self.run_shape((7, 6), kernel=3, stride=2, legacy_pad=2), (4, 3))
        self.assertEqual(self.run_shape((6, 5), kernel=3, stride=3, legacy_pad=2), (2, 2))
        self.assertEqual(self.run_shape((7, 6), kernel=3, stride=2, legacy_pad=1), (3, 2))
        # dilation enlarges the window: 2 * (3 - 1) + 1 = 5
        self.assertEqual(self.run_shape((7, 9), kernel=3, dilation=2), (3, 5))
        self.assertEqual(
            self.run_shape((5, 5), kernels=[3, 1], strides=[1, 2], pads=[0, 1, 2, 0]), (5, 3)
        )

    def test_caffe_legacy_pooling_values(self):
        # 6 -> 4 windows of 3 with stride 2 and pad 1: [-1..1], [1..3], [3..5], [5..7]
        # (last one clipped)
        X = np.arange(6, dtype=np.float32).reshape(1, 1, 1, 6)
        op = core.CreateOperator(
            "MaxPool", ["X"], ["Y"], kernels=[1, 3], strides=[1, 2], pads=[0, 1, 0, 1], legacy_pad=3
        )
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array([[[[1, 3, 5, 5]]]], np.float32)]
        )
        op = core.CreateOperator(
            "AveragePool",
            ["X"],
            ["Y"],
            kernels=[1, 3],
            strides=[1, 2],
            pads=[0, 1, 0, 1],
            legacy_pad=3,
        )
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array([[[[0.5, 2, 4, 5]]]], np.float32)]
        )

    def test_same_pads_head_less(self):
        # pad_needed = 2 for in 4, k 3, s 1 -> 1 + 1; in 4, k 4, s 1 -> 3 = 1 head + 2 tail
        X = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
        op = core.CreateOperator("AveragePool", ["X"], ["Y"], kernels=[1, 4], legacy_pad=2)
        self.assertReferenceChecks(
            CPU, op, [X], lambda X: [np.array([[[[1, 1.5, 2, 2.5]]]], np.float32)]
        )


class TestArgumentForms(hu.HypothesisTestCase):
    def outputs(self, op_type, inputs, forms):
        results = []
        for args in forms:
            names = ["X", "W"][: len(inputs)]
            for name, v in zip(names, inputs):
                workspace.FeedBlob(name, v)
            workspace.RunOperatorOnce(core.CreateOperator(op_type, names, ["Y"], **args))
            results.append(workspace.FetchBlob("Y"))
        for r in results[1:]:
            np.testing.assert_array_equal(r, results[0])
        return results[0]

    def test_equivalent_forms(self):
        rng = np.random.RandomState(1)
        X, W = rng.randn(2, 3, 7, 8).astype(np.float32), rng.randn(4, 3, 3, 3).astype(np.float32)
        forms = [
            dict(kernel=3, stride=2, pad=1, dilation=2),
            dict(
                kernel_h=3,
                kernel_w=3,
                stride_h=2,
                stride_w=2,
                pad_t=1,
                pad_l=1,
                pad_b=1,
                pad_r=1,
                dilation_h=2,
                dilation_w=2,
            ),
            dict(kernels=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2]),
        ]
        self.assertEqual(self.outputs("Conv", [X, W], forms).shape, (2, 4, 3, 3))
        self.assertEqual(self.outputs("MaxPool", [X], forms).shape, (2, 3, 3, 3))
        # pad_t/l/b/r map to pads [t, l, b, r]
        asym = [
            dict(kernel=3, pad_t=0, pad_l=1, pad_b=2, pad_r=3),
            dict(kernel=3, pads=[0, 1, 2, 3]),
        ]
        self.assertEqual(self.outputs("AveragePool", [X], asym).shape, (2, 3, 7, 10))
        # scalar forms apply to every spatial dim of 1-D and 3-D inputs too
        X1 = rng.randn(2, 3, 9).astype(np.float32)
        self.outputs(
            "MaxPool",
            [X1],
            [dict(kernel=3, stride=2, pad=1), dict(kernels=[3], strides=[2], pads=[1, 1])],
        )
        X3 = rng.randn(1, 2, 4, 5, 6).astype(np.float32)
        self.outputs(
            "AveragePool",
            [X3],
            [dict(kernel=2, stride=2, pad=1), dict(kernels=[2] * 3, strides=[2] * 3, pads=[1] * 6)],
        )
        # several forms may be given when they agree (upstream picked one silently)
        self.outputs(
            "Conv",
            [X, W],
            forms
            + [
                dict(
                    kernel=3,
                    kernels=[3, 3],
                    kernel_h=3,
                    kernel_w=3,
                    stride=2,
                    strides=[2, 2],
                    pad=1,
                    pads=[1, 1, 1, 1],
                    pad_t=1,
                    pad_l=1,
                    pad_b=1,
                    pad_r=1,
                    dilation=2,
                    dilations=[2, 2],
                )
            ],
        )
        # defaults: stride 1, dilation 1, pads 0; explicit NOTSET changes nothing
        self.outputs(
            "MaxPool",
            [X],
            [dict(kernel=2), dict(kernel=2, stride=1, dilation=1, pad=0, legacy_pad=0)],
        )
        # engine and cuDNN-only arguments are accepted and ignored on the CPU
        self.outputs(
            "MaxPool",
            [X],
            [
                dict(kernel=2),
                dict(
                    kernel=2,
                    engine="CUDNN",
                    deterministic=1,
                    float16_compute=False,
                    shared_buffer=1,
                ),
            ],
        )

    def test_kernel_h_w_need_2d(self):
        op = core.CreateOperator("MaxPool", ["X"], ["Y"], kernel_h=2, kernel_w=2)
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros((1, 1, 4), np.float32)],
            exception=RuntimeError,
            regexp=r"'kernel_h'/'kernel_w' gives 2 kernel sizes but the input has "
            r"1 spatial dim\n",
        )

    def test_shape_inference_nhwc_and_3d(self):
        net = core.Net("infer")
        net.Conv(["x", "w"], ["y"], kernel=3, stride=2, pad=1, order="NHWC")
        net.AveragePool(["y"], ["z"], global_pooling=1, order="NHWC")
        net.MaxPool(["v"], ["u"], kernels=[2, 2, 2], strides=[2, 2, 2])
        net.Conv(["v", "f"], ["t"], kernel=3, group=2)
        shapes, types = workspace.InferShapesAndTypes(
            [net],
            {"x": [2, 9, 8, 3], "w": [5, 3, 3, 3], "v": [1, 4, 4, 6, 8], "f": [6, 2, 3, 3, 3]},
        )
        self.assertEqual(shapes["y"], [2, 5, 4, 5])
        self.assertEqual(shapes["z"], [2, 1, 1, 5])
        self.assertEqual(shapes["u"], [1, 4, 2, 3, 4])
        self.assertEqual(shapes["t"], [1, 6, 2, 4, 6])


if __name__ == "__main__":
    import unittest

    unittest.main()
