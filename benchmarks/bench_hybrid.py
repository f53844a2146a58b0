"""Hybrid parallelism against pure data parallelism: two training shards of
examples/resnet50_trainer.py, each on a simulated host of its own whose link carries --rate
(1 Gbit/s by default) each way, synthetic data, one thread per shard.

    /usr/bin/python3 benchmarks/bench_hybrid.py [--rate 1gbit] [--models alexnet vgg]

For each model it runs the same training with every FC layer replicated and all-reduced (data
parallel) and with fc6, fc7 and fc8 split across the shards (--model_parallel_fc). It reports
- bytes per step: what the two hosts sent on their links (the veth counters), measured over two
  runs of different lengths and divided by the difference in steps, so that the rendezvous and the
  initial broadcast cancel out; beside it the payload the collectives must move by their
  algorithms (the expected figure, without TCP/IP headers): the all-reduce of the convolutions'
  gradients in both cases, plus the FC layers' gradients (data parallel) or their activations and
  activation gradients (hybrid);
- time per step: the median over the iterations after the second (from the trainer's metrics log,
  shard 0).
Needs root (network namespaces); every process runs with OMP_NUM_THREADS=1.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
from caffe2.distributed.simulated_hosts import SimulatedHosts, unavailable_reason  # noqa: E402

# name: (trainer flags, batch per shard, FC shapes (dim_in, dim_out) of fc6, fc7, fc8)
MODELS = {
    "alexnet": (
        ["--model", "alexnet", "--image_size", "227", "--num_channels", "3"]
        + ["--num_labels", "1000", "--fc_width", "4096"],
        8,
        [(9216, 4096), (4096, 4096), (4096, 1000)],
    ),
    "vgg": (
        ["--model", "vgg", "--image_size", "32", "--num_channels", "3"]
        + ["--num_labels", "10", "--fc_width", "4096"],
        32,
        [(2048, 4096), (4096, 4096), (4096, 10)],
    ),
}
HYBRID = ["--model_parallel_fc", "fc6,fc7,fc8"]


def sent_bytes(hosts):
    """Bytes every host has sent on its link so far (its bridge port's receive counter)."""
    total = 0
    for port in hosts.ports:
        with open("/sys/class/net/{}/statistics/rx_bytes".format(port)) as f:
            total += int(f.read())
    return total


def train(hosts, flags, batch, steps):
    """Runs both shards for `steps` iterations; returns (bytes sent, seconds per step)."""
    store = tempfile.mkdtemp(prefix="c2_bench_hybrid_")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    cmd = [sys.executable, os.path.join(ROOT, "examples", "resnet50_trainer.py")]
    cmd += ["--train_data", "null", "--use_cpu", "1", "--batch_size", str(batch)]
    cmd += ["--epoch_size", str(batch * 2 * steps), "--num_epochs", "1", "--print_every", "1"]
    cmd += ["--num_shards", "2", "--run_id", uuid.uuid4().hex, "--file_store_path", store]
    cmd += ["--log_dir", store, "--distributed_interfaces", "eth0", "--save_model_name", "m"]
    cmd += flags
    logs = [os.path.join(store, "shard{}.out".format(s)) for s in range(2)]
    before = sent_bytes(hosts)
    procs = []
    for s in range(2):
        with open(logs[s], "w") as log:  # a file: unread pipes would stall the shards
            procs.append(
                hosts.popen(
                    s, cmd + ["--shard_id", str(s)], env=env, stdout=log, stderr=subprocess.STDOUT
                )
            )
    for p in procs:
        p.wait(timeout=1800)
    sent = sent_bytes(hosts) - before
    outs = [open(log).read() for log in logs]
    if any(p.returncode for p in procs):
        raise RuntimeError("trainer failed:\n" + "\n".join(o[-3000:] for o in outs))
    # shard 0's metrics log: elapsed_s is the time since the start at each iteration's end
    (metrics,) = [n for n in os.listdir(store) if n.endswith("shard0.metrics.csv")]
    with open(os.path.join(store, metrics)) as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:]]
    elapsed = [float(row[8]) for row in rows if row[8]]
    steps = [b - a for a, b in zip(elapsed, elapsed[1:])]  # iterations 2, 3, ...
    steps = sorted(steps[1:] or steps)  # past the first iterations (allocation, first exchanges)
    return sent, steps[len(steps) // 2]


def parameter_counts(name):
    """(convolution parameters, FC parameters) of the model, from its parameter shapes."""
    from caffe2.python import model_helper
    from caffe2.python.models import vgg

    flags, _, _ = MODELS[name]
    value = dict(zip(flags[::2], flags[1::2]))
    model = model_helper.ModelHelper(name="count")
    create = vgg.create_alexnet if name == "alexnet" else vgg.create_small_vgg
    create(
        model,
        "data",
        int(value["--num_channels"]),
        int(value["--num_labels"]),
        int(value["--image_size"]),
        fc_width=int(value["--fc_width"]),
    )
    counts = [0, 0]
    for param in model.GetParams():
        size = 1
        for d in model.get_param_info(param).shape:
            size *= d
        counts[str(param).startswith("fc")] += size
    return counts


def expected_bytes(name, batch, hybrid):
    """Payload both shards send per step by the collectives' algorithms (2 shards, float32). A
    2-rank all-reduce of S bytes: each rank sends S / 2 twice (reduce-scatter, allgather)."""
    conv, fc = parameter_counts(name)
    if not hybrid:
        return 2 * 4 * (conv + fc)
    total = 2 * 4 * conv
    for dim_in, dim_out in MODELS[name][2]:
        total += 2 * 2 * 4 * batch * dim_in  # AllgatherBatch, ReduceScatterBatch: a batch each way
        total += 2 * 4 * batch * dim_out  # ColumnShardsToBatch, BatchToColumnShards: half of one
    return total


def run_model(hosts, name, short, long):
    flags, batch, _ = MODELS[name]
    rows = []
    for label, extra in [("data parallel", []), ("hybrid (fc6-8 split)", HYBRID)]:
        sent_short, _ = train(hosts, flags + extra, batch, short)
        sent_long, step = train(hosts, flags + extra, batch, long)
        per_step = (sent_long - sent_short) / float(long - short)
        rows.append((label, per_step, expected_bytes(name, batch, bool(extra)), step))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", default="1gbit")
    parser.add_argument("--models", nargs="+", default=["alexnet", "vgg"], choices=list(MODELS))
    parser.add_argument("--short", type=int, default=3)
    parser.add_argument("--long", type=int, default=8)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(reason)
    with SimulatedHosts(2, rate=args.rate) as hosts:
        for name in args.models:
            _, batch, fc_shapes = MODELS[name]
            fc_params = sum(i * o + o for i, o in fc_shapes)
            print(
                "\n{}: batch {} per shard, 2 hosts, links of {} each way; FC layers {} "
                "({:.1f}M parameters)".format(
                    name,
                    batch,
                    args.rate,
                    ", ".join("{}x{}".format(i, o) for i, o in fc_shapes),
                    fc_params / 1e6,
                ),
                flush=True,
            )
            print(
                "{:<22} | {:>15} | {:>15} | {:>9}".format(
                    "configuration", "MB sent / step", "MB expected", "ms / step"
                )
            )
            rows = run_model(hosts, name, args.short, args.long)
            for label, sent, expected, step in rows:
                print(
                    "{:<22} | {:>15.2f} | {:>15.2f} | {:>9.0f}".format(
                        label, sent / 1e6, expected / 1e6, 1e3 * step
                    ),
                    flush=True,
                )
            dp, hy = rows
            print(
                "hybrid / data parallel: {:.4f}x the bytes, {:.2f}x the step time".format(
                    hy[1] / dp[1], hy[3] / dp[3]
                )
            )


if __name__ == "__main__":
    main()
