"""GradientClipping: a NetModifier that clips the gradients of a net in place, after its gradient
ops, by norm (ClipTensorByScaling: g * threshold / |g| when |g| > threshold, the threshold
optionally times the parameter's norm) or by value (Clip to [clip_min, clip_max]).

    GradientClipping(grad_clip_method="by_norm", clip_norm_type="l2_norm",
                     clip_threshold=0.1)(model.net, grad_map=grad_map)

Sparse gradients (GradientSlice) are left as they are.
"""
from caffe2.proto import caffe2_pb2
from caffe2.python import core
from caffe2.python.modeling.net_modifier import NetModifier
from caffe2.python.optimizer import get_param_device


class GradientClipping(NetModifier):
    L1_NORM = "l1_norm"
    L2_NORM = "l2_norm"

    BY_NORM = "by_norm"
    BY_VALUE = "by_value"

    GRAD_CLIP_METHODS = [BY_NORM, BY_VALUE]
    CLIP_GRADIENT_NORM_TYPES = [L2_NORM, L1_NORM]

    def __init__(
        self,
        grad_clip_method,
        clip_norm_type="l2_norm",
        clip_threshold=0.1,
        use_parameter_norm=False,
        compute_norm_ratio=False,
        clip_max=1,
        clip_min=-1,
        blobs_to_include=None,
        blobs_to_exclude=None,
    ):
        """grad_clip_method: "by_norm" or "by_value".
        clip_norm_type: "l2_norm" or "l1_norm" (by_norm).
        clip_threshold: the largest norm left unscaled (by_norm).
        use_parameter_norm: the threshold is clip_threshold times the parameter's norm.
        compute_norm_ratio: with use_parameter_norm, also writes gradient norm / parameter norm
            to a blob `<param>_norm_ratio` (for debugging).
        clip_max, clip_min: the range of by_value.
        blobs_to_include: the parameters whose gradients are clipped (default: every one of
            grad_map); blobs_to_exclude: parameters left out."""
        super(GradientClipping, self).__init__()
        if grad_clip_method not in self.GRAD_CLIP_METHODS:
            raise ValueError(
                "GradientClipping: grad_clip_method {!r} is not one of {}".format(
                    grad_clip_method, self.GRAD_CLIP_METHODS
                )
            )
        if clip_norm_type is not None and clip_norm_type not in self.CLIP_GRADIENT_NORM_TYPES:
            raise ValueError(
                "GradientClipping: clip_norm_type {!r} is not one of {}".format(
                    clip_norm_type, self.CLIP_GRADIENT_NORM_TYPES
                )
            )
        if grad_clip_method == self.BY_NORM and clip_norm_type is None:
            raise ValueError("GradientClipping: by_norm needs a clip_norm_type")
        self.grad_clip_method = grad_clip_method
        self.clip_norm_type = clip_norm_type
        self.clip_threshold = float(clip_threshold)
        self.use_parameter_norm = use_parameter_norm
        self.compute_norm_ratio = compute_norm_ratio
        self.clip_max = float(clip_max)
        self.clip_min = float(clip_min)
        self.blobs_to_include = blobs_to_include
        self.blobs_to_exclude = blobs_to_exclude

    def _params_to_clip(self, net, grad_map):
        """{param: gradient} of the gradients to clip, in grad_map's order."""
        if self.blobs_to_include is None:
            selected = dict(grad_map)
        else:
            selected = {}
            for blob in self.blobs_to_include:
                param = core.BlobReference(str(blob))
                if not net.BlobIsDefined(param):
                    raise ValueError(
                        "GradientClipping: param {} is not defined in net {}".format(
                            param, net.Name()
                        )
                    )
                if param not in grad_map:
                    raise ValueError(
                        "GradientClipping: param {} has no gradient in grad_map".format(param)
                    )
                selected[param] = grad_map[param]
        for blob in self.blobs_to_exclude or []:
            selected.pop(str(blob), None)
        return selected

    def _norm(self, net, blob, p):
        """The p-norm of `blob` (LpNorm gives sum |x| for p=1, sum x^2 for p=2)."""
        norm = net.LpNorm([blob], net.NextScopedBlob(prefix=str(blob) + "_l{}_norm".format(p)), p=p)
        if p == 2:
            norm = net.Pow([norm], exponent=0.5)
        return norm

    def modify_net(
        self, net, init_net=None, grad_map=None, blob_to_device=None, modify_output_record=False
    ):
        assert grad_map is not None, "GradientClipping needs grad_map ({param: gradient})"
        cpu = core.DeviceOption(caffe2_pb2.CPU)
        for param, grad in self._params_to_clip(net, grad_map).items():
            if isinstance(grad, core.GradientSlice):
                continue  # sparse gradients are not clipped
            device = get_param_device(
                str(param), grad, param_to_device=blob_to_device, default_device=cpu
            )
            with core.DeviceScope(device):
                if self.grad_clip_method == self.BY_VALUE:
                    net.Clip([grad], [grad], max=self.clip_max, min=self.clip_min)
                    continue
                p = 2 if self.clip_norm_type == self.L2_NORM else 1
                grad_norm = self._norm(net, grad, p)
                inputs = [grad, grad_norm]
                if self.use_parameter_norm:
                    param_norm = self._norm(net, param, p)
                    inputs.append(param_norm)
                    if self.compute_norm_ratio:
                        net.Div(
                            [grad_norm, param_norm],
                            [net.NextScopedBlob(prefix=str(param) + "_norm_ratio")],
                        )
                net.ClipTensorByScaling(inputs, [grad], threshold=self.clip_threshold)
