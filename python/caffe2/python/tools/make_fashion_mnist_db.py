"""make_fashion_mnist_db: Debian's dataset-fashion-mnist to train and test DBs.

Usage::

    python3 -m caffe2.python.tools.make_fashion_mnist_db --output_dir DIR \\
        [--form raw|png|datum|all] [--db lmdb|leveldb] \\
        [--data_dir /usr/share/datasets/fashion-mnist] [--limit N] [--no_channel_first]

Writes ``DIR/fashion_mnist_{train,test}_{form}_{db}`` (keys ``%08d``, the item index) in one of
three forms:

* ``raw``: TensorProtos ``[data BYTE (1, 28, 28), label INT32 (no dims)]`` - the MNIST tutorial
  format that ``TensorProtosDBInput`` batches to uint8 ``(N, 1, 28, 28)`` and int32 ``(N)``
  (``--no_channel_first`` stores ``(28, 28, 1)``);
* ``png``: TensorProtos ``[image STRING (1) PNG bytes, label INT32 (1)]`` for ``ImageInput``;
* ``datum``: caffe ``Datum`` records holding PNG bytes (``encoded``), what ``resnet50_trainer.py``
  reads with ``use_caffe_datum=1``.

The ten classes are 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt,
7 Sneaker, 8 Bag, 9 Ankle boot. ``--limit`` keeps the first N images of each split. PNG encoding
needs nothing beyond NumPy. A progress bar goes to stderr (``--quiet`` turns it off).
"""
import argparse
import gzip
import os
import struct
import sys

import numpy as np

from caffe2.python.tools.db_writer import (
    DBWriter,
    ProgressBar,
    bytes_proto,
    datum_record,
    encode_png,
    int32_proto,
    string_proto,
    tensor_protos_record,
)

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
SPLITS = {"train": "train", "test": "t10k"}
FORMS = ("raw", "png", "datum")
CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


def _open(path):
    if os.path.exists(path):
        return open(path, "rb")
    if os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rb")
    raise IOError(
        "%s(.gz) not found; install Debian's dataset-fashion-mnist or pass --data_dir" % path
    )


def read_idx(path):
    """An IDX file (the MNIST format) as a uint8 array."""
    with _open(path) as f:
        magic = f.read(4)
        if len(magic) != 4 or magic[:2] != b"\x00\x00" or magic[2] != 0x08:
            raise ValueError("%s is not an unsigned-byte IDX file" % path)
        ndim = magic[3]
        dims = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
        data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != int(np.prod(dims)):
        raise ValueError(
            "%s: expected %d bytes of data, found %d" % (path, int(np.prod(dims)), data.size)
        )
    return data.reshape(dims)


def load_split(data_dir, split):
    prefix = os.path.join(data_dir, SPLITS[split])
    images = read_idx(prefix + "-images-idx3-ubyte")
    labels = read_idx(prefix + "-labels-idx1-ubyte")
    if len(images) != len(labels):
        raise ValueError("%s: %d images but %d labels" % (prefix, len(images), len(labels)))
    return images, labels


def make_record(image, label, form, channel_first=True):
    if form == "raw":
        dims = (1, 28, 28) if channel_first else (28, 28, 1)
        return tensor_protos_record(bytes_proto(image, dims=dims), int32_proto(label))
    png = encode_png(image)
    if form == "png":
        return tensor_protos_record(string_proto(png), int32_proto(label, dims=[1]))
    return datum_record(label, encoded=png)


def db_path(output_dir, split, form, db_type):
    return os.path.join(output_dir, "fashion_mnist_%s_%s_%s" % (split, form, db_type))


def make_fashion_mnist_db(
    output_dir,
    forms=FORMS,
    db_type="lmdb",
    data_dir=DEFAULT_DATA_DIR,
    limit=None,
    channel_first=True,
    quiet=False,
):
    """Writes every (split, form) DB; returns {(split, form): path}."""
    if not os.path.isdir(output_dir):
        os.makedirs(output_dir)
    written = {}
    for split in ("train", "test"):
        images, labels = load_split(data_dir, split)
        if limit:
            images, labels = images[:limit], labels[:limit]
        for form in forms:
            path = db_path(output_dir, split, form, db_type)
            bar = ProgressBar(len(images), "%s %s" % (split, form), enabled=not quiet)
            with DBWriter(db_type, path) as writer:
                for index in range(len(images)):
                    writer.put(
                        b"%08d" % index,
                        make_record(images[index], labels[index], form, channel_first),
                    )
                    bar.update()
            bar.close()
            written[(split, form)] = path
    return written


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="make_fashion_mnist_db",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--output_dir", required=True, help="folder for the DBs")
    p.add_argument(
        "--form", default="all", choices=FORMS + ("all",), help="record form (default all)"
    )
    p.add_argument("--db", default="lmdb", help="DB type: lmdb (default) or leveldb")
    p.add_argument("--data_dir", default=DEFAULT_DATA_DIR, help="folder of the IDX files")
    p.add_argument("--limit", type=int, default=None, help="keep the first N images of each split")
    p.add_argument("--no_channel_first", action="store_true", help="raw form as (28, 28, 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    forms = FORMS if args.form == "all" else (args.form,)
    written = make_fashion_mnist_db(
        args.output_dir,
        forms,
        args.db,
        args.data_dir,
        args.limit,
        not args.no_channel_first,
        args.quiet,
    )
    if not args.quiet:
        for (split, form), path in sorted(written.items()):
            sys.stderr.write("%s %s: %s\n" % (split, form, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
