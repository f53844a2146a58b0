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
"""
import logging
from collections import defaultdict, namedtuple

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope
from caffe2.python.optimizer_build import (  # noqa: F401 (upstream names)
    _LEARNING_RATE_INJECTION, _build, _calc_norm_ratio, _get_param_to_device,
    get_lr_injection, get_param_device, set_lr_injection)

logger = logging.getLogger(__name__)

_OPTIMIZER_ITERATION_NAME = "optimizer_iteration"

AuxOptimizerParams = namedtuple("AuxOptimizerParams", ["local", "shared"])
_optimizer_instance_count = defaultdict(int)


class Optimizer(object):
    """Base class: `optimizer(net, param_init_net, param_info)` adds the
    update of one parameter; subclasses implement `_run`."""

    def __init__(self):
        self._aux_params = AuxOptimizerParams(local=[], shared=[])
        self._instance_num = _optimizer_instance_count[self.__class__.__name__]
        _optimizer_instance_count[self.__class__.__name__] += 1
        self._lr_multiplier = None
        self._lr_multiplier_on_gpu = False
        self._warmup = None

    def __call__(self, net, param_init_net, param, grad=None):
        """`param` is a ParameterInfo with its grad, or a blob plus grad."""
        if grad is None:
            assert hasattr(param, 'grad'), \
                "param {} has no grad: pass one or a ParameterInfo".format(
                    param)
            param_info = param
        else:
            from caffe2.python.modeling.parameter_info import ParameterInfo
            if isinstance(param, str):
                param = core.BlobReference(param)
            param_info = ParameterInfo(param_id=None, param=param, grad=grad)
        self._run(net, param_init_net, param_info)

    def _run(self, net, param_init_net, param_info):
        raise Exception("Optimizer need to implement _run function")

    def get_cpu_blob_name(self, base_str, node_name=''):
        classname = self.__class__.__name__
        return '%s_%d_%s%s_cpu' % (classname, self._instance_num, base_str,
                                   node_name)

    def get_gpu_blob_name(self, base_str, gpu_id, node_name):
        classname = self.__class__.__name__
        return '%s_%d_%s%s_gpu%d' % (classname, self._instance_num, base_str,
                                     node_name, gpu_id)

    def make_unique_blob_name(self, base_str):
        """The per-device name of an optimizer blob: by the current
        DeviceScope (CPU when none or non-CUDA)."""
        current_scope = scope.CurrentDeviceScope()
        if current_scope is None:
            return self.get_cpu_blob_name(base_str)
        if current_scope.device_type == caffe2_pb2.CUDA:
            return self.get_gpu_blob_name(
                base_str, current_scope.cuda_gpu_id, current_scope.node_name)
        return self.get_cpu_blob_name(base_str, current_scope.node_name)

    def build_lr(self, net, param_init_net, base_learning_rate,
                 learning_rate_blob=None, policy="fixed", iter_val=0,
                 **kwargs):
        """The learning-rate blob (created once per net), computed by
        LearningRate(optimizer_iteration, base_lr=-base_learning_rate).

        Returns (lr, iteration).
        """
        if learning_rate_blob is None:
            learning_rate_blob = self.make_unique_blob_name('lr')

        optimization_iter_blob = _OPTIMIZER_ITERATION_NAME
        if not param_init_net.BlobIsDefined(optimization_iter_blob):
            # The iteration counter lives on the CPU whatever the device.
            with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
                iteration = param_init_net.ConstantFill(
                    [], optimization_iter_blob, shape=[1], value=iter_val,
                    dtype=core.DataType.INT64)
                iter_mutex = param_init_net.CreateMutex(
                    [], ["iteration_mutex"])
                net.AtomicIter([iter_mutex, iteration], [iteration])
        else:
            iteration = param_init_net.GetBlobRef(optimization_iter_blob)

        if not net.BlobIsDefined(learning_rate_blob):
            if self._warmup is None:
                lr = net.LearningRate(
                    [iteration], learning_rate_blob,
                    base_lr=-base_learning_rate, policy=policy, **kwargs)
            else:
                lr = self._build_warmed_up_lr(
                    net, iteration, learning_rate_blob, base_learning_rate,
                    policy, kwargs)
        else:
            lr = net.GetBlobRef(learning_rate_blob)

        if self._lr_multiplier is not None:
            current_scope = scope.CurrentDeviceScope()
            if (current_scope is not None and
                    current_scope.device_type == caffe2_pb2.CUDA and
                    not self._lr_multiplier_on_gpu):
                lr_multiplier = net.CopyFromCPUInput(
                    self._lr_multiplier,
                    self.make_unique_blob_name('lr_multiplier'))
            else:
                lr_multiplier = self._lr_multiplier
            scaled_lr = net.Mul(
                [lr, lr_multiplier], self.make_unique_blob_name('scaled_lr'),
                broadcast=1)
            lr = scaled_lr
        return lr, iteration

    def _build_warmed_up_lr(self, net, iteration, learning_rate_blob,
                            base_learning_rate, policy, kwargs):
        """lr = LearningRate(policy) * LearningRate(linearWarmup), the
        product computed with WeightedSum (x * w)."""
        warmup_iters, start_multiplier = self._warmup
        base = net.LearningRate(
            [iteration], learning_rate_blob + '_base',
            base_lr=-base_learning_rate, policy=policy, **kwargs)
        multiplier = net.LearningRate(
            [iteration], learning_rate_blob + '_warmup',
            base_lr=1.0, policy='linearWarmup',
            start_multiplier=float(start_multiplier),
            num_iter=int(warmup_iters))
        return net.WeightedSum([base, multiplier], learning_rate_blob)

    def add_lr_multiplier(self, lr_multiplier, is_gpu_blob=False):
        """Multiplies every learning rate this optimizer builds by the
        blob `lr_multiplier` (None removes it)."""
        self._lr_multiplier = lr_multiplier
        self._lr_multiplier_on_gpu = is_gpu_blob

    @staticmethod
    def dedup(net, sparse_dedup_aggregator, grad):
        assert isinstance(grad, core.GradientSlice), (
            "Dedup only works for sparse gradient, got {}".format(grad))
        if sparse_dedup_aggregator:
            return net.DeduplicateGradientSlices(
                grad, aggregator=sparse_dedup_aggregator)
        return grad

    def get_auxiliary_parameters(self):
        """Blobs the optimizer keeps besides the parameters: `local` ones
        (one per parameter, e.g. momentum) and `shared` ones (lr, ONE...).
        """
        return self._aux_params

    def scale_learning_rate(self, *args, **kwargs):
        raise NotImplementedError(
            "Optimizer Need to Implement `scale_learning_rate` method.")

    def _one_blob(self, param_init_net, with_node_name=True):
        dev = scope.CurrentDeviceScope()
        if dev is None:
            dev = core.DeviceOption(caffe2_pb2.CPU)
        name = "ONE_{}_{}{}".format(
            dev.device_type, dev.cuda_gpu_id,
            dev.node_name if with_node_name else '')
        if param_init_net.BlobIsDefined(name):
            return param_init_net.GetBlobRef(name)
        return param_init_net.ConstantFill([], name, shape=[1], value=1.0)


def _warmup_spec(base_learning_rate, batch_size, reference_batch_size,
                 warmup_iters, warmup_start_multiplier):
    """(scaled base lr, (warmup_iters, start multiplier) or None)."""
    scale = 1.0
    if batch_size is not None:
        assert batch_size > 0 and reference_batch_size > 0, (
            "batch_size ({}) and reference_batch_size ({}) must be positive"
            .format(batch_size, reference_batch_size))
        scale = float(batch_size) / float(reference_batch_size)
    if not warmup_iters:
        return base_learning_rate * scale, None
    assert warmup_iters > 0, \
        "warmup_iters must be positive, got {}".format(warmup_iters)
    if warmup_start_multiplier is None:
        warmup_start_multiplier = 1.0 / scale if scale > 1.0 else 0.1
    return base_learning_rate * scale, (warmup_iters,
                                        warmup_start_multiplier)


class SgdOptimizer(Optimizer):
    """SGD, with momentum (MomentumSGDUpdate, Nesterov by default) or
    without (WeightedSum: param += -lr * grad).

    batch_size / reference_batch_size / warmup_iters /
    warmup_start_multiplier: the linear-scaling rule with gradual warmup.
    """

    def __init__(self, base_learning_rate=0.01, policy='fixed',
                 momentum=0.0, nesterov=1, sparse_dedup_aggregator=None,
                 lars=None, batch_size=None, reference_batch_size=256,
                 warmup_iters=0, warmup_start_multiplier=None, **kwargs):
        super(SgdOptimizer, self).__init__()
        self.base_learning_rate, self._warmup = _warmup_spec(
            base_learning_rate, batch_size, reference_batch_size,
            warmup_iters, warmup_start_multiplier)
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
        assert self.base_learning_rate > 0, (
            "Expect positive base learning rate, got {}".format(
                self.base_learning_rate))

        # MomentumSGDUpdate takes a positive rate; WeightedSum a negative.
        lr_sign = -1 if self.momentum else 1
        lr, _ = self.build_lr(
            net, param_init_net,
            base_learning_rate=self.base_learning_rate * lr_sign,
            policy=self.policy, **(self.init_kwargs))

        ONE = self._one_blob(param_init_net)
        self._aux_params.shared.append(ONE)

        if self.momentum > 0:
            momentum_data = param_init_net.ConstantFill(
                param, str(param) + "_momentum", value=0.)
            self._aux_params.local.append(momentum_data)

        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            if self.momentum > 0.:
                net.SparseMomentumSGDUpdate(
                    [grad.values, momentum_data, lr, param, grad.indices],
                    [grad.values, momentum_data, param],
                    momentum=self.momentum, nesterov=self.nesterov)
            else:
                net.ScatterWeightedSum(
                    [param, ONE, grad.indices, grad.values, lr], param)
        else:
            if self.momentum > 0.:
                net.MomentumSGDUpdate(
                    [grad, momentum_data, lr, param],
                    [grad, momentum_data, param],
                    momentum=self.momentum, nesterov=self.nesterov)
            else:
                net.WeightedSum([param, ONE, grad, lr], param)

    def scale_learning_rate(self, scale):
        self.base_learning_rate *= scale


class MultiPrecisionSgdOptimizer(SgdOptimizer):
    """Momentum SGD on the fp32 master copy of fp16 parameters (those made
    with PseudoFP16Initializer); plain SgdOptimizer for the others."""

    def __init__(self, base_learning_rate=0.1, momentum=0.0, policy="fixed",
                 nesterov=1, sparse_dedup_aggregator=None, **kwargs):
        super(MultiPrecisionSgdOptimizer, self).__init__(
            base_learning_rate=base_learning_rate, policy=policy,
            momentum=momentum, nesterov=nesterov,
            sparse_dedup_aggregator=sparse_dedup_aggregator, **kwargs)

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        param_fp32 = param_info.blob_copy[core.DataType.FLOAT] \
            if param_info.blob_copy is not None else None
        if param_fp32 is None:
            return SgdOptimizer._run(self, net, param_init_net, param_info)

        grad = param_info.grad
        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, (
            "Expect positive base learning rate, got {}".format(
                self.base_learning_rate))
        lr, _ = self.build_lr(
            net, param_init_net, base_learning_rate=-self.base_learning_rate,
            policy=self.policy, **(self.init_kwargs))
        momentum_data = param_init_net.ConstantFill(
            param_fp32, str(param) + "_momentum", value=0.)
        self._aux_params.local.append(momentum_data)
        assert not isinstance(grad, core.GradientSlice), (
            "MultiPrecisionSgdOptimizer doesn't support sparse gradients")

        grad_fp32 = net.HalfToFloat(grad, grad + "_fp32")
        net.MomentumSGDUpdate(
            [grad_fp32, momentum_data, lr, param_fp32],
            [grad_fp32, momentum_data, param_fp32],
            momentum=self.momentum, nesterov=self.nesterov)
        # Refresh the fp16 parameter from the updated master copy.
        net.FloatToHalf(param_fp32, param)


class FP16SgdOptimizer(SgdOptimizer):
    """Momentum SGD with FP16MomentumSGDUpdate on fp16 parameters, and
    FP32MomentumSGDUpdate on fp32 ones (SpatialBN's, named `spatbn`),
    with the weight decay fused into the update."""

    def __init__(self, base_learning_rate=0.1, momentum=0.0, policy="fixed",
                 nesterov=1, weight_decay=0.0001,
                 sparse_dedup_aggregator=None, dynamic_loss_scale=False,
                 loss_scale_args=None, **kwargs):
        """dynamic_loss_scale (beyond upstream): scale the loss gradient
        and skip steps with Inf/NaN gradients (caffe2.python.loss_scale);
        loss_scale_args are DynamicLossScale's keyword arguments."""
        super(FP16SgdOptimizer, self).__init__(
            base_learning_rate=base_learning_rate, policy=policy,
            momentum=momentum, nesterov=nesterov,
            sparse_dedup_aggregator=sparse_dedup_aggregator, **kwargs)
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
            grad = net.FloatToHalf(param_info.grad,
                                   param_info.grad + '_fp16')
            param_fp32 = param_info.blob
        else:
            raise ValueError(
                "Unrecognized parameter format to be updated by "
                "FP16SgdOptimizer: {}".format(param_info))

        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, (
            "Expect positive base learning rate, got {}".format(
                self.base_learning_rate))
        lr, _ = self.build_lr(
            net, param_init_net, base_learning_rate=-self.base_learning_rate,
            policy=self.policy, **(self.init_kwargs))

        momentum_data_fp32 = param_init_net.ConstantFill(
            param_fp32, str(param) + "_momentum_fp32", value=0.)
        momentum_data = param_init_net.FloatToHalf(
            momentum_data_fp32, str(param) + "_momentum")
        self._aux_params.local.append(momentum_data)
        assert not isinstance(grad, core.GradientSlice), (
            "FP16SgdOptimizer doesn't support sparse gradients")

        skip = []
        if self.dynamic_loss_scale is not None:
            skip = [self.dynamic_loss_scale.skip_blob(scope.CurrentDeviceScope())]
            assert skip[0] is not None, "no loss scale for the device of " + str(param)
        if fp32_update:
            fp32_update_flag = 1
            net.FP32MomentumSGDUpdate(
                [grad, momentum_data_fp32, lr, param] + skip,
                [grad, momentum_data_fp32, param],
                momentum=self.momentum, nesterov=self.nesterov,
                weight_decay=self.weight_decay)
        else:
            net.FP16MomentumSGDUpdate(
                [grad, momentum_data, lr, param] + skip,
                [grad, momentum_data, param],
                momentum=self.momentum, nesterov=self.nesterov,
                weight_decay=self.weight_decay)
        return fp32_update_flag


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
            WD = param_init_net.ConstantFill(
                [], wd_name, shape=[1], value=self.weight_decay)
        if isinstance(param_info.grad, core.GradientSlice):
            raise ValueError(
                "Weight decay does not yet support sparse gradients")
        net.WeightedSum([param_info.grad, ONE, param_info.blob, WD],
                        param_info.grad)


class AdagradOptimizer(Optimizer):
    """Adagrad (Adagrad / SparseAdagrad / RowWiseSparseAdagrad)."""

    def __init__(self, alpha=0.01, epsilon=1e-4, decay=1, policy="fixed",
                 sparse_dedup_aggregator=None, rowWise=False, engine='',
                 lars=None, **kwargs):
        super(AdagradOptimizer, self).__init__()
        self.alpha = alpha
        self.epsilon = epsilon
        self.decay = decay
        self.policy = policy
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.rowWise = rowWise
        self.engine = engine
        self.lars = lars
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        if self.alpha <= 0:
            return
        lr, _ = self.build_lr(
            net, param_init_net, base_learning_rate=self.alpha,
            policy=self.policy, **(self.init_kwargs))

        if self.rowWise:
            assert isinstance(grad, core.GradientSlice), (
                "rowWise Adagrad needs a sparse gradient")
            shape = param_init_net.Shape(param, str(param) + "_shape")
            num_rows = param_init_net.Slice(
                [shape], str(shape) + "_numrows", starts=[0], ends=[1])
            param_squared_sum = param_init_net.ConstantFill(
                num_rows, str(param) + "_avg_squared_sum", input_as_shape=1,
                value=0.0)
        else:
            param_squared_sum = param_init_net.ConstantFill(
                [param], str(param) + "_squared_sum", value=0.0)
        self._aux_params.local.append(param_squared_sum)

        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            op = 'RowWiseSparseAdagrad' if self.rowWise else 'SparseAdagrad'
            net.__getattr__(op)(
                [param, param_squared_sum, grad.indices, grad.values, lr],
                [param, param_squared_sum],
                epsilon=self.epsilon, engine=self.engine)
        else:
            net.Adagrad(
                [param, param_squared_sum, grad, lr],
                [param, param_squared_sum],
                epsilon=self.epsilon, decay=float(self.decay),
                engine=self.engine)

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class FtrlOptimizer(Optimizer):
    """FTRL (Ftrl / SparseFtrl) with `<param>_ftrl_nz` state."""

    def __init__(self, alpha=0.01, beta=1e-4, lambda1=0, lambda2=0,
                 sparse_dedup_aggregator=None, engine=''):
        super(FtrlOptimizer, self).__init__()
        self.alpha = alpha
        self.beta = beta
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.engine = engine

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        if self.alpha <= 0:
            return
        nz = param_init_net.ConstantFill(
            [param], str(param) + "_ftrl_nz", extra_shape=[2], value=0.0)
        self._aux_params.local.append(nz)
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            net.SparseFtrl([param, nz, grad.indices, grad.values],
                           [param, nz], engine=self.engine, alpha=self.alpha,
                           beta=self.beta, lambda1=self.lambda1,
                           lambda2=self.lambda2)
        else:
            net.Ftrl([param, nz, grad], [param, nz], engine=self.engine,
                     alpha=self.alpha, beta=self.beta, lambda1=self.lambda1,
                     lambda2=self.lambda2)

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class AdamOptimizer(Optimizer):
    """Adam with `<param>_first_moment` / `_second_moment` state and the
    iteration counter for bias correction."""

    def __init__(self, alpha=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 policy='fixed', sparse_dedup_aggregator=None, rowWise=False,
                 engine='', **kwargs):
        super(AdamOptimizer, self).__init__()
        self.alpha = alpha
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.policy = policy
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.rowWise = rowWise
        self.engine = engine
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        if self.alpha <= 0:
            return
        lr, iteration = self.build_lr(
            net, param_init_net, base_learning_rate=self.alpha,
            policy=self.policy, **(self.init_kwargs))

        m1 = param_init_net.ConstantFill(
            [param], param + "_first_moment", value=0.0)
        if self.rowWise:
            shape = param_init_net.Shape(param, str(param) + "_shape")
            num_rows = param_init_net.Slice(
                [shape], str(shape) + "_numrows", starts=[0], ends=[1])
            m2 = param_init_net.ConstantFill(
                num_rows, param + "_avg_second_moment", input_as_shape=1,
                value=0.0)
        else:
            m2 = param_init_net.ConstantFill(
                [param], param + "_second_moment", value=0.0)
        self._aux_params.shared.append(iteration)
        self._aux_params.local.append(m1)
        self._aux_params.local.append(m2)

        if self.rowWise:
            assert isinstance(grad, core.GradientSlice), (
                "If SparseAdam with rowWise=True, gradient must be a "
                "gradientslice. PLease ensure that rowWise is not enabled "
                "for the dense Adam optimizer, as it is not supported.")
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            op = 'RowWiseSparseAdam' if self.rowWise else 'SparseAdam'
            net.__getattr__(op)(
                [param, m1, m2, grad.indices, grad.values, lr, iteration],
                [param, m1, m2],
                beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon)
        else:
            net.Adam(
                [param, m1, m2, grad, lr, iteration], [param, m1, m2],
                beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon)

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class RmsPropOptimizer(Optimizer):
    """RMSProp: RmsProp computes the step into `<param>_grad_o`, then
    MomentumSGDUpdate applies it (dense gradients only)."""

    def __init__(self, alpha=0.01, decay=0.9, momentum=0.0, epsilon=1e-5,
                 policy='fixed', engine='', **kwargs):
        super(RmsPropOptimizer, self).__init__()
        self.alpha = alpha
        self.decay = decay
        self.momentum = momentum
        self.epsilon = epsilon
        self.policy = policy
        self.engine = engine
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        assert self.alpha > 0, \
            "Expect positive alpha, got {}".format(self.alpha)
        assert not isinstance(grad, core.GradientSlice), \
            "RmsPropOptimizer doesn't support sparse gradients"

        ONE = self._one_blob(param_init_net, with_node_name=False)
        lr, _ = self.build_lr(
            net, param_init_net, base_learning_rate=-self.alpha,
            policy=self.policy, **(self.init_kwargs))

        grad_o = param_init_net.ConstantFill(
            [param], str(param) + "_grad_o", value=0.0)
        ms = param_init_net.ConstantFill(
            [param], str(param) + "_mean_squares", value=0.0)
        mom = param_init_net.ConstantFill(
            [param], str(param) + "_momentum", value=0.0)
        self._aux_params.local.append(ms)
        self._aux_params.local.append(mom)

        net.RmsProp(
            [grad, ms, mom, ONE], [grad_o, ms, mom],
            decay=self.decay, momentum=self.momentum, epsilon=self.epsilon,
            engine=self.engine)
        net.MomentumSGDUpdate([grad_o, mom, lr, param], [grad_o, mom, param])

    def scale_learning_rate(self, scale):
        self.alpha *= scale


def add_weight_decay(model, weight_decay):
    """grad += weight_decay * param for every weight of the model."""
    _build(model, WeightDecayBuilder(weight_decay=weight_decay),
           weights_only=True, use_param_info_optim=False)


def build_sgd(model, base_learning_rate, max_gradient_norm=None,
              allow_lr_injection=False, **kwargs):
    sgd_optimizer = SgdOptimizer(base_learning_rate, **kwargs)
    return _build(model, sgd_optimizer, max_gradient_norm=max_gradient_norm,
                  allow_lr_injection=allow_lr_injection)


def build_multi_precision_sgd(model, base_learning_rate,
                              max_gradient_norm=None,
                              allow_lr_injection=False, **kwargs):
    multi_prec_sgd_optimizer = MultiPrecisionSgdOptimizer(
        base_learning_rate, **kwargs)
    return _build(model, multi_prec_sgd_optimizer,
                  max_gradient_norm=max_gradient_norm,
                  allow_lr_injection=allow_lr_injection)


def build_fp16_sgd(model, base_learning_rate, **kwargs):
    fp16_sgd_optimizer = FP16SgdOptimizer(base_learning_rate, **kwargs)
    return _build(model, fp16_sgd_optimizer)


def build_ftrl(model, engine="SIMD", **kwargs):
    if engine == "SIMD":
        assert core.IsOperator('Ftrl_ENGINE_SIMD')
        assert core.IsOperator('SparseFtrl_ENGINE_SIMD')
    ftrl_optimizer = FtrlOptimizer(engine=engine, **kwargs)
    return _build(model, ftrl_optimizer)


def build_adagrad(model, base_learning_rate, parameters=None,
                  max_gradient_norm=None, allow_lr_injection=False,
                  **kwargs):
    adagrad_optimizer = AdagradOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(model, adagrad_optimizer,
                  max_gradient_norm=max_gradient_norm,
                  allow_lr_injection=allow_lr_injection)


def build_adam(model, base_learning_rate, max_gradient_norm=None,
               allow_lr_injection=False, **kwargs):
    adam_optimizer = AdamOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(model, adam_optimizer,
                  max_gradient_norm=max_gradient_norm,
                  allow_lr_injection=allow_lr_injection)


def build_rms_prop(model, base_learning_rate, max_gradient_norm=None,
                   allow_lr_injection=False, **kwargs):
    rms_prop_optimizer = RmsPropOptimizer(alpha=base_learning_rate, **kwargs)
    return _build(model, rms_prop_optimizer,
                  max_gradient_norm=max_gradient_norm,
                  allow_lr_injection=allow_lr_injection)
