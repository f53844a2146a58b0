"""Allreduce bandwidth on loopback: our Gloo Allreduce op against torch.distributed (gloo backend),
2 processes each, side by side in one run; then the step-time overhead of 2 shards over 1 for the
data-parallel ResNet of the main job (synthetic data, one thread per shard).

    /usr/bin/python3 benchmarks/bench_allreduce.py [--sizes_mb 1 16 100] [--iters 20] [--no_steps]

Bandwidth = bytes / median time per allreduce (for 2 ranks algorithm and bus bandwidth agree).
Each configuration runs `--rounds` times alternating caffe2 and torch; medians are reported.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORKER = r"""
import json, sys, time
import numpy as np
which, rank, size_mb, iters, store = (
    sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
n = int(size_mb * 1024 * 1024 / 4)
times = []
if which == "caffe2":
    from caffe2.python import core, workspace
    workspace.RunOperatorOnce(core.CreateOperator(
        "FileStoreHandlerCreate", [], ["store"], path=store, prefix="bench"))
    workspace.RunOperatorOnce(core.CreateOperator(
        "CreateCommonWorld", ["store"], ["cw"], name="cw", engine="GLOO", rank=rank, size=2))
    workspace.FeedBlob("x", np.ones(n, np.float32))
    net = core.Net("ar")
    net.Allreduce(["cw", "x"], ["x"], engine="GLOO")
    workspace.CreateNet(net)
    for i in range(iters + 3):
        t = time.perf_counter(); workspace.RunNet("ar"); times.append(time.perf_counter() - t)
    workspace.RunOperatorOnce(core.CreateOperator("Barrier", ["cw"], [], engine="GLOO"))
else:
    import torch, torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method="file://" + store + "/torch_store", rank=rank, world_size=2)
    x = torch.ones(n, dtype=torch.float32)
    for i in range(iters + 3):
        t = time.perf_counter(); dist.all_reduce(x); times.append(time.perf_counter() - t)
    dist.barrier()
times = sorted(times[3:])
print(json.dumps({"median": times[len(times) // 2]}))
"""


def allreduce_once(which, size_mb, iters):
    store = tempfile.mkdtemp(prefix="c2_bench_ar_")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, which, str(r), str(size_mb), str(iters), store],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError("{} worker failed:\n{}\n{}".format(which, out, err))
    return max(json.loads(o.strip().splitlines()[-1])["median"] for o, _ in outs)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def step_time(num_shards, iters, bucket_mb=0.0):
    """Median seconds per training iteration of the main job's ResNet-8 (synthetic data)."""
    store = tempfile.mkdtemp(prefix="c2_bench_step_")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    run_id = uuid.uuid4().hex
    cmd = [
        sys.executable,
        os.path.join(ROOT, "examples", "resnet50_trainer.py"),
        "--train_data",
        "null",
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
        "--num_labels",
        "10",
        "--batch_size",
        "64",
        "--epoch_size",
        str(64 * num_shards * iters),
        "--num_epochs",
        "1",
        "--num_shards",
        str(num_shards),
        "--run_id",
        run_id,
        "--file_store_path",
        store,
        "--log_dir",
        store,
        "--bucket_size_mb",
        str(bucket_mb),
    ]
    procs = [
        subprocess.Popen(
            cmd + ["--shard_id", str(s)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in range(num_shards)
    ]
    outs = [p.communicate(timeout=900)[0] for p in procs]
    rates = [float(x) for x in re.findall(r"\(([\d.]+) images/sec\)", outs[0])][3:]
    if any(p.returncode for p in procs) or not rates:
        raise RuntimeError("trainer failed:\n" + "\n".join(outs))
    return 64.0 / median(rates)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes_mb", type=float, nargs="+", default=[1, 16, 100])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step_iters", type=int, default=40)
    parser.add_argument("--no_steps", action="store_true")
    parser.add_argument("--no_allreduce", action="store_true")
    args = parser.parse_args()

    if not args.no_allreduce:
        print("Allreduce, 2 processes on 127.0.0.1, float32 (GB/s = bytes / median time)")
        print(
            "{:>8} | {:>12} | {:>12} | {:>6}".format(
                "size MB", "caffe2 GB/s", "torch GB/s", "ratio"
            )
        )
    for size in [] if args.no_allreduce else args.sizes_mb:
        ours, theirs = [], []
        iters = max(5, int(args.iters * min(1.0, 16.0 / size)))
        for _ in range(args.rounds):
            ours.append(allreduce_once("caffe2", size, iters))
            theirs.append(allreduce_once("torch", size, iters))
        nbytes = size * 1024 * 1024
        a, b = nbytes / median(ours) / 1e9, nbytes / median(theirs) / 1e9
        print("{:>8g} | {:>12.2f} | {:>12.2f} | {:>5.2f}x".format(size, a, b, a / b), flush=True)

    if not args.no_steps:
        one = step_time(1, args.step_iters)
        two = step_time(2, args.step_iters)
        bucketed = step_time(2, args.step_iters, bucket_mb=4.0)
        print(
            "\nData-parallel ResNet-8 (28x28x1, batch 64 per shard, 1 thread per shard): "
            "{:.1f} ms/step with 1 shard, {:.1f} ms/step with 2 shards (overhead {:+.0%}), "
            "{:.1f} ms/step with 2 shards and 4 MB gradient buckets (overhead {:+.0%})".format(
                1e3 * one, 1e3 * two, two / one - 1, 1e3 * bucketed, bucketed / one - 1
            )
        )


if __name__ == "__main__":
    main()
