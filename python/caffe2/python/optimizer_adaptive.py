"""The optimizers with per-coordinate adaptive steps: AdagradOptimizer
(dense, sparse and row-wise), FtrlOptimizer, AdamOptimizer (dense, sparse
and row-wise), RmsPropOptimizer, and YellowFinOptimizer (momentum SGD with
the rate and momentum tuned on line). Re-exported by caffe2.python.optimizer,
whose build_adagrad, build_ftrl, build_adam, build_rms_prop and
build_yellowfin construct them.
"""
from caffe2.python import core
from caffe2.python.optimizer_base import Optimizer


class AdagradOptimizer(Optimizer):
    """Adagrad (Adagrad / SparseAdagrad / RowWiseSparseAdagrad)."""

    def __init__(
        self,
        alpha=0.01,
        epsilon=1e-4,
        decay=1,
        policy="fixed",
        sparse_dedup_aggregator=None,
        rowWise=False,
        engine="",
        lars=None,
        **kwargs,
    ):
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
            net,
            param_init_net,
            base_learning_rate=self.alpha,
            policy=self.policy,
            **(self.init_kwargs),
        )

        if self.rowWise:
            assert isinstance(grad, core.GradientSlice), "rowWise Adagrad needs a sparse gradient"
            shape = param_init_net.Shape(param, str(param) + "_shape")
            num_rows = param_init_net.Slice([shape], str(shape) + "_numrows", starts=[0], ends=[1])
            param_squared_sum = param_init_net.ConstantFill(
                num_rows, str(param) + "_avg_squared_sum", input_as_shape=1, value=0.0
            )
        else:
            param_squared_sum = param_init_net.ConstantFill(
                [param], str(param) + "_squared_sum", value=0.0
            )
        self._aux_params.local.append(param_squared_sum)

        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            op = "RowWiseSparseAdagrad" if self.rowWise else "SparseAdagrad"
            net.__getattr__(op)(
                [param, param_squared_sum, grad.indices, grad.values, lr],
                [param, param_squared_sum],
                epsilon=self.epsilon,
                engine=self.engine,
            )
        else:
            net.Adagrad(
                [param, param_squared_sum, grad, lr],
                [param, param_squared_sum],
                epsilon=self.epsilon,
                decay=float(self.decay),
                engine=self.engine,
            )

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class FtrlOptimizer(Optimizer):
    """FTRL (Ftrl / SparseFtrl) with `<param>_ftrl_nz` state."""

    def __init__(
        self, alpha=0.01, beta=1e-4, lambda1=0, lambda2=0, sparse_dedup_aggregator=None, engine=""
    ):
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
            [param], str(param) + "_ftrl_nz", extra_shape=[2], value=0.0
        )
        self._aux_params.local.append(nz)
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            net.SparseFtrl(
                [param, nz, grad.indices, grad.values],
                [param, nz],
                engine=self.engine,
                alpha=self.alpha,
                beta=self.beta,
                lambda1=self.lambda1,
                lambda2=self.lambda2,
            )
        else:
            net.Ftrl(
                [param, nz, grad],
                [param, nz],
                engine=self.engine,
                alpha=self.alpha,
                beta=self.beta,
                lambda1=self.lambda1,
                lambda2=self.lambda2,
            )

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class AdamOptimizer(Optimizer):
    """Adam with `<param>_first_moment` / `_second_moment` state and the
    iteration counter for bias correction."""

    def __init__(
        self,
        alpha=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        policy="fixed",
        sparse_dedup_aggregator=None,
        rowWise=False,
        engine="",
        **kwargs,
    ):
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
            net,
            param_init_net,
            base_learning_rate=self.alpha,
            policy=self.policy,
            **(self.init_kwargs),
        )

        m1 = param_init_net.ConstantFill([param], param + "_first_moment", value=0.0)
        if self.rowWise:
            shape = param_init_net.Shape(param, str(param) + "_shape")
            num_rows = param_init_net.Slice([shape], str(shape) + "_numrows", starts=[0], ends=[1])
            m2 = param_init_net.ConstantFill(
                num_rows, param + "_avg_second_moment", input_as_shape=1, value=0.0
            )
        else:
            m2 = param_init_net.ConstantFill([param], param + "_second_moment", value=0.0)
        self._aux_params.shared.append(iteration)
        self._aux_params.local.append(m1)
        self._aux_params.local.append(m2)

        if self.rowWise:
            assert isinstance(grad, core.GradientSlice), (
                "If SparseAdam with rowWise=True, gradient must be a "
                "gradientslice. PLease ensure that rowWise is not enabled "
                "for the dense Adam optimizer, as it is not supported."
            )
        if isinstance(grad, core.GradientSlice):
            grad = self.dedup(net, self.sparse_dedup_aggregator, grad)
            op = "RowWiseSparseAdam" if self.rowWise else "SparseAdam"
            net.__getattr__(op)(
                [param, m1, m2, grad.indices, grad.values, lr, iteration],
                [param, m1, m2],
                beta1=self.beta1,
                beta2=self.beta2,
                epsilon=self.epsilon,
            )
        else:
            net.Adam(
                [param, m1, m2, grad, lr, iteration],
                [param, m1, m2],
                beta1=self.beta1,
                beta2=self.beta2,
                epsilon=self.epsilon,
            )

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class RmsPropOptimizer(Optimizer):
    """RMSProp: RmsProp computes the step into `<param>_grad_o`, then
    MomentumSGDUpdate applies it (dense gradients only)."""

    def __init__(
        self, alpha=0.01, decay=0.9, momentum=0.0, epsilon=1e-5, policy="fixed", engine="", **kwargs
    ):
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
        assert self.alpha > 0, "Expect positive alpha, got {}".format(self.alpha)
        assert not isinstance(
            grad, core.GradientSlice
        ), "RmsPropOptimizer doesn't support sparse gradients"

        ONE = self._one_blob(param_init_net, with_node_name=False)
        lr, _ = self.build_lr(
            net,
            param_init_net,
            base_learning_rate=-self.alpha,
            policy=self.policy,
            **(self.init_kwargs),
        )

        grad_o = param_init_net.ConstantFill([param], str(param) + "_grad_o", value=0.0)
        ms = param_init_net.ConstantFill([param], str(param) + "_mean_squares", value=0.0)
        mom = param_init_net.ConstantFill([param], str(param) + "_momentum", value=0.0)
        self._aux_params.local.append(ms)
        self._aux_params.local.append(mom)

        net.RmsProp(
            [grad, ms, mom, ONE],
            [grad_o, ms, mom],
            decay=self.decay,
            momentum=self.momentum,
            epsilon=self.epsilon,
            engine=self.engine,
        )
        net.MomentumSGDUpdate([grad_o, mom, lr, param], [grad_o, mom, param])

    def scale_learning_rate(self, scale):
        self.alpha *= scale


class YellowFinOptimizer(Optimizer):
    """YellowFin (the YellowFin op, operators/sgd/yellowfin_op.cc): its state blobs are
    `<param>_moment`, `_lr_avg` (starting at alpha), `_mu_avg` (starting at mu), `_curv_win`,
    `_g_avg`, `_g2_avg` and `_scalars_memory`. Dense gradients only."""

    def __init__(
        self,
        alpha=0.1,
        mu=0.0,
        beta=0.999,
        curv_win_width=20,
        zero_debias=True,
        epsilon=0.1**6,
        policy="fixed",
        sparse_dedup_aggregator=None,
        **kwargs,
    ):
        super(YellowFinOptimizer, self).__init__()
        self.alpha = alpha
        self.mu = mu
        self.beta = beta
        self.curv_win_width = curv_win_width
        self.zero_debias = zero_debias
        self.epsilon = epsilon
        self.policy = policy
        self.sparse_dedup_aggregator = sparse_dedup_aggregator
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param = param_info.blob
        grad = param_info.grad
        if isinstance(grad, core.GradientSlice):
            raise ValueError("YellowFinOptimizer: sparse gradients are not supported")
        if self.alpha <= 0:
            raise ValueError(
                "YellowFinOptimizer: alpha must be positive, got {}".format(self.alpha)
            )
        iteration = self.build_iteration(net, param_init_net)

        def state(suffix, like_param=True, shape=None, value=0.0):
            name = str(param) + suffix
            if like_param:
                blob = param_init_net.ConstantFill([param], name, value=value)
            else:
                blob = param_init_net.ConstantFill([], name, shape=shape, value=value)
            self._aux_params.local.append(blob)
            return blob

        moment = state("_moment")
        lr_avg = state("_lr_avg", False, [1], self.alpha)
        mu_avg = state("_mu_avg", False, [1], self.mu)
        curv_win = state("_curv_win", False, [self.curv_win_width])
        g_avg = state("_g_avg")
        g2_avg = state("_g2_avg")
        scalars = state("_scalars_memory", False, [4])
        outputs = [param, moment, lr_avg, mu_avg, curv_win, g_avg, g2_avg, scalars]
        net.YellowFin(
            outputs + [grad, iteration],
            outputs,
            beta=self.beta,
            curv_win_width=self.curv_win_width,
            epsilon=self.epsilon,
            zero_debias=self.zero_debias,
        )

    def scale_learning_rate(self, scale):
        self.alpha *= scale
