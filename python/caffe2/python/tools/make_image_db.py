"""make_image_db: image files to an LMDB or LevelDB that ImageInput reads.

Usage::

    python3 -m caffe2.python.tools.make_image_db --input_folder IMAGES \\
        --output_db_name train_lmdb [--list_file list.txt] [--db lmdb|leveldb] [--shuffle] \\
        [--raw] [--scale 256] [--warp] [--color 0|1] [--caffe_datum]

Inputs, one of:

* ``--list_file``: lines ``<path> <label>``; paths are relative to ``--input_folder`` (or absolute).
* a folder tree: ``--input_folder`` holds one sub-folder per class; classes are numbered 0, 1, ...
  in sorted folder-name order and the mapping is printed (and written to ``<output>.labels.txt``).

Records (keys ``%08d_<file name>``, in list order, or shuffled with seed 1701 by ``--shuffle``):

* default: TensorProtos ``[image STRING (1): the encoded file, label INT32 (1)]``;
* ``--raw``: TensorProtos ``[image BYTE (H, W, C) BGR pixels, label INT32 (1)]``, resized so the
  short side is ``--scale`` (default 256; ``--warp`` makes it ``scale x scale``), grey when
  ``--color 0``;
* ``--caffe_datum``: caffe ``Datum`` records instead (encoded, or raw CHW with ``--raw``), as
  Caffe's ``convert_imageset`` writes them and ``resnet50_trainer.py`` reads them
  (``use_caffe_datum=1``).

With an explicit ``--scale`` (or ``--warp``) encoded images are also resized, then re-encoded in
their own format. Decoding and resizing need OpenCV's Python module (Debian: python3-opencv);
storing files as they are does not. A progress bar goes to stderr (``--quiet`` turns it off).
"""
import argparse
import os
import random
import sys

import numpy as np

from caffe2.python.tools.db_writer import (
    DBWriter,
    ProgressBar,
    bytes_proto,
    datum_record,
    int32_proto,
    string_proto,
    tensor_protos_record,
)

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


def list_images(input_folder, list_file=None):
    """[(path, label)] from a list file, or from a folder with one sub-folder per class."""
    if list_file:
        items = []
        with open(list_file) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                parts = line.rsplit(None, 1)
                if len(parts) != 2:
                    raise ValueError(
                        "%s:%d: expected '<path> <label>', got %r" % (list_file, number, line)
                    )
                path, label = parts
                items.append((os.path.join(input_folder or "", path), int(label)))
        return items, None
    classes = sorted(
        d for d in os.listdir(input_folder) if os.path.isdir(os.path.join(input_folder, d))
    )
    if not classes:
        raise ValueError(
            "%s holds no class sub-folders (and no --list_file was given)" % input_folder
        )
    items = []
    for label, name in enumerate(classes):
        folder = os.path.join(input_folder, name)
        for file_name in sorted(os.listdir(folder)):
            if file_name.lower().endswith(IMAGE_EXTENSIONS):
                items.append((os.path.join(folder, file_name), label))
    return items, classes


def _cv2():
    try:
        import cv2
    except ImportError:
        sys.exit(
            "make_image_db: --raw and --scale need OpenCV's Python module "
            "(Debian package python3-opencv)"
        )
    return cv2


def resize_short_side(image, scale, warp):
    cv2 = _cv2()
    height, width = image.shape[:2]
    if warp:
        size = (scale, scale)
    elif height <= width:
        size = (width * scale // height, scale)
    else:
        size = (scale, height * scale // width)
    if size == (width, height):
        return image
    return cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)


def make_record(path, label, args):
    with open(path, "rb") as f:
        data = f.read()
    resize = args.raw or args.scale is not None or args.warp
    if resize:
        cv2 = _cv2()
        flags = cv2.IMREAD_COLOR if args.color else cv2.IMREAD_GRAYSCALE
        image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
        if image is None:
            raise ValueError("%s: not an image OpenCV can decode" % path)
        image = resize_short_side(image, args.scale or 256, args.warp)
        if not args.raw:
            ok, encoded = cv2.imencode(os.path.splitext(path)[1] or ".png", image)
            if not ok:
                raise ValueError("%s: OpenCV could not re-encode the resized image" % path)
            data = encoded.tobytes()
    if args.caffe_datum:
        if args.raw:
            return datum_record(label, pixels=image)
        return datum_record(label, encoded=data)
    if args.raw:
        if image.ndim == 2:
            image = image[:, :, None]
        return tensor_protos_record(bytes_proto(image), int32_proto(label, dims=[1]))
    return tensor_protos_record(string_proto(data), int32_proto(label, dims=[1]))


def make_image_db(args):
    items, classes = list_images(args.input_folder, args.list_file)
    if args.shuffle:
        random.Random(1701).shuffle(items)
    if classes:
        with open(args.output_db_name.rstrip("/") + ".labels.txt", "w") as f:
            for label, name in enumerate(classes):
                f.write("%d %s\n" % (label, name))
        if not args.quiet:
            sys.stderr.write(
                "classes: %s\n"
                % ", ".join("%d=%s" % (label, name) for label, name in enumerate(classes))
            )
    bar = ProgressBar(
        len(items), os.path.basename(args.output_db_name.rstrip("/")), enabled=not args.quiet
    )
    with DBWriter(args.db, args.output_db_name) as writer:
        for index, (path, label) in enumerate(items):
            key = "%08d_%s" % (index, os.path.basename(path))
            writer.put(key.encode(), make_record(path, label, args))
            bar.update()
    bar.close()
    return len(items)


def parser():
    p = argparse.ArgumentParser(
        prog="make_image_db",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--input_folder", default="", help="image root (or class folders without --list_file)"
    )
    p.add_argument("--list_file", default=None, help="lines '<path> <label>'")
    p.add_argument("--output_db_name", required=True, help="the DB to create")
    p.add_argument("--db", default="leveldb", help="DB type: lmdb or leveldb (default leveldb)")
    p.add_argument("--shuffle", action="store_true", help="shuffle the records (seed 1701)")
    p.add_argument("--raw", action="store_true", help="store decoded, resized BGR pixels")
    p.add_argument(
        "--scale", type=int, default=None, help="short side after resizing (raw default 256)"
    )
    p.add_argument("--warp", action="store_true", help="resize to scale x scale")
    p.add_argument("--color", type=int, default=1, help="1: BGR (default), 0: grey (with resizing)")
    p.add_argument("--caffe_datum", action="store_true", help="write caffe Datum records")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if not args.list_file and not args.input_folder:
        parser().error("give --list_file or --input_folder")
    count = make_image_db(args)
    if not args.quiet:
        sys.stderr.write("wrote %d records to %s (%s)\n" % (count, args.output_db_name, args.db))
    return 0


if __name__ == "__main__":
    sys.exit(main())
