"""The main job: synchronous data-parallel training of a ResNet on Fashion-MNIST with N shards.

Runs `resnet50_trainer.py` N times on this machine (one process per shard, loopback TCP) through the
launcher `python -m caffe2.distributed.launch`, joined by a file-store rendezvous in a fresh
temporary directory, reading Datum LMDBs made from Debian's dataset-fashion-mnist with
`caffe2.python.tools.make_fashion_mnist_db` (made once, kept in --data_dir). Each shard prints a
progress line every --print_every iterations (the launcher prefixes its lines with `[shard K] `);
shard 0 writes a checkpoint every --checkpoint_every iterations and at the end of each epoch (only
the newest is kept), and every shard its CSV logs (per epoch, and per iteration:
`fashion_resnet_shard<K>.metrics.csv`); at the end every shard reports its test accuracy, and this
job plots the metrics of all shards into `<work_dir>/fashion_resnet.png`
(caffe2.python.tools.plot_log) and prints its path. If a shard dies, the launcher stops the others,
names it, and restarts every shard from the newest checkpoint (up to --max_restarts times); after
that it gives up, and so does this job, non-zero.

    python examples/distributed_fashion_mnist.py [--num_shards 2] [--epochs 2] [-- TRAINER FLAGS]

Flags after `--` go to the trainer unchanged (they win over the defaults below).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.join(HERE, "resnet50_trainer.py")
DEFAULT_DATA_DIR = os.path.join(os.path.dirname(HERE), "build", "data")
TRAIN_IMAGES, TEST_IMAGES = 60000, 10000


def make_dbs(data_dir, limit=None):
    """The Datum LMDBs (made once; with `limit`, of the first `limit` images of each split)."""
    if limit:
        data_dir = os.path.join(data_dir, "limit_{}".format(limit))
    train = os.path.join(data_dir, "fashion_mnist_train_datum_lmdb")
    test = os.path.join(data_dir, "fashion_mnist_test_datum_lmdb")
    if not (os.path.isdir(train) and os.path.isdir(test)):
        os.makedirs(data_dir, exist_ok=True)
        print("Making the Fashion-MNIST Datum LMDBs in {}".format(data_dir), flush=True)
        subprocess.check_call(
            [
                sys.executable,
                "-m",
                "caffe2.python.tools.make_fashion_mnist_db",
                "--output_dir",
                data_dir,
                "--form",
                "datum",
                "--db",
                "lmdb",
                "--quiet",
            ]
            + (["--limit", str(limit)] if limit else [])
        )
    return train, test


def trainer_flags(args, train_db, test_db, store_dir):
    """The trainer's flags but those the launcher sets (--num_shards, --shard_id, --run_id and the
    rendezvous directory --file_store_path)."""
    per_shard_batch = args.batch_size
    return [
        "--train_data",
        train_db,
        "--test_data",
        test_db,
        "--db_type",
        "lmdb",
        "--use_cpu",
        "1",
        "--num_gpus",
        "1",
        "--model",
        "resnet",
        "--resnet_blocks",
        str(args.resnet_blocks),
        "--num_channels",
        "1",
        "--image_size",
        "28",
        "--scale",
        "28",
        "--num_labels",
        "10",
        "--batch_size",
        str(per_shard_batch),
        "--epoch_size",
        str(args.epoch_size),
        "--num_epochs",
        str(args.epochs),
        "--base_learning_rate",
        str(args.lr),
        "--lr_linear_scaling",
        "--lr_warmup_epochs",
        "0.2",
        "--weight_decay",
        "1e-4",
        "--lr_step_epochs",
        str(max(1, args.epochs - 1)),
        "--bucket_size_mb",
        "4",
        "--num_test_iters",
        str(max(1, min(args.data_limit or TEST_IMAGES, TEST_IMAGES) // per_shard_batch)),
        "--save_model_name",
        "fashion_resnet",
        "--checkpoint_every",
        str(args.checkpoint_every),
        "--run_name",
        "fashion_resnet_shard{shard_id}",
        "--log_dir",
        store_dir,
        "--print_every",
        str(args.print_every),
    ] + args.trainer_args


def launcher_command(args, train_db, test_db, work_dir, run_id):
    return [
        sys.executable,
        "-m",
        "caffe2.distributed.launch",
        "--nproc_per_node",
        str(args.num_shards),
        "--file_store_path",
        work_dir,
        "--run_id",
        run_id,
        "--max_restarts",
        str(args.max_restarts),
        TRAINER,
    ] + trainer_flags(args, train_db, test_db, work_dir)


SHARD_LINE = re.compile(r"^\[shard (\d+)\] (.*)$")


def pump(proc, final_lines, restarts):
    """Copies the launcher's output (its own lines and the shards' prefixed ones). Keeps each
    shard's last "Final test accuracy" line in final_lines and the launcher's restart lines in
    restarts."""
    for line in proc.stdout:
        if line.startswith("[launch] restart "):
            restarts.append(line.strip())
        m = SHARD_LINE.match(line.rstrip("\n"))
        if m and m.group(2).startswith("Final test accuracy"):
            final_lines[int(m.group(1))] = m.group(2)
        sys.stdout.write(line)
        sys.stdout.flush()


def plot_metrics(work_dir):
    """Plots the shards' metrics logs into <work_dir>/fashion_resnet.png; returns its path, or
    None (with the reason on stderr) when there is nothing to plot or plotting fails: the job's
    outcome is the training's."""
    logs = sorted(glob.glob(os.path.join(work_dir, "fashion_resnet_shard*.metrics.csv")))
    if not logs:
        print("no metrics logs in {} to plot".format(work_dir), file=sys.stderr)
        return None
    try:
        from caffe2.python.tools import plot_log

        return plot_log.plot_logs(
            logs, out=os.path.join(work_dir, "fashion_resnet.png"), title="Fashion-MNIST ResNet"
        )
    except Exception as e:  # a broken plot must not hide the training's result
        print("could not plot the metrics: {}: {}".format(type(e).__name__, e), file=sys.stderr)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num_shards", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--epoch_size", type=int, default=TRAIN_IMAGES, help="images per epoch over all shards"
    )
    parser.add_argument("--batch_size", type=int, default=64, help="per shard")
    parser.add_argument("--resnet_blocks", type=int, default=1, help="1: ResNet-8, 3: ResNet-20")
    parser.add_argument("--lr", type=float, default=0.05, help="base LR per shard (scaled by N)")
    parser.add_argument("--data_dir", default=DEFAULT_DATA_DIR)
    parser.add_argument(
        "--data_limit",
        type=int,
        default=None,
        help="use only the first N images of each split (quick runs)",
    )
    parser.add_argument(
        "--work_dir",
        default=None,
        help="rendezvous, checkpoints and logs (default: a fresh temp dir)",
    )
    parser.add_argument(
        "--checkpoint_every",
        type=int,
        default=100,
        help="shard 0 also saves a checkpoint every n iterations within epochs (0: at ends only)",
    )
    parser.add_argument(
        "--max_restarts", type=int, default=1, help="restarts of every shard after a failure"
    )
    parser.add_argument(
        "--print_every",
        type=int,
        default=10,
        help="each shard prints a progress line every n iterations (trainer's --print_every)",
    )
    parser.add_argument("trainer_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.trainer_args and args.trainer_args[0] == "--":
        args.trainer_args = args.trainer_args[1:]

    train_db, test_db = make_dbs(args.data_dir, args.data_limit)
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="c2_fashion_")
    os.makedirs(work_dir, exist_ok=True)
    run_id = uuid.uuid4().hex[:12]
    print(
        "{} shards, run id {}, rendezvous/checkpoints/logs in {}".format(
            args.num_shards, run_id, work_dir
        ),
        flush=True,
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    start = time.time()
    # One pipe (the launcher's stdout and stderr), read by one thread.
    proc = subprocess.Popen(
        launcher_command(args, train_db, test_db, work_dir, run_id),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    final_lines, restarts = {}, []
    reader = threading.Thread(target=pump, args=(proc, final_lines, restarts), daemon=True)
    reader.start()
    code = proc.wait()
    reader.join()
    elapsed = time.time() - start
    accuracies = []
    for shard in range(args.num_shards):
        found = final_lines.get(shard)
        accuracies.append(float(found.split(":")[1]) if found else None)
    print(
        "\nFinished in {:.0f} s; launcher exit code {}, {} restart(s)".format(
            elapsed, code, len(restarts)
        )
    )
    for shard, acc in enumerate(accuracies):
        print(
            "shard {}: test accuracy {}".format(
                shard, "n/a" if acc is None else "{:.2%}".format(acc)
            )
        )
    checkpoints = sorted(f for f in os.listdir(work_dir) if f.endswith(".mdl"))
    print("checkpoints: {}".format(", ".join(checkpoints) or "none"))
    for kind, suffix in (("CSV log", ".log"), ("metrics", ".metrics.csv")):
        found = sorted(f for f in os.listdir(work_dir) if f.endswith(suffix))
        print("{}: {}".format(kind, ", ".join(os.path.join(work_dir, f) for f in found) or "none"))
    plot = plot_metrics(work_dir)
    if plot:
        print("plot: {}".format(plot))
    if code:
        print("the job failed (see the [launch] lines above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
