"""experiment_util.ModelTrainerLog: the exact CSV format of the trainer
log (spec §3.14)."""
import argparse
import re

import numpy as np

from caffe2.python import experiment_util


class RecordingLogger(experiment_util.ExternalLogger):
    def __init__(self):
        self.args, self.logs = None, []

    def set_runtime_args(self, runtime_args):
        self.args = runtime_args

    def log(self, log_dict):
        self.logs.append(dict(log_dict))


def test_csv_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(batch_size=32, num_gpus=1)
    external = RecordingLogger()
    log = experiment_util.ModelTrainerLog("resnet50_gpu1_b32", args, external_loggers=[external])
    assert re.fullmatch(r"resnet50_gpu1_b32_\d{8}_\d{6}", log.experiment_id)
    assert log.filename == log.experiment_id + ".log"
    assert external.args["batch_size"] == 32
    assert external.args["experiment_id"] == log.experiment_id

    extra = {
        "test_accuracy": -1,
        "loss": np.array(2.5, np.float32),
        "accuracy": np.float32(0.25),
        "learning_rate": np.array([0.1]),
        "epoch": 1,
    }
    log.log(input_count=64, batch_count=2, additional_values=extra)
    log.log(input_count=128, batch_count=4, additional_values=extra)

    lines = (tmp_path / log.filename).read_text().splitlines()
    assert lines[0] == "# Namespace(batch_size=32, num_gpus=1)"
    assert lines[1] == (
        "time_spent,cumulative_time_spent,input_count,"
        "cumulative_input_count,cumulative_batch_count,inputs_per_sec,"
        "accuracy,epoch,learning_rate,loss,test_accuracy"
    )
    assert len(lines) == 4  # the header is written once
    for line, (count, cumulative, batches) in zip(lines[2:], [(64, 64, 2), (64, 128, 4)]):
        fields = line.split(",")
        assert len(fields) == 11
        float(fields[0]), float(fields[1]), float(fields[5])
        assert fields[2:5] == [str(count), str(cumulative), str(batches)]
        # str() of the values: 0-d arrays and numpy scalars print as
        # numbers, 1-element arrays keep their brackets.
        assert fields[6:] == ["0.25", "1", "[0.1]", "2.5", "-1"]
    assert list(external.logs[0])[:6] == [
        "time_spent",
        "cumulative_time_spent",
        "input_count",
        "cumulative_input_count",
        "cumulative_batch_count",
        "inputs_per_sec",
    ]


def test_logstr_appends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = experiment_util.ModelTrainerLog("x", {"a": 1})
    log.logstr("hello")
    assert (tmp_path / log.filename).read_text().splitlines() == ["# {'a': 1}", "hello"]


def test_zero_time_gives_zero_rate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = experiment_util.ModelTrainerLog("z", "args")
    monkeypatch.setattr(experiment_util.time, "time", lambda: 1000.0)
    log.last_time = log.start_time = 1000.0
    log.log(10, 1, {})
    last = (tmp_path / log.filename).read_text().splitlines()[-1]
    assert last.split(",")[5] == "0.0"
