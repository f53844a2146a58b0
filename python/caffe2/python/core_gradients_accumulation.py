"""Gradient accumulation for the backward-pass IR of core_gradients: the
records of the contributions to a gradient (GradGenMeta, SparseGradGenMeta)
and the IR methods that, once every reader of a blob version has produced
its contribution, sum them (Sum for dense gradients, Concat of indices and
values for sparse ones) under one device, renaming the extra contributions
so they do not overwrite each other. The methods live on
_GradientAccumulation, a base class of core_gradients.IR that reads the IR's
state (ssa, input_usages, gradient_generators). core_gradients (and so
caffe2.python.core) re-exports GradGenMeta and SparseGradGenMeta.
"""
import collections

from caffe2.python.core_base import (
    BlobReference,
    CreateOperator,
    GradientSlice,
    device_option_equal,
)

# A contribution to a dense gradient: output `idx` of `grad_op`, or, with
# grad_op None, the blob `gradient` passed through unchanged.
GradGenMeta = collections.namedtuple("GradGenMeta", ["grad_op", "idx", "gradient"])
# The same for a sparse gradient, whose indices and values may come from
# different ops.
SparseGradGenMeta = collections.namedtuple(
    "SparseGradGenMeta",
    [
        "grad_op_indices",
        "idx_indices",
        "grad_op_values",
        "idx_values",
        "gradient",
    ],
)


class _GradientAccumulation(object):
    """The gradient-accumulation half of core_gradients.IR (its base
    class): building and placing the ops that sum the contributions."""

    def _GetSumOpOutputName(self, generators, input_name):
        """The accumulated gradient takes the name of the first generated
        contribution, else `<input>_grad`."""
        for g in generators:
            if isinstance(g, GradGenMeta):
                if g.grad_op:
                    return g.grad_op.output[g.idx]
            else:
                if g.grad_op_indices:
                    return _remove_suffix(g.grad_op_indices.output[g.idx_indices], "_indices")
                if g.grad_op_values:
                    return _remove_suffix(g.grad_op_values.output[g.idx_values], "_values")
        return input_name + "_grad"

    def _SetSumOpsDeviceOption(self, sum_ops, generators):
        # Generators were checked to agree on the device; use the first.
        for g in generators:
            if isinstance(g, GradGenMeta):
                grad_op = g.grad_op
            else:
                grad_op = g.grad_op_values or g.grad_op_indices
            if grad_op:
                if grad_op.HasField("device_option"):
                    for op in sum_ops:
                        op.device_option.CopyFrom(grad_op.device_option)
                break

    def _DisambiguateGradOpOutput(self, grad_op, idx, cnt):
        grad_op.output[idx] = "_{}_autosplit_{}".format(grad_op.output[idx], cnt)
        return grad_op.output[idx], cnt + 1

    def _CheckSumOpsConflict(self, out_base_name, g):
        if str(out_base_name) == str(g):
            raise RuntimeError(
                "The gradient output of empty gradient op can not be the "
                "same as the normal name of the current input gradient."
            )

    def _MakeDenseSumOps(self, generators, out_base_name):
        assert len(generators) > 1
        sum_inputs = []
        cnt = 0
        first_grad_op = True
        for grad_op, idx, g in generators:
            assert not isinstance(g, GradientSlice)
            if grad_op:
                # The first generated contribution keeps its name; the
                # others are renamed so they do not overwrite it.
                if first_grad_op:
                    first_grad_op = False
                    out = grad_op.output[idx]
                else:
                    out, cnt = self._DisambiguateGradOpOutput(grad_op, idx, cnt)
                sum_inputs.append(out)
            else:
                self._CheckSumOpsConflict(out_base_name, g)
                sum_inputs.append(str(g))
        if out_base_name in sum_inputs:
            # Sum runs in place only on its first input.
            i = sum_inputs.index(out_base_name)
            sum_inputs[0], sum_inputs[i] = sum_inputs[i], sum_inputs[0]
        sum_ops = [
            CreateOperator(
                "Sum", [BlobReference(x) for x in sum_inputs], BlobReference(out_base_name)
            )
        ]
        return sum_ops, out_base_name

    def _MakeSparseSumOps(self, generators, out_base_name):
        indices_inputs = []
        values_inputs = []
        cnt_i = 0
        cnt_v = 0
        for op_i, idx_i, op_v, idx_v, g in generators:
            if op_i:
                out, cnt_i = self._DisambiguateGradOpOutput(op_i, idx_i, cnt_i)
                indices_inputs.append(out)
            else:
                self._CheckSumOpsConflict(out_base_name, g.indices)
                indices_inputs.append(g.indices)
            if op_v:
                out, cnt_v = self._DisambiguateGradOpOutput(op_v, idx_v, cnt_v)
                values_inputs.append(out)
            else:
                self._CheckSumOpsConflict(out_base_name, g.values)
                values_inputs.append(g.values)

        # Sparse gradients are summed by concatenation; duplicate indices
        # are left for the optimizer to deduplicate.
        sum_ops = []
        concat_outputs = []
        for part, inputs in (("indices", indices_inputs), ("values", values_inputs)):
            output = "{}_{}_concat".format(out_base_name, part)
            sum_ops.append(
                CreateOperator(
                    "Concat",
                    [BlobReference(x) for x in inputs],
                    [BlobReference(output), BlobReference(output + "_split")],
                    axis=0,
                )
            )
            concat_outputs.append(output)
        return sum_ops, GradientSlice(*concat_outputs)

    def _MakeSumOps(self, input_name, input_version):
        generators = self.gradient_generators[input_name][input_version]
        out_base_name = self._GetSumOpOutputName(generators, input_name)
        if isinstance(generators[0], GradGenMeta):
            sum_ops, g = self._MakeDenseSumOps(generators, out_base_name)
        else:
            sum_ops, g = self._MakeSparseSumOps(generators, out_base_name)
        self._SetSumOpsDeviceOption(sum_ops, generators)
        return sum_ops, g

    def _VerifyGradientGenerators(self, generators):
        """True when the contributions need summing; checks that they are
        all dense or all sparse, and share one device."""
        if len(set(type(g) for g in generators)) > 1:
            raise RuntimeError(
                "Automatic aggregation of a mix of sparse and dense "
                "gradients is not supported yet"
            )
        if len(generators) < 2:
            return False
        devices = []
        for g in generators:
            if isinstance(g, GradGenMeta):
                if g.grad_op:
                    devices.append(g.grad_op.device_option)
            else:
                for grad_op in (g.grad_op_indices, g.grad_op_values):
                    if grad_op:
                        devices.append(grad_op.device_option)
        if any(not device_option_equal(d, devices[0]) for d in devices[1:]):
            raise RuntimeError(
                "Unexpected behavior: not all grad ops " "have the same device option."
            )
        return True

    def DoGradientAccumulation(self, fwd_op_idx):
        """Sum ops for the inputs of forward op `fwd_op_idx` whose version
        is read by several ops, once the first reader is reached (i.e. all
        contributions exist). Returns (sum ops, {input: gradient})."""
        forward_op, in_versions, _ = self.ssa[fwd_op_idx]
        sum_ops = []
        grad_map = {}
        for input_name in _unique(forward_op.input):
            version = in_versions[input_name]
            usages = self.input_usages[input_name][version]
            if len(usages) <= 1 or usages[0] != fwd_op_idx:
                continue
            generators = self.gradient_generators[input_name][version]
            try:
                if not self._VerifyGradientGenerators(generators):
                    continue
            except RuntimeError as err:
                raise RuntimeError(
                    "Gradients for param ''{}'' failed to verify: {}".format(input_name, err)
                )
            ops, g = self._MakeSumOps(input_name, version)
            sum_ops.extend(ops)
            grad_map[input_name] = g
        return sum_ops, grad_map


def _remove_suffix(s, suffix):
    return s[: -len(suffix)] if s.endswith(suffix) else s


def _unique(names):
    """`names` without repeats, in order of first appearance."""
    return list(collections.OrderedDict.fromkeys(names))
