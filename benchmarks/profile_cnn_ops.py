"""Per-op-type time of one training (or inference) step of the models of bench_cnn_vs_pytorch.py,
from the net's per-op benchmark (workspace.BenchmarkNet with run_individual): where a step goes.

    python benchmarks/profile_cnn_ops.py [--model resnet20|lenet|resnet50] [--batch 128] [--infer]
"""
import argparse
import collections
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from bench_cnn_vs_pytorch import build_caffe2, init_weights, lenet, resnet20, resnet50  # noqa: E402
from caffe2.python import workspace  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet20", choices=["lenet", "resnet20", "resnet50"])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--infer", action="store_true")
    args = parser.parse_args()
    workspace.GlobalInit(["profile", "--caffe2_log_level=2"])
    layers, shape = {
        "lenet": (lenet(), (1, 28, 28)),
        "resnet20": (resnet20(), (1, 28, 28)),
        "resnet50": (resnet50(), (3, 224, 224)),
    }[args.model]
    rng = np.random.RandomState(0)
    params = init_weights(layers, rng)
    for k, v in params.items():
        workspace.FeedBlob(k, v)
        workspace.FeedBlob(k + "_mom", np.zeros_like(v))
    workspace.FeedBlob("data", rng.randn(args.batch, *shape).astype(np.float32))
    workspace.FeedBlob("label", rng.randint(0, layers[-1][3], size=args.batch).astype(np.int32))
    workspace.FeedBlob("lr", np.array([0.01], np.float32))
    net, _ = build_caffe2(layers, params, not args.infer)
    workspace.CreateNet(net)
    times = workspace.BenchmarkNet(net.Proto().name, 1, args.runs, True)
    by_type = collections.Counter()
    count = collections.Counter()
    for op, t in zip(net.Proto().op, times[1:]):
        by_type[op.type] += t
        count[op.type] += 1
    total = sum(by_type.values())
    print(
        "step %.2f ms (whole net), %.2f ms (sum of ops); %.1f img/s"
        % (times[0], total, args.batch / times[0] * 1e3)
    )
    for name, t in by_type.most_common():
        print("%-28s %4d ops %9.2f ms %5.1f%%" % (name, count[name], t, 100 * t / total))


if __name__ == "__main__":
    main()
