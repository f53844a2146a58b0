"""Reshape: reference, gradient and its def, shape as argument or input, in place, bad input; device
checks over element types, the shape input on the host or the GPU, errors, and (GPU only) in
place keeping the GPU storage with old_shape on the host."""
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

COVERED_CUDA_OPS = ["Reshape"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestReshape(hu.HypothesisTestCase):
    @given(
        shape=st.sampled_from([[0, -1], [-1, 4], [2, 3, 4], [1, 0, -1], [24]]),
        in_place=st.booleans(),
        as_input=st.booleans(),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradient(self, shape, in_place, as_input):
        X = rand(2, 3, 4)
        # (in place with a shape input, shape inference cannot know the result and keeps X's dims)
        out = "X" if in_place and not as_input else "Y"
        if as_input:
            op = core.CreateOperator("Reshape", ["X", "shape"], [out, "old"])
            inputs = [X, np.array(shape, np.int64)]
        else:
            op = core.CreateOperator("Reshape", ["X"], [out, "old"], shape=shape)
            inputs = [X]
        resolved = [X.shape[i] if s == 0 else s for i, s in enumerate(shape)]

        def ref(X, *unused):
            return [X.reshape(resolved), np.array(X.shape, np.int64)]

        self.assertReferenceChecks(CPU, op, inputs, ref)
        if not in_place:
            self.assertGradientChecks(CPU, op, inputs, 0, [0])

    def test_gradient_def(self):
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[-1])
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["Y_grad", None])
        self.assertEqual(ops[0].type, "Reshape")
        self.assertEqual(list(ops[0].input), ["Y_grad", "old"])
        self.assertEqual(list(ops[0].output), ["X_grad", "_X_grad_dims"])
        self.assertEqual(len(ops[0].arg), 0)

    def test_bad_input(self):
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[5, -1])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3)],
            exception=RuntimeError,
            regexp=r"^\[Reshape\] cannot reshape \(2, 3\) \(6 elements\) into \(5, -1\)",
        )
        op = core.CreateOperator("Reshape", ["X"], ["Y", "old"], shape=[-1, -1])
        self.assertRunOpRaises(
            CPU, op, [rand(2, 3)], exception=RuntimeError, regexp="more than one -1"
        )
        op = core.CreateOperator("Reshape", ["X", "s"], ["Y", "old"], shape=[6])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(2, 3), np.array([6])],
            exception=RuntimeError,
            regexp="either as the 'shape' argument or as input 1",
        )


@needs_gpu
@pytest.mark.parametrize(
    "shape,new_shape",
    [
        ((2, 3, 4), [6, -1]),
        ((2, 3, 4), [0, -1]),
        ((2, 3, 4), [4, 0, 2]),
        ((6,), [1, 2, 1, 3]),
        ((2, 0, 3), [0, -1, 3]),
        ((1, 1), [1]),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_reshape_shapes(shape, new_shape, dtype):
    op = core.CreateOperator("Reshape", ["x"], ["y", "old_shape"], shape=new_shape)
    out = check_cpu_gpu(op, [values(dtype, *shape)], rtol=0, atol=0)
    assert out[1].dtype == np.int64
    np.testing.assert_array_equal(out[1], shape)


@needs_gpu
@pytest.mark.parametrize("shape_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape_on_host", [True, False])
def test_reshape_shape_as_input_and_in_place(shape_dtype, shape_on_host):
    op = core.CreateOperator("Reshape", ["x", "s"], ["x", "old"])
    check_cpu_gpu(
        op,
        [values(np.float32, 4, 6), np.array([3, -1, 2], shape_dtype)],
        input_device_options={"s": CPU} if shape_on_host else {},
    )


@needs_gpu
def test_reshape_gradient_and_errors():
    check_gradient_cpu_gpu(
        core.CreateOperator("Reshape", ["x"], ["y", "old"], shape=[-1, 4]),
        [values(np.float32, 2, 3, 4)],
    )
    check_same_error(
        core.CreateOperator("Reshape", ["x"], ["y", "old"], shape=[5, -1]),
        [values(np.float32, 2, 3)],
        r"cannot reshape \(2, 3\) \(6 elements\)",
    )
    check_same_error(
        core.CreateOperator("Reshape", ["x", "s"], ["y", "old"]),
        [values(np.float32, 2, 3), np.array([-1, -1], np.int64)],
        "has more than one -1",
        input_device_options={"s": CPU},
    )


@needs_gpu
@gpu_semantics
def test_reshape_in_place_keeps_the_gpu_storage_and_old_shape_lives_on_the_host():
    x = values(np.float32, 4, 6)
    workspace.ResetWorkspace()
    workspace.FeedBlob("x", x, gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Reshape", ["x"], ["x", "old"], shape=[2, 12], device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x.reshape(2, 12))
    assert blob_device_type("x") == caffe2_pb2.CUDA
    assert blob_device_type("old") == caffe2_pb2.CPU
    np.testing.assert_array_equal(workspace.FetchBlob("old"), [4, 6])
