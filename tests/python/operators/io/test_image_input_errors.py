"""ImageInput on bad input: undecodable images, bad records and labels, a missing DB and bad
arguments, each an error naming the DB, the record key or the argument; and its shape inference."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (
    bytes_proto,
    datum_record,
    encode_png,
    float_proto,
    int32_proto,
    string_proto,
    tensor_protos_record,
)

from image_input_util import label_records, png_records, random_image, run_image_input, write_db


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def test_undecodable_image_names_db_and_key_and_reading_goes_on(tmp_path):
    rng = np.random.RandomState(14)
    good = png_records([random_image(rng, 40, 40) for _ in range(4)])
    bad = tensor_protos_record(string_proto(b"GIF89a broken"), int32_proto(0))
    path = write_db(tmp_path, good[:2] + [bad] + good[2:3] + good[3:])
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )
    net = core.Net("bad_image_net")
    net.Proto().op.extend(
        [
            core.CreateOperator(
                "ImageInput",
                ["reader"],
                ["data", "label"],
                batch_size=2,
                scale=32,
                crop=32,
                decode_threads=2,
            )
        ]
    )
    workspace.CreateNet(net)
    workspace.RunNet(net.Name())
    with pytest.raises(RuntimeError) as err:
        workspace.RunNet(net.Name())
    msg = str(err.value)
    assert "[ImageInput]" in msg and "'00000002'" in msg and path in msg
    assert "could not be decoded" in msg
    workspace.RunNet(net.Name())  # records 4, 0
    assert workspace.FetchBlob("data").shape == (2, 32, 32, 3)


@pytest.mark.parametrize(
    "value,match",
    [
        (b"\xff\xfe garbage", "not a serialized TensorProtos"),
        (tensor_protos_record(int32_proto(1)), "holds 1 tensor protos; expected 2"),
        (tensor_protos_record(float_proto([1.0]), int32_proto(1)), "image proto has type FLOAT"),
        (
            tensor_protos_record(bytes_proto(np.zeros((4, 4, 2), np.uint8)), int32_proto(1)),
            "1 or 3 channels",
        ),
        (
            tensor_protos_record(
                string_proto(encode_png(np.zeros((40, 40), np.uint8))), int32_proto([1, 2])
            ),
            "one INT32 or FLOAT value",
        ),
    ],
)
def test_bad_records(tmp_path, value, match):
    path = write_db(tmp_path, [value])
    with pytest.raises(RuntimeError, match=match) as err:
        run_image_input(path, 1, scale=32, crop=32)
    assert "'00000000'" in str(err.value) and path in str(err.value)


def png_claiming(width, height):
    """A PNG whose header claims width x height (the pixel data is a single empty row)."""
    import struct
    import zlib

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00"))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    "value,match",
    [
        (
            tensor_protos_record(
                string_proto(encode_png(np.zeros((40, 40), np.uint8))), int32_proto(-7)
            ),
            r"label -7 is not a class index \(>= 0\)",
        ),
        (
            tensor_protos_record(string_proto(png_claiming(100000, 100000)), int32_proto(1)),
            "could not be decoded",
        ),
    ],
)
def test_nonsense_labels_and_headers_name_the_record(tmp_path, value, match):
    path = write_db(tmp_path, [value])
    with pytest.raises(RuntimeError, match=match) as err:
        run_image_input(path, 1, scale=32, crop=32)
    assert (
        "'00000000'" in str(err.value)
        and path in str(err.value)
        and "[ImageInput]" in str(err.value)
    )
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["still"], shape=[1]))


def test_datum_label_out_of_range(tmp_path):
    path = write_db(tmp_path, [datum_record(12, pixels=np.zeros((4, 4, 1), np.uint8))])
    with pytest.raises(
        RuntimeError, match=r"'00000000'.*label 12 is not a class index in \[0, num_labels = 10\)"
    ):
        run_image_input(path, 1, scale=4, crop=4, use_caffe_datum=1, num_labels=10, color=0)


def test_bad_datum_record(tmp_path):
    path = write_db(tmp_path, [datum_record(1, pixels=np.zeros((4, 4, 2), np.uint8))])
    with pytest.raises(RuntimeError, match="'00000000'.*1 or 3 channels"):
        run_image_input(path, 1, scale=32, crop=32, use_caffe_datum=1)


def test_missing_db(tmp_path):
    op = core.CreateOperator(
        "ImageInput",
        [],
        ["data", "label"],
        batch_size=1,
        scale=32,
        crop=32,
        db=str(tmp_path / "absent"),
        db_type="lmdb",
    )
    with pytest.raises(RuntimeError, match="absent"):
        workspace.RunOperatorOnce(op)


@pytest.mark.parametrize(
    "args,match",
    [
        (dict(scale=32), "crop must be > 0"),
        (dict(scale=16, crop=32), "must be >= crop"),
        (dict(scale=32, minsize=32, crop=32), "exactly one of scale and minsize"),
        (dict(crop=32), "exactly one of scale and minsize"),
        (dict(random_scale=[40, 32], crop=32), "max >= min"),
        (dict(scale=32, crop=32, output_type="int8"), "output_type"),
        (dict(scale=32, crop=32, mean_per_channel=[1.0, 2.0]), "1 or 3 values"),
        (
            dict(scale=32, crop=32, mean_per_channel=[1.0, 2.0, 3.0], std_per_channel=[1.0]),
            "same length",
        ),
        (dict(scale=32, crop=32, label_type=1), "num_labels"),
        (
            dict(scale=32, crop=32, label_type=1, num_labels=3, use_caffe_datum=1),
            "label_type 0 or 4",
        ),
        (dict(scale=32, crop=32, batch_size=0), "batch_size must be > 0"),
    ],
)
def test_bad_arguments(args, match):
    kwargs = dict(batch_size=1)
    kwargs.update(args)
    workspace.FeedBlob("reader", np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match=match):
        workspace.RunOperatorOnce(
            core.CreateOperator("ImageInput", ["reader"], ["d", "l"], **kwargs)
        )


# The CUDA op (with and without the GPU transform) is checked in test_image_input.py.


def test_shape_inference_matches_the_outputs(tmp_path):
    rng = np.random.RandomState(16)
    images = [random_image(rng, 34, 34) for _ in range(2)]
    protos = [[int32_proto([i]), float_proto([i, i])] for i in range(2)]
    path = write_db(tmp_path, label_records(images, protos))
    args = dict(
        scale=32,
        crop=30,
        is_test=1,
        label_type=1,
        num_labels=3,
        output_sizes=[2],
        output_type="float16",
    )
    outs = run_image_input(path, 2, outputs=("data", "label", "extra"), **args)
    net = core.Net("infer")
    net.ImageInput(["reader"], ["data", "label", "extra"], batch_size=2, **args)
    shapes, types = workspace.InferShapesAndTypes([net], {"reader": []})
    for name, value in zip(["data", "label", "extra"], outs):
        assert shapes[name] == list(value.shape), name
    assert types["data"] == caffe2_pb2.TensorProto.FLOAT16
    assert types["label"] == caffe2_pb2.TensorProto.INT32
