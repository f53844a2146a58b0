"""Gradient generation: the GradientRegistry and the backward-pass IR.

Gradient ops come from the C++ gradient makers (`C.get_gradient_defs`) or,
for op types without one, from Python functions registered with
`GradientRegistry.RegisterGradient`. The IR versions every blob of the
forward ops (SSA), walks them backwards collecting gradient ops, checks that
those ops read the right blob versions, and adds the ops that accumulate
gradients of blobs read by several ops.

The sum ops of that accumulation are built by the IR's base class in
core_gradients_accumulation.
"""
import collections

from caffe2.proto import caffe2_pb2
from caffe2.python.core_base import BlobReference, CreateOperator, GradientSlice
from caffe2.python.core_gradients_accumulation import (  # noqa: F401
    GradGenMeta,
    SparseGradGenMeta,
    _GradientAccumulation,
    _remove_suffix,
    _unique,
)
import caffe2.python._import_c_extension as C

# One forward op with the version of each blob it reads and writes.
OpSSA = collections.namedtuple("OpSSA", ["op", "in_versions", "out_versions"])


def GetIndexFromGradientList(g_list, name):
    """Index of the gradient in `g_list` that is (or holds) blob `name`."""
    for i, g in enumerate(g_list):
        if isinstance(g, GradientSlice):
            if g.indices == name or g.values == name:
                return i
        elif g == name:
            return i
    return None


def _to_gradient_wrapper(grad):
    wrapper = C.GradientWrapper()
    if grad is None:
        pass
    elif isinstance(grad, (str, bytes, BlobReference)):
        wrapper.dense = str(grad) if not isinstance(grad, bytes) else grad.decode("utf-8")
    else:
        indices, values = grad
        wrapper.indices = str(indices)
        wrapper.values = str(values)
    return wrapper


def _from_gradient_wrapper(wrapper):
    if wrapper.is_empty():
        return None
    if wrapper.is_sparse():
        return GradientSlice(wrapper.indices, wrapper.values)
    return wrapper.dense


class GradientRegistry(object):
    """Finds the gradient operators of forward operators."""

    gradient_registry_ = {}

    @classmethod
    def RegisterGradient(cls, op_type):
        """Decorator registering f(op, g_output) -> (grad_ops, g_input)."""

        def wrapper(func):
            cls.gradient_registry_[op_type] = func
            return func

        return wrapper

    @classmethod
    def _GetGradientForOpCC(cls, op_def, g_output):
        grad_defs, g_input = C.get_gradient_defs(
            op_def.SerializeToString(), [_to_gradient_wrapper(g) for g in g_output]
        )
        grad_ops = []
        for serialized in grad_defs:
            grad_op = caffe2_pb2.OperatorDef()
            grad_op.ParseFromString(serialized)
            grad_ops.append(grad_op)
        return grad_ops, [_from_gradient_wrapper(w) for w in g_input]

    @classmethod
    def GetGradientForOp(cls, op, g_output):
        """Gradient ops of `op` given the gradients of its outputs.

        Args:
          op: the forward OperatorDef.
          g_output: per output, a gradient blob name, a GradientSlice
            (indices, values) or None.
        Returns:
          (list of OperatorDef, per input a blob name, a GradientSlice or
          None).
        """
        try:
            grad_ops, g_input = cls._GetGradientForOpCC(op, g_output)
        except Exception as e:
            if op.type not in cls.gradient_registry_:
                raise Exception(
                    "Exception when creating gradient for [{}]:{}.\nOp: \n{}".format(
                        op.type, e, str(op)
                    )
                )
            grad_ops, g_input = cls.gradient_registry_[op.type](op, g_output)
        if grad_ops is None:
            return [], g_input
        if not isinstance(grad_ops, list):
            grad_ops = [grad_ops]
        return grad_ops, g_input

    @classmethod
    def GetBackwardPass(cls, operators, ys, ys_generate_gradient=False):
        """Gradient ops of `operators` for the targets `ys`; see
        IR.GetBackwardPass."""
        return IR(operators).GetBackwardPass(ys)


def _version_history(title, history, name):
    lines = ["DEBUG HELP:", title, "== Version history of blob [{}]".format(name)]
    lines += ["Version {} <-- {}".format(version, op) for op, version in history[name]]
    return "\n".join(lines) + "\n"


class IR(_GradientAccumulation):
    """Blob versions of a list of forward ops, and the state of the
    backward pass built over them."""

    def __init__(self, operators):
        # Per op: the blob versions it reads and writes.
        self.ssa = []
        # {blob: {version: [index of each op that reads it]}}
        self.input_usages = collections.defaultdict(lambda: collections.defaultdict(list))
        # {blob: its latest version}
        self.frontier = collections.defaultdict(int)
        # {blob: the version its current gradient belongs to}
        self.gradient_frontier = {}
        # {blob: {version: [GradGenMeta or SparseGradGenMeta]}}
        self.gradient_generators = collections.defaultdict(lambda: collections.defaultdict(list))
        # {blob: [(op, version)]} for error messages.
        self.out_version_history = collections.defaultdict(list)
        self.in_version_history = collections.defaultdict(list)

        for op in operators:
            self.Play(op)
        self.SanityCheck(operators)

    def SanityCheck(self, operators):
        # A StopGradient whose output nobody reads stops nothing.
        for op in operators:
            if op.type == "StopGradient" and op.output[0] not in self.input_usages:
                raise ValueError(
                    "StopGradient's output '{}' is orphan.\nYou typically "
                    "want to specify same input and output for StopGradient."
                    " Op:\n\n{}".format(op.output[0], str(op))
                )

    def Play(self, op):
        """Adds a forward op, advancing the versions of what it writes."""
        op_index = len(self.ssa)
        in_versions = {}
        for name in op.input:
            version = self.frontier[name]
            in_versions[name] = version
            self.input_usages[name][version].append(op_index)
            self.in_version_history[name].append((op, version))
        out_versions = {}
        for name in op.output:
            # A blob seen for the first time starts at version 0.
            if name in self.frontier:
                self.frontier[name] += 1
            out_versions[name] = self.frontier[name]
            self.out_version_history[name].append((op, out_versions[name]))
        self.ssa.append(OpSSA(op, in_versions, out_versions))

    def CheckGradientOperatorInput(
        self, grad_op_input, g_output, fwd_op_idx, locally_generated_blobs
    ):
        """Checks that a gradient op reads a blob version still available."""
        forward_op, in_versions, out_versions = self.ssa[fwd_op_idx]
        output_index = GetIndexFromGradientList(g_output, grad_op_input)
        if output_index is not None:
            # The gradient of an output must belong to the version written.
            name = forward_op.output[output_index]
            if out_versions[name] != self.gradient_frontier[name]:
                raise RuntimeError(
                    'Gradient name "%s" is expected to correspond to version '
                    '%d of "%s", but currently we have version %d.\n\n'
                    % (grad_op_input, out_versions[name], name, self.gradient_frontier[name])
                    + _version_history(
                        "Maybe you use same output blob twice for " "different ops?",
                        self.out_version_history,
                        name,
                    )
                )
        elif grad_op_input in out_versions:
            if self.frontier[grad_op_input] != out_versions[grad_op_input]:
                raise RuntimeError(
                    'Gradient operator needs output "%s" at version %d, but '
                    "currently we have version %d.\n\n"
                    % (grad_op_input, out_versions[grad_op_input], self.frontier[grad_op_input])
                    + _version_history(
                        "Maybe you use same output blob twice for " "different ops?",
                        self.out_version_history,
                        grad_op_input,
                    )
                )
        elif grad_op_input in in_versions:
            if self.frontier[grad_op_input] != in_versions[grad_op_input]:
                raise RuntimeError(
                    'Gradient operator needs input "%s" at version %d, but '
                    "currently we have version %d.\n\n"
                    % (grad_op_input, in_versions[grad_op_input], self.frontier[grad_op_input])
                    + _version_history(
                        "Maybe the blob was overwritten by another op?",
                        self.in_version_history,
                        grad_op_input,
                    )
                )
        elif grad_op_input not in locally_generated_blobs:
            raise RuntimeError(
                'Blob name "%s" not in the scope of operator: %s\nand is not '
                "generated by any of the local gradient operators."
                % (grad_op_input, str(forward_op))
            )

    def AppendSparseGenerators(self, sparse_generators):
        """Merges the indices and values halves of sparse generators."""
        for name, by_version in sparse_generators.items():
            for version, halves in by_version.items():
                if len(halves) == 1:
                    generator = halves[0]
                else:
                    assert len(halves) == 2
                    first, second = halves
                    assert first.gradient == second.gradient
                    generator = SparseGradGenMeta(
                        first.grad_op_indices or second.grad_op_indices,
                        first.idx_indices + second.idx_indices,
                        first.grad_op_values or second.grad_op_values,
                        first.idx_values + second.idx_values,
                        first.gradient,
                    )
                self.gradient_generators[name][version].append(generator)

    def BuildGradientGenerators(self, fwd_op_idx, gradient_ops, g_output, g_input):
        """Records which gradient op (or pass-through blob) produces the
        gradient of each input of forward op `fwd_op_idx`."""
        forward_op, in_versions, _ = self.ssa[fwd_op_idx]
        locally_generated_blobs = []
        sparse_generators = collections.defaultdict(lambda: collections.defaultdict(list))

        for grad_op in gradient_ops:
            for name in grad_op.input:
                self.CheckGradientOperatorInput(name, g_output, fwd_op_idx, locally_generated_blobs)
            locally_generated_blobs.extend(str(s) for s in grad_op.output)
            for i, output in enumerate(grad_op.output):
                input_index = GetIndexFromGradientList(g_input, output)
                if input_index is None:
                    continue
                input_name = forward_op.input[input_index]
                version = in_versions[input_name]
                g = g_input[input_index]
                if isinstance(g, GradientSlice):
                    if g.indices == output:
                        half = SparseGradGenMeta(grad_op, i, None, 0, g)
                    else:
                        assert g.values == output
                        half = SparseGradGenMeta(None, 0, grad_op, i, g)
                    sparse_generators[input_name][version].append(half)
                else:
                    self.gradient_generators[input_name][version].append(GradGenMeta(grad_op, i, g))
        self.AppendSparseGenerators(sparse_generators)

        # Gradients passed through from an output gradient, produced by no
        # op here, still count as contributions for accumulation.
        for input_index, g in enumerate(g_input):
            if not g:
                continue
            input_name = forward_op.input[input_index]
            version = in_versions[input_name]
            if isinstance(g, GradientSlice):
                if (
                    str(g.indices) not in locally_generated_blobs
                    and str(g.values) not in locally_generated_blobs
                ):
                    self.gradient_generators[input_name][version].append(
                        SparseGradGenMeta(None, 0, None, 0, g)
                    )
            elif str(g) not in locally_generated_blobs:
                self.gradient_generators[input_name][version].append(GradGenMeta(None, 0, g))

        for input_index, g in enumerate(g_input):
            if g is not None:
                input_name = forward_op.input[input_index]
                self.gradient_frontier[input_name] = in_versions[input_name]

    def _GetInitGradients(self, ys):
        """Seeds the gradients of the targets; None gets a ConstantFill of
        ones named `<y>_autogen_grad`."""
        input_to_grad = {}
        gradient_ops = []
        for y, g in ys.items():
            autograd_op = None
            if g is None:
                # Created like any op: the current scopes apply.
                autograd_op = CreateOperator(
                    "ConstantFill", [y], [str(y) + "_autogen_grad"], value=1.0
                )
                gradient_ops.append(autograd_op)
                g = autograd_op.output[0]
            # The C++ gradient makers know plain names only.
            if isinstance(g, GradientSlice):
                input_to_grad[str(y)] = GradientSlice(str(g[0]), str(g[1]))
            else:
                input_to_grad[str(y)] = str(g)
            if autograd_op is not None:
                self.gradient_generators[str(y)][self.frontier[str(y)]].append(
                    GradGenMeta(autograd_op, 0, str(g))
                )
        return input_to_grad, gradient_ops

    def _GenerateGradientsForForwardOp(self, forward_op_idx, input_to_grad):
        forward_op = self.ssa[forward_op_idx].op
        g_output = [input_to_grad.get(name) for name in forward_op.output]
        new_input_to_grad = {}
        gradient_ops = []
        if any(g is not None for g in g_output) or forward_op.type == "ZeroGradient":
            gradient_ops, g_input = GradientRegistry.GetGradientForOp(forward_op, g_output)
            self.BuildGradientGenerators(forward_op_idx, gradient_ops, g_output, g_input)
            for name, grad in zip(forward_op.input, g_input):
                # A missing gradient does not erase a known one, unless the
                # op also writes the blob (its version changed).
                if grad is not None or name not in input_to_grad or name in forward_op.output:
                    new_input_to_grad[name] = grad
        return new_input_to_grad, gradient_ops

    def GetBackwardPass(self, ys):
        """Gradient ops computing the derivatives of `ys`.

        Args:
          ys: a list of blobs (their gradients are seeded with ones), or a
            dict {blob: gradient blob, or None for ones}.
        Returns:
          (gradient ops, {BlobReference(blob): BlobReference(gradient) or
          GradientSlice of BlobReferences}).
        """
        if isinstance(ys, list):
            ys = dict((y, None) for y in ys)
        elif not isinstance(ys, dict):
            raise TypeError("ys should either be a list or a dict.")

        # The targets count as one more reader of their current version, so
        # a target also read by ops gets its contributions summed.
        for y in ys:
            name = str(y)
            self.gradient_frontier[name] = self.frontier[name]
            self.input_usages[name][self.frontier[name]].append(len(self.ssa))

        all_input_to_grad, all_gradient_ops = self._GetInitGradients(ys)
        for forward_op_idx in reversed(range(len(self.ssa))):
            input_to_grad, gradient_ops = self._GenerateGradientsForForwardOp(
                forward_op_idx, all_input_to_grad
            )
            all_input_to_grad.update(input_to_grad)
            all_gradient_ops += gradient_ops
            sum_ops, grad_map = self.DoGradientAccumulation(forward_op_idx)
            all_input_to_grad.update(grad_map)
            all_gradient_ops += sum_ops

        result = {}
        for name, grad in all_input_to_grad.items():
            if grad is None:
                continue
            if isinstance(grad, GradientSlice):
                grad = GradientSlice(BlobReference(grad[0]), BlobReference(grad[1]))
            else:
                grad = BlobReference(grad)
            result[BlobReference(name)] = grad
        return all_gradient_ops, result
