"""Checks the CPU convolution rule (operators/conv/conv_policy.cc) against timing on this machine.

For the convolutions of the benchmark models (LeNet, ResNet-20 and, with --resnet50, ResNet-50, one
training step each), it runs the step twice in fresh processes: once under the fixed rule, once with
--caffe2_exhaustive_search, which times every variant of each case. It then prints, per case and
pass, the rule's choice, the fastest variant and the times timing saw, and the total time the rule
loses against timing (docs/determinism.md explains the variants).

    python benchmarks/tune_conv_policy.py [--resnet50] [--batch-scale 1.0]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    "lenet": ("lenet", 64, (1, 28, 28)),
    "resnet20": ("resnet20", 128, (1, 28, 28)),
    "resnet50": ("resnet50", 32, (3, 224, 224)),
}

CHOICE = re.compile(r"Conv(?:Gradient)? \(DNNL\) (conv_dnnl\.\S+ .*): (\S+)$")
TIMED = re.compile(r"timed (conv_dnnl\..*?)( weights| data)?: (.*); fastest (\S+)$")


def worker(model, batch, exhaustive, cache):
    """One training step of `model` with INFO logging (the choices go to stderr)."""
    sys.path.insert(0, HERE)
    import numpy as np
    import bench_cnn_vs_pytorch as bench
    from caffe2.python import workspace

    flags = ["tune", "--caffe2_log_level=0"]
    if exhaustive:
        flags += ["--caffe2_exhaustive_search", "--caffe2_autotune_cache=" + cache]
    workspace.GlobalInit(flags)
    name, _, shape = MODELS[model]
    layers = getattr(bench, name)()
    rng = np.random.RandomState(0)
    params = bench.init_weights(layers, rng)
    for k, v in params.items():
        workspace.FeedBlob(k, v)
        workspace.FeedBlob(k + "_mom", np.zeros_like(v))
    workspace.FeedBlob("data", rng.randn(batch, *shape).astype(np.float32))
    workspace.FeedBlob("label", rng.randint(0, layers[-1][3], size=batch).astype(np.int32))
    workspace.FeedBlob("lr", np.array([0.01], np.float32))
    net, _ = bench.build_caffe2(layers, params, True)
    workspace.RunNetOnce(net)


def run(model, batch, exhaustive, cache):
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        model,
        "--batch",
        str(batch),
        "--cache",
        cache,
    ] + (["--exhaustive"] if exhaustive else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("worker failed:\n" + out.stdout + out.stderr)
    choices, timings = {}, {}
    for line in out.stderr.splitlines():
        line = line.split("] ", 1)[-1]
        m = CHOICE.search(line)
        if m:
            choices[m.group(1)] = m.group(2)
        m = TIMED.search(line)
        if m and not m.group(2):
            timings[m.group(1)] = {
                name: float(ms)
                for name, ms in (part.rsplit(" ", 2)[:2] for part in m.group(3).split(", "))
            }
    return choices, timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resnet50", action="store_true")
    parser.add_argument("--batch-scale", type=float, default=1.0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--exhaustive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.batch, args.exhaustive, args.cache)
        return
    models = ["lenet", "resnet20"] + (["resnet50"] if args.resnet50 else [])
    total_rule = total_best = 0.0
    print("%-9s %-72s %-18s %-18s %s" % ("model", "case", "rule", "timed fastest", "timed ms"))
    for model in models:
        batch = max(1, int(MODELS[model][1] * args.batch_scale))
        with tempfile.TemporaryDirectory() as tmp:
            rule, _ = run(model, batch, False, "")
            timed_choice, timings = run(model, batch, True, os.path.join(tmp, "autotune.txt"))
        for key in sorted(rule):
            fastest = timed_choice.get(key, "?")
            times = timings.get(key, {})
            shown = ", ".join("%s %.2f" % kv for kv in times.items())
            if times and rule[key] in times:
                total_rule += times[rule[key]]
                total_best += min(times.values())
            mark = "" if rule[key] == fastest else "  <- differs"
            print(
                "%-9s %-72s %-18s %-18s %s%s"
                % (model, key[len("conv_dnnl.") :], rule[key], fastest, shown, mark)
            )
    if total_best:
        print(
            "\nwhere the rule's choice was among the timed options: rule %.1f ms, fastest %.1f ms "
            "(%.1f%% more)" % (total_rule, total_best, 100.0 * (total_rule / total_best - 1))
        )


if __name__ == "__main__":
    main()
