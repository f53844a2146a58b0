"""What examples/resnet50_trainer.py reports while it trains (beyond upstream, whose per-epoch CSV
log, experiment_util.ModelTrainerLog, is written as well): a compact progress line and a metrics
log with one row per iteration, plus the run's arguments. Re-exported by resnet50_trainer.

Progress line, on stdout: at the first iteration a process trains, every --print_every iterations
of an epoch, and at the last iteration of every epoch. Epochs and iterations count from 1; img/s
is this shard's, over the iterations since the previous line (their RunNet time); lr is the
learning rate blob of the first device; ETA is the rest of the whole run at the mean wall time per
iteration so far (tests and checkpoints included):

    epoch 1/3 iter 120/468 | loss 0.4120 acc 0.875 | 1234 img/s | lr 0.1 | ETA 2m13s

and after each epoch's test: `epoch 1/3 | test accuracy 0.8123`.

Metrics log `<log_dir>/<name>.metrics.csv`: a header row, then one row per iteration:

    shard,epoch,iteration,global_iteration,loss,accuracy,learning_rate,images_per_sec,elapsed_s,
    test_accuracy

`epoch` counts from 0 (as the checkpoints' names and the per-epoch log), `iteration` from 1 to the
iterations of an epoch; `global_iteration` is the number of iterations trained in the run so far
(the optimizer's iteration count); `images_per_sec` is this shard's, of that iteration's RunNet;
`elapsed_s` the wall seconds of training so far, added up over resumed runs; `test_accuracy` is
empty except in the last row of an epoch when there is a test set (that row is written after the
test). Rows are flushed as they are written. A resumed run keeps the rows up to the iteration it
resumes from, drops the later ones (the interrupted run trained them; they are trained again) and
appends, under the same header; a run from scratch starts the file anew.
`<log_dir>/<name>.args.json` holds the run's arguments.

`<name>` is --run_name ({shard_id} replaced) or upstream's experiment name; with several shards and
no {shard_id} in it, `_shard<K>` is appended so that shards sharing --log_dir do not share files.
"""
import csv
import json
import logging
import os
import sys
import time

log = logging.getLogger("resnet50_trainer")

METRICS_COLUMNS = [
    "shard",
    "epoch",
    "iteration",
    "global_iteration",
    "loss",
    "accuracy",
    "learning_rate",
    "images_per_sec",
    "elapsed_s",
    "test_accuracy",
]


def metrics_name(expname, run_name, shard_id, num_shards):
    """The base name of this shard's metrics and arguments files (see the module's doc)."""
    if num_shards > 1 and "{shard_id}" not in (run_name or ""):
        return "{}_shard{}".format(expname, shard_id)
    return expname


def format_duration(seconds):
    """45s, 2m13s, 1h05m."""
    seconds = int(round(max(0.0, seconds)))
    if seconds < 60:
        return "{}s".format(seconds)
    if seconds < 3600:
        return "{}m{:02d}s".format(seconds // 60, seconds % 60)
    return "{}h{:02d}m".format(seconds // 3600, seconds % 3600 // 60)


def write_args(path, args):
    """The run's arguments as JSON (written to a temporary name, then renamed into place)."""
    temp = path + ".tmp{}".format(os.getpid())
    with open(temp, "w") as f:
        json.dump(vars(args), f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    os.replace(temp, path)


def _kept_rows(path, resume_from):
    """The rows of an existing metrics log up to global iteration `resume_from`, and the elapsed
    seconds of the last of them; ([], 0.0) when there is no such log."""
    if not os.path.exists(path):
        return [], 0.0
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != METRICS_COLUMNS:
        log.warning("%s is not a metrics log of this trainer: starting it anew", path)
        return [], 0.0
    kept = []
    where = METRICS_COLUMNS.index("global_iteration")
    for row in rows[1:]:
        # a row cut short by the end of the interrupted run is left out
        if len(row) == len(METRICS_COLUMNS) and row[where].isdigit():
            if int(row[where]) <= resume_from:
                kept.append(row)
    elapsed = float(kept[-1][METRICS_COLUMNS.index("elapsed_s")]) if kept else 0.0
    return kept, elapsed


class TrainingReport(object):
    """Prints the progress lines and writes the metrics log of one shard.

    `resume_from`: the global iteration the run resumes from (None: a run from scratch). Call
    iteration() after every training iteration, epoch_end() after each epoch's test, close() at
    the end."""

    def __init__(
        self,
        path,
        shard_id,
        num_epochs,
        epoch_iters,
        print_every,
        resume_from=None,
        out=None,
    ):
        self.path = path
        self.shard_id = shard_id
        self.num_epochs = num_epochs
        self.epoch_iters = epoch_iters
        self.print_every = max(1, print_every)
        self.out = out or sys.stdout
        self.first = resume_from or 0  # the global iteration this process starts from
        kept, self.elapsed_before = (
            ([], 0.0) if resume_from is None else _kept_rows(path, self.first)
        )
        temp = path + ".tmp{}".format(os.getpid())
        with open(temp, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(METRICS_COLUMNS)
            writer.writerows(kept)
        os.replace(temp, path)
        self.file = open(path, "a", newline="")
        self.writer = csv.writer(self.file)
        self.start = time.time()
        self.window_images, self.window_seconds = 0, 0.0
        self.pending = None  # the last row of an epoch, written after its test

    def elapsed(self):
        return self.elapsed_before + time.time() - self.start

    def iteration(self, epoch, iteration, loss, accuracy, learning_rate, images, seconds):
        """After iteration `iteration` (1..epoch_iters) of epoch `epoch` (from 0), which trained
        `images` images in `seconds` of RunNet."""
        global_iteration = epoch * self.epoch_iters + iteration
        row = [
            self.shard_id,
            epoch,
            iteration,
            global_iteration,
            "{:.6g}".format(loss),
            "{:.6g}".format(accuracy),
            "{:.6g}".format(learning_rate),
            "{:.1f}".format(images / seconds if seconds > 0 else 0.0),
            "{:.3f}".format(self.elapsed()),
            "",
        ]
        if iteration < self.epoch_iters:
            self._write(row)
        else:
            self.pending = row
        self.window_images += images
        self.window_seconds += seconds
        if (
            global_iteration == self.first + 1
            or iteration % self.print_every == 0
            or iteration == self.epoch_iters
        ):
            self._print(self.progress_line(epoch, iteration, loss, accuracy, learning_rate))

    def progress_line(self, epoch, iteration, loss, accuracy, learning_rate):
        """The progress line after the given iteration; starts a new throughput window."""
        rate = self.window_images / self.window_seconds if self.window_seconds > 0 else 0.0
        self.window_images, self.window_seconds = 0, 0.0
        done = epoch * self.epoch_iters + iteration
        per_iteration = (time.time() - self.start) / max(1, done - self.first)
        eta = per_iteration * (self.num_epochs * self.epoch_iters - done)
        fmt = "epoch {}/{} iter {}/{} | loss {:.4f} acc {:.3f} | {:.0f} img/s | lr {:.4g} | ETA {}"
        return fmt.format(
            epoch + 1,
            self.num_epochs,
            iteration,
            self.epoch_iters,
            loss,
            accuracy,
            rate,
            learning_rate,
            format_duration(eta),
        )

    def epoch_end(self, epoch, test_accuracy=None):
        """After the test of epoch `epoch` (None: no test set)."""
        if self.pending is not None:
            if test_accuracy is not None:
                self.pending[-1] = "{:.6g}".format(test_accuracy)
            self._write(self.pending)
            self.pending = None
        if test_accuracy is not None:
            self._print(
                "epoch {}/{} | test accuracy {:.4f}".format(
                    epoch + 1, self.num_epochs, test_accuracy
                )
            )

    def close(self):
        if self.pending is not None:
            self._write(self.pending)
            self.pending = None
        self.file.close()

    def _write(self, row):
        self.writer.writerow(row)
        self.file.flush()

    def _print(self, line):
        print(line, file=self.out, flush=True)
