"""Finite-difference checks of operator and net gradients."""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace


def getGradientForOp(op):
    """Gradient ops of `op`, taking `<output>_grad` as output gradients."""
    return core.GradientRegistry.GetGradientForOp(op, [s + "_grad" for s in op.output])


def _sparse_to_dense(indices, values, like):
    """Scatter-adds the rows `values` at `indices` into zeros like `like`."""
    dense = np.zeros_like(like, dtype=np.float64)
    np.add.at(
        dense,
        np.asarray(indices).astype(np.int64),
        np.asarray(values).reshape((len(indices),) + dense.shape[1:]),
    )
    return dense.astype(like.dtype)


def _get_grad_blob(grad_map, input_to_check):
    grad = grad_map[input_to_check]
    if isinstance(grad, core.BlobReference):
        return workspace.blobs[grad]
    # A sparse gradient is made dense to compare it with the estimate.
    assert isinstance(grad, core.GradientSlice)
    return _sparse_to_dense(
        workspace.blobs[grad.indices], workspace.blobs[grad.values], workspace.blobs[input_to_check]
    )


def _get_grad(net, outputs, outputs_with_grad, input_values, inputs_with_grads):
    """Runs `net` plus its gradient ops once; returns (forward results,
    {input: gradient}, gradient net)."""
    grad_net = net.Clone(net.Name() + "_copy")
    grad_map = grad_net.AddGradientOperators(outputs_with_grad)
    for name, value in (input_values or {}).items():
        workspace.blobs[name] = value
    for input_to_check in inputs_with_grads:
        assert input_to_check in grad_map, "Failed to find input {} in gradient map {}".format(
            input_to_check, grad_map
        )
    workspace.RunNetOnce(grad_net)
    forward_results = [(output, workspace.blobs[output]) for output in outputs]
    grads = {
        input_to_check: _get_grad_blob(grad_map, input_to_check)
        for input_to_check in inputs_with_grads
    }
    return forward_results, grads, grad_net


def _assert_close(value1, value2, threshold, err_msg=""):
    np.testing.assert_allclose(value1, value2, atol=threshold, rtol=threshold, err_msg=err_msg)
    delta = np.abs(value1 - value2).flatten()
    return np.mean(delta), max(delta)


class NetGradientChecker(object):
    """Gradient checks of whole nets."""

    @staticmethod
    def CompareNets(
        nets,
        outputs,
        outputs_with_grad_ids,
        inputs_with_grads,
        input_values=None,
        threshold=0.0000001,
        print_net_images=False,
    ):
        """Checks that nets computing the same function give the same
        outputs and the same gradients."""

        def write_images(nets, prefix):
            from caffe2.python import net_drawer

            for i, net in enumerate(nets):
                png = net_drawer.GetPydotGraph(net).create_png()
                with open(prefix + str(i) + net.Name() + ".png", "wb") as f:
                    f.write(png)

        if print_net_images:
            write_images(nets, "caffe2_net_forward_")
        results = [
            _get_grad(
                net,
                net_outputs,
                [net_outputs[i] for i in outputs_with_grad_ids],
                input_values,
                inputs_with_grads,
            )
            for net, net_outputs in zip(nets, outputs)
        ]
        if print_net_images:
            write_images([r[2] for r in results], "caffe2_net_")

        first_results, first_grads, _ = results[0]
        for net_results, net_grads, _ in results[1:]:
            assert len(net_results) == len(first_results)
            for idx, ((blob1, value1), (blob2, value2)) in enumerate(
                zip(first_results, net_results)
            ):
                _assert_close(
                    value1,
                    value2,
                    threshold,
                    err_msg="Different forward pass results for output id "
                    "{}. Corresponding output blobs: {} and {}".format(idx, blob1, blob2),
                )
            assert net_grads.keys() == first_grads.keys()
            for blob, grad in net_grads.items():
                _assert_close(
                    first_grads[blob],
                    grad,
                    threshold,
                    err_msg="Different gradients for input {}".format(blob),
                )

    @staticmethod
    def Check(
        net,
        outputs_with_grad,
        input_values,
        input_to_check,
        step_size=0.0001,
        threshold=0.05,
        print_net=True,
    ):
        """Compares the gradient of sum(outputs_with_grad) with respect to
        `input_to_check` with central differences."""
        _, net_grads, full_net = _get_grad(
            net, [], outputs_with_grad, input_values, [input_to_check]
        )
        analytic_grad = net_grads[input_to_check]

        def loss_at(value):
            workspace.blobs[input_to_check] = value
            workspace.RunNetOnce(full_net)
            return sum(workspace.blobs[output] for output in outputs_with_grad).sum()

        def shifted(dim, delta):
            value = input_values[input_to_check].copy()
            value.flat[dim] += delta
            return value

        grad_estimate = np.zeros_like(input_values[input_to_check])
        for dim in range(input_values[input_to_check].size):
            pos_loss = loss_at(shifted(dim, step_size))
            neg_loss = loss_at(shifted(dim, -step_size))
            grad_estimate.flat[dim] = (pos_loss - neg_loss) / step_size / 2

        err_msg = "Error in gradient check for net_copy {}".format(net.Name())
        if print_net:
            err_msg += ": {}".format(net.Proto())
        return _assert_close(analytic_grad, grad_estimate, threshold, err_msg)


class GradientChecker:
    """Checks an operator's gradient against central differences of the
    loss ½ Σ output² (copies data to and from Python at every step: slow,
    meant for small inputs)."""

    def __init__(
        self,
        stepsize,
        threshold,
        device_option=caffe2_pb2.DeviceOption(),
        workspace_name="gradient_check",
    ):
        self._stepsize = stepsize
        self._threshold = threshold
        self._device_option = device_option
        self._workspace_name = workspace_name

    def GetLossAndGrad(self, op, grad_ops, x, input_name, grad_name, outputs_with_grads):
        """Runs op with input `input_name` = x; returns the loss and the
        gradient computed by grad_ops."""
        workspace.FeedBlob(input_name, x, self._device_option)
        workspace.RunOperatorOnce(op)
        loss = 0.0
        # d(½ Σ y²)/dy = y: each output is its own gradient.
        for idx in outputs_with_grads:
            name = op.output[idx]
            arr = workspace.FetchBlob(name)
            loss += (arr.astype(np.float64) ** 2).sum()
            workspace.FeedBlob(name + "_grad", arr, self._device_option)
        loss /= 2.0
        workspace.RunOperatorsOnce(grad_ops)
        if isinstance(grad_name, core.GradientSlice):
            grad = _sparse_to_dense(
                workspace.FetchBlob(grad_name.indices), workspace.FetchBlob(grad_name.values), x
            )
        else:
            grad = workspace.FetchBlob(grad_name)
        return loss, grad

    def CheckSimple(
        self,
        op,
        inputs,
        input_to_check,
        outputs_with_grads,
        grad_ops=None,
        input_device_options=None,
    ):
        """Checks the gradient of input `input_to_check` of `op`.

        Args:
          op: the operator to check.
          inputs: numpy arrays, one per op input.
          input_to_check: index of the input whose gradient is checked.
          outputs_with_grads: indices of the outputs summed into the loss.
          grad_ops: gradient ops (default: from the gradient registry).
          input_device_options: {input name: DeviceOption} overrides.
        Returns:
          (passed, gradient, estimated gradient)
        """
        input_device_options = input_device_options or {}
        old_ws_name = workspace.CurrentWorkspace()
        if self._workspace_name != old_ws_name:
            workspace.SwitchWorkspace(self._workspace_name, True)

        op.device_option.CopyFrom(self._device_option)
        registry_grad_ops, g_input = getGradientForOp(op)
        if grad_ops is None:
            grad_ops = registry_grad_ops
        for name, arr in zip(op.input, inputs):
            workspace.FeedBlob(name, arr, input_device_options.get(name, self._device_option))

        input_name = op.input[input_to_check]
        grad_name = g_input[input_to_check]
        x = inputs[input_to_check]
        loss, grad = self.GetLossAndGrad(op, grad_ops, x, input_name, grad_name, outputs_with_grads)
        grad_estimate = np.zeros_like(x)
        if grad_estimate.shape != grad.shape:
            raise Exception(
                "Mismatched gradient shapes: estimated ({}), grad ({})".format(
                    grad_estimate.shape, grad.shape
                )
            )

        for dim in range(x.size):
            x.flat[dim] += self._stepsize
            pos_loss, _ = self.GetLossAndGrad(
                op, grad_ops, x, input_name, grad_name, outputs_with_grads
            )
            x.flat[dim] -= self._stepsize * 2
            neg_loss, _ = self.GetLossAndGrad(
                op, grad_ops, x, input_name, grad_name, outputs_with_grads
            )
            x.flat[dim] += self._stepsize
            grad_estimate.flat[dim] = (pos_loss - neg_loss) / self._stepsize / 2

        fail_mat = ~np.isclose(grad, grad_estimate, atol=self._threshold, rtol=self._threshold)
        ok = not np.any(fail_mat)
        if not ok:
            idx = np.flatnonzero(fail_mat)
            print("Failed. [idx, grad, grad_estimate] are:")
            print(np.vstack([idx, grad.flat[idx], grad_estimate.flat[idx]]).T)

        if self._workspace_name != old_ws_name:
            # Drop the intermediates; an empty workspace costs little.
            workspace.ResetWorkspace()
            workspace.SwitchWorkspace(old_ws_name)
        return ok, grad, grad_estimate
