"""Activation helpers: prelu, relu, tanh."""
from caffe2.python.modeling import initializers
from caffe2.python.modeling.parameter_info import ParameterTags


def prelu(model, blob_in, blob_out, num_channels=1, slope_init=None, **kwargs):
    """PRelu with a learned slope `<out>_slope` [num_channels] (0.25)."""
    slope_init = slope_init if slope_init else ("ConstantFill", {"value": 0.25})
    if model.init_params:
        initializer = initializers.Initializer(slope_init[0], **slope_init[1])
    else:
        initializer = initializers.ExternalInitializer()
    slope = model.create_param(
        param_name=blob_out + "_slope",
        shape=[num_channels],
        initializer=initializer,
        tags=ParameterTags.WEIGHT,
    )
    return model.net.PRelu([blob_in, slope], [blob_out])


def relu(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """Relu (with `order`; engine CUDNN when use_cudnn)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Relu(blob_in, blob_out, order=order, **kwargs)


def tanh(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """Tanh (with `order`; engine CUDNN when use_cudnn)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Tanh(blob_in, blob_out, order=order, **kwargs)
