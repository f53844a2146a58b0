"""make_fashion_mnist_db: the three record forms, read back by TensorProtosDBInput and
ImageInput."""
import gzip
import os
import struct

import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.tools import make_fashion_mnist_db as tool


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def write_idx(path, array):
    with gzip.open(path + ".gz", "wb") as f:
        f.write(b"\x00\x00\x08" + bytes([array.ndim]))
        f.write(struct.pack(">" + "I" * array.ndim, *array.shape))
        f.write(array.astype(np.uint8).tobytes())


@pytest.fixture
def data_dir(tmp_path):
    """A small IDX copy in the layout of Debian's dataset-fashion-mnist."""
    rng = np.random.RandomState(0)
    folder = str(tmp_path / "idx")
    os.makedirs(folder)
    data = {}
    for split, prefix, n in [("train", "train", 12), ("test", "t10k", 5)]:
        images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        labels = rng.randint(0, 10, n).astype(np.uint8)
        write_idx(os.path.join(folder, prefix + "-images-idx3-ubyte"), images)
        write_idx(os.path.join(folder, prefix + "-labels-idx1-ubyte"), labels)
        data[split] = (images, labels)
    return folder, data


def reader(path):
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], ["reader"], db=path, db_type="lmdb")
    )


def test_three_forms_read_back_by_the_ops(tmp_path, data_dir, capsys):
    folder, data = data_dir
    out = str(tmp_path / "dbs")
    assert tool.main(["--output_dir", out, "--data_dir", folder]) == 0
    assert "12/12" in capsys.readouterr().err
    images, labels = data["train"]

    reader(tool.db_path(out, "train", "raw", "lmdb"))
    workspace.RunOperatorOnce(
        core.CreateOperator("TensorProtosDBInput", ["reader"], ["x", "y"], batch_size=12)
    )
    x, y = workspace.FetchBlob("x"), workspace.FetchBlob("y")
    assert x.dtype == np.uint8 and x.shape == (12, 1, 28, 28)
    np.testing.assert_array_equal(x[:, 0], images)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, labels)

    reader(tool.db_path(out, "train", "png", "lmdb"))
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "ImageInput",
            ["reader"],
            ["x", "y"],
            batch_size=12,
            scale=28,
            crop=28,
            is_test=1,
            color=0,
        )
    )
    np.testing.assert_array_equal(workspace.FetchBlob("x")[..., 0], images)
    np.testing.assert_array_equal(workspace.FetchBlob("y"), labels)

    reader(tool.db_path(out, "test", "datum", "lmdb"))
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "ImageInput",
            ["reader"],
            ["x", "y"],
            batch_size=5,
            scale=28,
            crop=24,
            is_test=1,
            use_caffe_datum=1,
        )
    )
    x = workspace.FetchBlob("x")
    assert x.shape == (5, 24, 24, 3)
    test_images, test_labels = data["test"]
    for c in range(3):
        np.testing.assert_array_equal(x[..., c], test_images[:, 2:26, 2:26])
    np.testing.assert_array_equal(workspace.FetchBlob("y"), test_labels)


def test_limit_and_channel_last(tmp_path, data_dir):
    folder, data = data_dir
    out = str(tmp_path / "dbs")
    written = tool.make_fashion_mnist_db(
        out, forms=("raw",), data_dir=folder, limit=4, channel_first=False, quiet=True
    )
    assert sorted(written) == [("test", "raw"), ("train", "raw")]
    reader(written[("train", "raw")])
    workspace.RunOperatorOnce(
        core.CreateOperator("TensorProtosDBInput", ["reader"], ["x", "y"], batch_size=4)
    )
    x = workspace.FetchBlob("x")
    assert x.shape == (4, 28, 28, 1)
    np.testing.assert_array_equal(x[..., 0], data["train"][0][:4])


def test_missing_data_files_are_named(tmp_path):
    with pytest.raises(IOError, match="train-images-idx3-ubyte"):
        tool.make_fashion_mnist_db(str(tmp_path / "o"), data_dir=str(tmp_path), quiet=True)


@pytest.mark.skipif(
    not os.path.exists(tool.DEFAULT_DATA_DIR),
    reason="Debian's dataset-fashion-mnist is not installed",
)
def test_debian_dataset(tmp_path):
    written = tool.make_fashion_mnist_db(str(tmp_path), forms=("raw",), limit=16, quiet=True)
    reader(written[("test", "raw")])
    workspace.RunOperatorOnce(
        core.CreateOperator("TensorProtosDBInput", ["reader"], ["x", "y"], batch_size=16)
    )
    assert workspace.FetchBlob("x").shape == (16, 1, 28, 28)
    assert set(workspace.FetchBlob("y")) <= set(range(10))
