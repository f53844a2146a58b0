"""Helpers of the ImageInput tests: random images, DB records and DBs, running the op, and an
OpenCV/numpy reference of the test-mode transform."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (
    DBWriter,
    encode_png,
    int32_proto,
    string_proto,
    tensor_protos_record,
)

cv2 = pytest.importorskip("cv2")  # the reference resizes with OpenCV (Debian: python3-opencv)

SIZES = [(40, 60), (60, 40), (50, 50), (33, 71), (64, 64), (45, 45)]


def random_image(rng, height, width, channels=3):
    # Smooth structure plus noise, so resizing and cropping errors show.
    y, x = np.mgrid[0:height, 0:width]
    base = (
        np.sin(x / 5.0)[..., None] * 60
        + np.cos(y / 7.0)[..., None] * 60
        + 128
        + rng.randint(-40, 40, size=(height, width, channels))
    )
    image = np.clip(base, 0, 255).astype(np.uint8)
    return image if channels == 3 else image[:, :, 0]


def int64_proto(values):
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.INT64
    proto.int64_data.extend(int(v) for v in values)
    return proto


def write_db(tmp_path, values, name="images"):
    path = str(tmp_path / name)
    with DBWriter("lmdb", path) as writer:
        for i, value in enumerate(values):
            writer.put(b"%08d" % i, value)
    return path


def png_records(images, labels=None):
    labels = range(len(images)) if labels is None else labels
    return [
        tensor_protos_record(string_proto(encode_png(im)), int32_proto(l, dims=[1]))
        for im, l in zip(images, labels)
    ]


def run_image_input(path, batch_size, outputs=("data", "label"), seed=None, runs=1, **kwargs):
    # A fresh workspace for each configuration.
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )
    op = core.CreateOperator(
        "ImageInput", ["reader"], list(outputs), batch_size=batch_size, **kwargs
    )
    if seed is not None:
        op.device_option.random_seed = seed
    net = core.Net("image_net")
    net.Proto().op.extend([op])
    workspace.CreateNet(net, overwrite=True)
    results = []
    for _ in range(runs):
        workspace.RunNet(net.Name())
        results.append([workspace.FetchBlob(o).copy() for o in outputs])
    return results if runs > 1 else results[0]


def reference(image, crop, scale=-1, minsize=-1, warp=False, box=None, mean=0.0, std=1.0):
    """Test-mode ImageInput in numpy/OpenCV: box, short-side resize, centre crop, normalize."""
    if box is not None:
        y, x, h, w = box
        if (
            min(box) >= 0
            and h > 0
            and w > 0
            and y + h <= image.shape[0]
            and x + w <= image.shape[1]
        ):
            image = image[y : y + h, x : x + w]
    rows, cols = image.shape[:2]
    target = scale if scale > 0 else minsize
    if warp:
        new_rows = new_cols = target
    elif rows <= cols:
        new_rows, new_cols = target, cols * target // rows
    else:
        new_rows, new_cols = rows * target // cols, target
    if (scale > 0 and (new_rows, new_cols) != (rows, cols)) or (
        scale <= 0 and min(rows, cols) < target
    ):
        image = cv2.resize(image, (new_cols, new_rows), interpolation=cv2.INTER_AREA)
    rows, cols = image.shape[:2]
    y0, x0 = (rows - crop) // 2, (cols - crop) // 2
    out = image[y0 : y0 + crop, x0 : x0 + crop].astype(np.float32)
    if out.ndim == 2:
        out = out[:, :, None]
    return (out - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)


def check_against_reference(data, images, tol=1.0, **ref_kwargs):
    for item, image in zip(data, images):
        want = reference(image, **ref_kwargs)
        assert item.shape == want.shape
        np.testing.assert_allclose(item.astype(np.float32), want, atol=tol, rtol=0)


def label_records(images, label_protos):
    return [
        tensor_protos_record(string_proto(encode_png(im)), *protos)
        for im, protos in zip(images, label_protos)
    ]
