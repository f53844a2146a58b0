"""Net.Clone and Net.ClonePartial (a mixin of core.Net)."""
import collections

from caffe2.proto import caffe2_pb2
from caffe2.python.core_base import BlobReference
from caffe2.python.core_graph import get_op_ids_in_path, get_ssa, get_undefined_blobs


class NetCloneMixin(object):
    """Copies of a net, whole or only the ops between given inputs and outputs."""

    def Clone(self, name, blob_remap=None, op_id_mask=None, remap_funcs=None, keep_schema=True):
        """A copy of this net named `name`.

        Args:
          blob_remap: {old blob name: new name} applied to all ops and
            external inputs/outputs.
          op_id_mask: indices of the ops to keep (default all).
          remap_funcs: {op type: f(op, prefix, blob_remap)} for ops whose
            arguments hold blob names too.
        """
        remap_funcs = dict(remap_funcs or {})
        blob_remap = blob_remap or {}
        proto = self._net
        if op_id_mask is None:
            op_id_mask = list(range(len(proto.op)))

        def remapped(blob):
            return str(blob_remap.get(str(blob), str(blob)))

        def remap_list(names):
            new_names = [remapped(b) for b in names]
            del names[:]
            names.extend(new_names)

        def remap_op(op):
            new_op = caffe2_pb2.OperatorDef()
            new_op.CopyFrom(op)
            remap_list(new_op.input)
            remap_list(new_op.output)
            if new_op.type in remap_funcs:
                remap_funcs[new_op.type](new_op, (name + "/") if name else "", blob_remap)
            return new_op

        new_proto = caffe2_pb2.NetDef()
        new_proto.CopyFrom(proto)
        new_proto.name = name
        del new_proto.op[:]
        new_proto.op.extend(remap_op(proto.op[i]) for i in op_id_mask)
        remap_list(new_proto.external_input)
        remap_list(new_proto.external_output)
        from caffe2.python.core_net import Net

        new_net = Net(new_proto)

        if keep_schema:
            for attr in ("_input_record", "_output_record"):
                record = getattr(self, attr)
                if record:
                    from caffe2.python import schema

                    setattr(
                        new_net,
                        attr,
                        schema.from_blob_list(
                            record,
                            [
                                BlobReference(remapped(blob), net=new_net)
                                for blob in record.field_blobs()
                            ],
                        ),
                    )
        new_net._attr_dict.update(self._attr_dict)
        return new_net

    def ClonePartial(self, name, inputs, outputs, remap_funcs=None):
        """Clones only the ops needed to compute `outputs` from `inputs`.

        Args:
          inputs: {original blob: input name in the clone}, a list of
            (original, new) pairs, or a list of blobs kept as they are.
          outputs: blobs the clone must produce.
        Returns:
          (new net, BlobReferences to its outputs). Internal blobs get the
          prefix `<name>/`.
        """
        pair_list = isinstance(inputs, list) and all(
            isinstance(i, tuple) and len(i) == 2 for i in inputs
        )
        if isinstance(inputs, dict):
            pass
        elif pair_list:
            inputs = collections.OrderedDict(inputs)
        else:
            inputs = collections.OrderedDict(zip(inputs, inputs))
        for output in outputs:
            assert self.BlobIsDefined(output)
        input_names = collections.OrderedDict((str(k), str(v)) for k, v in inputs.items())
        output_names = [str(o) for o in outputs]
        blob_versions = {str(i): 0 for i in inputs}
        ssa, blob_versions = get_ssa(self._net, blob_versions)
        used_op_ids = get_op_ids_in_path(ssa, blob_versions, inputs, outputs)
        disallowed_op_ids = get_op_ids_in_path(ssa, blob_versions, [], inputs)
        assert not set(used_op_ids) & set(disallowed_op_ids), (
            "Cannot partially clone net: some of the ops required would "
            "generate the given input."
        )

        sub_ssa = [op for i, op in enumerate(ssa) if i in used_op_ids]
        undef_blobs = get_undefined_blobs(sub_ssa) - set(input_names)
        prefix = (name + "/") if name else ""

        def remap(blob_name):
            if blob_name in input_names:
                return input_names[blob_name]
            if blob_name in undef_blobs:
                return blob_name
            return prefix + blob_name

        blob_mapping = {b: remap(b) for b in blob_versions}
        new_net = self.Clone(name, blob_mapping, used_op_ids, remap_funcs)
        new_in = [blob_mapping[i] for i in input_names] + sorted(undef_blobs)
        new_out = [blob_mapping[o] for o in output_names]
        del new_net.Proto().external_input[:]
        new_net.Proto().external_input.extend(new_in)
        new_net._external_input_map = set(new_in)
        del new_net.Proto().external_output[:]
        new_net.Proto().external_output.extend(new_out)
        return new_net, [new_net.GetBlobRef(o) for o in new_out]
