"""Parameter initializers: each adds the op that creates a parameter to
param_init_net and returns its ParameterInfo."""
from caffe2.python.core import DataType, BlobReference, ScopedBlobReference
from caffe2.python.modeling.parameter_info import ParameterInfo


class Initializer(object):
    """Creates a parameter with `init_net.<operator_name>([], name,
    shape=shape, **operator_kwargs)`."""

    def __init__(self, operator_name=None, **kwargs):
        self.operator_name = operator_name
        self.operator_kwargs = kwargs

    def update(self, operator_name, kwargs):
        if self.operator_name is not None:
            raise Exception(
                "Operator name overwrites are not allowed: "
                "this initializer already uses %s" % self.operator_name
            )
        self.operator_name = operator_name
        self.operator_kwargs = kwargs

    def create_param(self, param_name, init_net, shape):
        param = init_net.__getattr__(self.operator_name)(
            [], param_name, shape=shape, **self.operator_kwargs
        )
        return ParameterInfo(param_id=None, param=param, shape=shape)


class ExternalInitializer(object):
    """The parameter is provided from outside (no op is added)."""

    def create_param(self, param_name, init_net, shape):
        if isinstance(param_name, BlobReference):
            param = BlobReference(str(param_name), init_net)
        elif isinstance(param_name, str):
            param = ScopedBlobReference(param_name, init_net)
        else:
            raise TypeError("Unsupported type for param_name: %s" % type(param_name))
        return ParameterInfo(param_id=None, param=param, shape=shape)


class PseudoFP16Initializer(Initializer):
    """Creates `<name>_fp32` with the operator, then `FloatToHalf` into
    `<name>`; the fp32 master copy is kept in blob_copy[FLOAT]."""

    def create_param(self, param_name, init_net, shape):
        param_fp32 = init_net.__getattr__(self.operator_name)(
            [], param_name + "_fp32", shape=shape, **self.operator_kwargs
        )
        param = init_net.FloatToHalf(param_fp32, param_name)
        return ParameterInfo(
            param_id=None, param=param, shape=shape, blob_copy={DataType.FLOAT: param_fp32}
        )


class ReversePseudoFP16Initializer(Initializer):
    """Creates the fp32 `<name>` with the operator, and an fp16 copy
    `<name>_fp16` with `FloatToHalf` kept in blob_copy[FLOAT16]."""

    def create_param(self, param_name, init_net, shape):
        param_fp32 = init_net.__getattr__(self.operator_name)(
            [], param_name, shape=shape, **self.operator_kwargs
        )
        param_fp16 = init_net.FloatToHalf(param_fp32, param_name + "_fp16")
        return ParameterInfo(
            param_id=None, param=param_fp32, shape=shape, blob_copy={DataType.FLOAT16: param_fp16}
        )


def update_initializer(
    initializer_class, operator_name_and_kwargs, default_operator_name_and_kwargs
):
    """An instance of `initializer_class` (default Initializer) using
    `operator_name_and_kwargs` = (op_name, kwargs), or the default pair."""
    if initializer_class is not None:
        init = initializer_class()
    else:
        init = Initializer()
    if operator_name_and_kwargs is None:
        operator_name_and_kwargs = default_operator_name_and_kwargs
    if operator_name_and_kwargs is not None and not isinstance(init, ExternalInitializer):
        init.update(*operator_name_and_kwargs)
    return init
