"""ImageInput against an OpenCV/numpy reference in test mode, and its training-mode augmentation."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (DBWriter, bytes_proto, datum_record, encode_png,
                                           float_proto, int32_proto, string_proto,
                                           tensor_protos_record)

cv2 = pytest.importorskip("cv2")  # the reference resizes with OpenCV (Debian: python3-opencv)

SIZES = [(40, 60), (60, 40), (50, 50), (33, 71), (64, 64), (45, 45)]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def random_image(rng, height, width, channels=3):
    # Smooth structure plus noise, so resizing and cropping errors show.
    y, x = np.mgrid[0:height, 0:width]
    base = (np.sin(x / 5.0)[..., None] * 60 + np.cos(y / 7.0)[..., None] * 60 + 128
            + rng.randint(-40, 40, size=(height, width, channels)))
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
    return [tensor_protos_record(string_proto(encode_png(im)), int32_proto(l, dims=[1]))
            for im, l in zip(images, labels)]


def run_image_input(path, batch_size, outputs=("data", "label"), seed=None, runs=1, **kwargs):
    # A fresh workspace for each configuration.
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("CreateDB", [], ["reader"], db=path,
                                                  db_type="lmdb"))
    op = core.CreateOperator("ImageInput", ["reader"], list(outputs), batch_size=batch_size,
                             **kwargs)
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
        if min(box) >= 0 and h > 0 and w > 0 and y + h <= image.shape[0] and x + w <= image.shape[1]:
            image = image[y:y + h, x:x + w]
    rows, cols = image.shape[:2]
    target = scale if scale > 0 else minsize
    if warp:
        new_rows = new_cols = target
    elif rows <= cols:
        new_rows, new_cols = target, cols * target // rows
    else:
        new_rows, new_cols = rows * target // cols, target
    if (scale > 0 and (new_rows, new_cols) != (rows, cols)) or (scale <= 0 and min(rows, cols) < target):
        image = cv2.resize(image, (new_cols, new_rows), interpolation=cv2.INTER_AREA)
    rows, cols = image.shape[:2]
    y0, x0 = (rows - crop) // 2, (cols - crop) // 2
    out = image[y0:y0 + crop, x0:x0 + crop].astype(np.float32)
    if out.ndim == 2:
        out = out[:, :, None]
    return (out - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)


def check_against_reference(data, images, tol=1.0, **ref_kwargs):
    for item, image in zip(data, images):
        want = reference(image, **ref_kwargs)
        assert item.shape == want.shape
        np.testing.assert_allclose(item.astype(np.float32), want, atol=tol, rtol=0)


TEST_MODE_CASES = [
    dict(args=dict(scale=32, crop=28), ref=dict(scale=32, crop=28)),
    dict(args=dict(scale=32, crop=32, warp=1), ref=dict(scale=32, crop=32, warp=True)),
    dict(args=dict(minsize=48, crop=40), ref=dict(minsize=48, crop=40)),
    dict(args=dict(random_scale=[48, 48], crop=40), ref=dict(minsize=48, crop=40)),
    dict(args=dict(minsize=52, crop=44, warp=1), ref=dict(minsize=52, crop=44, warp=True)),
    dict(args=dict(scale=40, crop=24, mean=128.0, std=64.0),
         ref=dict(scale=40, crop=24, mean=128.0, std=64.0)),
    dict(args=dict(scale=36, crop=30, mean_per_channel=[100.0, 110.0, 120.0],
                   std_per_channel=[50.0, 60.0, 70.0]),
         ref=dict(scale=36, crop=30, mean=[100.0, 110.0, 120.0], std=[50.0, 60.0, 70.0])),
    dict(args=dict(scale=30, crop=28, bounding_ymin=5, bounding_xmin=3, bounding_height=30,
                   bounding_width=35),
         ref=dict(scale=30, crop=28, box=(5, 3, 30, 35))),
]


@pytest.mark.parametrize("case", TEST_MODE_CASES, ids=lambda c: ",".join(sorted(c["args"])))
@pytest.mark.parametrize("threads", [1, 3])
def test_test_mode_matches_reference(tmp_path, case, threads):
    rng = np.random.RandomState(0)
    images = [random_image(rng, h, w) for h, w in SIZES]
    path = write_db(tmp_path, png_records(images))
    data, label = run_image_input(path, len(images), is_test=1, decode_threads=threads,
                                  **case["args"])
    std = np.min(case["ref"].get("std", 1.0))
    check_against_reference(data, images, tol=1.0 / std + 1e-4, **case["ref"])
    assert data.dtype == np.float32
    np.testing.assert_array_equal(label, np.arange(len(images)))
    assert label.dtype == np.int32


@pytest.mark.parametrize("color", [0, 1])
def test_grey_and_colour_conversion_of_encoded_images(tmp_path, color):
    rng = np.random.RandomState(1)
    images = [random_image(rng, 40, 50), random_image(rng, 50, 40, channels=1)]
    path = write_db(tmp_path, png_records(images))
    data, _ = run_image_input(path, 2, is_test=1, scale=32, crop=30, color=color)
    flags = cv2.IMREAD_COLOR if color else cv2.IMREAD_GRAYSCALE
    decoded = [cv2.imdecode(np.frombuffer(encode_png(im), np.uint8), flags) for im in images]
    assert data.shape == (2, 30, 30, 3 if color else 1)
    check_against_reference(data, decoded, scale=32, crop=30)


@pytest.mark.parametrize("output_type", ["float16", 12])
def test_float16_output(tmp_path, output_type):
    rng = np.random.RandomState(2)
    images = [random_image(rng, h, w) for h, w in SIZES[:3]]
    path = write_db(tmp_path, png_records(images))
    data, _ = run_image_input(path, 3, is_test=1, scale=32, crop=28, mean=128.0, std=128.0,
                              output_type=output_type)
    assert data.dtype == np.float16
    check_against_reference(data, images, tol=1.0 / 128 + 1e-3, scale=32, crop=28, mean=128.0,
                            std=128.0)


def test_raw_byte_images(tmp_path):
    rng = np.random.RandomState(3)
    colour = random_image(rng, 40, 44)
    grey = random_image(rng, 38, 36, channels=1)
    records = [tensor_protos_record(bytes_proto(colour), int32_proto(0)),
               tensor_protos_record(bytes_proto(grey), int32_proto(1)),
               tensor_protos_record(bytes_proto(grey[:, :, None]), int32_proto(2))]
    path = write_db(tmp_path, records)
    data, _ = run_image_input(path, 3, is_test=1, scale=34, crop=32)
    as_colour = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    check_against_reference(data, [colour, as_colour, as_colour], scale=34, crop=32)
    data, _ = run_image_input(path, 3, is_test=1, scale=34, crop=32, color=0)
    check_against_reference(data, [cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), grey, grey],
                            scale=34, crop=32)


@pytest.mark.parametrize("encoded", [True, False])
def test_caffe_datum_records(tmp_path, encoded):
    rng = np.random.RandomState(4)
    images = [random_image(rng, h, w) for h, w in SIZES[:4]]
    records = [datum_record(10 + i, encoded=encode_png(im)) if encoded else
               datum_record(10 + i, pixels=im) for i, im in enumerate(images)]
    path = write_db(tmp_path, records)
    data, label = run_image_input(path, 4, is_test=1, scale=32, crop=28, use_caffe_datum=1,
                                  mean=128.0, std=128.0)
    check_against_reference(data, images, tol=1.0 / 128 + 1e-4, scale=32, crop=28, mean=128.0,
                            std=128.0)
    np.testing.assert_array_equal(label, [10, 11, 12, 13])


def test_per_record_bounding_box_overrides_the_argument(tmp_path):
    rng = np.random.RandomState(5)
    images = [random_image(rng, 60, 60) for _ in range(3)]
    boxes = [(4, 6, 40, 30), (0, 0, 60, 60), (50, 50, 40, 40)]  # the last does not fit: ignored
    records = [tensor_protos_record(string_proto(encode_png(im)), int32_proto(i),
                                    int32_proto(box, dims=[4]))
               for i, (im, box) in enumerate(zip(images, boxes))]
    path = write_db(tmp_path, records)
    data, _ = run_image_input(path, 3, is_test=1, scale=28, crop=28, bounding_ymin=1,
                              bounding_xmin=1, bounding_height=20, bounding_width=20)
    for item, image, box in zip(data, images, boxes):
        np.testing.assert_allclose(item, reference(image, 28, scale=28, box=box), atol=1.0)


def label_records(images, label_protos):
    return [tensor_protos_record(string_proto(encode_png(im)), *protos)
            for im, protos in zip(images, label_protos)]


def test_label_types_and_extra_outputs(tmp_path):
    rng = np.random.RandomState(6)
    images = [random_image(rng, 34, 34) for _ in range(3)]
    cases = [
        (dict(label_type=0), [[float_proto(0.5)], [float_proto(1.5)], [float_proto(2.5)]],
         np.float32, [0.5, 1.5, 2.5]),
        (dict(label_type=1, num_labels=5), [[int32_proto([0, 3])], [int32_proto([4])],
                                            [int32_proto([])]],
         np.int32, [[1, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]),
        (dict(label_type=2, num_labels=3), [[float_proto([.1, .2, .3])], [float_proto([1, 2, 3])],
                                            [float_proto([0, 0, 1])]],
         np.float32, [[.1, .2, .3], [1, 2, 3], [0, 0, 1]]),
        (dict(label_type=2, num_labels=2), [[int32_proto([1, 2])], [int32_proto([3, 4])],
                                            [int32_proto([5, 6])]],
         np.int32, [[1, 2], [3, 4], [5, 6]]),
        (dict(label_type=3, num_labels=4),
         [[int32_proto([1, 2]), float_proto([.5, .25])], [int32_proto([0]), float_proto([2])],
          [int32_proto([3]), float_proto([1])]],
         np.float32, [[0, .5, .25, 0], [2, 0, 0, 0], [0, 0, 0, 1]]),
        (dict(label_type=4), [[int32_proto(7), float_proto(0.3)], [int32_proto(8), float_proto(1)],
                              [int32_proto(9), float_proto(2)]],
         np.int32, [7, 8, 9]),
    ]
    for i, (args, protos, dtype, want) in enumerate(cases):
        path = write_db(tmp_path, label_records(images, protos), name="labels%d" % i)
        _, label = run_image_input(path, 3, is_test=1, scale=32, crop=32, **args)
        assert label.dtype == dtype, args
        np.testing.assert_allclose(label, np.array(want, dtype), rtol=1e-6, err_msg=str(args))


def test_extra_outputs_with_their_types(tmp_path):
    rng = np.random.RandomState(7)
    images = [random_image(rng, 34, 34) for _ in range(2)]
    protos = [[int32_proto(i), float_proto([i, i + .5]), int32_proto([i * 3]),
               int64_proto([2 ** 40 + i, i, -i])] for i in range(2)]
    path = write_db(tmp_path, label_records(images, protos))
    outs = run_image_input(path, 2, outputs=("data", "label", "f", "i", "l"), is_test=1, scale=32,
                           crop=32, output_sizes=[2, 1, 3])
    _, label, f, i32, i64 = outs
    np.testing.assert_array_equal(label, [0, 1])
    assert f.dtype == np.float32 and f.shape == (2, 2)
    np.testing.assert_allclose(f, [[0, .5], [1, 1.5]])
    assert i32.dtype == np.int32 and i32.shape == (2, 1)
    np.testing.assert_array_equal(i32, [[0], [3]])
    assert i64.dtype == np.int64 and i64.shape == (2, 3)
    np.testing.assert_array_equal(i64, [[2 ** 40, 0, 0], [2 ** 40 + 1, 1, -1]])


def test_extra_outputs_with_weighted_labels_start_after_the_weights(tmp_path):
    rng = np.random.RandomState(8)
    images = [random_image(rng, 34, 34)]
    protos = [[int32_proto([1]), float_proto([.5]), float_proto([9.0])]]
    path = write_db(tmp_path, label_records(images, protos))
    _, label, extra = run_image_input(path, 1, outputs=("data", "label", "e"), is_test=1,
                                      scale=32, crop=32, label_type=3, num_labels=2)
    np.testing.assert_allclose(label, [[0, .5]])
    np.testing.assert_allclose(extra, [[9.0]])


def test_zero_input_form_opens_its_own_reader(tmp_path):
    rng = np.random.RandomState(9)
    images = [random_image(rng, 40, 40) for _ in range(2)]
    path = write_db(tmp_path, png_records(images))
    op = core.CreateOperator("ImageInput", [], ["data", "label"], batch_size=2, scale=32, crop=32,
                             is_test=1, db=path, db_type="lmdb")
    workspace.RunOperatorOnce(op)
    check_against_reference(workspace.FetchBlob("data"), images, scale=32, crop=32)


# ---- training mode ----

def test_mirror_flips_some_images_and_only_mirrors(tmp_path):
    rng = np.random.RandomState(10)
    images = [random_image(rng, 32, 32) for _ in range(16)]
    path = write_db(tmp_path, png_records(images))
    data, _ = run_image_input(path, 16, scale=32, crop=32, mirror=1, seed=3)
    flips = []
    for item, image in zip(data, images):
        plain = image.astype(np.float32)
        if np.array_equal(item, plain):
            flips.append(False)
        else:
            np.testing.assert_array_equal(item, plain[:, ::-1])
            flips.append(True)
    assert any(flips) and not all(flips)


def test_training_crop_is_a_window_of_the_resized_image(tmp_path):
    rng = np.random.RandomState(11)
    images = [random_image(rng, 40, 52) for _ in range(6)]
    path = write_db(tmp_path, png_records(images))
    data, _ = run_image_input(path, 6, scale=40, crop=30, seed=5)
    offsets = set()
    for item, image in zip(data, images):
        windows = np.lib.stride_tricks.sliding_window_view(image, (30, 30, 3))[:, :, 0]
        hits = np.argwhere((windows == item.astype(np.uint8)).all(axis=(2, 3, 4)))
        assert len(hits) >= 1
        offsets.add(tuple(hits[0]))
    assert len(offsets) > 1


@pytest.mark.parametrize("args", [
    dict(color_jitter=1),
    dict(color_jitter=1, img_saturation=0.8, img_brightness=0.1, img_contrast=0.6),
    dict(color_lighting=1, color_lighting_std=0.5),
    dict(scale_jitter_type=1),
    dict(random_scale=[32, 64]),
    dict(mirror=1, color_jitter=1, color_lighting=1, scale_jitter_type=1, random_scale=[34, 48]),
], ids=lambda a: ",".join(sorted(a)))
def test_training_augmentations_shapes_and_ranges(tmp_path, args):
    rng = np.random.RandomState(12)
    images = [random_image(rng, h, w) for h, w in SIZES]
    path = write_db(tmp_path, png_records(images))
    kwargs = dict(crop=32, mean=128.0, std=128.0)
    if "random_scale" not in args:
        kwargs["scale"] = 34
    kwargs.update(args)
    data, label = run_image_input(path, len(images), seed=1, **kwargs)
    assert data.shape == (len(images), 32, 32, 3) and data.dtype == np.float32
    assert np.isfinite(data).all()
    jitter = args.get("color_jitter")
    bound = (255 * 1.8 ** 3 / 128) if jitter else (255 / 128 + 0.05)
    assert data.min() >= -bound and data.max() <= bound
    np.testing.assert_array_equal(label, np.arange(len(images)))
    test_data, _ = run_image_input(path, len(images), is_test=1, **dict(kwargs, **{
        k: v for k, v in [("scale", 34)] if "random_scale" not in args}))
    assert not np.allclose(data, test_data)


def test_colour_jitter_keeps_grey_pixels_grey_under_saturation(tmp_path):
    grey = np.full((32, 32, 3), 90, np.uint8)
    path = write_db(tmp_path, png_records([grey] * 4))
    data, _ = run_image_input(path, 4, scale=32, crop=32, color_jitter=1, img_brightness=0.0,
                              img_contrast=0.0, seed=2)
    np.testing.assert_allclose(data, 90.0, atol=1e-3)


def test_seeded_training_batches_are_reproducible_whatever_the_threads(tmp_path):
    rng = np.random.RandomState(13)
    images = [random_image(rng, h, w) for h, w in SIZES]
    path = write_db(tmp_path, png_records(images))
    args = dict(scale=36, crop=30, mirror=1, color_jitter=1, color_lighting=1, seed=42, runs=2)
    first = run_image_input(path, 6, decode_threads=1, **args)
    second = run_image_input(path, 6, decode_threads=4, **args)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(first[0][0], first[1][0])  # two batches differ


def test_a_skipped_reader_augments_each_record_as_the_uninterrupted_run(tmp_path):
    # A record's random draws come from the op's seed and the record's read index in the reader
    # (core/db/db_reader.h): a run resumed after DBReaderSkip gets the batches the uninterrupted run
    # got at those positions, also across a wrap-around of the DB.
    rng = np.random.RandomState(5)
    images = [random_image(rng, h, w) for h, w in SIZES]
    path = write_db(tmp_path, png_records(images))
    args = dict(scale=36, crop=30, mirror=1, color_jitter=1, color_lighting=1, scale_jitter_type=1)
    straight = run_image_input(path, 4, seed=9, runs=4, **args)
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb"))
    workspace.RunOperatorOnce(core.CreateOperator("DBReaderSkip", ["reader"], [], num_records=2 * 4))
    op = core.CreateOperator("ImageInput", ["reader"], ["data", "label"], batch_size=4, **args)
    op.device_option.random_seed = 9
    net = core.Net("resumed")
    net.Proto().op.extend([op])
    workspace.CreateNet(net)
    for expected in straight[2:]:
        workspace.RunNet(net.Name())
        np.testing.assert_array_equal(workspace.FetchBlob("data"), expected[0])
        np.testing.assert_array_equal(workspace.FetchBlob("label"), expected[1])
    # Image 0 comes again at read index 6 (batch 1, item 2), augmented differently: the draws follow
    # the place in the stream, not the record.
    assert straight[1][1][2] == 0
    assert not np.array_equal(straight[0][0][0], straight[1][0][2])

# ---- bad input ----

def test_undecodable_image_names_db_and_key_and_reading_goes_on(tmp_path):
    rng = np.random.RandomState(14)
    good = png_records([random_image(rng, 40, 40) for _ in range(4)])
    bad = tensor_protos_record(string_proto(b"GIF89a broken"), int32_proto(0))
    path = write_db(tmp_path, good[:2] + [bad] + good[2:3] + good[3:])
    workspace.RunOperatorOnce(core.CreateOperator("CreateDB", [], ["reader"], db=path,
                                                  db_type="lmdb"))
    net = core.Net("bad_image_net")
    net.Proto().op.extend([core.CreateOperator("ImageInput", ["reader"], ["data", "label"],
                                               batch_size=2, scale=32, crop=32, decode_threads=2)])
    workspace.CreateNet(net)
    workspace.RunNet(net.Name())
    with pytest.raises(RuntimeError) as err:
        workspace.RunNet(net.Name())
    msg = str(err.value)
    assert "[ImageInput]" in msg and "'00000002'" in msg and path in msg
    assert "could not be decoded" in msg
    workspace.RunNet(net.Name())  # records 4, 0
    assert workspace.FetchBlob("data").shape == (2, 32, 32, 3)


@pytest.mark.parametrize("value,match", [
    (b"\xff\xfe garbage", "not a serialized TensorProtos"),
    (tensor_protos_record(int32_proto(1)), "holds 1 tensor protos; expected 2"),
    (tensor_protos_record(float_proto([1.0]), int32_proto(1)), "image proto has type FLOAT"),
    (tensor_protos_record(bytes_proto(np.zeros((4, 4, 2), np.uint8)), int32_proto(1)),
     "1 or 3 channels"),
    (tensor_protos_record(string_proto(encode_png(np.zeros((40, 40), np.uint8))),
                          int32_proto([1, 2])), "one INT32 or FLOAT value"),
])
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
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00"))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("value,match", [
    (tensor_protos_record(string_proto(encode_png(np.zeros((40, 40), np.uint8))), int32_proto(-7)),
     r"label -7 is not a class index \(>= 0\)"),
    (tensor_protos_record(string_proto(png_claiming(100000, 100000)), int32_proto(1)), "could not be decoded"),
])
def test_nonsense_labels_and_headers_name_the_record(tmp_path, value, match):
    path = write_db(tmp_path, [value])
    with pytest.raises(RuntimeError, match=match) as err:
        run_image_input(path, 1, scale=32, crop=32)
    assert "'00000000'" in str(err.value) and path in str(err.value) and "[ImageInput]" in str(err.value)
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["still"], shape=[1]))


def test_datum_label_out_of_range(tmp_path):
    path = write_db(tmp_path, [datum_record(12, pixels=np.zeros((4, 4, 1), np.uint8))])
    with pytest.raises(RuntimeError, match=r"'00000000'.*label 12 is not a class index in \[0, num_labels = 10\)"):
        run_image_input(path, 1, scale=4, crop=4, use_caffe_datum=1, num_labels=10, color=0)


def test_bad_datum_record(tmp_path):
    path = write_db(tmp_path, [datum_record(1, pixels=np.zeros((4, 4, 2), np.uint8))])
    with pytest.raises(RuntimeError, match="'00000000'.*1 or 3 channels"):
        run_image_input(path, 1, scale=32, crop=32, use_caffe_datum=1)


def test_missing_db(tmp_path):
    op = core.CreateOperator("ImageInput", [], ["data", "label"], batch_size=1, scale=32, crop=32,
                             db=str(tmp_path / "absent"), db_type="lmdb")
    with pytest.raises(RuntimeError, match="absent"):
        workspace.RunOperatorOnce(op)


@pytest.mark.parametrize("args,match", [
    (dict(scale=32), "crop must be > 0"),
    (dict(scale=16, crop=32), "must be >= crop"),
    (dict(scale=32, minsize=32, crop=32), "exactly one of scale and minsize"),
    (dict(crop=32), "exactly one of scale and minsize"),
    (dict(random_scale=[40, 32], crop=32), "max >= min"),
    (dict(scale=32, crop=32, output_type="int8"), "output_type"),
    (dict(scale=32, crop=32, mean_per_channel=[1.0, 2.0]), "1 or 3 values"),
    (dict(scale=32, crop=32, mean_per_channel=[1.0, 2.0, 3.0], std_per_channel=[1.0]),
     "same length"),
    (dict(scale=32, crop=32, label_type=1), "num_labels"),
    (dict(scale=32, crop=32, label_type=1, num_labels=3, use_caffe_datum=1), "label_type 0 or 4"),
    (dict(scale=32, crop=32, batch_size=0), "batch_size must be > 0"),
])
def test_bad_arguments(args, match):
    kwargs = dict(batch_size=1)
    kwargs.update(args)
    workspace.FeedBlob("reader", np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match=match):
        workspace.RunOperatorOnce(core.CreateOperator("ImageInput", ["reader"], ["d", "l"],
                                                      **kwargs))


# The CUDA op (with and without the GPU transform) is checked in tests/python/cuda.


def test_shape_inference_matches_the_outputs(tmp_path):
    rng = np.random.RandomState(16)
    images = [random_image(rng, 34, 34) for _ in range(2)]
    protos = [[int32_proto([i]), float_proto([i, i])] for i in range(2)]
    path = write_db(tmp_path, label_records(images, protos))
    args = dict(scale=32, crop=30, is_test=1, label_type=1, num_labels=3, output_sizes=[2],
                output_type="float16")
    outs = run_image_input(path, 2, outputs=("data", "label", "extra"), **args)
    net = core.Net("infer")
    net.ImageInput(["reader"], ["data", "label", "extra"], batch_size=2, **args)
    shapes, types = workspace.InferShapesAndTypes([net], {"reader": []})
    for name, value in zip(["data", "label", "extra"], outs):
        assert shapes[name] == list(value.shape), name
    assert types["data"] == caffe2_pb2.TensorProto.FLOAT16
    assert types["label"] == caffe2_pb2.TensorProto.INT32
