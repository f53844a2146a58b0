"""Concat / Split / DepthConcat / DepthSplit: references, axis/order/add_axis rules, split_info,
gradients both ways, shape inference and bad input; device checks over axes and element types,
split sizes as an input, gradients, errors, and (GPU only) split_info living on the host."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import (
    blob_device_type,
    check_cpu_gpu,
    check_gradient_cpu_gpu,
    check_same_error,
    gpu,
    gpu_semantics,
    needs_gpu,
    values,
)

COVERED_CUDA_OPS = ["Concat", "DepthConcat", "Split", "DepthSplit"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestConcat(hu.HypothesisTestCase):
    @given(
        n=st.integers(1, 3),
        axis=st.integers(-3, 2),
        seed=st.integers(0, 100),
        op_type=st.sampled_from(["Concat", "DepthConcat"]),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, n, axis, seed, op_type):
        rng = np.random.RandomState(seed)
        base = [2, 3, 2]
        inputs = []
        for i in range(n):
            shape = list(base)
            shape[axis] = rng.randint(1, 4)
            inputs.append(rng.randn(*shape).astype(np.float32))
        names = ["X%d" % i for i in range(n)]
        op = core.CreateOperator(op_type, names, ["Y", "info"], axis=axis)

        def ref(*xs):
            return [np.concatenate(xs, axis=axis), np.array([x.shape[axis] for x in xs], np.int32)]

        self.assertReferenceChecks(CPU, op, inputs, ref)
        for i in range(n):
            self.assertGradientChecks(CPU, op, inputs, i, [0])

    def test_order_and_default_axis(self):
        a, b = rand(1, 2, 2, 3), rand(1, 2, 2, 4, seed=1)
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], order="NHWC")
        self.assertReferenceChecks(
            CPU, op, [a, b], lambda a, b: [np.concatenate([a, b], 3), np.array([3, 4], np.int32)]
        )
        c, d = rand(2, 3), rand(2, 5, seed=1)
        op = core.CreateOperator("Concat", ["c", "d"], ["Y", "info"])
        self.assertReferenceChecks(
            CPU, op, [c, d], lambda c, d: [np.concatenate([c, d], 1), np.array([3, 5], np.int32)]
        )

    def test_add_axis(self):
        xs = [rand(2, 3, seed=i) for i in range(3)]
        op = core.CreateOperator("Concat", ["a", "b", "c"], ["Y", "info"], axis=1, add_axis=1)
        self.assertReferenceChecks(CPU, op, xs, lambda *xs: [np.stack(xs, 1), np.ones(3, np.int32)])
        self.assertGradientChecks(CPU, op, xs, 1, [0])

    def test_int_inputs(self):
        a, b = np.arange(6, dtype=np.int64).reshape(2, 3), np.arange(4, dtype=np.int64).reshape(
            2, 2
        )
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], axis=1)
        self.assertReferenceChecks(
            CPU, op, [a, b], lambda a, b: [np.concatenate([a, b], 1), np.array([3, 2], np.int32)]
        )

    def test_gradient_op_is_split(self):
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], axis=0)
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", "info_grad"])
        self.assertEqual(len(ops), 1)
        self.assertEqual(ops[0].type, "Split")
        self.assertEqual(list(ops[0].input), ["Y_grad", "info"])
        self.assertEqual(list(ops[0].output), ["a_grad", "b_grad"])

    def test_bad_input(self):
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], axis=1)
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), rand(3, 3)],
            exception=RuntimeError,
            regexp=r"^\[Concat\] input 1 \(3, 3\) does not match input 0 \(2, 3\)",
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), np.zeros((2, 3), np.int32)],
            exception=RuntimeError,
            regexp=r"input 1 is int but input 0 is float",
        )
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], axis=2)
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), rand(2, 3)],
            exception=RuntimeError,
            regexp=r"axis 2 out of range for a 2-d input",
        )
        op = core.CreateOperator("Concat", ["a", "b"], ["Y", "info"], axis=1, order="NCHW")
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), rand(2, 3)],
            exception=RuntimeError,
            regexp=r"either 'axis' or 'order', not both",
        )


class TestSplit(hu.HypothesisTestCase):
    @given(
        seed=st.integers(0, 100),
        axis=st.integers(0, 1),
        use_input=st.booleans(),
        op_type=st.sampled_from(["Split", "DepthSplit"]),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, seed, axis, use_input, op_type):
        X = rand(6, 5, seed=seed)
        sizes = [1, 2, 3] if axis == 0 else [2, 0, 3]
        if use_input:
            op = core.CreateOperator(op_type, ["X", "split"], ["a", "b", "c"], axis=axis)
            inputs = [X, np.array(sizes, np.int32)]
        else:
            op = core.CreateOperator(op_type, ["X"], ["a", "b", "c"], axis=axis, split=sizes)
            inputs = [X]

        def ref(X, *unused):
            return np.split(X, np.cumsum(sizes)[:-1], axis=axis)

        self.assertReferenceChecks(CPU, op, inputs, ref)
        self.assertGradientChecks(CPU, op, inputs, 0, [0, 1, 2])

    def test_gradient_with_missing_output_gradients(self):
        # Only some outputs have a gradient: the others count as zeros.
        X = rand(6, 2)
        op = core.CreateOperator("Split", ["X"], ["a", "b", "c"], axis=0, split=[1, 2, 3])
        workspace.FeedBlob("X", X)
        workspace.RunOperatorOnce(op)
        ops, grads = core.GradientRegistry.GetGradientForOp(op, [None, "b_grad", None])
        self.assertEqual([o.type for o in ops], ["ConstantFill", "ConstantFill", "Concat"])
        workspace.FeedBlob("b_grad", np.ones((2, 2), np.float32))
        workspace.RunOperatorsOnce(ops)
        want = np.zeros((6, 2), np.float32)
        want[1:3] = 1
        np.testing.assert_array_equal(workspace.FetchBlob(grads[0]), want)

    def test_equal_split_and_add_axis(self):
        X = rand(2, 6)
        op = core.CreateOperator("Split", ["X"], ["a", "b", "c"], axis=1)
        self.assertReferenceChecks(CPU, op, [X], lambda X: np.split(X, 3, axis=1))
        X = rand(3, 4)
        op = core.CreateOperator("Split", ["X"], ["a", "b", "c"], axis=0, add_axis=1)
        self.assertReferenceChecks(CPU, op, [X], lambda X: [X[0], X[1], X[2]])
        self.assertGradientChecks(CPU, op, [X], 0, [0, 1, 2])

    def test_split_input_overrides_argument(self):
        X = rand(5, 2)
        op = core.CreateOperator("Split", ["X", "s"], ["a", "b"], axis=0, split=[1, 4])
        self.assertReferenceChecks(
            CPU, op, [X, np.array([3, 2], np.int64)], lambda X, s: [X[:3], X[3:]]
        )

    def test_gradient_op_is_concat(self):
        op = core.CreateOperator("Split", ["X"], ["a", "b"], axis=0)
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["a_grad", "b_grad"])
        self.assertEqual([o.type for o in ops], ["Concat"])
        self.assertEqual(list(ops[0].output), ["X_grad", "_X_grad_dims"])

    def test_bad_input(self):
        op = core.CreateOperator("Split", ["X"], ["a", "b"], axis=1, split=[1, 3])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 5)],
            exception=RuntimeError,
            regexp=r"^\[Split\] split sizes add up to 4 but dimension 1 of X \(2, 5\) is 5",
        )
        op = core.CreateOperator("Split", ["X"], ["a", "b"], axis=1)
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 5)],
            exception=RuntimeError,
            regexp=r"cannot split dimension 1 of size 5 into 2 equal parts",
        )
        op = core.CreateOperator("Split", ["X"], ["a", "b", "c"], split=[1, 1])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 2)],
            exception=RuntimeError,
            regexp=r"split has 2 sizes but the op has 3 outputs",
        )


@needs_gpu
@pytest.mark.parametrize(
    "shapes,args",
    [
        ([(2, 3), (2, 4), (2, 1)], dict(axis=1)),
        ([(2, 3), (5, 3)], dict(axis=0)),
        ([(2, 3, 4), (2, 3, 6)], dict(axis=-1)),
        ([(2, 4, 3, 3), (2, 4, 3, 3), (2, 4, 3, 3)], dict(order="NHWC")),
        ([(2, 3, 5), (2, 3, 5)], dict(axis=1, add_axis=1)),
        ([(2, 3, 5), (2, 3, 5), (2, 3, 5)], dict(axis=3, add_axis=1)),
        ([(2, 0, 4), (2, 3, 4)], dict(axis=1)),
        ([(7,)], dict(axis=0)),
        ([(64, 1000), (64, 24)], dict(axis=1)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_concat_axes_and_types(shapes, args, dtype):
    names = ["x%d" % i for i in range(len(shapes))]
    op = core.CreateOperator("Concat", names, ["y", "split_info"], **args)
    xs = [values(dtype, *s) for s in shapes]
    out = check_cpu_gpu(op, xs, rtol=0, atol=0)
    assert out[1].dtype == np.int32
    if args.get("add_axis"):
        np.testing.assert_array_equal(out[0], np.stack(xs, axis=args["axis"]))
        np.testing.assert_array_equal(out[1], [1] * len(xs))


@needs_gpu
@pytest.mark.parametrize(
    "shape,args,n",
    [
        ((2, 7), dict(axis=1, split=[3, 4]), 2),
        ((6, 3), dict(axis=0), 3),
        ((2, 3, 8), dict(axis=-1, split=[2, 0, 6]), 3),
        ((2, 3, 3, 4), dict(order="NHWC", split=[1, 3]), 2),
        ((2, 3, 5), dict(axis=1, add_axis=1), 3),
        ((64, 1024), dict(axis=1, split=[1000, 24]), 2),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_split_axes_and_types(shape, args, n, dtype):
    op = core.CreateOperator("Split", ["x"], ["y%d" % i for i in range(n)], **args)
    check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)


@needs_gpu
@pytest.mark.parametrize("sizes_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("sizes_on_host", [True, False])
def test_split_sizes_as_input(sizes_dtype, sizes_on_host):
    op = core.CreateOperator("DepthSplit", ["x", "sizes"], ["a", "b", "c"], axis=1)
    check_cpu_gpu(
        op,
        [values(np.float32, 2, 9, 3), np.array([2, 3, 4], sizes_dtype)],
        input_device_options={"sizes": CPU} if sizes_on_host else {},
    )


@needs_gpu
def test_concat_split_gradients_round_trip():
    check_gradient_cpu_gpu(
        core.CreateOperator("Concat", ["a", "b"], ["y", "info"], axis=2),
        [values(np.float32, 2, 3, 4), values(np.float32, 2, 3, 5)],
    )
    check_gradient_cpu_gpu(
        core.CreateOperator("DepthConcat", ["a", "b"], ["y", "info"]),
        [values(np.float32, 2, 3, 4), values(np.float32, 2, 1, 4)],
    )
    check_gradient_cpu_gpu(
        core.CreateOperator("Split", ["x"], ["a", "b"], axis=0, split=[1, 3]),
        [values(np.float32, 4, 5)],
    )


@needs_gpu
def test_concat_split_errors():
    check_same_error(
        core.CreateOperator("Concat", ["a", "b"], ["y", "i"], axis=1),
        [values(np.float32, 2, 3), values(np.float32, 3, 3)],
        "does not match input 0",
    )
    check_same_error(
        core.CreateOperator("Concat", ["a", "b"], ["y", "i"], axis=1),
        [values(np.float32, 2, 3), values(np.int32, 2, 3)],
        "input 1 is int but input 0 is float",
    )
    check_same_error(
        core.CreateOperator("Concat", ["a"], ["y", "i"], axis=2),
        [values(np.float32, 2, 3)],
        "axis 2 out of range for a 2-d input",
    )
    check_same_error(
        core.CreateOperator("Split", ["x"], ["a", "b"], axis=1, split=[1, 1]),
        [values(np.float32, 2, 3)],
        "split sizes add up to 2",
    )
    check_same_error(
        core.CreateOperator("Split", ["x"], ["a", "b"], axis=1),
        [values(np.float32, 2, 3)],
        "into 2 equal parts",
    )


@needs_gpu
@gpu_semantics
def test_concat_split_info_lives_on_the_host():
    workspace.ResetWorkspace()
    workspace.FeedBlob("a", values(np.float32, 2, 3), gpu())
    workspace.FeedBlob("b", values(np.float32, 2, 5), gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Concat", ["a", "b"], ["y", "info"], axis=1, device_option=gpu())
    )
    assert blob_device_type("y") == caffe2_pb2.CUDA
    assert blob_device_type("info") == caffe2_pb2.CPU
    # The gradient's Split reads the sizes from the host.
    workspace.RunOperatorOnce(
        core.CreateOperator("Split", ["y", "info"], ["a2", "b2"], axis=1, device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("b2"), workspace.FetchBlob("b"))
