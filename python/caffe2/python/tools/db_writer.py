"""Shared pieces of the dataset tools: record builders, a DB writer and a progress bar.

Records follow the formats ImageInput and TensorProtosDBInput read (ops spec §2.1):

* ``tensor_protos_record(image, label)``: a serialized TensorProtos ``[image, label]``.
* ``datum_record(...)``: a serialized caffe ``Datum`` (encoded file bytes, or raw CHW pixels).
* ``encode_png(pixels)``: an 8-bit grey or BGR image as PNG bytes, without OpenCV.
"""
import struct
import sys
import time
import zlib

import numpy as np

from caffe2.proto import caffe2_pb2, caffe_datum_pb2


def bytes_proto(pixels, dims=None):
    """A BYTE TensorProto holding uint8 `pixels` in byte_data (dims default to its shape)."""
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.BYTE
    proto.dims.extend(pixels.shape if dims is None else dims)
    proto.byte_data = np.ascontiguousarray(pixels, dtype=np.uint8).tobytes()
    return proto


def string_proto(data):
    """A STRING TensorProto of dims (1) holding one encoded image."""
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.STRING
    proto.dims.append(1)
    proto.string_data.append(data)
    return proto


def int32_proto(values, dims=None):
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.INT32
    values = [int(v) for v in np.atleast_1d(values)]
    if dims:
        proto.dims.extend(dims)
    proto.int32_data.extend(values)
    return proto


def float_proto(values, dims=None):
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.FLOAT
    if dims:
        proto.dims.extend(dims)
    proto.float_data.extend(float(v) for v in np.atleast_1d(values))
    return proto


def tensor_protos_record(*protos):
    """The serialized TensorProtos holding `protos` in order."""
    record = caffe2_pb2.TensorProtos()
    record.protos.extend(protos)
    return record.SerializeToString()


def datum_record(label, encoded=None, pixels=None):
    """A serialized caffe Datum: `encoded` file bytes, or raw HWC uint8 `pixels` stored CHW."""
    datum = caffe_datum_pb2.Datum()
    datum.label = int(label)
    if encoded is not None:
        datum.data = encoded
        datum.encoded = True
    else:
        pixels = np.asarray(pixels, dtype=np.uint8)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        datum.height, datum.width, datum.channels = pixels.shape
        datum.data = np.ascontiguousarray(pixels.transpose(2, 0, 1)).tobytes()
    return datum.SerializeToString()


def encode_png(pixels):
    """PNG bytes of an (H, W) grey or (H, W, 3) BGR uint8 image (zlib level 6, no filtering)."""
    pixels = np.asarray(pixels, dtype=np.uint8)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    if pixels.ndim == 3:
        pixels = pixels[:, :, ::-1]  # PNG stores RGB
        colour_type = 2
    else:
        colour_type = 0
    height, width = pixels.shape[:2]
    rows = np.ascontiguousarray(pixels).reshape(height, -1)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)

    def chunk(tag, data):
        body = tag + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


class ProgressBar(object):
    """A one-line progress bar on stderr: ``label [#####.....] 50/100 1234.5/s``."""

    def __init__(self, total, label="", stream=None, width=30, enabled=True):
        self.total, self.label, self.width, self.enabled = total, label, width, enabled
        self.stream = stream or sys.stderr
        self.count = 0
        self.start = time.time()
        self._last_draw = 0.0

    def update(self, n=1):
        self.count += n
        now = time.time()
        if now - self._last_draw > 0.1 or self.count >= self.total:
            self._last_draw = now
            self._draw(now)

    def _draw(self, now):
        if not self.enabled:
            return
        done = int(self.width * self.count / max(self.total, 1))
        rate = self.count / max(now - self.start, 1e-9)
        self.stream.write(
            "\r%s [%s%s] %d/%d %.1f/s"
            % (self.label, "#" * done, "." * (self.width - done), self.count, self.total, rate)
        )
        self.stream.flush()

    def close(self):
        if self.enabled:
            if self.count < self.total:
                self._draw(time.time())
            self.stream.write("\n")
            self.stream.flush()


class DBWriter(object):
    """Writes (key, value) records to a new DB, committing every `commit_every` records."""

    def __init__(self, db_type, path, commit_every=1000):
        from caffe2.python import caffe2_pybind11_state as C

        self.db = C.create_db(db_type, path, C.Mode.new)
        if self.db is None:
            raise ValueError(
                "unknown db type %r (known: %s)" % (db_type, ", ".join(C.registered_dbs()))
            )
        self.txn = self.db.new_transaction()
        self.commit_every, self.pending = commit_every, 0

    def put(self, key, value):
        self.txn.put(key, value)
        self.pending += 1
        if self.pending >= self.commit_every:
            self.txn.commit()
            self.pending = 0

    def close(self):
        self.txn.commit()
        del self.txn
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
