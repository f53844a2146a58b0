"""SparseToDense: reference. Its device check is a row of test_op_table.py."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


class TestGather(hu.HypothesisTestCase):
    def test_sparse_to_dense(self):
        op = core.CreateOperator("SparseToDense", ["I", "V"], ["Y"])
        I = np.array([3, 1, 3], np.int64)
        V = rand(3, 2)

        def ref(I, V):
            out = np.zeros((4, 2), np.float32)
            np.add.at(out, I, V)
            return [out]

        self.assertReferenceChecks(CPU, op, [I, V], ref)
