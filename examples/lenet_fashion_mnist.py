"""Trains LeNet on Fashion-MNIST with the model API: \
model_helper + brew for the net, optimizer.build_sgd
for momentum SGD, experiment_util for the CSV log, predictor_exporter for the export; then reloads
the export in a fresh process and checks that it reproduces the test predictions exactly.

Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/*.gz, gzip'd IDX), read with
numpy. LeNet: conv5x5x20, maxpool 2, conv5x5x50, maxpool 2, fc500, relu, fc10; inputs x/255; batch
64; SGD lr 0.01, momentum 0.9 (classical momentum, as torch.optim.SGD); reshuffled each epoch. Conv
and FC weights and biases start uniform in +-1/sqrt(fan_in) (PyTorch's default initialisation).

    python examples/lenet_fashion_mnist.py [--epochs 1] [--limit N] [--test-limit N] [--out DIR]

The CSV log `lenet_fashion_mnist_<timestamp>.log` is written in the current directory.
"""
import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from caffe2.python import brew, experiment_util, model_helper, optimizer, workspace
from caffe2.python import predictor_exporter as pe

DATA_DIR = "/usr/share/datasets/fashion-mnist"
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
EVAL_BATCH = 1000


# ---- data ----------------------------------------------------------------------------------


def read_idx(path):
    """A gzip'd IDX file as a uint8 array (magic 0x0000 0x08 <ndim>, big-endian int32 dims)."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError("%s is not an unsigned-byte IDX file (magic %r)" % (path, raw[:4]))
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">i4", count=ndim, offset=4)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(
            "%s holds %d bytes of data but its header says %s" % (path, data.size, list(dims))
        )
    return data.reshape([int(d) for d in dims])


def dataset_present(data_dir=DATA_DIR):
    return all(os.path.exists(os.path.join(data_dir, f)) for pair in FILES.values() for f in pair)


def load_split(split, data_dir=DATA_DIR, limit=None):
    """Images as float32 N x 1 x 28 x 28 scaled to [0, 1], labels as int32."""
    images = read_idx(os.path.join(data_dir, FILES[split][0]))
    labels = read_idx(os.path.join(data_dir, FILES[split][1]))
    if limit:
        images, labels = images[:limit], labels[:limit]
    x = (images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
    return x, labels.astype(np.int32)


# ---- model ---------------------------------------------------------------------------------


def uniform_init(fan_in):
    bound = 1.0 / np.sqrt(fan_in)
    return ("UniformFill", {"min": -bound, "max": bound})


def add_lenet(model, data):
    """LeNet on 1 x 28 x 28 inputs; returns the logits blob."""
    conv1 = brew.conv(
        model,
        data,
        "conv1",
        dim_in=1,
        dim_out=20,
        kernel=5,
        weight_init=uniform_init(25),
        bias_init=uniform_init(25),
    )
    pool1 = brew.max_pool(model, conv1, "pool1", kernel=2, stride=2)
    conv2 = brew.conv(
        model,
        pool1,
        "conv2",
        dim_in=20,
        dim_out=50,
        kernel=5,
        weight_init=uniform_init(500),
        bias_init=uniform_init(500),
    )
    pool2 = brew.max_pool(model, conv2, "pool2", kernel=2, stride=2)
    fc3 = brew.fc(
        model,
        pool2,
        "fc3",
        dim_in=50 * 4 * 4,
        dim_out=500,
        weight_init=uniform_init(800),
        bias_init=uniform_init(800),
    )
    relu3 = brew.relu(model, fc3, "relu3")
    return brew.fc(
        model,
        relu3,
        "pred",
        dim_in=500,
        dim_out=10,
        weight_init=uniform_init(500),
        bias_init=uniform_init(500),
    )


def build_models(lr=0.01, momentum=0.9, seed=0):
    """The training model (loss, accuracy, gradients, momentum SGD) and the deploy model (softmax
    only) sharing its parameters."""
    train = model_helper.ModelHelper(name="lenet_train")
    logits = add_lenet(train, "data")
    softmax, loss = train.net.SoftmaxWithLoss([logits, "label"], ["softmax", "loss"])
    brew.accuracy(train, [softmax, "label"], "accuracy")
    train.AddGradientOperators([loss])
    # nesterov=0: the classical momentum of torch.optim.SGD, for a like-for-like comparison.
    optimizer.build_sgd(train, base_learning_rate=lr, policy="fixed", momentum=momentum, nesterov=0)
    # One seed per filler op so that the parameters are reproducible and independent of each other.
    for i, op in enumerate(train.param_init_net.Proto().op):
        op.device_option.random_seed = seed * 1000 + i

    deploy = model_helper.ModelHelper(name="lenet_deploy", init_params=False)
    brew.softmax(deploy, add_lenet(deploy, "data"), "softmax")
    return train, deploy


def learning_rate_blob(train):
    names = [b for op in train.net.Proto().op if op.type == "LearningRate" for b in op.output]
    return names[0]


# ---- training / evaluation -----------------------------------------------------------------


def progress(epoch, epochs, done, total, loss, acc, start, width=30):
    filled = int(width * done / total)
    rate = done / max(time.time() - start, 1e-9)
    sys.stdout.write(
        "\repoch %d/%d [%s%s] %6d/%d  loss %.4f  acc %.3f  %.0f img/s"
        % (epoch + 1, epochs, "#" * filled, "." * (width - filled), done, total, loss, acc, rate)
    )
    sys.stdout.flush()


def predict(net_name, x, batch=EVAL_BATCH):
    """Softmax outputs of the net `net_name` (reads blob `data`, writes `softmax`) for `x`."""
    out = []
    for i in range(0, len(x), batch):
        workspace.FeedBlob("data", x[i : i + batch])
        workspace.RunNet(net_name)
        out.append(workspace.FetchBlob("softmax").copy())
    return np.concatenate(out)


def train_model(
    train,
    deploy,
    train_x,
    train_y,
    test_x,
    test_y,
    epochs,
    batch=64,
    seed=0,
    log=None,
    show_progress=True,
):
    """Trains for `epochs`; returns (test accuracy, seconds spent training, test softmax
    outputs)."""
    workspace.RunNetOnce(train.param_init_net)
    workspace.FeedBlob("data", train_x[:batch])
    workspace.FeedBlob("label", train_y[:batch])
    workspace.CreateNet(train.net)
    workspace.RunNetOnce(deploy.param_init_net)
    workspace.CreateNet(deploy.net)
    lr_blob = learning_rate_blob(train)

    rng = np.random.RandomState(seed)
    n = len(train_x)
    iters_per_epoch = (n + batch - 1) // batch
    train_time = 0.0
    test_acc = -1.0
    probs = None
    for epoch in range(epochs):
        order = rng.permutation(n)
        start = time.time()
        for it in range(iters_per_epoch):
            idx = order[it * batch : (it + 1) * batch]
            workspace.FeedBlob("data", train_x[idx])
            workspace.FeedBlob("label", train_y[idx])
            workspace.RunNet(train.net.Proto().name)
            if show_progress and (it % 20 == 0 or it + 1 == iters_per_epoch):
                progress(
                    epoch,
                    epochs,
                    min((it + 1) * batch, n),
                    n,
                    float(workspace.FetchBlob("loss")),
                    float(workspace.FetchBlob("accuracy")),
                    start,
                )
        train_time += time.time() - start
        if show_progress:
            sys.stdout.write("\n")
        probs = predict(deploy.net.Proto().name, test_x)
        test_acc = float(np.mean(probs.argmax(axis=1) == test_y))
        if show_progress:
            print("epoch %d: test accuracy %.4f" % (epoch + 1, test_acc))
        if log is not None:
            log.log(
                input_count=(epoch + 1) * n,
                batch_count=(epoch + 1) * iters_per_epoch,
                additional_values={
                    "accuracy": workspace.FetchBlob("accuracy"),
                    "epoch": epoch + 1,
                    "learning_rate": workspace.FetchBlob(lr_blob),
                    "loss": workspace.FetchBlob("loss"),
                    "test_accuracy": test_acc,
                },
            )
    return test_acc, train_time, probs


# ---- export / reload -----------------------------------------------------------------------


def export(train, deploy, db_path):
    meta = pe.PredictorExportMeta(
        predict_net=deploy.net.Proto(),
        parameters=[str(p) for p in train.params],
        inputs=["data"],
        outputs=["softmax"],
    )
    pe.save_to_db("minidb", db_path, meta)


def predict_from_export(db_path, images_path, out_path):
    """The fresh-process half: loads the export and writes the softmax outputs for the images."""
    workspace.GlobalInit(["lenet_fashion_mnist", "--caffe2_log_level=2"])
    net = pe.prepare_prediction_net(db_path, "minidb")
    np.save(out_path, predict(net.Proto().name, np.load(images_path)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--limit", type=int, default=0, help="train on the first N training images only"
    )
    parser.add_argument(
        "--test-limit", type=int, default=0, help="evaluate on the first N test images only"
    )
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument(
        "--out", default="", help="folder for the export (default: a new temporary one)"
    )
    parser.add_argument(
        "--predict-from", nargs=3, metavar=("DB", "IMAGES_NPY", "OUT_NPY"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.predict_from:
        predict_from_export(*args.predict_from)
        return 0

    if not dataset_present(args.data_dir):
        print(
            "Fashion-MNIST not found in %s (Debian package dataset-fashion-mnist)" % args.data_dir
        )
        return 2
    workspace.GlobalInit(["lenet_fashion_mnist", "--caffe2_log_level=2"])
    train_x, train_y = load_split("train", args.data_dir, args.limit)
    test_x, test_y = load_split("test", args.data_dir, args.test_limit)
    print(
        "train %d images, test %d images, %d epoch(s), batch %d"
        % (len(train_x), len(test_x), args.epochs, args.batch)
    )

    train, deploy = build_models(args.lr, args.momentum, args.seed)
    log = experiment_util.ModelTrainerLog("lenet_fashion_mnist", args)
    test_acc, train_time, probs = train_model(
        train, deploy, train_x, train_y, test_x, test_y, args.epochs, args.batch, args.seed, log
    )
    images = args.epochs * len(train_x)
    print(
        "trained %d images in %.1f s (%.0f images/s); test accuracy %.4f"
        % (images, train_time, images / train_time, test_acc)
    )
    print("CSV log: %s" % os.path.abspath(log.filename))

    out_dir = args.out or tempfile.mkdtemp(prefix="c2_lenet_")
    os.makedirs(out_dir, exist_ok=True)
    db_path = os.path.join(out_dir, "lenet_fashion_mnist.minidb")
    export(train, deploy, db_path)
    images_path = os.path.join(out_dir, "test_images.npy")
    reloaded_path = os.path.join(out_dir, "reloaded_softmax.npy")
    np.save(images_path, test_x)
    child = subprocess.run(
        [
            sys.executable,
            os.path.abspath(__file__),
            "--predict-from",
            db_path,
            images_path,
            reloaded_path,
        ],
        capture_output=True,
        text=True,
    )
    if child.returncode != 0:
        print("reload process failed:\n" + child.stdout + child.stderr)
        return 1
    reloaded = np.load(reloaded_path)
    same = reloaded.shape == probs.shape and np.array_equal(reloaded, probs)
    reloaded_acc = float(np.mean(reloaded.argmax(axis=1) == test_y))
    print(
        "exported to %s; reloaded in a fresh process: test accuracy %.4f, predictions %s"
        % (
            db_path,
            reloaded_acc,
            "identical"
            if same
            else "DIFFERENT (max |diff| %g)" % float(np.abs(reloaded - probs).max()),
        )
    )
    print("OK" if same else "FAILED: the reloaded model does not reproduce the predictions")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
