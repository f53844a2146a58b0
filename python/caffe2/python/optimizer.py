"""Optimizers: objects that add the parameter-update ops of a model to its
net (and their state to param_init_net), with the upstream blob names.

    optimizer.build_sgd(model, base_learning_rate=0.1, momentum=0.9,
                        policy="step", stepsize=1000, gamma=0.1)

Extra keyword arguments of the builders become LearningRate arguments.
The SGD builders also take a linear-scaling rule with gradual warmup
(Goyal et al., "Accurate, Large Minibatch SGD"): `batch_size` scales the
learning rate by batch_size / reference_batch_size, and `warmup_iters`
ramps it linearly from `warmup_start_multiplier` (default: the unscaled
rate) to the full rate.

The optimizer classes live in optimizer_base (the Optimizer base class and
the learning rate), optimizer_sgd (the SGD family) and optimizer_adaptive
(Adagrad, FTRL, Adam, RMSProp); optimizer_build applies an optimizer to a
model. This module re-exports them under the upstream names and holds the
weight-decay builder and the build_* functions.
"""
import logging

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope
from caffe2.python.optimizer_adaptive import (  # noqa: F401 (upstream names)
    AdagradOptimizer,
    AdamOptimizer,
    FtrlOptimizer,
    RmsPropOptimizer,
    YellowFinOptimizer,
)
from caffe2.python.optimizer_base import (  # noqa: F401 (upstream names)
    _OPTIMIZER_ITERATION_NAME,
    AuxOptimizerParams,
    Optimizer,
    _optimizer_instance_count,
)
from caffe2.python.optimizer_build import (  # noqa: F401 (upstream names)
    _LEARNING_RATE_INJECTION,
    _build,
    _calc_norm_ratio,
    _get_param_to_device,
    get_lr_injection,
    get_param_device,
    set_lr_injection,
)
from caffe2.python.optimizer_sgd import (  # noqa: F401 (upstream names)
    FP16SgdOptimizer,
    MultiPrecisionSgdOptimizer,
    SgdOptimizer,
    _warmup_spec,
)

logger = logging.getLogger(__name__)


class WeightDecayBuilder(Optimizer):
    """grad += weight_decay * param (dense gradients only), with
    `ONE_<type>_<gpu>` and `wd_<type>_<gpu>` constants."""

    def __init__(self, weight_decay):
        super(WeightDecayBuilder, self).__init__()
        self.weight_decay = weight_decay

    def _run(self, net, param_init_net, param_info):
        dev = scope.CurrentDeviceScope()
        if dev is None:
            dev = core.DeviceOption(caffe2_pb2.CPU)
        ONE = self._one_blob(param_init_net, with_node_name=False)
        wd_name = "wd_{}_{}".format(dev.device_type, dev.cuda_gpu_id)
        if param_init_net.BlobIsDefined(wd_name):
            WD = param_init_net.GetBlobRef(wd_name)
        else:
            WD = param_init_net.ConstantFill([], wd_name, shape=[1], value=self.weight_decay)
        if isinstance(param_info.grad, core.GradientSlice):
            raise ValueError("Weight decay does not yet support sparse gradients")
        net.WeightedSum([param_info.grad, ONE, param_info.blob, WD], param_info.grad)


def add_weight_decay(model, weight_decay):
    """grad += weight_decay * param for every weight of the model."""
    _build(
        model,
        WeightDecayBuilder(weight_decay=weight_decay),
        weights_only=True,
        use_param_info_optim=False,
    )


def build_sgd(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    sgd_optimizer = SgdOptimizer(base_learning_rate, **kwargs)
    return _build(
        model,
        sgd_optimizer,
        max_gradient_norm=max_gradient_norm,
        allow_lr_injection=allow_lr_injection,
    )


def build_multi_precision_sgd(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    multi_prec_sgd_optimizer = MultiPrecisionSgdOptimizer(base_learning_rate, **kwargs)
    return _build(
        model,
        multi_prec_sgd_optimizer,
        max_gradient_norm=max_gradient_norm,
        allow_lr_injection=allow_lr_injection,
    )


def build_fp16_sgd(model, base_learning_rate, **kwargs):
    fp16_sgd_optimizer = FP16SgdOptimizer(base_learning_rate, **kwargs)
    return _build(model, fp16_sgd_optimizer)


def build_ftrl(model, engine="SIMD", **kwargs):
    if engine == "SIMD":
        assert core.IsOperator("Ftrl_ENGINE_SIMD")
        assert core.IsOperator("SparseFtrl_ENGINE_SIMD")
    ftrl_optimizer = FtrlOptimizer(engine=engine, **kwargs)
    return _build(model, ftrl_optimizer)


def build_adagrad(
    model,
    base_learning_rate,
    parameters=None,
    max_gradient_norm=None,
    allow_lr_injection=False,
    **kwargs,
):
    adagrad_optimizer = AdagradOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(
        model,
        adagrad_optimizer,
        max_gradient_norm=max_gradient_norm,
        allow_lr_injection=allow_lr_injection,
    )


def build_adam(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    adam_optimizer = AdamOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(
        model,
        adam_optimizer,
        max_gradient_norm=max_gradient_norm,
        allow_lr_injection=allow_lr_injection,
    )


def build_yellowfin(model, base_learning_rate=0.1, **kwargs):
    yellowfin_optimizer = YellowFinOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(model, yellowfin_optimizer)


def build_rms_prop(
    model, base_learning_rate, max_gradient_norm=None, allow_lr_injection=False, **kwargs
):
    rms_prop_optimizer = RmsPropOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(
        model,
        rms_prop_optimizer,
        max_gradient_norm=max_gradient_norm,
        allow_lr_injection=allow_lr_injection,
    )
