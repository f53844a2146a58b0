"""brew: model-building helpers that add parameters and operators to a
ModelHelper, e.g. `brew.fc(model, 'data', 'fc1', dim_in=4, dim_out=2)`.

Each helper gets its keyword arguments from three layers, later ones
winning: the model's arg_scope (order, use_cudnn, ...), the active
`brew.arg_scope` for that helper, and the explicit call. A helper without
**kwargs only receives the keys it names.
"""
import copy
import functools
import inspect
import sys

from caffe2.python.model_helper import ModelHelper

# The helpers are imported to be registered below.
from caffe2.python.helpers.algebra import transpose, sum, batch_mat_mul  # noqa
from caffe2.python.helpers.arg_scope import get_current_scope, arg_scope
from caffe2.python.helpers.array_helpers import concat, depth_concat
from caffe2.python.helpers.control_ops import cond, loop
from caffe2.python.helpers.conv import (
    conv,
    conv_nd,
    conv_transpose,
    group_conv,
    group_conv_deprecated,
)
from caffe2.python.helpers.db_input import db_input
from caffe2.python.helpers.dropout import dropout
from caffe2.python.helpers.elementwise_linear import elementwise_linear
from caffe2.python.helpers.fc import fc, packed_fc, fc_decomp, fc_sparse, fc_prune
from caffe2.python.helpers.nonlinearity import prelu, relu, tanh
from caffe2.python.helpers.normalization import lrn, softmax, instance_norm, spatial_bn, layer_norm
from caffe2.python.helpers.pooling import max_pool, average_pool, max_pool_with_index
from caffe2.python.helpers.tools import image_input, video_input
from caffe2.python.helpers.train import iter, accuracy, add_weight_decay

_HELPER_NAMES = [
    "arg_scope",
    "fc",
    "packed_fc",
    "fc_decomp",
    "fc_sparse",
    "fc_prune",
    "dropout",
    "max_pool",
    "average_pool",
    "max_pool_with_index",
    "lrn",
    "softmax",
    "instance_norm",
    "spatial_bn",
    "relu",
    "prelu",
    "tanh",
    "concat",
    "depth_concat",
    "sum",
    "transpose",
    "iter",
    "accuracy",
    "conv",
    "conv_nd",
    "conv_transpose",
    "group_conv",
    "group_conv_deprecated",
    "image_input",
    "video_input",
    "add_weight_decay",
    "elementwise_linear",
    "layer_norm",
    "batch_mat_mul",
    "cond",
    "loop",
    "db_input",
]


def _takes_var_kwargs(func):
    return any(
        p.kind == inspect.Parameter.VAR_KEYWORD for p in inspect.signature(func).parameters.values()
    )


def _named_params(func):
    return {
        name
        for name, p in inspect.signature(func).parameters.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }


class HelperWrapper(object):
    """Stands in for the brew module: `brew.<name>` is the registered
    helper wrapped with the arg-scope merging."""

    _registry = {}

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def __getattr__(self, helper_name):
        if helper_name in self._registry:
            return self._wrap(helper_name, self._registry[helper_name])
        if hasattr(self.wrapped, helper_name):
            return getattr(self.wrapped, helper_name)
        raise AttributeError(
            "Helper function {} not registered in brew. Registered helpers: "
            "{}".format(helper_name, ", ".join(sorted(self._registry)))
        )

    def __dir__(self):
        return sorted(set(dir(self.wrapped)) | set(self._registry))

    @staticmethod
    def _wrap(helper_name, func):
        if helper_name == "arg_scope":
            return func

        @functools.wraps(func)
        def scope_wrapper(*args, **kwargs):
            new_kwargs = {}
            if helper_name != "arg_scope":
                if len(args) > 0 and isinstance(args[0], ModelHelper):
                    model = args[0]
                elif "model" in kwargs:
                    model = kwargs["model"]
                else:
                    raise RuntimeError(
                        "The first input of helper function {} must be a "
                        "ModelHelper (got {}).".format(
                            helper_name, type(args[0]).__name__ if args else "nothing"
                        )
                    )
                new_kwargs = copy.deepcopy(model.arg_scope)
                if not _takes_var_kwargs(func):
                    named = _named_params(func)
                    new_kwargs = {k: v for k, v in new_kwargs.items() if k in named}
            cur_scope = get_current_scope()
            new_kwargs.update(cur_scope.get(helper_name, {}))
            new_kwargs.update(kwargs)
            return func(*args, **new_kwargs)

        scope_wrapper.__name__ = helper_name
        return scope_wrapper

    def Register(self, helper):
        name = helper.__name__
        if name in self._registry:
            raise AttributeError(
                "Helper {} already exists. Please change your helper " "name.".format(name)
            )
        self._registry[name] = helper

    def has_helper(self, helper_or_helper_name):
        name = (
            helper_or_helper_name
            if isinstance(helper_or_helper_name, str)
            else helper_or_helper_name.__name__
        )
        return name in self._registry


_module = sys.modules[__name__]
_wrapper = HelperWrapper(_module)
for _name in _HELPER_NAMES:
    _wrapper.Register(getattr(_module, _name))
sys.modules[__name__] = _wrapper
