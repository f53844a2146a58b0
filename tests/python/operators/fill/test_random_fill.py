"""GaussianFill, UniformFill, UniformIntFill, XavierFill, MSRAFill, UniqueUniformFill: seeded
reproducibility, loose statistics, bounds, shape rules, shape inference and bad input; device
checks that the GPU draws have their distribution."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import gpu, needs_gpu

COVERED_CUDA_OPS = ["GaussianFill", "UniformFill", "UniformIntFill", "XavierFill", "MSRAFill"]

CPU = core.DeviceOption(0)


def seeded(seed):
    d = caffe2_pb2.DeviceOption()
    d.random_seed = seed
    return d


def fill(op_type, seed=1, inputs=(), **kwargs):
    op = core.CreateOperator(
        op_type, [n for n, _ in inputs], ["Y"], device_option=seeded(seed), **kwargs
    )
    for name, value in inputs:
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(op)
    return workspace.FetchBlob("Y")


class TestRandomFill(hu.HypothesisTestCase):
    def test_reproducible_with_seed(self):
        for op_type, kw in [
            ("GaussianFill", {}),
            ("UniformFill", {}),
            ("UniformIntFill", {"max": 100}),
            ("XavierFill", {}),
            ("MSRAFill", {}),
            ("UniqueUniformFill", {"max": 1000}),
        ]:
            a = fill(op_type, seed=7, shape=[4, 5], **kw)
            b = fill(op_type, seed=7, shape=[4, 5], **kw)
            c = fill(op_type, seed=8, shape=[4, 5], **kw)
            np.testing.assert_array_equal(a, b, err_msg=op_type)
            self.assertFalse(np.array_equal(a, c), op_type)

    def test_gaussian_statistics(self):
        y = fill("GaussianFill", shape=[200, 100], mean=2.0, std=0.5)
        self.assertEqual(y.dtype, np.float32)
        self.assertAlmostEqual(y.mean(), 2.0, delta=0.02)
        self.assertAlmostEqual(y.std(), 0.5, delta=0.02)

    def test_uniform(self):
        y = fill("UniformFill", shape=[10000], min=-2.0, max=3.0)
        self.assertTrue((y >= -2).all() and (y < 3).all())
        self.assertAlmostEqual(y.mean(), 0.5, delta=0.1)
        self.assertAlmostEqual(y.std(), 5 / np.sqrt(12), delta=0.05)

    def test_uniform_three_inputs(self):
        like = np.zeros((3, 4), np.float32)
        y = fill(
            "UniformFill",
            inputs=[
                ("like", like),
                ("lo", np.array([5.0], np.float32)),
                ("hi", np.array([6.0], np.float32)),
            ],
        )
        self.assertEqual(y.shape, (3, 4))
        self.assertTrue((y >= 5).all() and (y < 6).all())
        y = fill(
            "UniformFill",
            inputs=[
                ("like", like),
                ("lo", np.array([6.0], np.float32)),
                ("hi", np.array([5.0], np.float32)),
            ],
        )
        self.assertEqual(y.shape, (0, 4))
        y = fill(
            "UniformIntFill",
            inputs=[
                ("like", like),
                ("lo", np.array([2], np.int32)),
                ("hi", np.array([4], np.int32)),
            ],
        )
        self.assertEqual(y.dtype, np.int32)
        self.assertEqual(set(np.unique(y)) <= {2, 3, 4}, True)

    def test_uniform_int_inclusive(self):
        y = fill("UniformIntFill", shape=[5000], min=-1, max=2)
        self.assertEqual(y.dtype, np.int32)
        self.assertEqual(set(np.unique(y)), {-1, 0, 1, 2})

    def test_xavier_and_msra_fans(self):
        y = fill("XavierFill", shape=[64, 8, 5, 5])
        scale = np.sqrt(3.0 / (8 * 5 * 5))
        self.assertTrue((np.abs(y) <= scale).all())
        self.assertAlmostEqual(y.std(), scale / np.sqrt(3), delta=0.01 * scale + 0.002)
        y = fill("MSRAFill", shape=[64, 8, 5, 5])
        std = np.sqrt(2.0 / (64 * 5 * 5))
        self.assertAlmostEqual(y.mean(), 0.0, delta=0.01)
        self.assertAlmostEqual(y.std(), std, delta=0.05 * std)

    def test_unique_uniform(self):
        y = fill(
            "UniqueUniformFill",
            inputs=[
                ("like", np.zeros(50, np.float32)),
                ("avoid", np.arange(0, 10, dtype=np.int64)),
            ],
            min=0,
            max=59,
            dtype=caffe2_pb2.TensorProto.INT64,
        )
        self.assertEqual(y.dtype, np.int64)
        self.assertEqual(len(set(y.tolist())), 50)
        self.assertEqual(sorted(y.tolist()), list(range(10, 60)))
        y = fill("UniqueUniformFill", shape=[100], min=0, max=10**9)
        self.assertEqual(y.dtype, np.int32)
        self.assertEqual(len(set(y.tolist())), 100)

    def test_shape_inference_and_extra_shape(self):
        for op_type, dtype in [
            ("GaussianFill", np.float32),
            ("UniformIntFill", np.int32),
            ("XavierFill", np.float32),
            ("RangeFill", np.float32),
        ]:
            op = core.CreateOperator(
                op_type, ["X"], ["Y"], extra_shape=[2], device_option=seeded(3)
            )
            self.assertValidationChecks(
                CPU,
                op,
                [np.zeros((3, 1), np.float32)],
                lambda X, Y: self.assertEqual((Y.shape, Y.dtype), ((3, 1, 2), dtype)),
            )
            net = core.Net("n")
            net.Proto().op.extend([core.CreateOperator(op_type, [], ["Y"], shape=[4, 2])])
            shapes, types = workspace.InferShapesAndTypes([net])
            self.assertEqual(shapes["Y"], [4, 2])

    def test_in_place_takes_the_input_shape(self):
        workspace.FeedBlob("Y", np.zeros((3, 4), np.float32))
        op = core.CreateOperator(
            "GaussianFill", ["Y"], ["Y"], extra_shape=[2], device_option=seeded(5)
        )
        workspace.RunOperatorOnce(op)
        y = workspace.FetchBlob("Y")
        self.assertEqual(y.shape, (3, 4, 2))
        self.assertGreater(np.abs(y).sum(), 0)

    def test_bad_input(self):
        with self.assertRaisesRegex(RuntimeError, r"^\[MSRAFill\] MSRAFill needs at least 2 dims"):
            fill("MSRAFill", shape=[5])
        with self.assertRaisesRegex(RuntimeError, r"cannot draw 20 distinct values from \[0, 9\]"):
            fill("UniqueUniformFill", shape=[20], min=0, max=9)
        with self.assertRaisesRegex(RuntimeError, r"'min' 2 is larger than 'max' 1"):
            fill("UniformFill", shape=[2], min=2.0, max=1.0)
        with self.assertRaisesRegex(
            RuntimeError, r"'shape' cannot be given together with an input"
        ):
            fill("GaussianFill", shape=[2], inputs=[("X", np.zeros(2, np.float32))])
        with self.assertRaisesRegex(RuntimeError, "min input must be a one-element float"):
            fill(
                "UniformFill",
                inputs=[
                    ("like", np.zeros(2, np.float32)),
                    ("lo", np.zeros(2, np.float32)),
                    ("hi", np.ones(1, np.float32)),
                ],
            )


@needs_gpu
@pytest.mark.parametrize(
    "op,check",
    [
        (
            core.CreateOperator("UniformFill", [], ["y"], shape=[1000], min=-2.0, max=3.0),
            lambda y: y.min() >= -2.0 and y.max() <= 3.0 and abs(y.mean() - 0.5) < 0.2,
        ),
        (
            core.CreateOperator("UniformIntFill", [], ["y"], shape=[1000], min=-2, max=3),
            lambda y: y.dtype == np.int32 and y.min() >= -2 and y.max() <= 3,
        ),
        (
            core.CreateOperator("GaussianFill", [], ["y"], shape=[4000], mean=1.0, std=2.0),
            lambda y: abs(y.mean() - 1.0) < 0.15 and abs(y.std() - 2.0) < 0.15,
        ),
        (
            core.CreateOperator("XavierFill", [], ["y"], shape=[64, 100]),
            lambda y: np.abs(y).max() <= np.sqrt(3.0 / 100) + 1e-6,
        ),
        (
            core.CreateOperator("MSRAFill", [], ["y"], shape=[64, 100]),
            lambda y: abs(y.std() - np.sqrt(2.0 / 64)) < 0.02,
        ),
    ],
)
def test_random_fills_on_gpu_have_their_distribution(op, check):
    op.device_option.CopyFrom(gpu())
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(op)
    assert check(workspace.FetchBlob("y"))
