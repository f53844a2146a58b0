"""LeNet on Fashion-MNIST end to end, \
our runtime against PyTorch (Debian python3-torch) side by side:
the same net, initialisation scheme (weights and biases uniform in +-1/sqrt(fan_in), PyTorch's
default), hyperparameters (batch 64, SGD lr 0.01, classical momentum 0.9), data (x/255, reshuffled
each epoch with the same permutations) and epochs. Prints test accuracy and training images/s for
both and the ratio (ours / PyTorch). PyTorch runs in its best configuration: 2 threads,
OPENBLAS_NUM_THREADS=1 (BENCHMARKS.md figures also use LD_PRELOAD=libtcmalloc_minimal.so.4).
PyTorch's 2 OpenMP threads slow down many times over when other processes compete for the 2
cores: compare images/s only on an idle machine (or try --threads 1).

    python benchmarks/bench_lenet_fashion_mnist.py [--epochs 1] [--limit N] [--seed 0]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from caffe2.python import workspace  # noqa: E402

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
)
import lenet_fashion_mnist as lenet  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None


def run_ours(data, epochs, batch, lr, momentum, seed):
    train_x, train_y, test_x, test_y = data
    workspace.ResetWorkspace()
    train, deploy = lenet.build_models(lr, momentum, seed)
    acc, seconds, _ = lenet.train_model(
        train, deploy, train_x, train_y, test_x, test_y, epochs, batch, seed
    )
    return acc, seconds


def run_torch(data, epochs, batch, lr, momentum, seed):
    train_x, train_y, test_x, test_y = data
    torch.manual_seed(seed)
    # nn.Conv2d / nn.Linear default init: kaiming_uniform(a=sqrt(5)) = U(+-1/sqrt(fan_in)), bias
    # the same.
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 20, 5),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(20, 50, 5),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(800, 500),
        torch.nn.ReLU(),
        torch.nn.Linear(500, 10),
    )
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    tx, ty = torch.from_numpy(train_x), torch.from_numpy(train_y.astype(np.int64))
    rng = np.random.RandomState(seed)  # the same permutations as the example
    n = len(train_x)
    seconds = 0.0
    for epoch in range(epochs):
        order = torch.from_numpy(rng.permutation(n))
        start = time.time()
        net.train()
        for i in range(0, n, batch):
            idx = order[i : i + batch]
            opt.zero_grad()
            loss = F.cross_entropy(net(tx[idx]), ty[idx])
            loss.backward()
            opt.step()
        seconds += time.time() - start
        sys.stdout.write("\r  pytorch epoch %d/%d done (%.1f s)" % (epoch + 1, epochs, seconds))
        sys.stdout.flush()
    sys.stdout.write("\n")
    net.eval()
    with torch.no_grad():
        pred = torch.cat(
            [
                net(torch.from_numpy(test_x[i : i + 1000])).argmax(1)
                for i in range(0, len(test_x), 1000)
            ]
        ).numpy()
    return float(np.mean(pred == test_y)), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--limit", type=int, default=0, help="train on the first N training images only"
    )
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch intra-op threads")
    parser.add_argument("--only", choices=["ours", "torch"], help="run one side only")
    args = parser.parse_args()
    if not lenet.dataset_present():
        print(
            "Fashion-MNIST not found in %s (Debian package dataset-fashion-mnist)" % lenet.DATA_DIR
        )
        return 2

    workspace.GlobalInit(["bench_lenet_fashion_mnist", "--caffe2_log_level=2"])
    train_x, train_y = lenet.load_split("train", limit=args.limit)
    test_x, test_y = lenet.load_split("test")
    data = (train_x, train_y, test_x, test_y)
    images = args.epochs * len(train_x)
    print(
        "LeNet, Fashion-MNIST: %d train images x %d epoch(s), batch %d, SGD lr %g momentum %g, "
        "test %d images"
        % (len(train_x), args.epochs, args.batch, args.lr, args.momentum, len(test_x))
    )

    rows = []
    if args.only != "torch":
        ours_acc, ours_s = run_ours(
            data, args.epochs, args.batch, args.lr, args.momentum, args.seed
        )
        rows.append(("caffe2 (ours)", ours_acc, images / ours_s))
    if args.only == "ours":
        pass
    elif torch is not None:
        torch.set_num_threads(args.threads)
        torch_acc, torch_s = run_torch(
            data, args.epochs, args.batch, args.lr, args.momentum, args.seed
        )
        rows.append(("pytorch %s" % torch.__version__, torch_acc, images / torch_s))
    else:
        print("PyTorch is not installed (Debian python3-torch): ours only")

    print("\n%-22s %14s %12s" % ("", "test accuracy", "images/s"))
    for name, acc, rate in rows:
        print("%-22s %13.2f%% %12.0f" % (name, 100 * acc, rate))
    if len(rows) == 2:
        print(
            "%-22s %+13.2f pt %11.2fx"
            % ("ours - torch, ours/torch", 100 * (rows[0][1] - rows[1][1]), rows[0][2] / rows[1][2])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
