"""Iter and AtomicIter: counting from zero, a negative counter, an int32 counter widened, AtomicIter
under a mutex and the mutex's serialization; device check that Iter keeps its counter on the
host."""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu

from device_check import gpu, needs_gpu

COVERED_CUDA_OPS = ["Iter", "AtomicIter"]


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

    def test_an_int32_counter_is_widened_keeping_its_value(self):
        workspace.FeedBlob("it32", np.array([5], dtype=np.int32))  # upstream's toy regression
        workspace.RunOperatorOnce(core.CreateOperator("Iter", ["it32"], ["it32"]))
        it = workspace.FetchBlob("it32")
        self.assertEqual((it.dtype, list(it)), (np.int64, [6]))
        workspace.RunOperatorOnce(
            core.CreateOperator("LearningRate", ["it32"], ["lr"], base_lr=-0.1, policy="fixed")
        )
        for bad in (np.array([1.0], np.float32), np.array([1, 2], np.int32)):
            workspace.FeedBlob("bad", bad)
            with self.assertRaisesRegex(RuntimeError, r"dtype=INT64\), or let Iter create it"):
                workspace.RunOperatorOnce(core.CreateOperator("Iter", ["bad"], ["bad"]))

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


@needs_gpu
def test_iter_keeps_its_counter_on_the_host():
    workspace.ResetWorkspace()
    workspace.FeedBlob("it", np.array([5], np.int64))
    workspace.RunOperatorOnce(core.CreateOperator("CreateMutex", [], ["mutex"]))
    for _ in range(3):
        workspace.RunOperatorOnce(core.CreateOperator("Iter", ["it"], ["it"], device_option=gpu()))
    workspace.RunOperatorOnce(
        core.CreateOperator("AtomicIter", ["mutex", "it"], ["it"], device_option=gpu())
    )
    np.testing.assert_array_equal(workspace.FetchBlob("it"), [9])
