"""Fixtures of the resnet50_trainer tests: small_dbs, a small Fashion-MNIST Datum LMDB pair (train
and test, made with --limit 512), built once per test module."""
import os
import subprocess
import sys

import pytest

from resnet50_test_util import DATA_DIR, env


@pytest.fixture(scope="module")
def small_dbs(tmp_path_factory):
    if not os.path.exists(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST (Debian dataset-fashion-mnist) is not installed")
    out = tmp_path_factory.mktemp("fm")
    subprocess.check_call(
        [
            sys.executable,
            "-m",
            "caffe2.python.tools.make_fashion_mnist_db",
            "--output_dir",
            str(out),
            "--form",
            "datum",
            "--db",
            "lmdb",
            "--limit",
            "512",
            "--quiet",
        ],
        env=env(),
    )
    return (str(out / "fashion_mnist_train_datum_lmdb"), str(out / "fashion_mnist_test_datum_lmdb"))
