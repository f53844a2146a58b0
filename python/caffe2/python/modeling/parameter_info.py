"""Bookkeeping for model parameters: tags, dense/sparse type, ParameterInfo."""
import numpy as np

from caffe2.python import core


class ParameterTags(object):
    BIAS = "BIAS"
    WEIGHT = "WEIGHT"
    COMPUTED_PARAM = "COMPUTED_PARAM"


class ParameterType(object):
    DENSE = "dense"
    SPARSE = "sparse"


class ParameterInfo(object):
    """A parameter blob with its shape, gradient, optimizer and copies in
    other precisions (`blob_copy`: {core.DataType: BlobReference})."""

    def __init__(
        self, param_id, param, key=None, shape=None, length=None, grad=None, blob_copy=None
    ):
        assert isinstance(param, core.BlobReference)
        self.param_id = param_id
        self.name = str(param)
        self.blob = param
        self.key = key
        self.shape = shape
        self.size = None if shape is None else int(np.prod(shape))
        self.length = max(1, length if length is not None else 1)
        self.grad = grad
        self._cloned_init_net = None
        # {core.DataType: BlobReference} of copies in other precisions.
        self.blob_copy = blob_copy
        # Set once, when the parameter is created under an OptimizerContext.
        self._optimizer = None

    @property
    def parameter(self):
        return self.blob

    @property
    def optimizer(self):
        return self._optimizer

    @optimizer.setter
    def optimizer(self, value):
        assert self._optimizer is None, "optimizer has already been set for parameter " + self.name
        self._optimizer = value

    def grad_type(self):
        assert self.grad is not None, "Gradient of parameter %s is not set yet" % self.name
        if isinstance(self.grad, core.GradientSlice):
            return ParameterType.SPARSE
        return ParameterType.DENSE

    def cloned_init_net(self):
        raise NotImplementedError(
            "cloned_init_net is not supported: parameters are created by "
            "initializers directly in param_init_net"
        )

    def __str__(self):
        return self.name
