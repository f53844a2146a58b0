"""FlattenDenseTensors and UnflattenDenseTensors (gradient bucketing): references, shape inference,
in-place rules and bad input; device checks against the CPU kernels. Pointer stability is checked
by the C++ test test_operators_tensor."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, gpu, needs_gpu

COVERED_CUDA_OPS = ["FlattenDenseTensors", "UnflattenDenseTensors"]

CPU = core.DeviceOption(0)

shapes = st.lists(st.lists(st.integers(0, 4), min_size=0, max_size=3), min_size=1, max_size=4)


def tensors(dims, dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return [np.asarray(rng.randn(*d)).astype(dtype) for d in dims]


class TestFlattenDenseTensors(hu.HypothesisTestCase):
    @given(dims=shapes, dtype=st.sampled_from([np.float32, np.float16, np.int64]))
    @settings(deadline=None, max_examples=15)
    def test_reference(self, dims, dtype):
        inputs = tensors(dims, dtype)
        names = ["X{}".format(i) for i in range(len(inputs))]
        op = core.CreateOperator("FlattenDenseTensors", names, ["buffer"])

        def ref(*xs):
            return [np.concatenate([x.ravel() for x in xs])]

        self.assertReferenceChecks(CPU, op, inputs, ref)

    @given(dims=shapes)
    @settings(deadline=None, max_examples=15)
    def test_unflatten_reference(self, dims):
        inputs = tensors(dims, seed=1)
        total = sum(x.size for x in inputs)
        buffer = np.arange(total, dtype=np.float32)
        names = ["X{}".format(i) for i in range(len(inputs))]
        op = core.CreateOperator("UnflattenDenseTensors", ["buffer"] + names, names)

        def ref(buffer, *xs):
            out, offset = [], 0
            for x in xs:
                out.append(buffer[offset : offset + x.size].reshape(x.shape))
                offset += x.size
            return out

        self.assertReferenceChecks(CPU, op, [buffer] + inputs, ref)

    def test_round_trip_in_a_net(self):
        a, b = tensors([[2, 3], [5]])
        workspace.FeedBlob("a", a)
        workspace.FeedBlob("b", b)
        net = core.Net("bucket")
        buf = net.FlattenDenseTensors(["a", "b"], "buf")
        net.Scale(buf, buf, scale=3.0)
        net.UnflattenDenseTensors([buf, "a", "b"], ["a", "b"])
        workspace.RunNetOnce(net)
        np.testing.assert_allclose(workspace.FetchBlob("a"), 3 * a)
        np.testing.assert_allclose(workspace.FetchBlob("b"), 3 * b)

    def test_shape_inference(self):
        net = core.Net("infer")
        net.ConstantFill([], "a", shape=[2, 3], value=1.0)
        net.ConstantFill([], "b", shape=[4], value=1.0)
        net.FlattenDenseTensors(["a", "b"], "buf")
        net.UnflattenDenseTensors(["buf", "a", "b"], ["a", "b"])
        shapes, types = workspace.InferShapesAndTypes([net], {})
        self.assertEqual(shapes["buf"], [10])
        self.assertEqual(shapes["a"], [2, 3])
        self.assertEqual(types["buf"], core.DataType.FLOAT)

    def test_no_gradient(self):
        op = core.CreateOperator("FlattenDenseTensors", ["a"], ["buf"])
        with pytest.raises(Exception):
            core.GradientRegistry.GetGradientForOp(op, ["buf_grad"])

    def test_bad_input(self):
        op = core.CreateOperator("FlattenDenseTensors", ["a", "b"], ["buf"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(2, np.float32), np.zeros(2, np.int32)],
            exception=RuntimeError,
            regexp=r"^\[FlattenDenseTensors\] input 1 is int\w* but input 0 " r"is float",
        )
        op = core.CreateOperator("UnflattenDenseTensors", ["buf", "a"], ["a"])
        self.assertRunOpRaises(
            CPU,
            op,
            [np.zeros(5, np.float32), np.zeros((2, 3), np.float32)],
            exception=RuntimeError,
            regexp=r"^\[UnflattenDenseTensors\] buffer has 5 elements but " r"the 1 tensors hold 6",
        )
        op = core.CreateOperator("UnflattenDenseTensors", ["buf", "a"], ["c"])
        with pytest.raises(RuntimeError, match="in.?place|inplace"):
            workspace.FeedBlob("buf", np.zeros(6, np.float32))
            workspace.FeedBlob("a", np.zeros(6, np.float32))
            workspace.RunOperatorOnce(op)


@needs_gpu
def test_flatten_and_unflatten_dense_tensors():
    a = np.random.rand(2, 3).astype(np.float32)
    b = np.random.rand(5).astype(np.float32)
    out = check_cpu_gpu(
        core.CreateOperator("FlattenDenseTensors", ["a", "b"], ["buf"]), [a, b], rtol=0, atol=0
    )
    np.testing.assert_array_equal(out[0], np.concatenate([a.ravel(), b]))
    workspace.ResetWorkspace()
    buf = np.arange(11, dtype=np.float32)
    for name, value in (("buf", buf), ("a", a), ("b", b)):
        workspace.FeedBlob(name, value, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "UnflattenDenseTensors", ["buf", "a", "b"], ["a", "b"], device_option=gpu()
        )
    )
    np.testing.assert_array_equal(workspace.FetchBlob("a"), buf[:6].reshape(2, 3))
    np.testing.assert_array_equal(workspace.FetchBlob("b"), buf[6:])
