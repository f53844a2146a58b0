"""The core operators: fillers, copies, Sum, Print, Iter/AtomicIter, StopGradient."""
import os

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestFillers(hu.HypothesisTestCase):
    def test_constant_fill_types(self):
        for value, dtype, expected in [(2.5, None, np.float32), (3, None, np.int64),
                                       (1, core.DataType.INT32, np.int32),
                                       (1.0, core.DataType.DOUBLE, np.float64),
                                       (1, core.DataType.BOOL, np.bool_),
                                       (7, core.DataType.UINT8, np.uint8)]:
            kwargs = {"shape": [2, 3], "value": value}
            if dtype is not None:
                kwargs["dtype"] = dtype
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["y"], **kwargs))
            y = workspace.FetchBlob("y")
            self.assertEqual(y.dtype, expected)
            np.testing.assert_array_equal(y, np.full((2, 3), value, dtype=expected))

    def test_constant_fill_from_input_shape_and_extra_shape(self):
        workspace.FeedBlob("like", np.zeros((2, 4), np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["like"], ["y"], value=1.0,
                                                      extra_shape=[3]))
        self.assertEqual(workspace.FetchBlob("y").shape, (2, 4, 3))
        workspace.FeedBlob("shape", np.array([5, 2], dtype=np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["shape"], ["z"], value=1.0,
                                                      input_as_shape=1))
        self.assertEqual(workspace.FetchBlob("z").shape, (5, 2))
        workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["s"], shape=[], value=4.0))
        self.assertEqual(workspace.FetchBlob("s").shape, ())

    def test_filler_shape_rules_are_enforced(self):
        workspace.FeedBlob("like", np.zeros(2, np.float32))
        with self.assertRaisesRegex(RuntimeError, r"^\[ConstantFill\] 'shape' cannot be given together"):
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", ["like"], ["y"], shape=[2]))
        with self.assertRaisesRegex(RuntimeError, "extra_shape"):
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["y"], extra_shape=[2]))
        with self.assertRaisesRegex(RuntimeError, "list of ints"):
            workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["y"], shape=3))

    @given(values=st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=6))
    @settings(deadline=None, max_examples=10)
    def test_given_tensor_fill(self, values):
        op = core.CreateOperator("GivenTensorFill", [], ["y"], shape=[len(values)], values=values)
        self.assertReferenceChecks(CPU, op, [], lambda: [np.array(values, dtype=np.float32)])

    def test_typed_given_tensor_fills(self):
        cases = [("GivenTensorDoubleFill", [1.5, 2.5], np.float64),
                 ("GivenTensorIntFill", [1, -2], np.int32),
                 ("GivenTensorInt64Fill", [1, 2 ** 40], np.int64),
                 ("GivenTensorBoolFill", [1, 0], np.bool_),
                 ("GivenTensorStringFill", [b"a", b"bc"], object)]
        for op_type, values, dtype in cases:
            workspace.RunOperatorOnce(core.CreateOperator(op_type, [], ["y"], shape=[2], values=values))
            y = workspace.FetchBlob("y")
            self.assertEqual(y.dtype, dtype)
            self.assertEqual(list(y), list(np.array(values, dtype=dtype)))
        with self.assertRaisesRegex(RuntimeError, "'values' has 2 elements but the output"):
            workspace.RunOperatorOnce(core.CreateOperator("GivenTensorFill", [], ["y"], shape=[3],
                                                          values=[1.0, 2.0]))


class TestCopyAndSum(hu.HypothesisTestCase):
    @given(X=hu.tensor())
    @settings(deadline=None, max_examples=10)
    def test_copy_and_alias(self, X):
        for op_type in ["Copy", "Alias", "StopGradient", "EnsureCPUOutput"]:
            op = core.CreateOperator(op_type, ["X"], ["Y"])
            self.assertReferenceChecks(CPU, op, [X], lambda X: [X])
        self.assertGradientChecks(CPU, core.CreateOperator("Copy", ["X"], ["Y"]), [X], 0, [0])

    def test_alias_shares_memory(self):
        workspace.FeedBlob("X", np.zeros(3, np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("Alias", ["X"], ["Y"]))
        ws = workspace.C.Workspace.current
        ws.blobs["X"].tensor().data[0] = 9
        self.assertEqual(workspace.FetchBlob("Y")[0], 9)

    @given(n=st.integers(1, 4), X=hu.tensor(), in_place=st.booleans())
    @settings(deadline=None, max_examples=10)
    def test_sum(self, n, X, in_place):
        inputs = [X * (i + 1) for i in range(n)]
        names = ["X%d" % i for i in range(n)]
        op = core.CreateOperator("Sum", names, ["X0" if in_place else "Y"])
        self.assertReferenceChecks(CPU, op, inputs, lambda *xs: [sum(xs)])
        if not in_place:
            for i in range(n):
                self.assertGradientChecks(CPU, op, inputs, i, [0])

    def test_sum_integer_and_bad_shapes(self):
        op = core.CreateOperator("Sum", ["a", "b"], ["c"])
        self.assertReferenceChecks(CPU, op, [np.arange(4, dtype=np.int32), np.ones(4, np.int32)],
                                   lambda a, b: [a + b])
        self.assertRunOpRaises(CPU, op, [np.zeros(3, np.float32), np.zeros(4, np.float32)],
                               exception=RuntimeError, regexp=r"input 1 \('b'\) has shape \(4,\)")


class TestCountersAndPrint(hu.HypothesisTestCase):
    def test_iter_starts_at_zero_and_counts(self):
        for _ in range(3):
            workspace.RunOperatorOnce(core.CreateOperator("Iter", [], ["it"]))
        it = workspace.FetchBlob("it")
        self.assertEqual(it.dtype, np.int64)
        self.assertEqual(list(it), [3])
        workspace.FeedBlob("neg", np.array([-1], dtype=np.int64))
        with self.assertRaisesRegex(RuntimeError, "negative"):
            workspace.RunOperatorOnce(core.CreateOperator("Iter", ["neg"], ["neg"]))

    def test_atomic_iter_under_mutex_and_serialization_of_mutex(self):
        workspace.RunOperatorOnce(core.CreateOperator("CreateMutex", [], ["mu"]))
        workspace.FeedBlob("it", np.array([10], dtype=np.int64))
        net = core.Net("atomic")
        net.AtomicIter(["mu", "it"], ["it"])
        workspace.CreateNet(net)
        workspace.RunNet(net, 5)
        self.assertEqual(workspace.FetchBlob("it")[0], 15)
        proto = caffe2_pb2.BlobProto()
        proto.ParseFromString(workspace.SerializeBlob("mu"))
        self.assertEqual(proto.type, "std::unique_ptr<std::mutex>")

    def test_print_to_file(self):
        root = self.id().replace(".", "_")
        path = os.path.join("/tmp", root)
        workspace.ResetWorkspace(path)
        workspace.FeedBlob("x", np.array([1, 2], dtype=np.int32))
        workspace.RunOperatorOnce(core.CreateOperator("Print", ["x"], [], to_file=1))
        with open(os.path.join(path, "x.log")) as f:
            self.assertEqual(f.read().strip(), "Tensor x of type int. Dims: (2,): 1,2")
