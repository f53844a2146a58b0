"""ImageInput in training mode: mirroring, random crops, colour and scale augmentation, and
random draws that follow each record's place in the reader (reproducible, and exact on resume)."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from image_input_util import SIZES, png_records, random_image, run_image_input, write_db


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


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


@pytest.mark.parametrize(
    "args",
    [
        dict(color_jitter=1),
        dict(color_jitter=1, img_saturation=0.8, img_brightness=0.1, img_contrast=0.6),
        dict(color_lighting=1, color_lighting_std=0.5),
        dict(scale_jitter_type=1),
        dict(random_scale=[32, 64]),
        dict(
            mirror=1, color_jitter=1, color_lighting=1, scale_jitter_type=1, random_scale=[34, 48]
        ),
    ],
    ids=lambda a: ",".join(sorted(a)),
)
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
    bound = (255 * 1.8**3 / 128) if jitter else (255 / 128 + 0.05)
    assert data.min() >= -bound and data.max() <= bound
    np.testing.assert_array_equal(label, np.arange(len(images)))
    test_data, _ = run_image_input(
        path,
        len(images),
        is_test=1,
        **dict(kwargs, **{k: v for k, v in [("scale", 34)] if "random_scale" not in args}),
    )
    assert not np.allclose(data, test_data)


def test_colour_jitter_keeps_grey_pixels_grey_under_saturation(tmp_path):
    grey = np.full((32, 32, 3), 90, np.uint8)
    path = write_db(tmp_path, png_records([grey] * 4))
    data, _ = run_image_input(
        path, 4, scale=32, crop=32, color_jitter=1, img_brightness=0.0, img_contrast=0.0, seed=2
    )
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
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )
    workspace.RunOperatorOnce(
        core.CreateOperator("DBReaderSkip", ["reader"], [], num_records=2 * 4)
    )
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
