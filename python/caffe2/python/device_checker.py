"""Checks that operators and nets give the same results on all devices."""
import copy

import numpy as np

from caffe2.python import workspace


def _same(x, y, threshold):
    x = np.asarray(x)
    y = np.asarray(y)
    if x.dtype.kind in "OSU" or y.dtype.kind in "OSU":
        return x.shape == y.shape and np.array_equal(x, y)
    return x.shape == y.shape and np.allclose(x, y, atol=threshold, rtol=threshold)


def _report(device_index, name, x, y):
    print(
        "Failure in checking device option {} and output {}. The outputs "
        "are:".format(device_index, name)
    )
    print(np.asarray(x).flatten())
    print(np.asarray(y).flatten())
    if np.asarray(x).dtype.kind not in "OSU" and np.shape(x) == np.shape(y):
        print(np.max(np.abs(np.asarray(x) - np.asarray(y))))


class DeviceChecker(object):
    """Runs an op or a net on each device option and compares the results
    with those of the first one."""

    def __init__(self, threshold, device_options):
        self._threshold = threshold
        self._device_options = device_options

    def _compare(self, results, names):
        success = True
        for i in range(1, len(results)):
            for j, name in enumerate(names):
                if not _same(results[i][j], results[0][j], self._threshold):
                    _report(i, name, results[i][j], results[0][j])
                    success = False
        return success

    def CheckSimple(self, op, inputs, outputs_to_check, input_device_options=None):
        """Runs `op` on every device; compares the outputs whose indices
        are in `outputs_to_check`. Returns True if they all match."""
        op = copy.deepcopy(op)
        input_device_options = input_device_options or {}
        old_ws_name = workspace.CurrentWorkspace()
        results = []
        workspace.SwitchWorkspace("_device_check_", True)
        try:
            for device_option in self._device_options:
                for name, arr in zip(op.input, inputs):
                    workspace.FeedBlob(
                        name, np.array(arr), input_device_options.get(name, device_option)
                    )
                op.device_option.CopyFrom(device_option)
                workspace.RunOperatorOnce(op)
                results.append([workspace.FetchBlob(op.output[idx]) for idx in outputs_to_check])
                workspace.ResetWorkspace()
        finally:
            workspace.SwitchWorkspace(old_ws_name)
        return self._compare(results, [op.output[idx] for idx in outputs_to_check])

    def CheckNet(self, net, inputs=None, blobs_to_check=None, ignore=None):
        """Runs `net` (Net or NetDef) on every device and compares its blobs
        (default: every op output, minus `ignore`)."""
        inputs = inputs or {}
        ignore = ignore or set()
        net = copy.deepcopy(net.Proto() if hasattr(net, "Proto") else net)
        if blobs_to_check is None:
            blobs_to_check = [o for op in net.op for o in op.output]
        blobs_to_check = [b for b in blobs_to_check if b not in ignore]
        old_ws_name = workspace.CurrentWorkspace()
        results = []
        workspace.SwitchWorkspace("_device_check_", True)
        try:
            for device_option in self._device_options:
                for name, arr in inputs.items():
                    workspace.FeedBlob(name, arr, device_option)
                for op in net.op:
                    op.device_option.CopyFrom(device_option)
                workspace.RunNetOnce(net)
                results.append([workspace.FetchBlob(name) for name in blobs_to_check])
                workspace.ResetWorkspace()
        finally:
            workspace.SwitchWorkspace(old_ws_name)
        return self._compare(results, blobs_to_check)
