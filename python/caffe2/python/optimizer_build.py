"""Applying an optimizer to a model: the device of every parameter, gradient
clipping, learning-rate injection and dynamic loss scaling around the
per-parameter update ops (`_build`, which the optimizer.build_* functions
call). Re-exported by caffe2.python.optimizer under the upstream names.
"""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

_LEARNING_RATE_INJECTION = "lr_injection"


def _get_param_to_device(model):
    param_to_device = core.InferBlobDevices(model.net)
    param_to_device.update(core.InferBlobDevices(model.param_init_net))
    return param_to_device


def get_param_device(param_name, grad, param_to_device=None, default_device=None):
    """The device of a parameter: where it (or its gradient) is made."""
    device = default_device
    param_to_device = param_to_device or {}
    if param_name in param_to_device:
        device = param_to_device[param_name]
    else:
        if isinstance(grad, core.GradientSlice):
            if str(grad.values) in param_to_device:
                device = param_to_device[str(grad.values)]
            elif str(grad.indices) in param_to_device:
                device = param_to_device[str(grad.indices)]
        else:
            grad_name = str(grad)
            if grad_name in param_to_device:
                device = param_to_device[grad_name]
    assert device is not None, "Cannot infer device for {}: no op creates it".format(param_name)
    return device


def get_lr_injection():
    """The current value of the learning-rate injection blob."""
    return workspace.FetchBlob(_LEARNING_RATE_INJECTION)


def set_lr_injection(lr_injection_value):
    """Multiplies the learning rate of models built with
    allow_lr_injection=True by `lr_injection_value` from now on."""
    workspace.FeedBlob(
        _LEARNING_RATE_INJECTION, np.array([float(lr_injection_value)], dtype=np.float32)
    )


def _calc_norm_ratio(model, params, name_scope, param_to_device, max_gradient_norm):
    """clip_norm / max(global gradient norm, clip_norm), on the CPU."""
    with core.NameScope(name_scope):
        grad_squared_sums = []
        for i, param in enumerate(params):
            device = get_param_device(str(param.blob), param.grad, param_to_device)
            with core.DeviceScope(device):
                grad = (
                    param.grad
                    if not isinstance(param.grad, core.GradientSlice)
                    else param.grad.values
                )
                grad_squared_sum_name = "grad_{}_squared_sum".format(i)
                grad_squared_sum = model.net.SumSqrElements(grad, grad_squared_sum_name)
                grad_squared_sum_cpu = model.net.EnsureCPUOutput(grad_squared_sum)
                grad_squared_sums.append(grad_squared_sum_cpu)
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
            grad_squared_full_sum = model.net.Sum(grad_squared_sums, "grad_squared_full_sum")
            global_norm = model.net.Pow(grad_squared_full_sum, "global_norm", exponent=0.5)
            clip_norm = model.param_init_net.ConstantFill(
                [], "clip_norm", shape=[], value=float(max_gradient_norm)
            )
            max_norm = model.net.Max([global_norm, clip_norm], "max_norm")
            norm_ratio = model.net.Div([clip_norm, max_norm], "norm_ratio")
            return norm_ratio


def _build(
    model,
    optimizer,
    weights_only=False,
    use_param_info_optim=True,
    max_gradient_norm=None,
    allow_lr_injection=False,
):
    param_to_device = _get_param_to_device(model)

    model.Validate()  # no parameter twice

    params = []
    for param_info in model.GetOptimizationParamInfo():
        if weights_only and param_info.blob not in model.weights:
            continue
        params.append(param_info)

    lr_multiplier = None
    if max_gradient_norm is not None:
        lr_multiplier = _calc_norm_ratio(
            model, params, "norm_clipped_grad_update", param_to_device, max_gradient_norm
        )

    if allow_lr_injection:
        if not model.net.BlobIsDefined(_LEARNING_RATE_INJECTION):
            lr_injection = model.param_init_net.ConstantFill(
                [], _LEARNING_RATE_INJECTION, shape=[1], value=1.0
            )
        else:
            lr_injection = _LEARNING_RATE_INJECTION
        if lr_multiplier is None:
            lr_multiplier = lr_injection
        else:
            lr_multiplier = model.net.Mul(
                [lr_multiplier, lr_injection], "lr_multiplier", broadcast=1
            )
    optimizer.add_lr_multiplier(lr_multiplier)

    loss_scale = getattr(optimizer, "dynamic_loss_scale", None)
    if loss_scale is not None:
        loss_scale.add_unscaling(
            model, params, lambda p: get_param_device(str(p.blob), p.grad, param_to_device)
        )

    for param_info in params:
        param_name = str(param_info.blob)
        device = get_param_device(param_name, param_info.grad, param_to_device)
        with core.DeviceScope(device):
            if param_info.optimizer and use_param_info_optim:
                param_info.optimizer(model.net, model.param_init_net, param_info)
            else:
                optimizer(model.net, model.param_init_net, param_info)
    if loss_scale is not None:
        loss_scale.add_scale_updates(model)
    return optimizer
