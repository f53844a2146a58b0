"""ModelHelper: a training net and its parameter-initialization net, with
the parameters, their gradients and optimizers kept alongside."""
import logging

from caffe2.python import core, scope, workspace
from caffe2.python.modeling import parameter_info
from caffe2.python.modeling.parameter_sharing import parameter_sharing_context
from caffe2.python.optimizer_context import OptimizerContext, DEFAULT_OPTIM
from caffe2.python.regularizer_context import RegularizerContext

_known_working_ops = [
    "Accuracy",
    "Adam",
    "Add",
    "Adagrad",
    "SparseAdagrad",
    "AveragedLoss",
    "Cast",
    "Checkpoint",
    "ConstantFill",
    "Copy",
    "CopyGPUToCPU",
    "CopyCPUToGPU",
    "DequeueBlobs",
    "EnsureCPUOutput",
    "ExpandDims",
    "Flatten",
    "FlattenToVec",
    "LabelCrossEntropy",
    "LearningRate",
    "MakeTwoClass",
    "MatMul",
    "NCCLAllreduce",
    "NHWC2NCHW",
    "PackSegments",
    "Print",
    "PRelu",
    "ReduceFrontSum",
    "Scale",
    "ScatterWeightedSum",
    "Sigmoid",
    "SortedSegmentSum",
    "Snapshot",
    "Softmax",
    "SoftmaxWithLoss",
    "SquaredL2Distance",
    "Squeeze",
    "StopGradient",
    "Summarize",
    "Tanh",
    "Transpose",
    "UnpackSegments",
    "WeightedSum",
    "YellowFin",
]


class ModelHelper(object):
    """A model: `net` (the training or inference net), `param_init_net`
    (creates the parameters) and the parameter bookkeeping.

    Attribute access falls through to `net` for operators, so
    `model.Relu(x, y)` appends a Relu to `model.net`.
    """

    def __init__(
        self,
        name=None,
        init_params=True,
        allow_not_known_ops=True,
        skip_sparse_optim=False,
        param_model=None,
        arg_scope=None,
    ):
        self.name = name or "model"
        self.net = core.Net(self.name)

        if param_model is not None:
            self.param_init_net = param_model.param_init_net
            self.param_to_grad = param_model.param_to_grad
            self.params = param_model.params
            self._parameters_info = param_model._parameters_info
            self._computed_params = param_model._computed_params
        else:
            self.param_init_net = core.Net(self.name + "_init")
            self.param_to_grad = {}
            self.params = []
            self._parameters_info = {}
            self._computed_params = []

        self._param_info_deprecated = []
        self._devices = []
        self.gradient_ops_added = False
        self.init_params = init_params
        self.allow_not_known_ops = allow_not_known_ops
        self.skip_sparse_optim = skip_sparse_optim
        self.weights = []
        self.biases = []
        self._arg_scope = {
            "order": "NCHW",
            "use_cudnn": True,
            "cudnn_exhaustive_search": False,
        }
        if arg_scope is not None:
            self._arg_scope.update(arg_scope)

    @property
    def arg_scope(self):
        return self._arg_scope

    def get_name(self):
        return self.name

    def _infer_param_shape(self, param):
        for op in self.param_init_net.Proto().op:
            if str(param) in op.output:
                for arg in op.arg:
                    if arg.name == "shape":
                        return list(arg.ints)
        return None

    def _update_param_info_deprecated(self):
        assert len(self._param_info_deprecated) <= len(self.params)
        for param in self.params[len(self._param_info_deprecated) :]:
            if not isinstance(param, core.BlobReference):
                raise ValueError("Param %s must be a BlobReference!" % str(param))
            self._param_info_deprecated.append(
                parameter_info.ParameterInfo(
                    param_id=len(self._param_info_deprecated),
                    param=param,
                    shape=self._infer_param_shape(param),
                )
            )
        for info in self._param_info_deprecated:
            info.grad = self.param_to_grad.get(info.name)

    def _normalize_tags(self, tags):
        tags = tags or []
        return set(tags) if isinstance(tags, list) else set([tags])

    def create_param(self, param_name, shape, initializer, tags=None):
        """Creates (or returns the already created) parameter `param_name`
        with `initializer.create_param(...)` in param_init_net.

        A string name is scoped, after ParameterSharing overrides; a
        BlobReference is used as is. Creating a parameter twice with a
        different shape is an error.
        """
        if isinstance(param_name, core.BlobReference):
            param_name = str(param_name)
        elif isinstance(param_name, str):
            param_name = parameter_sharing_context.get_parameter_name(param_name)
        else:
            raise TypeError("Unsupported type for param_name: %s" % type(param_name))

        if param_name in self._parameters_info:
            assert (
                self._parameters_info[param_name].shape == shape
            ), "Parameter %s was created with shape %s and is requested " "again with shape %s" % (
                param_name,
                self._parameters_info[param_name].shape,
                shape,
            )
            return self._parameters_info[param_name].blob

        param_info = initializer.create_param(
            param_name=core.BlobReference(param_name),
            init_net=self.param_init_net,
            shape=shape,
        )
        optim_context = OptimizerContext.current()
        for tag in self._normalize_tags(tags):
            if optim_context.has_optimizer(tag):
                param_info.optimizer = optim_context.get_optimizer(tag)
        if not param_info.optimizer and optim_context.has_optimizer(DEFAULT_OPTIM):
            param_info.optimizer = optim_context.get_optimizer(DEFAULT_OPTIM)

        reg_context = RegularizerContext.current()
        param_info.regularizer = reg_context

        self._parameters_info[param_name] = param_info
        self.AddParameter(param_info.blob, tags)
        return param_info.blob

    def get_param_info(self, param):
        assert isinstance(param, core.BlobReference), "Param {} is not a BlobReference".format(
            param
        )
        return self._parameters_info.get(param, None)

    def add_param_DEPRECATED(self, param, key=None, shape=None, length=None):
        logging.warning("add_param method is DEPRECATED")
        self._update_param_info_deprecated()
        self.AddParameter(param)
        if key is not None and self.net.input_record() is not None:
            idx = self.net.input_record().field_blobs().index(key)
            key = self.net.input_record().field_names()[idx]
        shape = shape if shape is not None else self._infer_param_shape(param)
        if not isinstance(param, core.BlobReference):
            raise ValueError("Param %s must be a BlobReference!" % str(param))
        self._param_info_deprecated.append(
            parameter_info.ParameterInfo(
                param_id=len(self._param_info_deprecated),
                param=param,
                shape=shape,
                key=key,
                length=length,
            )
        )
        return self._param_info_deprecated[-1]

    def AddParameter(self, param, tags=None):
        """Records `param` in params (or _computed_params for
        COMPUTED_PARAM) and in weights / biases by tag."""
        assert isinstance(param, core.BlobReference)
        tags = self._normalize_tags(tags)
        if parameter_info.ParameterTags.COMPUTED_PARAM in tags:
            self._computed_params.append(param)
        else:
            self.params.append(param)
        if parameter_info.ParameterTags.WEIGHT in tags:
            self.weights.append(param)
        if parameter_info.ParameterTags.BIAS in tags:
            self.biases.append(param)

    @staticmethod
    def _NormalizeNamescope(namescope):
        if namescope is None:
            return scope.CurrentNameScope()
        elif namescope == "" or namescope.endswith(scope._NAMESCOPE_SEPARATOR):
            return namescope
        return namescope + scope._NAMESCOPE_SEPARATOR

    def GetParams(self, namescope=None, top_scope=False):
        """Parameters under `namescope` (None: the current NameScope; '':
        all of them)."""
        namescope = ModelHelper._NormalizeNamescope(namescope)
        if namescope == "":
            return self.params[:]
        return [p for p in self.params if p.GetNameScope().startswith(namescope)]

    def Proto(self):
        return self.net.Proto()

    def InitProto(self):
        return self.param_init_net.Proto()

    def RunAllOnGPU(self, *args, **kwargs):
        self.param_init_net.RunAllOnGPU(*args, **kwargs)
        self.net.RunAllOnGPU(*args, **kwargs)

    def CreateDB(self, blob_out, db, db_type, **kwargs):
        return self.param_init_net.CreateDB([], blob_out, db=db, db_type=db_type, **kwargs)

    def AddGradientOperators(self, *args, **kwargs):
        """Adds the backward pass to `net` (once) and fills param_to_grad;
        returns the gradient map."""
        if self.gradient_ops_added:
            raise RuntimeError("You cannot run AddGradientOperators twice.")
        self.Validate()
        self.gradient_ops_added = True
        self.grad_map = self.net.AddGradientOperators(*args, **kwargs)
        self.param_to_grad = self.get_param_to_grad(self.params)

        for param, grad in self.param_to_grad.items():
            param_info = self.get_param_info(param)
            if param_info:
                param_info.grad = grad
            else:
                self._parameters_info[param] = parameter_info.ParameterInfo(
                    param_id=None, param=param, grad=grad
                )
        return self.grad_map

    def get_param_to_grad(self, params):
        """{param: its gradient} for the params that got one."""
        param_to_grad = {}
        if not self.gradient_ops_added:
            raise RuntimeError("You need to run AddGradientOperators first.")
        for p in params:
            if str(p) in self.grad_map:
                param_to_grad[p] = self.grad_map[str(p)]
        return param_to_grad

    def GetOptimizationParamInfo(self, params=None):
        """ParameterInfo of every parameter that has a gradient (sparse
        ones skipped with skip_sparse_optim)."""
        params = params or self.GetParams()
        param_to_grad = self.get_param_to_grad(params)
        param_to_grad = {
            p: g
            for p, g in param_to_grad.items()
            if not (isinstance(g, core.GradientSlice) and self.skip_sparse_optim)
        }
        param_infos = []
        for param, grad in param_to_grad.items():
            info = self.get_param_info(param)
            if info is None:
                info = parameter_info.ParameterInfo(param_id=None, param=param, grad=grad)
                self._parameters_info[param] = info
            else:
                info.grad = grad
            param_infos.append(info)
        return param_infos

    def _Validate(self):
        """Names of parameters recorded more than once."""
        seen, dupes = set(), []
        for p in self.params:
            if str(p) in seen:
                dupes.append(str(p))
            seen.add(str(p))
        return dupes

    def Validate(self):
        dupes = self._Validate()
        assert dupes == [], "Duplicate params: {}".format(dupes)

    def GetComputedParams(self, namescope=None):
        namescope = ModelHelper._NormalizeNamescope(namescope)
        if namescope == "":
            return self._computed_params[:]
        return [p for p in self._computed_params if p.GetNameScope().startswith(namescope)]

    def GetAllParams(self, namescope=None):
        return self.GetParams(namescope) + self.GetComputedParams(namescope)

    def TensorProtosDBInput(self, unused_blob_in, blob_out, batch_size, db, db_type, **kwargs):
        dbreader_name = "dbreader_" + db
        dbreader = self.param_init_net.CreateDB([], dbreader_name, db=db, db_type=db_type)
        return self.net.TensorProtosDBInput(dbreader, blob_out, batch_size=batch_size, **kwargs)

    def GetDevices(self):
        assert len(self._devices) > 0, "Use data_parallel_model to run model on multiple devices."
        return self._devices

    def __getattr__(self, op_type):
        """Operators of `net`, e.g. model.Relu(...)."""
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        if not core.IsOperator(op_type):
            raise AttributeError(
                "Method "
                + op_type
                + " is not a registered operator."
                + " Did you mean: ["
                + ",".join(workspace.C.nearby_opnames(op_type))
                + "]"
            )
        if op_type not in _known_working_ops:
            if not self.allow_not_known_ops:
                raise AttributeError("Operator {} is not known to be safe".format(op_type))
            logging.warning(
                "You are creating an op that the ModelHelper "
                "does not recognize: {}.".format(op_type)
            )
        return self.net.__getattr__(op_type)

    def __dir__(self):
        return sorted(set(list(super().__dir__()) + _known_working_ops))

    def param_info(self, grad_type=None, id=None):
        logging.info("You are using an old interface: param_info.")
        self._update_param_info_deprecated()
        if id is not None:
            assert grad_type is None
            info = self._param_info_deprecated[id]
            assert info.param_id == id
            return info
        elif grad_type is not None:
            return [info for info in self._param_info_deprecated if info.grad_type() == grad_type]
        return self._param_info_deprecated


def ExtractPredictorNet(
    net_proto, input_blobs, output_blobs, device=None, renames=None, disabled_inputs=None
):
    """Extracts from a training NetDef the ops needed to compute
    `output_blobs` from `input_blobs`.

    Returns (predict core.Net named `<name>_predict`, list of the external
    blobs it reads other than the inputs, i.e. the parameters). Ops with
    `is_test=0` are rejected: build the net with is_test=1.
    """
    predict_net = core.Net(net_proto.name + "_predict")
    predict_proto = predict_net.Proto()

    orig_external_inputs = set(net_proto.external_input)
    orig_external_outputs = set(net_proto.external_output)
    input_blobs = {str(b) for b in input_blobs}
    known_blobs = set(orig_external_inputs).union(input_blobs)
    output_blobs = {str(b) for b in output_blobs}
    external_inputs = set(input_blobs)
    external_outputs = set(output_blobs)

    if renames is None:
        renames = {}
    if disabled_inputs is not None:
        known_blobs = known_blobs - set(disabled_inputs)

    ops = list(net_proto.op)

    # Only ops between the first reader of an input and the last writer of
    # an output can belong to the predictor.
    try:
        first_op_with_input = min(
            j
            for j in range(len(ops))
            if input_blobs.intersection(ops[j].input) and ops[j].type != "StopGradient"
        )
    except ValueError:
        raise Exception("No ops with input={}".format(input_blobs))
    try:
        last_op_with_output = max(
            j for j in range(len(ops)) if output_blobs.intersection(ops[j].output)
        )
    except ValueError:
        raise Exception("No ops with output={}".format(output_blobs))

    def validate_op(op):
        for arg in op.arg:
            if arg.name == "is_test" and arg.i == 0:
                raise Exception(
                    "An operator had is_test=0, did you try to extract a "
                    "predictor from a train model (instead of test model)?"
                    " Op was: {}".format(str(op))
                )

    def rename_list(proto_list):
        new_list = [renames.get(b, b) for b in proto_list]
        del proto_list[:]
        proto_list.extend(new_list)

    for op in ops[first_op_with_input : (last_op_with_output + 1)]:
        if known_blobs.issuperset(op.input):
            if op.type == "RecurrentNetwork":
                for arg in op.arg:
                    if arg.name == "backward_step_net":
                        arg.ClearField("n")
                    elif arg.name == "backward_link_internal":
                        arg.ClearField("strings")
            if device is not None:
                op.device_option.device_type = device.device_type
                op.device_option.cuda_gpu_id = device.cuda_gpu_id
            validate_op(op)
            predict_proto.op.extend([op])
            known_blobs.update(op.output)
            external_inputs.update(set(op.input).intersection(orig_external_inputs))
            external_outputs.update(set(op.output).intersection(orig_external_outputs))
        else:
            logging.debug(
                "Op {} had unknown inputs: {}".format(
                    op.type, set(op.input).difference(known_blobs)
                )
            )

    predict_proto.external_input.extend(external_inputs)
    predict_proto.external_output.extend(external_outputs)

    rename_list(predict_proto.external_input)
    rename_list(predict_proto.external_output)

    renamed_input_blobs = [renames.get(b, b) for b in input_blobs]
    for op in predict_proto.op:
        rename_list(op.input)
        rename_list(op.output)

    return predict_net, list(set(predict_proto.external_input) - set(renamed_input_blobs))


__all__ = ["ModelHelper", "ExtractPredictorNet"]
