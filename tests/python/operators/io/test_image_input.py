"""ImageInput against an OpenCV/numpy reference in test mode: sizes, colour, output types, raw,
encoded and Datum records, labels and extra outputs; device checks of ImageInput on a GPU (the
batch copied as it is, and the GPU transform: uint8 crops normalized into NCHW float or float16
on the device) against the CPU op on the same records in test mode."""
import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (
    DBWriter,
    bytes_proto,
    datum_record,
    encode_png,
    float_proto,
    int32_proto,
    string_proto,
    tensor_protos_record,
)

from device_check import CPU, gpu, gpu_semantics, needs_gpu
from image_input_util import (
    SIZES,
    check_against_reference,
    cv2,
    int64_proto,
    label_records,
    png_records,
    random_image,
    reference,
    run_image_input,
    write_db,
)

COVERED_CUDA_OPS = ["ImageInput"]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


TEST_MODE_CASES = [
    dict(args=dict(scale=32, crop=28), ref=dict(scale=32, crop=28)),
    dict(args=dict(scale=32, crop=32, warp=1), ref=dict(scale=32, crop=32, warp=True)),
    dict(args=dict(minsize=48, crop=40), ref=dict(minsize=48, crop=40)),
    dict(args=dict(random_scale=[48, 48], crop=40), ref=dict(minsize=48, crop=40)),
    dict(args=dict(minsize=52, crop=44, warp=1), ref=dict(minsize=52, crop=44, warp=True)),
    dict(
        args=dict(scale=40, crop=24, mean=128.0, std=64.0),
        ref=dict(scale=40, crop=24, mean=128.0, std=64.0),
    ),
    dict(
        args=dict(
            scale=36,
            crop=30,
            mean_per_channel=[100.0, 110.0, 120.0],
            std_per_channel=[50.0, 60.0, 70.0],
        ),
        ref=dict(scale=36, crop=30, mean=[100.0, 110.0, 120.0], std=[50.0, 60.0, 70.0]),
    ),
    dict(
        args=dict(
            scale=30,
            crop=28,
            bounding_ymin=5,
            bounding_xmin=3,
            bounding_height=30,
            bounding_width=35,
        ),
        ref=dict(scale=30, crop=28, box=(5, 3, 30, 35)),
    ),
]


@pytest.mark.parametrize("case", TEST_MODE_CASES, ids=lambda c: ",".join(sorted(c["args"])))
@pytest.mark.parametrize("threads", [1, 3])
def test_test_mode_matches_reference(tmp_path, case, threads):
    rng = np.random.RandomState(0)
    images = [random_image(rng, h, w) for h, w in SIZES]
    path = write_db(tmp_path, png_records(images))
    data, label = run_image_input(
        path, len(images), is_test=1, decode_threads=threads, **case["args"]
    )
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
    data, _ = run_image_input(
        path, 3, is_test=1, scale=32, crop=28, mean=128.0, std=128.0, output_type=output_type
    )
    assert data.dtype == np.float16
    check_against_reference(
        data, images, tol=1.0 / 128 + 1e-3, scale=32, crop=28, mean=128.0, std=128.0
    )


def test_raw_byte_images(tmp_path):
    rng = np.random.RandomState(3)
    colour = random_image(rng, 40, 44)
    grey = random_image(rng, 38, 36, channels=1)
    records = [
        tensor_protos_record(bytes_proto(colour), int32_proto(0)),
        tensor_protos_record(bytes_proto(grey), int32_proto(1)),
        tensor_protos_record(bytes_proto(grey[:, :, None]), int32_proto(2)),
    ]
    path = write_db(tmp_path, records)
    data, _ = run_image_input(path, 3, is_test=1, scale=34, crop=32)
    as_colour = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    check_against_reference(data, [colour, as_colour, as_colour], scale=34, crop=32)
    data, _ = run_image_input(path, 3, is_test=1, scale=34, crop=32, color=0)
    check_against_reference(
        data, [cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), grey, grey], scale=34, crop=32
    )


@pytest.mark.parametrize("encoded", [True, False])
def test_caffe_datum_records(tmp_path, encoded):
    rng = np.random.RandomState(4)
    images = [random_image(rng, h, w) for h, w in SIZES[:4]]
    records = [
        datum_record(10 + i, encoded=encode_png(im)) if encoded else datum_record(10 + i, pixels=im)
        for i, im in enumerate(images)
    ]
    path = write_db(tmp_path, records)
    data, label = run_image_input(
        path, 4, is_test=1, scale=32, crop=28, use_caffe_datum=1, mean=128.0, std=128.0
    )
    check_against_reference(
        data, images, tol=1.0 / 128 + 1e-4, scale=32, crop=28, mean=128.0, std=128.0
    )
    np.testing.assert_array_equal(label, [10, 11, 12, 13])


def test_per_record_bounding_box_overrides_the_argument(tmp_path):
    rng = np.random.RandomState(5)
    images = [random_image(rng, 60, 60) for _ in range(3)]
    boxes = [(4, 6, 40, 30), (0, 0, 60, 60), (50, 50, 40, 40)]  # the last does not fit: ignored
    records = [
        tensor_protos_record(
            string_proto(encode_png(im)), int32_proto(i), int32_proto(box, dims=[4])
        )
        for i, (im, box) in enumerate(zip(images, boxes))
    ]
    path = write_db(tmp_path, records)
    data, _ = run_image_input(
        path,
        3,
        is_test=1,
        scale=28,
        crop=28,
        bounding_ymin=1,
        bounding_xmin=1,
        bounding_height=20,
        bounding_width=20,
    )
    for item, image, box in zip(data, images, boxes):
        np.testing.assert_allclose(item, reference(image, 28, scale=28, box=box), atol=1.0)


def test_label_types_and_extra_outputs(tmp_path):
    rng = np.random.RandomState(6)
    images = [random_image(rng, 34, 34) for _ in range(3)]
    cases = [
        (
            dict(label_type=0),
            [[float_proto(0.5)], [float_proto(1.5)], [float_proto(2.5)]],
            np.float32,
            [0.5, 1.5, 2.5],
        ),
        (
            dict(label_type=1, num_labels=5),
            [[int32_proto([0, 3])], [int32_proto([4])], [int32_proto([])]],
            np.int32,
            [[1, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]],
        ),
        (
            dict(label_type=2, num_labels=3),
            [[float_proto([0.1, 0.2, 0.3])], [float_proto([1, 2, 3])], [float_proto([0, 0, 1])]],
            np.float32,
            [[0.1, 0.2, 0.3], [1, 2, 3], [0, 0, 1]],
        ),
        (
            dict(label_type=2, num_labels=2),
            [[int32_proto([1, 2])], [int32_proto([3, 4])], [int32_proto([5, 6])]],
            np.int32,
            [[1, 2], [3, 4], [5, 6]],
        ),
        (
            dict(label_type=3, num_labels=4),
            [
                [int32_proto([1, 2]), float_proto([0.5, 0.25])],
                [int32_proto([0]), float_proto([2])],
                [int32_proto([3]), float_proto([1])],
            ],
            np.float32,
            [[0, 0.5, 0.25, 0], [2, 0, 0, 0], [0, 0, 0, 1]],
        ),
        (
            dict(label_type=4),
            [
                [int32_proto(7), float_proto(0.3)],
                [int32_proto(8), float_proto(1)],
                [int32_proto(9), float_proto(2)],
            ],
            np.int32,
            [7, 8, 9],
        ),
    ]
    for i, (args, protos, dtype, want) in enumerate(cases):
        path = write_db(tmp_path, label_records(images, protos), name="labels%d" % i)
        _, label = run_image_input(path, 3, is_test=1, scale=32, crop=32, **args)
        assert label.dtype == dtype, args
        np.testing.assert_allclose(label, np.array(want, dtype), rtol=1e-6, err_msg=str(args))


def test_extra_outputs_with_their_types(tmp_path):
    rng = np.random.RandomState(7)
    images = [random_image(rng, 34, 34) for _ in range(2)]
    protos = [
        [
            int32_proto(i),
            float_proto([i, i + 0.5]),
            int32_proto([i * 3]),
            int64_proto([2**40 + i, i, -i]),
        ]
        for i in range(2)
    ]
    path = write_db(tmp_path, label_records(images, protos))
    outs = run_image_input(
        path,
        2,
        outputs=("data", "label", "f", "i", "l"),
        is_test=1,
        scale=32,
        crop=32,
        output_sizes=[2, 1, 3],
    )
    _, label, f, i32, i64 = outs
    np.testing.assert_array_equal(label, [0, 1])
    assert f.dtype == np.float32 and f.shape == (2, 2)
    np.testing.assert_allclose(f, [[0, 0.5], [1, 1.5]])
    assert i32.dtype == np.int32 and i32.shape == (2, 1)
    np.testing.assert_array_equal(i32, [[0], [3]])
    assert i64.dtype == np.int64 and i64.shape == (2, 3)
    np.testing.assert_array_equal(i64, [[2**40, 0, 0], [2**40 + 1, 1, -1]])


def test_extra_outputs_with_weighted_labels_start_after_the_weights(tmp_path):
    rng = np.random.RandomState(8)
    images = [random_image(rng, 34, 34)]
    protos = [[int32_proto([1]), float_proto([0.5]), float_proto([9.0])]]
    path = write_db(tmp_path, label_records(images, protos))
    _, label, extra = run_image_input(
        path,
        1,
        outputs=("data", "label", "e"),
        is_test=1,
        scale=32,
        crop=32,
        label_type=3,
        num_labels=2,
    )
    np.testing.assert_allclose(label, [[0, 0.5]])
    np.testing.assert_allclose(extra, [[9.0]])


def test_zero_input_form_opens_its_own_reader(tmp_path):
    rng = np.random.RandomState(9)
    images = [random_image(rng, 40, 40) for _ in range(2)]
    path = write_db(tmp_path, png_records(images))
    op = core.CreateOperator(
        "ImageInput",
        [],
        ["data", "label"],
        batch_size=2,
        scale=32,
        crop=32,
        is_test=1,
        db=path,
        db_type="lmdb",
    )
    workspace.RunOperatorOnce(op)
    check_against_reference(workspace.FetchBlob("data"), images, scale=32, crop=32)


def _write_png_db(tmp_path, channels=3):
    rng = np.random.RandomState(15)
    path = str(tmp_path / "images")
    with DBWriter("lmdb", path) as writer:
        for i, (h, w) in enumerate(SIZES):
            image = rng.randint(0, 256, size=(h, w, channels)).astype(np.uint8)
            if channels == 1:
                image = image[:, :, 0]
            writer.put(
                b"%08d" % i,
                tensor_protos_record(string_proto(encode_png(image)), int32_proto(i, dims=[1])),
            )
    return path


def _run(path, device_option, batch_size=len(SIZES), **args):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "ImageInput",
            ["reader"],
            ["data", "label"],
            batch_size=batch_size,
            device_option=device_option,
            **args,
        )
    )
    return workspace.FetchBlob("data"), workspace.FetchBlob("label")


ARGS = dict(scale=32, crop=28, is_test=1, mean=128.0, std=64.0)


@needs_gpu
def test_batch_copied_to_the_gpu(tmp_path):
    path = _write_png_db(tmp_path)
    cpu_data, cpu_label = _run(path, CPU, **ARGS)
    data, label = _run(path, gpu(), **ARGS)
    np.testing.assert_allclose(data, cpu_data, atol=1e-6)
    np.testing.assert_array_equal(label, cpu_label)


@needs_gpu
@gpu_semantics
@pytest.mark.parametrize("output_type,tol", [("float", 1e-5), ("float16", 1e-2)])
@pytest.mark.parametrize(
    "channels,mean_std",
    [
        (3, dict(mean=128.0, std=64.0)),
        (3, dict(mean_per_channel=[100.0, 120.0, 140.0], std_per_channel=[50.0, 60.0, 70.0])),
        (1, dict(mean=10.0, std=2.0)),
    ],
)
def test_gpu_transform_matches_the_cpu_op(tmp_path, output_type, tol, channels, mean_std):
    path = _write_png_db(tmp_path, channels)
    args = dict(scale=32, crop=28, is_test=1, color=int(channels == 3), **mean_std)
    cpu_data, cpu_label = _run(path, CPU, **args)
    data, label = _run(path, gpu(), use_gpu_transform=1, output_type=output_type, **args)
    assert data.shape == (len(SIZES), channels, 28, 28)
    assert data.dtype == (np.float16 if output_type == "float16" else np.float32)
    np.testing.assert_allclose(
        data.astype(np.float32).transpose(0, 2, 3, 1), cpu_data, rtol=tol, atol=tol
    )
    np.testing.assert_array_equal(label, cpu_label)


@needs_gpu
@gpu_semantics
def test_gpu_transform_mirrors_in_test_mode_like_upstream(tmp_path):
    path = _write_png_db(tmp_path)
    # 24 images (the reader wraps around the 6 records): each is mirrored with probability 1/2.
    plain, _ = _run(path, gpu(), batch_size=24, use_gpu_transform=1, **ARGS)
    mirrored, _ = _run(path, gpu(), batch_size=24, use_gpu_transform=1, mirror=1, **ARGS)
    flipped = [np.allclose(m, p[:, :, ::-1]) for m, p in zip(mirrored, plain)]
    same = [np.allclose(m, p) for m, p in zip(mirrored, plain)]
    assert all(f or s for f, s in zip(flipped, same)) and any(flipped)
