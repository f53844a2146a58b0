"""Plots the per-iteration metrics logs of examples/resnet50_trainer.py (`<name>.metrics.csv`, one
per shard) into a PNG.

    python -m caffe2.python.tools.plot_log LOG [LOG ...] [--out PREFIX] [--smooth N] [--title T]

One figure, three panels against the global iteration, one line per shard: the training loss, the
accuracy (training; the test accuracy at the ends of epochs as marked points) and the throughput
(images/s of each shard). Training curves are drawn faint as logged and solid as moving averages
over N iterations (default: about a thirtieth of the run; 1: no averaging). Dotted vertical lines
mark the ends of epochs. Written to PREFIX.png (PREFIX may end with .png), by default beside the
first log under its name without `.metrics.csv`.

A log is a CSV file whose header row names at least the columns global_iteration, loss, accuracy
and images_per_sec; shard, epoch and test_accuracy (empty but at the ends of epochs) are used when
present. Drawn with matplotlib's Agg renderer, so no display is needed.
"""
import argparse
import csv
import os
import sys

import numpy as np

REQUIRED = ["global_iteration", "loss", "accuracy", "images_per_sec"]
OPTIONAL = ["shard", "epoch", "test_accuracy"]


class LogError(Exception):
    """A log that cannot be plotted (missing, empty, not a metrics log, a bad value)."""


def _number(path, line, column, text):
    try:
        return float(text)
    except (TypeError, ValueError):
        raise LogError(
            "{}, line {}: {} is not a number: {!r}".format(path, line, column, text)
        ) from None


def read_log(path):
    """The series of one log, one per shard, in the order of their first rows: dicts with "shard"
    (None without that column), "path", and a numpy array per column of REQUIRED, "epoch" (when
    logged) and "test" (global_iteration, test_accuracy pairs, shape (n, 2))."""
    if not os.path.isfile(path):
        raise LogError("no such file: {}".format(path))
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise LogError("{} is empty: expected a metrics log with a header row".format(path))
    header = [name.strip() for name in rows[0]]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise LogError(
            "{} is not a metrics log: its first row must be a header naming the columns {} "
            "(missing: {}; found: {})".format(
                path, ", ".join(REQUIRED), ", ".join(missing), ",".join(header)[:200]
            )
        )
    where = {name: header.index(name) for name in REQUIRED + OPTIONAL if name in header}
    series = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row:  # a blank line
            continue
        if len(row) < len(header):
            if line == len(rows):  # the last row of a run still writing, or killed: left out
                print(
                    "plot_log: {}, line {}: incomplete row left out".format(path, line),
                    file=sys.stderr,
                )
                continue
            raise LogError(
                "{}, line {}: {} fields, expected {}".format(path, line, len(row), len(header))
            )
        shard = row[where["shard"]].strip() if "shard" in where else None
        s = series.setdefault(shard, {name: [] for name in REQUIRED + ["epoch", "test"]})
        values = {name: _number(path, line, name, row[where[name]]) for name in REQUIRED}
        for name in REQUIRED:
            s[name].append(values[name])
        if "epoch" in where:
            s["epoch"].append(_number(path, line, "epoch", row[where["epoch"]]))
        test = row[where["test_accuracy"]].strip() if "test_accuracy" in where else ""
        if test:
            test = _number(path, line, "test_accuracy", test)
            s["test"].append((values["global_iteration"], test))
    if not series:
        raise LogError("{} has a header but no rows".format(path))
    out = []
    for shard, s in series.items():
        arrays = {name: np.asarray(s[name], dtype=np.float64) for name in REQUIRED + ["epoch"]}
        arrays["test"] = np.asarray(s["test"], dtype=np.float64).reshape(-1, 2)
        arrays.update(shard=shard, path=path)
        out.append(arrays)
    return out


def moving_average(values, window):
    """The mean of each value and the window - 1 before it (fewer at the start)."""
    if window <= 1 or len(values) == 0:
        return values
    sums = np.cumsum(np.concatenate([[0.0], values]))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(0, ends - window)
    return (sums[ends] - sums[starts]) / (ends - starts)


def _labels(series):
    """The series' names in the legends: "shard K", with the file's name where shard ids repeat
    or are missing."""
    shards = [s["shard"] for s in series]
    unique = None not in shards and len(set(shards)) == len(shards)
    labels = []
    for s in series:
        if unique:
            labels.append("shard {}".format(s["shard"]))
        else:
            name = os.path.basename(s["path"])
            labels.append(name if s["shard"] is None else "{} shard {}".format(name, s["shard"]))
    return labels


def default_prefix(path):
    base = path
    for suffix in (".metrics.csv", ".csv"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def plot_logs(paths, out=None, smooth=None, title=None):
    """Draws the logs at `paths` (see the module's doc) into a PNG; returns its path."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    if not paths:
        raise LogError("no log given")
    series = [s for path in paths for s in read_log(path)]
    out = out or default_prefix(paths[0])
    if not out.endswith(".png"):
        out += ".png"
    longest = max(len(s["global_iteration"]) for s in series)
    window = smooth if smooth is not None else max(1, longest // 30)
    fig = Figure(figsize=(10, 10), dpi=100)
    axes = fig.subplots(3, 1, sharex=True)
    panels = [
        ("loss", "Training loss", "loss"),
        ("accuracy", "Accuracy", "accuracy"),
        ("images_per_sec", "Throughput per shard", "images/s"),
    ]
    for k, (s, label) in enumerate(zip(series, _labels(series))):
        color = "C{}".format(k % 10)
        x = s["global_iteration"]
        for ax, (column, _, _) in zip(axes, panels):
            y = s[column]
            if window > 1:
                ax.plot(x, y, color=color, alpha=0.25, linewidth=0.8)
            name = label + (" (train)" if column == "accuracy" else "")
            ax.plot(x, moving_average(y, window), color=color, linewidth=1.6, label=name)
        if len(s["test"]):
            axes[1].plot(
                s["test"][:, 0],
                s["test"][:, 1],
                color=color,
                marker="osD^v<>ph*"[k % 10],
                markersize=max(4.0, 9.0 - 2.5 * k),
                markeredgecolor="black",
                markeredgewidth=0.6,
                linestyle="--",
                label=label + " (test)",
            )
    ends = _epoch_ends(series[0])
    for ax, (_, heading, ylabel) in zip(axes, panels):
        for end in ends:
            ax.axvline(end, color="0.6", linestyle=":", linewidth=0.8)
        ax.set_title(heading)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right" if ax is axes[1] else "best", fontsize="small")
    axes[1].set_ylim(-0.02, 1.02)
    axes[2].set_ylim(bottom=0)
    axes[2].set_xlabel("global iteration")
    smoothing = "moving average over {} iterations".format(window) if window > 1 else "as logged"
    names = sorted({os.path.basename(default_prefix(p)) for p in paths})
    heading = title or ", ".join(names)
    notes = smoothing + ("; dotted lines: ends of epochs" if ends else "")
    fig.suptitle("{}\n({})".format(heading, notes), fontsize=11)
    fig.tight_layout()
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out)
    return out


def _epoch_ends(series):
    """The global iterations at which epochs end (from the epoch column), but the last one."""
    epoch = series["epoch"]
    if len(epoch) != len(series["global_iteration"]) or len(epoch) < 2:
        return []
    changes = np.nonzero(np.diff(epoch))[0]
    return [series["global_iteration"][i] for i in changes]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m caffe2.python.tools.plot_log",
        description="Plot the trainer's per-iteration metrics logs (<name>.metrics.csv) to a PNG.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="metrics CSV files (one per shard)")
    parser.add_argument(
        "--out", default=None, help="PNG path or prefix (default: beside the first log)"
    )
    parser.add_argument(
        "--smooth",
        type=int,
        default=None,
        help="moving average over N iterations (default: about 1/30 of the run; 1: none)",
    )
    parser.add_argument("--title", default=None, help="the figure's title (default: the names)")
    args = parser.parse_args(argv)
    if args.smooth is not None and args.smooth < 1:
        parser.error("--smooth must be at least 1, got {}".format(args.smooth))
    try:
        path = plot_logs(args.logs, out=args.out, smooth=args.smooth, title=args.title)
    except LogError as e:
        parser.exit(2, "plot_log: error: {}\n".format(e))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
