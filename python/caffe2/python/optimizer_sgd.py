"""The SGD optimizers: SgdOptimizer (plain or momentum SGD, with the
linear-scaling rule and gradual warmup), MultiPrecisionSgdOptimizer (fp32
master copies of fp16 parameters) and FP16SgdOptimizer (fused fp16/fp32
momentum updates with weight decay and optional dynamic loss scaling).
Re-exported by caffe2.python.optimizer, whose build_sgd,
build_multi_precision_sgd and build_fp16_sgd construct them.
"""
from caffe2.python import core, scope
from caffe2.python.optimizer_base import Optimizer


def _warmup_spec(
    base_learning_rate, batch_size, reference_batch_size, warmup_iters, warmup_start_multiplier
):
    """(scaled base lr, (warmup_iters, start multiplier) or None)."""
    scale = 1.0
    if batch_size is not None:
        assert (
            batch_size > 0 and reference_batch_size > 0
        ), "batch_size ({}) and reference_batch_size ({}) must be positive".format(
            batch_size, reference_batch_size
        )
        scale = float(batch_size) / float(reference_batch_size)
    if not warmup_iters:
        return base_learning_rate * scale, None
    assert warmup_iters > 0, "warmup_iters must be positive, got {}".format(warmup_iters)
    if warmup_start_multiplier is None:
        warmup_start_multiplier = 1.0 / scale if scale > 1.0 else 0.1
    return base_learning_rate * scale, (warmup_iters, warmup_start_multiplier)


class SgdOptimizer(Optimizer):
    """SGD, with momentum (MomentumSGDUpdate, Nesterov by default) or
    without (WeightedSum: param += -lr * grad).

    batch_size / reference_batch_size / warmup_iters /
    warmup_start_multiplier: the linear-scaling rule with gradual warmup.
    """

    def __init__(
        self,
        base_learning_rate=0.01,
        policy="fixed",
        momentum=0.0,
        nesterov=1,
        sparse_dedup_aggregator=None,
        lars=None,
        batch_size=None,
        reference_batch_size=256,
        warmup_iters=0,
        warmup_start_multiplier=None,
        **kwargs,
    ):
        super(SgdOptimizer, self).__init__()
        self.base_learning_rate, self._warmup = _warmup_spec(
            base_learning_rate,
            batch_size,
            reference_batch_size,
            warmup_iters,
            warmup_start_multiplier,
        )
        self.policy = policy
        self.momentum = momentum
        self.nesterov = nesterov
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.lars = lars
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, "Expect positive base learning rate, got {}".format(
            self.base_learning_rate
        )

        # MomentumSGDUpdate takes a positive rate; WeightedSum a negative.
        lr_sign = -1 if self.momentum else 1
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=self.base_learning_rate * lr_sign,
            policy=self.policy,
            **(self.init_kwargs),
        )

        ONE = self._one_blob(param_init_net)
        self._aux_params.shared.append(ONE)

        if self.momentum > 0:
            momentum_data = param_init_net.ConstantFill(param, str(param) + "_momentum", value=0.0)
            self._aux_params.local.append(momentum_data)

        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            if self.momentum > 0.0:
                net.SparseMomentumSGDUpdate(
                    [grad.values, momentum_data, lr, param, grad.indices],
                    [grad.values, momentum_data, param],
                    momentum=self.momentum,
                    nesterov=self.nesterov,
                )
            else:
                net.ScatterWeightedSum([param, ONE, grad.indices, grad.values, lr], param)
        else:
            if self.momentum > 0.0:
                net.MomentumSGDUpdate(
                    [grad, momentum_data, lr, param],
                    [grad, momentum_data, param],
                    momentum=self.momentum,
                    nesterov=self.nesterov,
                )
            else:
                net.WeightedSum([param, ONE, grad, lr], param)

    def scale_learning_rate(self, scale):
        self.base_learning_rate *= scale


class MultiPrecisionSgdOptimizer(SgdOptimizer):
    """Momentum SGD on the fp32 master copy of fp16 parameters (those made
    with PseudoFP16Initializer); plain SgdOptimizer for the others."""

    def __init__(
        self,
        base_learning_rate=0.1,
        momentum=0.0,
        policy="fixed",
        nesterov=1,
        sparse_dedup_aggregator=None,
        **kwargs,
    ):
        super(MultiPrecisionSgdOptimizer, self).__init__(
            base_learning_rate=base_learning_rate,
            policy=policy,
            momentum=momentum,
            nesterov=nesterov,
            sparse_dedup_aggregator=sparse_dedup_aggregator,
            **kwargs,
        )

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        param_fp32 = (
            param_info.blob_copy[core.DataType.FLOAT] if param_info.blob_copy is not None else None
        )
        if param_fp32 is None:
            return SgdOptimizer._run(self, net, param_init_net, param_info)

        grad = param_info.grad
        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, "Expect positive base learning rate, got {}".format(
            self.base_learning_rate
        )
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=-self.base_learning_rate,
            policy=self.policy,
            **(self.init_kwargs),
        )
        momentum_data = param_init_net.ConstantFill(param_fp32, str(param) + "_momentum", value=0.0)
        self._aux_params.local.append(momentum_data)
        assert not isinstance(
            grad, core.GradientSlice
        ), "MultiPrecisionSgdOptimizer doesn't support sparse gradients"

        grad_fp32 = net.HalfToFloat(grad, grad + "_fp32")
        net.MomentumSGDUpdate(
            [grad_fp32, momentum_data, lr, param_fp32],
            [grad_fp32, momentum_data, param_fp32],
            momentum=self.momentum,
            nesterov=self.nesterov,
        )
        # Refresh the fp16 parameter from the updated master copy.
        net.FloatToHalf(param_fp32, param)


class FP16SgdOptimizer(SgdOptimizer):
    """Momentum SGD with FP16MomentumSGDUpdate on fp16 parameters, and
    FP32MomentumSGDUpdate on fp32 ones (SpatialBN's, named `spatbn`),
    with the weight decay fused into the update."""

    def __init__(
        self,
        base_learning_rate=0.1,
        momentum=0.0,
        policy="fixed",
        nesterov=1,
        weight_decay=0.0001,
        sparse_dedup_aggregator=None,
        dynamic_loss_scale=False,
        loss_scale_args=None,
        **kwargs,
    ):
        """dynamic_loss_scale (beyond upstream): scale the loss gradient
        and skip steps with Inf/NaN gradients (caffe2.python.loss_scale);
        loss_scale_args are DynamicLossScale's keyword arguments."""
        super(FP16SgdOptimizer, self).__init__(
            base_learning_rate=base_learning_rate,
            policy=policy,
            momentum=momentum,
            nesterov=nesterov,
            sparse_dedup_aggregator=sparse_dedup_aggregator,
            **kwargs,
        )
        self.weight_decay = weight_decay
        self.dynamic_loss_scale = None
        if dynamic_loss_scale:
            from caffe2.python.loss_scale import DynamicLossScale

            self.dynamic_loss_scale = DynamicLossScale(**(loss_scale_args or {}))

    def _run(self, net, param_init_net, param_info, fp32_update=False):
        fp32_update_flag = 0
        param_name = str(param_info.blob)
        # SpatialBN keeps fp32 parameters (cuDNN needs them).
        if param_name.find("spatbn") != -1:
            fp32_update = True

        if fp32_update:
            param = param_info.blob
            grad = param_info.grad
            param_fp32 = param_info.blob
        elif param_info.blob_copy is None:
            fp32_update = True
            param = param_info.blob
            grad = param_info.grad
            param_fp32 = param_info.blob
        elif core.DataType.FLOAT in param_info.blob_copy:
            param = param_info.blob
            grad = param_info.grad
            param_fp32 = param_info.blob_copy[core.DataType.FLOAT]
        elif core.DataType.FLOAT16 in param_info.blob_copy:
            param = param_info.blob_copy[core.DataType.FLOAT16]
            grad = net.FloatToHalf(param_info.grad, param_info.grad + "_fp16")
            param_fp32 = param_info.blob
        else:
            raise ValueError(
                "Unrecognized parameter format to be updated by "
                "FP16SgdOptimizer: {}".format(param_info)
            )

        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, "Expect positive base learning rate, got {}".format(
            self.base_learning_rate
        )
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=-self.base_learning_rate,
            policy=self.policy,
            **(self.init_kwargs),
        )

        momentum_data_fp32 = param_init_net.ConstantFill(
            param_fp32, str(param) + "_momentum_fp32", value=0.0
        )
        momentum_data = param_init_net.FloatToHalf(momentum_data_fp32, str(param) + "_momentum")
        self._aux_params.local.append(momentum_data)
        assert not isinstance(
            grad, core.GradientSlice
        ), "FP16SgdOptimizer doesn't support sparse gradients"

        skip = []
        if self.dynamic_loss_scale is not None:
            skip = [self.dynamic_loss_scale.skip_blob(scope.CurrentDeviceScope())]
            assert skip[0] is not None, "no loss scale for the device of " + str(param)
        if fp32_update:
            fp32_update_flag = 1
            net.FP32MomentumSGDUpdate(
                [grad, momentum_data_fp32, lr, param] + skip,
                [grad, momentum_data_fp32, param],
                momentum=self.momentum,
                nesterov=self.nesterov,
                weight_decay=self.weight_decay,
            )
        else:
            net.FP16MomentumSGDUpdate(
                [grad, momentum_data, lr, param] + skip,
                [grad, momentum_data, param],
                momentum=self.momentum,
                nesterov=self.nesterov,
                weight_decay=self.weight_decay,
            )
        return fp32_update_flag
