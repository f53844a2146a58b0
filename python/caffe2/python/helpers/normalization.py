"""Normalization helpers: lrn, softmax, instance_norm, spatial_bn,
layer_norm."""

from caffe2.python.modeling import initializers
from caffe2.python.modeling.parameter_info import ParameterTags


def lrn(model, blob_in, blob_out, order="NCHW", use_cudnn=False, **kwargs):
    """LRN; outputs (blob_out, `_<out>_scale`) except under CUDNN."""
    if use_cudnn and (not model.init_params or order == "NCHW"):
        kwargs["engine"] = "CUDNN"
        blobs_out = blob_out
    else:
        blobs_out = [blob_out, "_" + blob_out + "_scale"]
    lrn = model.net.LRN(blob_in, blobs_out, order=order, **kwargs)
    if isinstance(lrn, tuple):
        return lrn[0]
    return lrn


def softmax(model, blob_in, blob_out=None, use_cudnn=False, **kwargs):
    """Softmax (engine CUDNN when use_cudnn)."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    if blob_out is not None:
        return model.net.Softmax(blob_in, blob_out, **kwargs)
    return model.net.Softmax(blob_in, **kwargs)


def instance_norm(model, blob_in, blob_out, dim_in, order="NCHW", **kwargs):
    """InstanceNorm with `<out>_s` (1) and `<out>_b` (0) params."""
    blob_out = blob_out or model.net.NextName()

    def init_blob(value, suffix):
        return model.param_init_net.ConstantFill(
            [], blob_out + "_" + suffix, shape=[dim_in], value=value
        )

    scale, bias = init_blob(1.0, "s"), init_blob(0.0, "b")
    model.AddParameter(scale, ParameterTags.WEIGHT)
    model.AddParameter(bias, ParameterTags.BIAS)
    blob_outs = [blob_out, blob_out + "_sm", blob_out + "_siv"]
    if "is_test" in kwargs and kwargs["is_test"]:
        blob_outputs = model.net.InstanceNorm(
            [blob_in, scale, bias], [blob_out], order=order, **kwargs
        )
        return blob_outputs
    blob_outputs = model.net.InstanceNorm([blob_in, scale, bias], blob_outs, order=order, **kwargs)
    return blob_outputs[0]


def spatial_bn(
    model,
    blob_in,
    blob_out,
    dim_in,
    init_scale=1.0,
    init_bias=0.0,
    ScaleInitializer=None,
    BiasInitializer=None,
    RunningMeanInitializer=None,
    RunningVarianceInitializer=None,
    order="NCHW",
    **kwargs,
):
    """SpatialBN with `<out>_s`, `<out>_b` (trained) and `<out>_rm`,
    `<out>_riv` (computed); 5 outputs in training, 1 with is_test."""
    blob_out = blob_out or model.net.NextName()

    if model.init_params:
        scale_init = ("ConstantFill", {"value": init_scale})
        bias_init = ("ConstantFill", {"value": init_bias})
        rm_init = ("ConstantFill", {"value": 0.0})
        riv_init = ("ConstantFill", {"value": 1.0})
        ScaleInitializer = initializers.update_initializer(
            ScaleInitializer, scale_init, ("ConstantFill", {})
        )
        BiasInitializer = initializers.update_initializer(
            BiasInitializer, bias_init, ("ConstantFill", {})
        )
        RunningMeanInitializer = initializers.update_initializer(
            RunningMeanInitializer, rm_init, ("ConstantFill", {})
        )
        RunningVarianceInitializer = initializers.update_initializer(
            RunningVarianceInitializer, riv_init, ("ConstantFill", {})
        )
    else:
        ScaleInitializer = initializers.ExternalInitializer()
        BiasInitializer = initializers.ExternalInitializer()
        RunningMeanInitializer = initializers.ExternalInitializer()
        RunningVarianceInitializer = initializers.ExternalInitializer()

    scale = model.create_param(
        param_name=blob_out + "_s",
        shape=[dim_in],
        initializer=ScaleInitializer,
        tags=ParameterTags.WEIGHT,
    )
    bias = model.create_param(
        param_name=blob_out + "_b",
        shape=[dim_in],
        initializer=BiasInitializer,
        tags=ParameterTags.BIAS,
    )
    running_mean = model.create_param(
        param_name=blob_out + "_rm",
        shape=[dim_in],
        initializer=RunningMeanInitializer,
        tags=ParameterTags.COMPUTED_PARAM,
    )
    running_inv_var = model.create_param(
        param_name=blob_out + "_riv",
        shape=[dim_in],
        initializer=RunningVarianceInitializer,
        tags=ParameterTags.COMPUTED_PARAM,
    )

    blob_outs = [blob_out, running_mean, running_inv_var, blob_out + "_sm", blob_out + "_siv"]
    if "is_test" in kwargs and kwargs["is_test"]:
        blob_outputs = model.net.SpatialBN(
            [blob_in, scale, bias, blob_outs[1], blob_outs[2]], [blob_out], order=order, **kwargs
        )
        return blob_outputs
    blob_outputs = model.net.SpatialBN(
        [blob_in, scale, bias, blob_outs[1], blob_outs[2]], blob_outs, order=order, **kwargs
    )
    # The running statistics are updated in place; only the output is
    # returned.
    return blob_outputs[0]


def layer_norm(
    model, blob_in, blob_out, dim_in, axis=1, epsilon=1e-4, initial_scale=1.0, initial_bias=0.0
):
    """LayerNorm, then a learned affine transform (Mul, Add) with
    `<out>_scale` and `<out>_bias` [dim_in]. Returns (out, mean, std)."""
    normalized, mean, stdev = model.net.LayerNorm(
        [blob_in], [blob_out, blob_out + "_mean", blob_out + "_stdev"], axis=axis, epsilon=epsilon
    )
    scale = model.create_param(
        param_name="{}_scale".format(blob_out),
        shape=[dim_in],
        initializer=initializers.Initializer("ConstantFill", value=initial_scale),
        tags=ParameterTags.WEIGHT,
    )
    bias = model.create_param(
        param_name="{}_bias".format(blob_out),
        shape=[dim_in],
        initializer=initializers.Initializer("ConstantFill", value=initial_bias),
        tags=ParameterTags.BIAS,
    )
    scaled = model.net.Mul(
        [normalized, scale], ["{}_scaled".format(blob_out)], broadcast=1, axis=axis
    )
    biased = model.net.Add([scaled, bias], ["{}_biased".format(blob_out)], broadcast=1, axis=axis)
    return biased, mean, stdev
