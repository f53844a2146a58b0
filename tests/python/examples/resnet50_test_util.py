"""Shared by the resnet50_trainer tests: where the trainer and the Fashion-MNIST files are, the
environment its processes run in, and the command line of one CPU shard on the small LMDB. Importing
it puts examples/ on sys.path, so the tests can import resnet50_trainer itself."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TRAINER = os.path.join(ROOT, "examples", "resnet50_trainer.py")
DATA_DIR = "/usr/share/datasets/fashion-mnist"

sys.path.insert(0, os.path.join(ROOT, "examples"))


def env():
    return dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")


def make_small_dbs(out):
    """A small Fashion-MNIST Datum LMDB pair (train and test, the first 512 images of each) in
    the directory `out`; skips the test when Debian's dataset-fashion-mnist is not installed."""
    if not os.path.exists(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")):
        pytest.skip("Fashion-MNIST (Debian dataset-fashion-mnist) is not installed")
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
    return (
        os.path.join(out, "fashion_mnist_train_datum_lmdb"),
        os.path.join(out, "fashion_mnist_test_datum_lmdb"),
    )


def shard_cmd(dbs, store, shard, num_shards, run_id, *extra):
    train, test = dbs
    return [
        sys.executable,
        TRAINER,
        "--train_data",
        train,
        "--test_data",
        test,
        "--num_shards",
        str(num_shards),
        "--shard_id",
        str(shard),
        "--run_id",
        run_id,
        "--file_store_path",
        str(store),
        "--use_cpu",
        "1",
        "--model",
        "resnet",
        "--resnet_blocks",
        "1",
        "--num_channels",
        "1",
        "--image_size",
        "28",
        "--scale",
        "28",
        "--num_labels",
        "10",
        "--batch_size",
        "16",
        "--epoch_size",
        "256",
        "--num_test_iters",
        "4",
        "--base_learning_rate",
        "0.05",
        "--save_model_name",
        "m",
        "--log_dir",
        str(store),
    ] + list(extra)
