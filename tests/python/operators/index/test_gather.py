"""Gather: references, gradients and their defs (SparseToDense), string data and a bad index; device
checks over element types and index types, indices on the host, and (GPU only) out-of-range GPU
indices that give zero rows."""
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import check_cpu_gpu, check_same_error, gpu, gpu_semantics, needs_gpu, values

COVERED_CUDA_OPS = ["Gather"]

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestGather(hu.HypothesisTestCase):
    @given(
        seed=st.integers(0, 100),
        idx_type=st.sampled_from([np.int32, np.int64]),
        idx_shape=st.sampled_from([(3,), (2, 2)]),
    )
    @settings(deadline=None, max_examples=10)
    def test_reference_and_gradients(self, seed, idx_type, idx_shape):
        rng = np.random.RandomState(seed)
        data = rng.randn(5, 3).astype(np.float32)
        idx = rng.randint(0, 5, size=idx_shape).astype(idx_type)
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        self.assertReferenceChecks(CPU, op, [data, idx], lambda d, i: [d[i]])
        if len(idx_shape) == 1:
            self.assertGradientChecks(CPU, op, [data, idx], 0, [0])
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"], dense_gradient=True)
        self.assertGradientChecks(CPU, op, [data, idx], 0, [0])

    def test_gradient_defs(self):
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual(ops, [])
        self.assertEqual((grads[0].indices, grads[0].values), ("I", "Y_grad"))
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"], dense_gradient=1)
        ops, grads = core.GradientRegistry.GetGradientForOp(op, ["Y_grad"])
        self.assertEqual([o.type for o in ops], ["SparseToDense"])
        self.assertEqual(list(ops[0].input), ["I", "Y_grad", "D"])

    def test_string_data_and_bad_index(self):
        data = np.array([b"a", b"bb", b"ccc"], dtype=object)
        op = core.CreateOperator("Gather", ["D", "I"], ["Y"])
        self.assertReferenceChecks(CPU, op, [data, np.array([2, 0], np.int32)], lambda d, i: [d[i]])
        self.assertRunOpRaises(
            CPU,
            op,
            [rand(3, 2), np.array([0, 3], np.int64)],
            exception=RuntimeError,
            regexp=r"^\[Gather\] index 3 at position 1 out of range for DATA \(3, 2\)",
        )


R = np.random.RandomState(1)


@needs_gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize(
    "data_shape,index_shape",
    [
        ((5, 3), (4,)),
        ((5,), (2, 3)),
        ((6, 2, 3), (2, 2)),
        ((10, 7), (0,)),
        ((1000, 64), (300,)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_])
def test_gather(index_dtype, data_shape, index_shape, dtype):
    op = core.CreateOperator("Gather", ["data", "indices"], ["out"])
    data = values(dtype, *data_shape)
    indices = R.randint(0, data_shape[0], index_shape).astype(index_dtype)
    out = check_cpu_gpu(op, [data, indices], rtol=0, atol=0)
    np.testing.assert_array_equal(out[0], data[indices])


@needs_gpu
def test_gather_indices_on_the_host_and_errors():
    op = core.CreateOperator("Gather", ["data", "indices"], ["out"])
    data = values(np.float32, 6, 5)
    check_cpu_gpu(op, [data, np.array([5, 0, 5], np.int64)], input_device_options={"indices": CPU})
    check_same_error(
        op,
        [data, np.array([1, 6], np.int64)],
        r"index 6 at position 1 out of range for DATA \(6, 5\)",
        input_device_options={"indices": CPU},
    )
    check_same_error(op, [data, np.array([1.0], np.float32)], "INDICES must be an int32 or int64")
    check_same_error(
        op,
        [np.array(3.0, np.float32), np.array([0], np.int32)],
        "DATA must have at least one dimension",
    )


@needs_gpu
@gpu_semantics
def test_gather_out_of_range_indices_on_the_gpu_give_zero_rows():
    workspace.ResetWorkspace()
    data = values(np.float32, 4, 3) + 1
    workspace.FeedBlob("data", data, gpu())
    workspace.FeedBlob("indices", np.array([2, 4, -1, 0], np.int32), gpu())
    workspace.RunOperatorOnce(
        core.CreateOperator("Gather", ["data", "indices"], ["out"], device_option=gpu())
    )
    out = workspace.FetchBlob("out")
    np.testing.assert_array_equal(out[[0, 3]], data[[2, 0]])
    np.testing.assert_array_equal(out[[1, 2]], np.zeros((2, 3), np.float32))
