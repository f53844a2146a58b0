"""core.Net: a NetDef under construction, with ops added as methods (cloning in core_net_clone,
schema records in core_net_records)."""
import collections
import copy
import difflib
import zlib

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import workspace
from caffe2.python.core_base import (
    _REGISTERED_OPERATORS,
    BlobReference,
    CreateOperator,
    DataType,
    GradientSlice,
    IsOperator,
    IsOperatorWithEngine,
    ScopedBlobReference,
    ScopedName,
    _extract_stacktrace,
    _get_blob_ref,
    _RectifyInputOutput,
    _RegisterPythonImpl,
)
from caffe2.python.core_gradients import GradientRegistry
from caffe2.python.core_net_clone import NetCloneMixin
from caffe2.python.core_net_records import NetRecordsMixin
import caffe2.python._import_c_extension as C


class Net(NetCloneMixin, NetRecordsMixin):
    """Builds a NetDef. Any registered operator type is a method:
    `net.Relu(["X"], ["Y"])` appends a Relu op and returns its output(s)."""

    # Every net name given out so far, process-wide.
    _net_names_used = set()
    operator_registry_ = {}

    @staticmethod
    def current_prefix():
        try:
            from caffe2.python.net_builder import NetBuilder
        except ImportError:
            return ""
        builder = NetBuilder.current(required=False)
        return builder.name if builder else ""

    @staticmethod
    def _get_next_net_name(basename):
        basename = "/".join(x for x in [Net.current_prefix(), basename] if x)
        name = basename
        next_idx = 1
        while name in Net._net_names_used:
            name = basename + "_" + str(next_idx)
            next_idx += 1
        Net._net_names_used.add(name)
        return name

    def __init__(self, name_or_proto):
        """Starts an empty net named after a string, or copies a NetDef.

        Either way the net gets a process-wide unique name: the base name,
        else `<name>_1`, `<name>_2`, ...
        """
        self._input_record = None
        self._output_record = None
        # Names given by NextBlob, so that two calls never collide.
        self._registered_blob_names = set()
        self._recreate_lookup_tables = False
        self._op_outputs = set()
        self._external_input_map = set()
        self._attr_dict = collections.defaultdict(list)
        if isinstance(name_or_proto, caffe2_pb2.NetDef):
            self._net = caffe2_pb2.NetDef()
            self._net.CopyFrom(name_or_proto)
            self._external_input_map.update(self._net.external_input)
            for op in self._net.op:
                self._op_outputs.update(op.output)
            self._next_name_index = self._NextAutoNameIndex()
            name = self._net.name
        else:
            self._net = caffe2_pb2.NetDef()
            self._next_name_index = 0
            name = name_or_proto
        self._net.name = Net._get_next_net_name(name)

    def _NextAutoNameIndex(self):
        """1 + the largest k of the `<net>_blob_<k>` names already used."""
        prefix = self._net.name + "_blob_"
        indices = []
        for op in self._net.op:
            for name in list(op.input) + list(op.output):
                if name.startswith(prefix):
                    try:
                        indices.append(int(name[len(prefix) :]))
                    except ValueError:
                        pass
        return max(indices) + 1 if indices else 0

    def AppendNet(self, net, device_option=None):
        """Appends the ops of `net`, adding its external inputs/outputs."""
        assert isinstance(net, Net)
        for name in net.Proto().external_input:
            if name not in self.Proto().external_input and name not in self._op_outputs:
                self.Proto().external_input.append(name)
                self._external_input_map.add(name)
        self.Proto().external_output.extend(
            o for o in net.Proto().external_output if o not in self.Proto().external_output
        )
        ops = net.Proto().op
        if device_option is not None:
            ops = [copy.deepcopy(op) for op in ops]
            for op in ops:
                op.device_option.CopyFrom(device_option)
        self._ExtendOps(ops)
        return self

    def LogInfo(self, *msg_or_blobs):
        """Prints messages and blobs when the net runs."""
        for msg_or_blob in msg_or_blobs:
            if isinstance(msg_or_blob, BlobReference):
                blob = msg_or_blob
            else:
                blob = self.GivenTensorStringFill(
                    [], self.NextName("log"), shape=[], values=[msg_or_blob]
                )
            self.Print(blob, [])

    def add_attribute(self, name, obj):
        """Attaches a Python object to the net under `name`."""
        self._attr_dict[name].append(obj)

    def get_attributes(self, name):
        return self._attr_dict.get(name, [])

    def set_rand_seed(self, seed=100, sequence_seed=True, seed_on_op_def=False):
        """Sets device_option.random_seed of every op: `seed + i` for op i
        (sequence_seed), a hash of the op and seed (seed_on_op_def), or
        `seed`."""
        assert not (
            sequence_seed and seed_on_op_def
        ), "sequence_seed and seed_on_op_def cannot be both set to True."
        for i, op in enumerate(self.Proto().op):
            if sequence_seed:
                current = seed + i
            elif seed_on_op_def:
                digest = (str(op) + str(seed)).encode("utf-8")
                current = zlib.crc32(digest) % np.iinfo(np.uint32).max
            else:
                current = seed
            op.device_option.random_seed = current

    def Name(self):
        return self._net.name

    def __str__(self):
        return self.Name()

    def Const(self, array, blob_out=None, dtype=None):
        """Adds a fill op producing the constant `array`."""
        if isinstance(array, bool):
            return self.ConstantFill([], blob_out or 1, dtype=DataType.BOOL, value=array)
        array = np.array(array) if dtype is None else np.array(array, dtype=dtype)
        if array.dtype == np.int32:
            fill = self.GivenTensorIntFill
        elif array.dtype == np.int64:
            fill = self.GivenTensorInt64Fill
        elif array.dtype.kind in "SUO":
            fill = self.GivenTensorStringFill
        elif array.dtype == np.bool_:
            fill = self.GivenTensorBoolFill
        else:
            fill = self.GivenTensorFill
        return fill([], blob_out or 1, shape=array.shape, values=array.flatten().tolist())

    def BlobIsDefined(self, blob):
        """True if an op of the net writes `blob` or it is an external
        input."""
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        name = str(blob)
        return name in self._op_outputs or name in self._external_input_map

    def UsesBlob(self, blob):
        """True if an op of the net reads `blob`."""
        name = str(blob)
        return any(name in op.input for op in self._net.op)

    def UsedBlobNames(self):
        """Every blob name the net reads, writes or declares."""
        names = set()
        for op in self._net.op:
            names.update(op.input)
            names.update(op.output)
        names.update(self._net.external_input)
        names.update(self._net.external_output)
        return names

    def GetBlobRef(self, blob_name):
        """A BlobReference to a blob the net defines (KeyError if not)."""
        blob_name = str(blob_name)
        if not self.BlobIsDefined(blob_name):
            raise KeyError("Net does not define blob %s" % blob_name)
        return BlobReference(blob_name, self)

    def Proto(self):
        """The live NetDef. Callers may edit it, so lookups are rebuilt."""
        self._InvalidateLookupTables()
        return self._net

    def _InvalidateLookupTables(self):
        self._recreate_lookup_tables = True

    def _RecreateLookupTables(self):
        self._op_outputs = set()
        for op in self._net.op:
            self._op_outputs.update(op.output)
        self._external_input_map = set(self._net.external_input)
        self._recreate_lookup_tables = False

    def NextScopedBlob(self, prefix="unnamed"):
        """A unique blob name under the current NameScope."""
        return self.NextBlob(ScopedName(prefix))

    def NextBlob(self, prefix="unnamed"):
        """A BlobReference named `prefix`, or `prefix_auto_<k>` when the net
        already uses that name or gave it out. Not scoped."""
        output = _get_blob_ref(prefix)
        next_idx = 0
        while self.BlobIsDefined(output) or str(output) in self._registered_blob_names:
            output = _get_blob_ref(str(prefix) + "_auto_" + str(next_idx))
            next_idx += 1
        self._registered_blob_names.add(str(output))
        return output

    def NextName(self, prefix=None, output_id=None):
        """An unused blob name: `<net>/<prefix>[_<n>][:<output_id>]`, or
        `<net>_blob_<k>` without a prefix. [Deprecated: use NextBlob or
        NextScopedBlob.]"""
        if prefix:
            base = self._net.name + "/" + prefix
            suffix = "" if output_id is None else ":" + str(output_id)
            name = base + suffix
            index = 2
            while self.BlobIsDefined(str(ScopedBlobReference(name))):
                name = base + "_" + str(index) + suffix
                index += 1
        else:
            name = self._net.name + "_blob_" + str(self._next_name_index)
            self._next_name_index += 1
        return str(name)

    def _ExtendOps(self, new_ops):
        self._net.op.extend(new_ops)
        for op in new_ops:
            self._op_outputs.update(str(o) for o in op.output)

    def extend_ops(self, new_ops):
        return self._ExtendOps(new_ops)

    def AddGradientOperators(self, ys, skip=0):
        """Appends the gradient ops of this net's ops (after the first
        `skip`) for the targets `ys`.

        Args:
          ys: a list of blobs, whose gradients are seeded with ones, or a
            dict {blob: gradient blob, or None for ones}.
        Returns:
          {BlobReference(blob): gradient BlobReference or GradientSlice}.
        """
        self._CheckGradientTargets(ys)
        grad_ops, input_to_grad = GradientRegistry.GetBackwardPass(self._net.op[skip:], ys)
        # Gradient ops from C++ bypass CreateOperator, which runs ops in
        # immediate mode, so they are run here.
        if workspace.IsImmediate():
            for op in grad_ops:
                workspace.RunOperatorImmediate(op)
        self._ExtendOps(grad_ops)
        return input_to_grad

    def _CheckGradientTargets(self, ys):
        """Refuses targets that no op of this net writes: their gradient would reach nothing
        (a misspelt loss name, or the loss made in another net)."""
        targets = ys.keys() if isinstance(ys, dict) else (ys if isinstance(ys, list) else [ys])
        written = [str(o) for op in self._net.op for o in op.output]
        known = set(written)
        for y in targets:
            if str(y) in known:
                continue
            close = difflib.get_close_matches(str(y), sorted(known), n=3)
            raise ValueError(
                "AddGradientOperators on net '{}': no op of the net writes '{}', so nothing has a "
                "gradient from it{}. Pass the blob the loss op outputs (e.g. the result of "
                "net.AveragedLoss(...))".format(
                    self.Name(),
                    y,
                    " (did you mean {}?)".format(" or ".join(repr(c) for c in close))
                    if close
                    else "",
                )
            )

    def AddExternalInput(self, *inputs):
        """Declares blobs fed from outside; returns their reference(s)."""
        assert len(inputs) > 0
        for blob in inputs:
            assert (
                str(blob) not in self._external_input_map
            ), "Net already contains an input named %s" % str(blob)
        refs = []
        for blob in inputs:
            name = str(blob)
            self._net.external_input.append(name)
            self._external_input_map.add(name)
            refs.append(_get_blob_ref(name))
        return refs[0] if len(refs) == 1 else refs

    def AddExternalInputs(self, *inputs):
        return self.AddExternalInput(*inputs)

    def AddExternalOutput(self, *outputs):
        """Declares blobs of the net as its outputs."""
        for output in outputs:
            assert isinstance(output, BlobReference)
            assert self.BlobIsDefined(output), "{} is not defined".format(output)
        for output in outputs:
            self.Proto().external_output.append(str(output))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def AddExternalOutputs(self, *outputs):
        return self.AddExternalOutput(*outputs)

    def AddScopedExternalInputs(self, *inputs):
        refs = self.AddExternalInput(*[ScopedBlobReference(b) for b in inputs])
        return refs if isinstance(refs, list) else [refs]

    def AddScopedExternalOutputs(self, *outputs):
        return self.AddExternalOutput(*[ScopedBlobReference(b) for b in outputs])

    def AddObserver(self, observer_type):
        return C.add_observer_to_net(self._net.name, observer_type)

    def RemoveObserver(self, observer):
        C.remove_observer_from_net(self._net.name, observer)

    def NumObservers(self):
        return C.num_observers_on_net(self._net.name)

    @property
    def external_inputs(self):
        return [_get_blob_ref(x) for x in self._net.external_input]

    @property
    def external_outputs(self):
        return [_get_blob_ref(x) for x in self._net.external_output]

    def is_external_input(self, blob):
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        return str(blob) in self._external_input_map

    def DeduplicateGradientSlices(self, g, aggregator="sum"):
        """Sums (or averages) the values of repeated indices of `g`."""
        assert isinstance(g, GradientSlice)
        unique, remapping = self.Unique([g.indices], 2, engine="SparseHash")
        if aggregator.lower() == "sum":
            new_g = self.UnsortedSegmentSum([g.values, remapping], 1)
        elif aggregator.lower() == "mean":
            new_g = self.UnsortedSegmentMean([g.values, remapping], 1)
        else:
            raise ValueError("{} is not supported".format(aggregator))
        return GradientSlice(indices=unique, values=new_g)

    def RunAllOnGPU(self, gpu_id=0, use_cudnn=False):
        """Runs ops without a device option of their own on GPU `gpu_id`
        (sets the NetDef's device option); `use_cudnn` sets every op's
        engine to CUDNN."""
        device_option = caffe2_pb2.DeviceOption()
        device_option.device_type = caffe2_pb2.CUDA
        device_option.cuda_gpu_id = gpu_id
        self._net.device_option.CopyFrom(device_option)
        if use_cudnn:
            for op in self._net.op:
                op.engine = "CUDNN"

    def RunAllOnMKL(self):
        device_option = caffe2_pb2.DeviceOption()
        device_option.device_type = caffe2_pb2.MKLDNN
        self._net.device_option.CopyFrom(device_option)

    def _CreateAndAddToSelf(self, op_type, inputs, outputs=None, **kwargs):
        """Appends an op; inputs the net does not define become external
        inputs. `outputs` None gives one auto-named output, an int n gives
        n. Returns None, one BlobReference or a tuple of them."""
        inputs = _RectifyInputOutput(inputs)
        for blob in inputs:
            if not self.BlobIsDefined(blob):
                self.AddExternalInput(blob)
        if outputs is None:
            outputs = self.NextName(prefix=op_type)
        elif isinstance(outputs, int):
            outputs = [self.NextName(prefix=op_type, output_id=i) for i in range(outputs)]
        outputs = _RectifyInputOutput(outputs, net=self)
        op = CreateOperator(op_type, inputs, outputs, **kwargs)
        self._ExtendOps([op])
        workspace.operator_tracebacks[self.Name()][len(self._net.op) - 1] = _extract_stacktrace()

        if len(op.output) == 0:
            return None
        if len(op.output) == 1:
            return BlobReference(op.output[0], self)
        return tuple(BlobReference(o, self) for o in op.output)

    def __getattr__(self, op_type):
        if op_type.startswith("_"):
            raise AttributeError(op_type)
        if not IsOperator(op_type) and not IsOperatorWithEngine(op_type, "CUDNN"):
            raise AttributeError(
                "Method "
                + op_type
                + " is not a registered operator."
                + " Did you mean: ["
                + ",".join(C.nearby_opnames(op_type))
                + "]"
            )
        return lambda *args, **kwargs: self._CreateAndAddToSelf(op_type, *args, **kwargs)

    def __dir__(self):
        additional = [op for op in _REGISTERED_OPERATORS if "_ENGINE_" not in op]
        return sorted(set(list(super().__dir__()) + additional))

    def Python(
        self,
        f,
        grad_f=None,
        python_func_type=None,
        pass_workspace=False,
        grad_output_indices=None,
        grad_input_indices=None,
    ):
        """Returns a function that adds a `Python` op running `f`.

        f(inputs, outputs[, workspace]) gets lists of TensorCPU; grad_f
        likewise for the gradient op.
        """
        assert IsOperator("Python")
        token = _RegisterPythonImpl(f, grad_f, python_func_type, pass_workspace=pass_workspace)
        return lambda *args, **kwargs: self._CreateAndAddToSelf(
            "Python",
            token=token,
            grad_output_indices=grad_output_indices or [],
            grad_input_indices=grad_input_indices or [],
            *args,
            **kwargs,
        )

    def PopulateProtoWithFileName(self):
        """Names each op `file:line:function` of the code that created it."""
        net_tracebacks = workspace.operator_tracebacks.get(self.Name(), None)
        if net_tracebacks is None:
            return
        for idx, op in enumerate(self.Proto().op):
            if idx in net_tracebacks:
                op.name = ":".join(map(str, net_tracebacks[idx][0]))
