"""The Optimizer base class: per-instance blob names, the learning-rate
blob (LearningRate on the shared `optimizer_iteration` counter, with an
optional warmup and lr multiplier), the `ONE_*` constants and the auxiliary
parameters every optimizer keeps. The concrete optimizers are in
optimizer_sgd and optimizer_adaptive; caffe2.python.optimizer re-exports
everything here under the upstream names.
"""
from collections import defaultdict, namedtuple

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope

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
            assert hasattr(
                param, "grad"
            ), "param {} has no grad: pass one or a ParameterInfo".format(param)
            param_info = param
        else:
            from caffe2.python.modeling.parameter_info import ParameterInfo

            if isinstance(param, str):
                param = core.BlobReference(param)
            param_info = ParameterInfo(param_id=None, param=param, grad=grad)
        self._run(net, param_init_net, param_info)

    def _run(self, net, param_init_net, param_info):
        raise Exception("Optimizer need to implement _run function")

    def get_cpu_blob_name(self, base_str, node_name=""):
        classname = self.__class__.__name__
        return "%s_%d_%s%s_cpu" % (classname, self._instance_num, base_str, node_name)

    def get_gpu_blob_name(self, base_str, gpu_id, node_name):
        classname = self.__class__.__name__
        return "%s_%d_%s%s_gpu%d" % (classname, self._instance_num, base_str, node_name, gpu_id)

    def make_unique_blob_name(self, base_str):
        """The per-device name of an optimizer blob: by the current
        DeviceScope (CPU when none or non-CUDA)."""
        current_scope = scope.CurrentDeviceScope()
        if current_scope is None:
            return self.get_cpu_blob_name(base_str)
        if current_scope.device_type == caffe2_pb2.CUDA:
            return self.get_gpu_blob_name(
                base_str, current_scope.cuda_gpu_id, current_scope.node_name
            )
        return self.get_cpu_blob_name(base_str, current_scope.node_name)

    def build_iteration(self, net, param_init_net, iter_val=0):
        """The shared int64 `optimizer_iteration` counter (on the CPU whatever the device), made
        once per net and advanced by one on every run of `net`."""
        optimization_iter_blob = _OPTIMIZER_ITERATION_NAME
        if param_init_net.BlobIsDefined(optimization_iter_blob):
            return param_init_net.GetBlobRef(optimization_iter_blob)
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
            iteration = param_init_net.ConstantFill(
                [], optimization_iter_blob, shape=[1], value=iter_val, dtype=core.DataType.INT64
            )
            iter_mutex = param_init_net.CreateMutex([], ["iteration_mutex"])
            net.AtomicIter([iter_mutex, iteration], [iteration])
        return iteration

    def build_lr(
        self,
        net,
        param_init_net,
        base_learning_rate,
        learning_rate_blob=None,
        policy="fixed",
        iter_val=0,
        **kwargs,
    ):
        """The learning-rate blob (created once per net), computed by
        LearningRate(optimizer_iteration, base_lr=-base_learning_rate).

        Returns (lr, iteration).
        """
        if learning_rate_blob is None:
            learning_rate_blob = self.make_unique_blob_name("lr")
        iteration = self.build_iteration(net, param_init_net, iter_val)

        if not net.BlobIsDefined(learning_rate_blob):
            if self._warmup is None:
                lr = net.LearningRate(
                    [iteration],
                    learning_rate_blob,
                    base_lr=-base_learning_rate,
                    policy=policy,
                    **kwargs,
                )
            else:
                lr = self._build_warmed_up_lr(
                    net, iteration, learning_rate_blob, base_learning_rate, policy, kwargs
                )
        else:
            lr = net.GetBlobRef(learning_rate_blob)

        if self._lr_multiplier is not None:
            current_scope = scope.CurrentDeviceScope()
            if (
                current_scope is not None
                and current_scope.device_type == caffe2_pb2.CUDA
                and not self._lr_multiplier_on_gpu
            ):
                lr_multiplier = net.CopyFromCPUInput(
                    self._lr_multiplier, self.make_unique_blob_name("lr_multiplier")
                )
            else:
                lr_multiplier = self._lr_multiplier
            scaled_lr = net.Mul(
                [lr, lr_multiplier], self.make_unique_blob_name("scaled_lr"), broadcast=1
            )
            lr = scaled_lr
        return lr, iteration

    def _build_warmed_up_lr(
        self, net, iteration, learning_rate_blob, base_learning_rate, policy, kwargs
    ):
        """lr = LearningRate(policy) * LearningRate(linearWarmup), the
        product computed with WeightedSum (x * w)."""
        warmup_iters, start_multiplier = self._warmup
        base = net.LearningRate(
            [iteration],
            learning_rate_blob + "_base",
            base_lr=-base_learning_rate,
            policy=policy,
            **kwargs,
        )
        multiplier = net.LearningRate(
            [iteration],
            learning_rate_blob + "_warmup",
            base_lr=1.0,
            policy="linearWarmup",
            start_multiplier=float(start_multiplier),
            num_iter=int(warmup_iters),
        )
        return net.WeightedSum([base, multiplier], learning_rate_blob)

    def add_lr_multiplier(self, lr_multiplier, is_gpu_blob=False):
        """Multiplies every learning rate this optimizer builds by the
        blob `lr_multiplier` (None removes it)."""
        self._lr_multiplier = lr_multiplier
        self._lr_multiplier_on_gpu = is_gpu_blob

    @staticmethod
    def dedup(net, sparse_dedup_aggregator, grad):
        assert isinstance(
            grad, core.GradientSlice
        ), "Dedup only works for sparse gradient, got {}".format(grad)
        if sparse_dedup_aggregator:
            return net.DeduplicateGradientSlices(grad, aggregator=sparse_dedup_aggregator)
        return grad

    def get_auxiliary_parameters(self):
        """Blobs the optimizer keeps besides the parameters: `local` ones
        (one per parameter, e.g. momentum) and `shared` ones (lr, ONE...).
        """
        return self._aux_params

    def scale_learning_rate(self, *args, **kwargs):
        raise NotImplementedError("Optimizer Need to Implement `scale_learning_rate` method.")

    def _one_blob(self, param_init_net, with_node_name=True):
        dev = scope.CurrentDeviceScope()
        if dev is None:
            dev = core.DeviceOption(caffe2_pb2.CPU)
        name = "ONE_{}_{}{}".format(
            dev.device_type, dev.cuda_gpu_id, dev.node_name if with_node_name else ""
        )
        if param_init_net.BlobIsDefined(name):
            return param_init_net.GetBlobRef(name)
        return param_init_net.ConstantFill([], name, shape=[1], value=1.0)
