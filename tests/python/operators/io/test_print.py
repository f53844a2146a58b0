"""Print: a tensor printed to a file in the workspace's folder. Its device check is in
test_op_table.py."""
import os

import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu


class TestCountersAndPrint(hu.HypothesisTestCase):
    def test_print_to_file(self):
        root = self.id().replace(".", "_")
        path = os.path.join("/tmp", root)
        workspace.ResetWorkspace(path)
        workspace.FeedBlob("x", np.array([1, 2], dtype=np.int32))
        workspace.RunOperatorOnce(core.CreateOperator("Print", ["x"], [], to_file=1))
        with open(os.path.join(path, "x.log")) as f:
            self.assertEqual(f.read().strip(), "Tensor x of type int. Dims: (2,): 1,2")
