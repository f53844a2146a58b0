"""resnet50_trainer_metrics, the trainer's reports (no training here; the trainer's runs check the
files it writes in test_resnet50_trainer.py and test_resnet50_trainer_restarts.py): when progress
lines are printed and what they say, the metrics log's rows (the last of an epoch written after
the test, with its accuracy), a resumed run's log (rows after the checkpoint dropped, one header,
elapsed time carried on, a cut last row and a foreign file handled), the files' names and the
arguments' JSON."""
import argparse
import csv
import json
import re

import pytest

import resnet50_test_util  # noqa: F401 (puts examples/ on sys.path)
from resnet50_trainer_metrics import (
    METRICS_COLUMNS,
    TrainingReport,
    format_duration,
    metrics_name,
    write_args,
)

EPOCH_ITERS, EPOCHS = 7, 2
LINE = re.compile(
    r"^epoch (\d+)/(\d+) iter (\d+)/(\d+) \| loss (\d+\.\d{4}) acc (\d\.\d{3}) \| (\d+) img/s "
    r"\| lr (\S+) \| ETA (\d+s|\d+m\d\ds|\d+h\d\dm)$"
)


class Out(object):
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.extend(line for line in text.split("\n") if line)

    def flush(self):
        pass


def train(report, epochs, start_epoch=0, start=0, tests=True):
    """Feeds the report as the trainer does: loss 1/g, accuracy g/100, 10 images in 0.01 s."""
    for epoch in range(start_epoch, epochs):
        for it in range(start + 1, EPOCH_ITERS + 1):
            g = epoch * EPOCH_ITERS + it
            report.iteration(epoch, it, 1.0 / g, g / 100.0, 0.1, 10, 0.01)
        start = 0
        report.epoch_end(epoch, 0.5 + epoch / 10.0 if tests else None)


def read(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_format_duration():
    assert [format_duration(s) for s in (-3, 0, 45.4, 59.6, 133, 3599, 3900, 90061)] == [
        "0s",
        "0s",
        "45s",
        "1m00s",
        "2m13s",
        "59m59s",
        "1h05m",
        "25h01m",
    ]


def test_metrics_name():
    assert metrics_name("resnet50_gpu1_b32", None, 0, 1) == "resnet50_gpu1_b32"
    assert metrics_name("resnet50_gpu1_b32", None, 1, 2) == "resnet50_gpu1_b32_shard1"
    assert metrics_name("fashion_shard1", "fashion_shard{shard_id}", 1, 2) == "fashion_shard1"
    assert metrics_name("fashion", "fashion", 1, 2) == "fashion_shard1"


def test_progress_lines_every_n_iterations_and_at_epoch_ends(tmp_path):
    out = Out()
    report = TrainingReport(str(tmp_path / "m.metrics.csv"), 0, EPOCHS, EPOCH_ITERS, 3, out=out)
    train(report, EPOCHS)
    report.close()
    progress = [LINE.match(line) for line in out.lines if " iter " in line]
    assert all(progress), out.lines
    # the first iteration, every 3rd of an epoch, and each epoch's last
    assert [(m.group(1), m.group(3)) for m in progress] == [
        ("1", "1"),
        ("1", "3"),
        ("1", "6"),
        ("1", "7"),
        ("2", "3"),
        ("2", "6"),
        ("2", "7"),
    ]
    assert {(m.group(2), m.group(4)) for m in progress} == {("2", "7")}
    # img/s over the iterations since the previous line: 10 images per 0.01 s
    assert {m.group(7) for m in progress} == {"1000"}
    assert progress[1].group(5) == "0.3333" and progress[1].group(6) == "0.030"
    assert progress[-1].group(8) == "0.1" and progress[-1].group(9) == "0s"
    tests = [line for line in out.lines if "test" in line]
    assert tests == ["epoch 1/2 | test accuracy 0.5000", "epoch 2/2 | test accuracy 0.6000"]
    assert out.lines.index(tests[0]) == out.lines.index(progress[3].group(0)) + 1


def test_metrics_rows(tmp_path):
    path = str(tmp_path / "m.metrics.csv")
    report = TrainingReport(path, 3, EPOCHS, EPOCH_ITERS, 10, out=Out())
    for it in range(1, EPOCH_ITERS + 1):
        report.iteration(0, it, 1.0 / it, 0.5, 0.1, 10, 0.02)
    # rows are flushed as written; the epoch's last waits for the test
    assert len(read(path)) == EPOCH_ITERS
    report.epoch_end(0, 0.75)
    assert len(read(path)) == EPOCH_ITERS + 1
    train(report, EPOCHS, start_epoch=1, tests=False)
    report.close()
    table = read(path)
    assert table[0] == METRICS_COLUMNS
    assert table[0] == (
        "shard,epoch,iteration,global_iteration,loss,accuracy,learning_rate,images_per_sec,"
        "elapsed_s,test_accuracy"
    ).split(",")
    body = table[1:]
    assert [int(r[3]) for r in body] == list(range(1, EPOCHS * EPOCH_ITERS + 1))
    assert [(r[0], r[1], r[2]) for r in body[:2]] == [("3", "0", "1"), ("3", "0", "2")]
    assert body[1][4:8] == ["0.5", "0.5", "0.1", "500.0"]
    assert [r[9] for r in body] == [""] * (EPOCH_ITERS - 1) + ["0.75"] + [""] * EPOCH_ITERS
    elapsed = [float(r[8]) for r in body]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0


def test_resume_keeps_the_rows_up_to_the_checkpoint_and_appends(tmp_path):
    path = str(tmp_path / "m.metrics.csv")
    report = TrainingReport(path, 0, 1000, EPOCH_ITERS, 3, out=Out())
    train(report, EPOCHS)
    report.iteration(EPOCHS, 1, 0.1, 0.9, 0.1, 10, 0.01)  # trained, but after the checkpoint
    report.close()
    with open(path, "a") as f:
        f.write("0,2,2,16,0.1")  # cut short by the end of the run
    saved = read(path)
    # the checkpoint was taken after global iteration 9 (epoch 1, iteration 2)
    out = Out()
    resumed = TrainingReport(path, 0, EPOCHS, EPOCH_ITERS, 3, resume_from=9, out=out)
    assert read(path) == saved[:10]
    train(resumed, EPOCHS, start_epoch=1, start=2)
    resumed.close()
    table = read(path)
    assert table[0] == METRICS_COLUMNS and table[1:10] == saved[1:10]
    assert [int(r[3]) for r in table[1:]] == list(range(1, EPOCHS * EPOCH_ITERS + 1))
    assert sum(1 for r in table if r == METRICS_COLUMNS) == 1
    assert float(table[10][8]) >= float(saved[9][8])  # elapsed goes on
    # the first line of the resumed process is its first iteration
    assert out.lines[0].startswith("epoch 2/2 iter 3/7 | ")


def test_resume_without_a_log_or_with_a_foreign_one_starts_anew(tmp_path, caplog):
    path = str(tmp_path / "m.metrics.csv")
    report = TrainingReport(path, 0, EPOCHS, EPOCH_ITERS, 3, resume_from=7, out=Out())
    report.iteration(1, 1, 0.5, 0.5, 0.1, 10, 0.01)
    report.close()
    assert [r[3] for r in read(path)[1:]] == ["8"]
    with open(path, "w") as f:
        f.write("time_spent,input_count\n0.5,400\n")
    report = TrainingReport(path, 0, EPOCHS, EPOCH_ITERS, 3, resume_from=7, out=Out())
    report.close()
    assert read(path) == [METRICS_COLUMNS]
    assert "is not a metrics log of this trainer: starting it anew" in caplog.text


def test_a_run_from_scratch_replaces_an_old_log(tmp_path):
    path = str(tmp_path / "m.metrics.csv")
    for _ in range(2):
        report = TrainingReport(path, 0, EPOCHS, EPOCH_ITERS, 3, out=Out())
        train(report, 1)
        report.close()
    assert [int(r[3]) for r in read(path)[1:]] == list(range(1, EPOCH_ITERS + 1))


def test_write_args(tmp_path):
    args = argparse.Namespace(batch_size=32, run_name=None, use_cpu=True, extra={1, 2})
    path = str(tmp_path / "run.args.json")
    write_args(path, args)
    with open(path) as f:
        assert json.load(f) == {
            "batch_size": 32,
            "extra": "{1, 2}",
            "run_name": None,
            "use_cpu": True,
        }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.args.json"]


@pytest.mark.parametrize("seconds", [0.0, 1e-9])
def test_zero_time_does_not_divide_by_zero(tmp_path, seconds):
    out = Out()
    report = TrainingReport(str(tmp_path / "m.csv"), 0, 1, 1, 1, out=out)
    report.iteration(0, 1, 0.5, 0.5, 0.1, 10, seconds)
    report.close()
    assert LINE.match(out.lines[0])
