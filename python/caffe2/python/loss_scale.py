"""Dynamic loss scaling for fp16 training (beyond upstream), built by
`optimizer.build_fp16_sgd(model, lr, dynamic_loss_scale=True, ...)`.

Per device it keeps a loss scale S (`loss_scale_<device>`, float, starts at `init_scale`) and a
good-step count in param_init_net, and in the training net:
  - multiplies every loss-gradient seed (the ConstantFill of ones that AddGradientOperators or
    data_parallel_model makes for a loss) by S, so small fp16 gradients keep their digits;
  - before the updates, `UnscaleGradients` divides the device's gradients by S and sets
    `found_nonfinite_<device>` when any of them holds Inf/NaN; the updates then skip the step;
  - after the updates, `UpdateLossScale` halves S after a skipped step and doubles it after
    `growth_interval` good ones (operators/sgd/loss_scale_ops.cc).
With data_parallel_model the gradients are reduced across devices before the update, so every
device sees the same flag and keeps the same S.
"""
from caffe2.python import core, scope


def _device_key(device):
    if device is None:
        return "cpu"
    if device.device_type == 1:
        return "gpu_%d" % device.cuda_gpu_id
    return "cpu"


def _is_loss_seed(op):
    """The ConstantFill of ones that seeds a loss gradient (`<loss>_grad` from
    data_parallel_model, `<loss>_autogen_grad` from AddGradientOperators)."""
    if op.type != "ConstantFill" or len(op.input) != 1 or len(op.output) != 1:
        return False
    if op.output[0] not in (op.input[0] + "_grad", op.input[0] + "_autogen_grad"):
        return False
    values = [a.f for a in op.arg if a.name == "value"]
    return values == [1.0]


class DynamicLossScale(object):
    """The blobs and ops of dynamic loss scaling for the devices of `params`."""

    def __init__(
        self,
        init_scale=2.0**15,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=1000,
        min_loss_scale=1.0,
        max_loss_scale=2.0**24,
    ):
        self.init_scale = float(init_scale)
        self.update_args = dict(
            growth_factor=float(growth_factor),
            backoff_factor=float(backoff_factor),
            growth_interval=int(growth_interval),
            min_loss_scale=float(min_loss_scale),
            max_loss_scale=float(max_loss_scale),
        )
        self.scale = {}  # device key -> (scale blob, good-step blob, found blob, device)

    def skip_blob(self, device):
        entry = self.scale.get(_device_key(device))
        return entry[2] if entry else None

    def add_unscaling(self, model, params, device_of):
        """Seeds, state and UnscaleGradients for the ParameterInfos `params`;
        device_of(param_info) is the DeviceOption (or None) of a parameter."""
        grads_by_device = {}
        for param_info in params:
            assert not isinstance(param_info.grad, core.GradientSlice), (
                "dynamic loss scaling takes dense gradients only, got a sparse one for "
                "{}".format(param_info.blob)
            )
            device = device_of(param_info)
            grads_by_device.setdefault(_device_key(device), (device, []))[1].append(param_info.grad)
        for key, (device, grads) in sorted(grads_by_device.items()):
            with core.DeviceScope(device), scope.NameScope("", reset=True):
                scale = model.param_init_net.ConstantFill(
                    [], "loss_scale_" + key, shape=[], value=self.init_scale
                )
                good = model.param_init_net.ConstantFill(
                    [],
                    "loss_scale_good_steps_" + key,
                    shape=[1],
                    value=0,
                    dtype=core.DataType.INT64,
                )
                found = core.BlobReference("found_nonfinite_" + key)
                model.net.UnscaleGradients([scale] + list(grads), list(grads) + [found])
            self.scale[key] = (scale, good, found, device)
        self._scale_seeds(model)

    def _scale_seeds(self, model):
        proto = model.net.Proto()
        ops = []
        for op in proto.op:
            ops.append(op)
            if not _is_loss_seed(op):
                continue
            key = _device_key(op.device_option if op.HasField("device_option") else None)
            assert (
                key in self.scale
            ), "the loss {} lives on {}, where no parameter is updated".format(op.input[0], key)
            ops.append(
                core.CreateOperator(
                    "Mul",
                    [op.output[0], str(self.scale[key][0])],
                    [op.output[0]],
                    broadcast=1,
                    device_option=op.device_option if op.HasField("device_option") else None,
                )
            )
        assert len(ops) > len(proto.op), "no loss-gradient seed found to scale"
        del proto.op[:]
        proto.op.extend(ops)

    def add_scale_updates(self, model):
        for key, (scale, good, found, device) in sorted(self.scale.items()):
            with core.DeviceScope(device), scope.NameScope("", reset=True):
                model.net.UpdateLossScale([scale, good, found], [scale, good], **self.update_args)
