"""make_image_db: list files and folder trees to LMDB / LevelDB, read back by the input ops."""
import os

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2, caffe_datum_pb2
from caffe2.python import caffe2_pybind11_state as C
from caffe2.python import core, workspace
from caffe2.python.tools import make_image_db
from caffe2.python.tools.db_writer import encode_png

cv2 = pytest.importorskip("cv2")


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def gradient_image(seed, height, width):
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:height, 0:width]
    image = np.stack([x * 4 % 256, y * 3 % 256, (x + y + seed * 20) % 256], axis=2)
    return np.clip(image + rng.randint(0, 8, image.shape), 0, 255).astype(np.uint8)


@pytest.fixture
def image_tree(tmp_path):
    """root/{cat,dog}/imgN.png and a list file naming them with labels."""
    root = tmp_path / "images"
    images, lines = {}, []
    for label, cls in enumerate(["cat", "dog"]):
        os.makedirs(str(root / cls))
        for k in range(3):
            image = gradient_image(label * 3 + k, 30 + 4 * k, 40 - 2 * k)
            rel = "%s/img%d.png" % (cls, k)
            with open(str(root / rel), "wb") as f:
                f.write(encode_png(image))
            images[rel] = image
            lines.append("%s %d" % (rel, label))
    list_file = tmp_path / "list.txt"
    list_file.write_text("\n".join(lines) + "\n")
    return str(root), str(list_file), images


def read_all(db_type, path):
    db = C.create_db(db_type, path, C.Mode.read)
    cursor = db.new_cursor()
    out = []
    while cursor.valid():
        out.append((cursor.key(), cursor.value()))
        cursor.next()
    return out


def image_input(path, db_type, batch_size, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type=db_type)
    )
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "ImageInput", ["reader"], ["data", "label"], batch_size=batch_size, is_test=1, **kwargs
        )
    )
    return workspace.FetchBlob("data"), workspace.FetchBlob("label")


@pytest.mark.parametrize("db_type", ["lmdb", "leveldb"])
def test_list_file_to_encoded_tensor_protos(tmp_path, image_tree, db_type, capsys):
    root, list_file, images = image_tree
    out = str(tmp_path / "out")
    assert (
        make_image_db.main(
            [
                "--input_folder",
                root,
                "--list_file",
                list_file,
                "--output_db_name",
                out,
                "--db",
                db_type,
            ]
        )
        == 0
    )
    assert "6/6" in capsys.readouterr().err  # the progress bar
    records = read_all(db_type, out)
    assert [k for k, _ in records] == [b"%08d_img%d.png" % (i, i % 3) for i in range(6)]
    protos = caffe2_pb2.TensorProtos.FromString(records[0][1])
    assert protos.protos[0].data_type == caffe2_pb2.TensorProto.STRING
    assert list(protos.protos[0].dims) == [1] and list(protos.protos[1].dims) == [1]
    with open(os.path.join(root, "cat/img0.png"), "rb") as f:
        assert protos.protos[0].string_data[0] == f.read()
    data, label = image_input(out, db_type, 6, scale=26, crop=26)
    np.testing.assert_array_equal(label, [0, 0, 0, 1, 1, 1])
    for item, rel in zip(data, sorted(images)):
        image = images[rel]
        h, w = image.shape[:2]
        nh, nw = (26, w * 26 // h) if h <= w else (h * 26 // w, 26)
        resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
        y0, x0 = (nh - 26) // 2, (nw - 26) // 2
        np.testing.assert_allclose(item, resized[y0 : y0 + 26, x0 : x0 + 26], atol=1)


def test_folder_tree_with_shuffle_and_label_map(tmp_path, image_tree):
    root, _, _ = image_tree
    out = str(tmp_path / "tree")
    make_image_db.main(
        ["--input_folder", root, "--output_db_name", out, "--db", "lmdb", "--shuffle", "--quiet"]
    )
    records = read_all("lmdb", out)
    names = [k.decode().split("_", 1)[1] for k, _ in records]
    assert sorted(names) == sorted("img%d.png" % k for k in range(3) for _ in range(2))
    labels = [caffe2_pb2.TensorProtos.FromString(v).protos[1].int32_data[0] for _, v in records]
    assert sorted(labels) == [0, 0, 0, 1, 1, 1]
    unshuffled = [("img%d.png" % k, label) for label in range(2) for k in range(3)]
    assert sorted(zip(names, labels)) == sorted(unshuffled)
    assert list(zip(names, labels)) != unshuffled
    with open(out + ".labels.txt") as f:
        assert f.read() == "0 cat\n1 dog\n"


@pytest.mark.parametrize("color", [1, 0])
def test_raw_records_are_resized_bgr_pixels(tmp_path, image_tree, color):
    root, list_file, images = image_tree
    out = str(tmp_path / "raw")
    make_image_db.main(
        [
            "--input_folder",
            root,
            "--list_file",
            list_file,
            "--output_db_name",
            out,
            "--db",
            "lmdb",
            "--raw",
            "--scale",
            "24",
            "--color",
            str(color),
            "--quiet",
        ]
    )
    protos = caffe2_pb2.TensorProtos.FromString(read_all("lmdb", out)[0][1])
    image = images["cat/img0.png"]  # 30 x 40
    want = cv2.resize(image, (32, 24), interpolation=cv2.INTER_LINEAR)
    if not color:
        grey = cv2.imread(os.path.join(root, "cat/img0.png"), cv2.IMREAD_GRAYSCALE)
        want = cv2.resize(grey, (32, 24), interpolation=cv2.INTER_LINEAR)[:, :, None]
    assert protos.protos[0].data_type == caffe2_pb2.TensorProto.BYTE
    assert tuple(protos.protos[0].dims) == want.shape
    np.testing.assert_array_equal(np.frombuffer(protos.protos[0].byte_data, np.uint8), want.ravel())
    data, label = image_input(out, "lmdb", 6, scale=24, crop=24, color=color)
    np.testing.assert_array_equal(data[0], want[:, 4:28].astype(np.float32))


@pytest.mark.parametrize("raw", [False, True])
def test_caffe_datum_records_read_by_image_input(tmp_path, image_tree, raw):
    root, list_file, images = image_tree
    out = str(tmp_path / "datum")
    args = [
        "--input_folder",
        root,
        "--list_file",
        list_file,
        "--output_db_name",
        out,
        "--db",
        "lmdb",
        "--caffe_datum",
        "--quiet",
    ] + (["--raw", "--scale", "28"] if raw else [])
    make_image_db.main(args)
    datum = caffe_datum_pb2.Datum.FromString(read_all("lmdb", out)[3][1])
    assert datum.label == 1 and datum.encoded == (not raw)
    data, label = image_input(out, "lmdb", 6, scale=28, crop=28, use_caffe_datum=1)
    np.testing.assert_array_equal(label, [0, 0, 0, 1, 1, 1])
    assert data.shape == (6, 28, 28, 3)


def test_scale_re_encodes_encoded_images(tmp_path, image_tree):
    root, list_file, _ = image_tree
    out = str(tmp_path / "scaled")
    make_image_db.main(
        [
            "--input_folder",
            root,
            "--list_file",
            list_file,
            "--output_db_name",
            out,
            "--db",
            "lmdb",
            "--scale",
            "20",
            "--quiet",
        ]
    )
    protos = caffe2_pb2.TensorProtos.FromString(read_all("lmdb", out)[0][1])
    image = cv2.imdecode(np.frombuffer(protos.protos[0].string_data[0], np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (20, 26, 3)


def test_bad_list_file_line(tmp_path):
    list_file = tmp_path / "list.txt"
    list_file.write_text("just_a_path.png\n")
    with pytest.raises(ValueError, match="list.txt:1"):
        make_image_db.main(
            ["--list_file", str(list_file), "--output_db_name", str(tmp_path / "x"), "--quiet"]
        )


def test_encode_png_round_trips_through_opencv():
    rng = np.random.RandomState(0)
    for image in [
        rng.randint(0, 256, (7, 9, 3)).astype(np.uint8),
        rng.randint(0, 256, (5, 4)).astype(np.uint8),
    ]:
        flags = cv2.IMREAD_UNCHANGED
        decoded = cv2.imdecode(np.frombuffer(encode_png(image), np.uint8), flags)
        np.testing.assert_array_equal(decoded, image)
