"""OneHot: reference and a bad index."""
import numpy as np

from caffe2.python import core
import caffe2.python.hypothesis_test_util as hu

CPU = core.DeviceOption(0)


class TestOneHot(hu.HypothesisTestCase):
    def test_reference_and_bad_index(self):
        op = core.CreateOperator("OneHot", ["I", "n"], ["Y"])
        I = np.array([2, 0, 4], np.int64)
        self.assertReferenceChecks(
            CPU, op, [I, np.array(5, np.int64)], lambda I, n: [np.eye(5, dtype=np.float32)[I]]
        )
        self.assertRunOpRaises(
            CPU,
            op,
            [np.array([5], np.int64), np.array(5, np.int64)],
            exception=RuntimeError,
            regexp=r"^\[OneHot\] index 5 at position 0 out of range for index_size 5",
        )
