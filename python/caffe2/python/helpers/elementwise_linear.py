"""ElementwiseLinear helper: y = x * w + b per column."""
from caffe2.python.modeling import initializers
from caffe2.python.modeling.parameter_info import ParameterTags


def _elementwise_linear(
    model, op_call, blob_in, blob_out, dim, weight_init=None, bias_init=None, **kwargs
):
    weight_init = weight_init or ("ConstantFill", {"value": 1.0})
    bias_init = bias_init or ("ConstantFill", {"value": 0.0})
    blob_out = blob_out or model.net.NextName()
    if model.init_params:
        WeightInitializer = initializers.Initializer(weight_init[0], **weight_init[1])
        BiasInitializer = initializers.Initializer(bias_init[0], **bias_init[1])
    else:
        WeightInitializer = initializers.ExternalInitializer()
        BiasInitializer = initializers.ExternalInitializer()
    weight = model.create_param(
        param_name=blob_out + "_w",
        shape=[dim],
        initializer=WeightInitializer,
        tags=ParameterTags.WEIGHT,
    )
    bias = model.create_param(
        param_name=blob_out + "_b",
        shape=[dim],
        initializer=BiasInitializer,
        tags=ParameterTags.BIAS,
    )
    return op_call([blob_in, weight, bias], blob_out, **kwargs)


def elementwise_linear(model, *args, **kwargs):
    """ElementwiseLinear with `<out>_w` (1) and `<out>_b` (0) of [dim]."""
    return _elementwise_linear(model, model.net.ElementwiseLinear, *args, **kwargs)
