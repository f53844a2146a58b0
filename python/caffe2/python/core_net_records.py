"""The schema records bound to a net's inputs and outputs (a mixin of core.Net)."""
from caffe2.python.core_base import NameScope, _get_blob_ref


def _recover_record_by_prefix(names, prefix=""):
    """A schema record from the blob names that start with `prefix`."""
    from caffe2.python import schema

    column_names = [name[len(prefix) :] for name in names if name.startswith(prefix)]
    if not column_names:
        return None
    return schema.from_column_list(
        column_names, col_blobs=[_get_blob_ref(prefix + name) for name in column_names]
    )


class NetRecordsMixin(object):
    """Input and output schema records of a net."""

    def set_input_record(self, input_record):
        """Binds a schema record to the net's inputs."""
        from caffe2.python import schema

        assert self._input_record is None or (
            input_record.has_blobs()
            and set(input_record.field_blobs()) == set(self._input_record.field_blobs())
        ), "Input schema cannot be reset"
        if not input_record.has_blobs():
            with NameScope(self.Name()):
                self._input_record = schema.NewRecord(self, input_record)
        else:
            self._input_record = input_record
            for blob in input_record.field_blobs():
                if not self.is_external_input(blob):
                    self.AddExternalInput(blob)
        return self._input_record

    def recover_input_record_by_prefix(self, prefix):
        record = _recover_record_by_prefix(self._net.external_input, prefix)
        if record:
            self.set_input_record(record)

    def set_output_record(self, record):
        """Binds a schema record to blobs of the net, as its outputs."""
        assert self._output_record is None or (
            record.has_blobs()
            and set(record.field_blobs()) == set(self._output_record.field_blobs())
        ), "Output schema cannot be reset"
        for blob in record.field_blobs():
            assert self.BlobIsDefined(blob), "{} is not defined".format(blob)
        for blob in record.field_blobs():
            self.AddExternalOutput(blob)
        self._output_record = record

    def recover_output_record_by_prefix(self, prefix):
        record = _recover_record_by_prefix(self._net.external_output, prefix)
        if record:
            self.set_output_record(record)

    def AppendOutputRecordField(self, field_name, record):
        from caffe2.python import schema

        assert self._output_record is not None, "Tried to append to missing output record"
        for blob in record.field_blobs():
            assert self.BlobIsDefined(blob)
        for blob in record.field_blobs():
            self.AddExternalOutput(blob)
        self._output_record = self._output_record + schema.Struct((field_name, record))

    def input_record(self):
        return self._input_record

    def output_record(self):
        return self._output_record

    def has_input_record(self):
        return self._input_record is not None

    def has_output_record(self):
        return self._output_record is not None
