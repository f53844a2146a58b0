"""Framework overhead: time per operator of a net of many tiny operators, for the simple and the
dag executors. Prints microseconds per operator (the target is at most 1 us on the simple net).

    python benchmarks/bench_net_overhead.py [--ops 1000] [--iters 200]
"""
import argparse
import time

import numpy as np

from caffe2.python import core, workspace


def build(num_ops, net_type):
    net = core.Net("overhead_" + net_type)
    net.Proto().type = net_type
    for i in range(num_ops):
        net.StopGradient("x", "x")  # in place: each op touches one float
    return net


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--iters", type=int, default=200)
    args = parser.parse_args()
    workspace.FeedBlob("x", np.zeros(1, np.float32))
    print("%-8s %10s %12s" % ("net", "ms/run", "us/op"))
    for net_type in ["simple", "dag"]:
        net = build(args.ops, net_type)
        workspace.CreateNet(net)
        workspace.RunNet(net, 10)
        start = time.perf_counter()
        workspace.RunNet(net, args.iters)
        ms = (time.perf_counter() - start) * 1000 / args.iters
        print("%-8s %10.3f %12.3f" % (net_type, ms, ms * 1000 / args.ops))


if __name__ == "__main__":
    main()
