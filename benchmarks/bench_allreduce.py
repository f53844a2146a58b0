"""Allreduce bandwidth: our Gloo Allreduce op against torch.distributed (gloo backend), 2 processes
each, side by side in one run; then the step-time overhead of 2 shards over 1 for the data-parallel
ResNet of the main job (synthetic data, one thread per shard).

    /usr/bin/python3 benchmarks/bench_allreduce.py [--sizes_mb 1 16 100] [--iters 20] [--no_steps]
        [--hosts loopback|netns] [--rate 1gbit]

--hosts loopback (default) runs both processes on 127.0.0.1; --hosts netns runs each on a simulated
host of its own (caffe2.distributed.simulated_hosts: a network namespace with its own address, root
needed) whose link --rate limits in both directions, and reports the payload rate in Gbit/s
(bytes x 8 / time) beside the link's. Bandwidth = bytes / median time per allreduce (for 2 ranks
algorithm and bus bandwidth agree). Each configuration runs `--rounds` times alternating caffe2 and
torch; medians are reported.
"""
import argparse
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from caffe2.distributed.simulated_hosts import SimulatedHosts, unavailable_reason  # noqa: E402

WORKER = r"""
import json, os, sys, time
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
        "CreateCommonWorld", ["store"], ["cw"], name="cw", engine="GLOO", rank=rank, size=2,
        interface=os.environ.get("C2_BENCH_IFACE", "")))
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


def allreduce_once(which, size_mb, iters, hosts=None):
    """Median seconds per allreduce of 2 processes; on `hosts` (SimulatedHosts), one per host."""
    store = tempfile.mkdtemp(prefix="c2_bench_ar_")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    if hosts is not None:
        env.update(C2_BENCH_IFACE="eth0", GLOO_SOCKET_IFNAME="eth0")
    procs = []
    for r in range(2):
        cmd = [sys.executable, "-c", WORKER, which, str(r), str(size_mb), str(iters), store]
        popen = subprocess.Popen if hosts is None else functools.partial(hosts.popen, r)
        procs.append(popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    # Each worker prints one short line: reading the pipes in turn cannot stall the other worker.
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError("{} worker failed:\n{}\n{}".format(which, out, err))
    return max(json.loads(o.strip().splitlines()[-1])["median"] for o, _ in outs)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def step_time(num_shards, iters, bucket_mb=0.0, hosts=None, model=None):
    """Median seconds per training iteration of the main job's ResNet-8 (synthetic data, batch 64
    per shard); on `hosts` (SimulatedHosts), one shard per host. `model` adds trainer flags."""
    store = tempfile.mkdtemp(prefix="c2_bench_step_")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    run_id = uuid.uuid4().hex
    cmd = [sys.executable, os.path.join(ROOT, "examples", "resnet50_trainer.py")]
    cmd += ["--train_data", "null", "--use_cpu", "1", "--batch_size", "64"]
    cmd += model or STEP_MODEL
    cmd += ["--epoch_size", str(64 * num_shards * iters), "--num_epochs", "1"]
    cmd += ["--num_shards", str(num_shards), "--run_id", run_id, "--file_store_path", store]
    cmd += ["--log_dir", store, "--bucket_size_mb", str(bucket_mb)]
    if hosts is not None:
        cmd += ["--distributed_interfaces", "eth0"]
    logs = [os.path.join(store, "shard{}.out".format(s)) for s in range(num_shards)]
    procs = []
    for s in range(num_shards):
        popen = subprocess.Popen if hosts is None else functools.partial(hosts.popen, s)
        with open(logs[s], "w") as log:  # a file: unread pipes would stall the shards
            procs.append(
                popen(cmd + ["--shard_id", str(s)], env=env, stdout=log, stderr=subprocess.STDOUT)
            )
    for p in procs:
        p.wait(timeout=900)
    outs = [open(log).read() for log in logs]
    rates = [float(x) for x in re.findall(r"\| ([\d.]+) img/s \|", outs[0])][2:]
    if any(p.returncode for p in procs) or not rates:
        raise RuntimeError("trainer failed:\n" + "\n".join(outs))
    return 64.0 / median(rates)


# The main job's ResNet-8 on 28x28 grayscale images.
STEP_MODEL = ["--model", "resnet", "--resnet_blocks", "1", "--num_channels", "1"]
STEP_MODEL += ["--image_size", "28", "--num_labels", "10"]


def step_table(args, hosts):
    """Step-time overhead of 2 shards over 1: gradients reduced one by one as backward produces
    them, in buckets as they fill (both overlap with the rest of backward on the dag net), and in
    one bucket holding every gradient (which waits for the whole backward pass: no overlap)."""
    where = "2 processes on 127.0.0.1" if hosts is None else "2 hosts, {} links".format(args.rate)
    one = step_time(1, args.step_iters)
    print("\nData-parallel ResNet-8 (28x28x1, batch 64 per shard, 1 thread per shard), " + where)
    print("{:<44} | {:>8} | {:>8}".format("configuration", "ms/step", "overhead"))
    print("{:<44} | {:>8.1f} | {:>8}".format("1 shard", 1e3 * one, "-"))
    configs = [
        ("2 shards, one Allreduce per gradient", 0.0),
        ("2 shards, 64 KiB buckets (overlapped)", 0.0625),
        ("2 shards, one bucket after backward (no overlap)", 1024.0),
    ]
    for name, bucket_mb in configs:
        t = step_time(2, args.step_iters, bucket_mb=bucket_mb, hosts=hosts)
        print("{:<44} | {:>8.1f} | {:>+7.0%}".format(name, 1e3 * t, t / one - 1), flush=True)


def allreduce_table(args, hosts):
    if hosts is None:
        print("Allreduce, 2 processes on 127.0.0.1, float32 (GB/s = bytes / median time)")
        head = ("size MiB", "caffe2 GB/s", "torch GB/s", "ratio")
    else:
        print(
            "Allreduce, 2 simulated hosts, links of {} each way, float32 "
            "(Gbit/s = bytes x 8 / median time)".format(args.rate or "unlimited speed")
        )
        head = ("size MiB", "caffe2 Gbit/s", "torch Gbit/s", "ratio")
    print("{:>8} | {:>13} | {:>13} | {:>6}".format(*head))
    for size in args.sizes_mb:
        ours, theirs = [], []
        iters = max(5, int(args.iters * min(1.0, 16.0 / size)))
        for _ in range(args.rounds):
            ours.append(allreduce_once("caffe2", size, iters, hosts))
            theirs.append(allreduce_once("torch", size, iters, hosts))
        nbytes = size * 1024 * 1024
        scale = 1e9 if hosts is None else 1e9 / 8
        a, b = nbytes / median(ours) / scale, nbytes / median(theirs) / scale
        print("{:>8g} | {:>13.3f} | {:>13.3f} | {:>5.2f}x".format(size, a, b, a / b), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes_mb", type=float, nargs="+", default=[1, 16, 100])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step_iters", type=int, default=40)
    parser.add_argument("--no_steps", action="store_true")
    parser.add_argument("--no_allreduce", action="store_true")
    parser.add_argument("--hosts", choices=["loopback", "netns"], default="loopback")
    parser.add_argument("--rate", default=None, help='link rate with --hosts netns, e.g. "1gbit"')
    args = parser.parse_args()

    if args.hosts == "netns":
        reason = unavailable_reason()
        if reason:
            raise SystemExit(reason)
    if not args.no_allreduce:
        if args.hosts == "netns":
            with SimulatedHosts(2, rate=args.rate) as hosts:
                allreduce_table(args, hosts)
        else:
            allreduce_table(args, None)

    if not args.no_steps:
        if args.hosts == "netns":
            with SimulatedHosts(2, rate=args.rate) as hosts:
                step_table(args, hosts)
        else:
            step_table(args, None)


if __name__ == "__main__":
    main()
