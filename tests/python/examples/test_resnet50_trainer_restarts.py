"""resnet50_trainer.py with checkpoints within epochs (--checkpoint_every) and automatic resuming:
a run killed (SIGKILL) within an epoch resumes with --resume_latest to the bits of an uninterrupted
one and leaves one checkpoint behind; under python -m caffe2.distributed.launch, a shard killed
within an epoch makes the launcher restart both shards, which resume from the newest checkpoint by
themselves (C2_RESTART_COUNT) and end with the bits of an uninterrupted job.

Where to kill is decided on a frozen run: when shard 0 reports a checkpoint within an epoch, the
test stops the shards (SIGSTOP) and looks at the directory; it kills only if the newest checkpoint
there is within an epoch, and lets the run go on otherwise. So the outcome does not depend on
timing. Every process's output is read line by line by a thread."""
import glob
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

import numpy as np

from resnet50_test_util import TRAINER, env, shard_cmd

EPOCH_ITERS_1 = 256 // 16  # iterations per epoch of one shard (shard_cmd: --epoch_size 256)
EPOCH_ITERS_2 = 256 // 32  # of two


class Watched(object):
    """A process whose stdout and stderr (one pipe) a thread reads line by line."""

    def __init__(self, cmd, environ):
        self.proc = subprocess.Popen(
            cmd, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines = []
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def next_line(self, deadline):
        """The next line, or None at the end of the output."""
        try:
            return self._queue.get(timeout=max(0.0, deadline - time.time()))
        except queue.Empty:
            raise AssertionError("no output within the deadline:\n" + self.output()[-3000:])

    def output(self):
        return "".join(self.lines)

    def finish(self, timeout=300):
        """Waits for the end; returns (exit code, output)."""
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=60)
        return code, self.output()


def iteration_of(path, epoch_iters):
    """The global iteration count a checkpoint was saved at, from its name."""
    m = re.match(r"^m_(\d+)(?:_it(\d+))?\.mdl$", os.path.basename(path))
    return int(m.group(2)) if m.group(2) else (int(m.group(1)) + 1) * epoch_iters


def newest_checkpoint(store, epoch_iters):
    saved = glob.glob(str(store / "m_*.mdl"))
    return max(saved, key=lambda p: iteration_of(p, epoch_iters)) if saved else None


def stop(pid):
    """SIGSTOP, and wait until the process is stopped (the signal takes effect asynchronously)."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.time() + 60
    while True:
        with open("/proc/{}/stat".format(pid)) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state in ("T", "t", "Z", "X"):
            return
        assert time.time() < deadline, "pid {} did not stop: state {}".format(pid, state)
        time.sleep(0.001)


def freeze_and_kill(watched, stop_pids, kill_pid, store, epoch_iters, pid_of=None):
    """Reads the output until shard 0 reports a checkpoint within an epoch; then stops stop_pids
    (SIGSTOP) and, if the newest checkpoint in `store` is one within an epoch, kills kill_pid
    (SIGKILL; the others stay stopped) and returns that checkpoint; else lets them go on.
    pid_of(line) may fill stop_pids / kill_pid from the output as it comes."""
    deadline = time.time() + 240
    while True:
        line = watched.next_line(deadline)
        assert line is not None, "the run ended before it was killed:\n" + watched.output()[-3000:]
        if pid_of is not None:
            pid_of(line)
        if not re.search(r"Saved checkpoint \S*/m_\d+_it\d+\.mdl", line):
            continue
        for pid in stop_pids():
            stop(pid)
        newest = newest_checkpoint(store, epoch_iters)
        if "_it" in os.path.basename(newest):
            os.kill(kill_pid(), signal.SIGKILL)
            return newest
        for pid in stop_pids():
            os.kill(pid, signal.SIGCONT)


def assert_same_bits(a_path, b_path, local=()):
    a, b = np.load(a_path), np.load(b_path)
    assert sorted(a.files) == sorted(b.files)
    assert any(k.endswith("_w_momentum") for k in a.files)
    assert [k for k in a.files if k not in local and a[k].tobytes() != b[k].tobytes()] == []


def test_checkpoint_names_order_and_choice(tmp_path, monkeypatch):
    import resnet50_trainer as trainer

    for name in ["m_0_it3.mdl", "m_1_it10.mdl", "m_0.mdl", "m_1_it9.mdl", "m_0_it6.mdl"]:
        (tmp_path / name).write_bytes(b"")
    # other names, and the partial file of a save in progress
    for name in ["m_x_5.mdl", "mm_7.mdl", "m_2_it20.mdl.tmp123", "m_3.mdl.tmp9", "m_1_itx.mdl"]:
        (tmp_path / name).write_bytes(b"")
    found = [os.path.basename(p) for p in trainer.list_checkpoints(str(tmp_path), "m")]
    assert found == ["m_0_it3.mdl", "m_0_it6.mdl", "m_0.mdl", "m_1_it9.mdl", "m_1_it10.mdl"]
    assert trainer.latest_checkpoint(str(tmp_path), "m") == str(tmp_path / "m_1_it10.mdl")
    assert trainer.latest_checkpoint(str(tmp_path), "m_x") == str(tmp_path / "m_x_5.mdl")
    assert trainer.latest_checkpoint(str(tmp_path), "none") is None
    assert trainer.latest_checkpoint(str(tmp_path / "missing"), "m") is None

    resume_point = trainer.resume_point
    assert resume_point("/d/m_0.mdl", 8, 8) == (1, 0)  # after an epoch: the next one
    assert resume_point("/d/m_1_it10.mdl", 10, 8) == (1, 2)  # within one: from the count
    assert resume_point("/d/best.mdl", 21, 8) == (2, 5)

    parser = trainer.build_parser()
    base = ["--train_data", "null", "--file_store_path", str(tmp_path), "--save_model_name", "m"]
    monkeypatch.delenv("C2_RESTART_COUNT", raising=False)
    assert trainer.checkpoint_to_resume(parser.parse_args(base), 0, False) is None
    newest = str(tmp_path / "m_1_it10.mdl")
    explicit = parser.parse_args(base + ["--resume_latest"])
    assert trainer.checkpoint_to_resume(explicit, 0, False) == newest
    monkeypatch.setenv("C2_RESTART_COUNT", "2")  # restarted by the launcher
    assert trainer.checkpoint_to_resume(parser.parse_args(base), 0, False) == newest
    given = base + ["--load_model_path", str(tmp_path / "m_0.mdl")]
    assert trainer.checkpoint_to_resume(parser.parse_args(given), 0, False) == given[-1]
    other = ["--save_model_name", "none"]
    assert trainer.checkpoint_to_resume(parser.parse_args(base + other), 0, False) is None


def test_killed_within_an_epoch_resumes_latest_to_the_same_bits(small_dbs, tmp_path):
    def cmd(store, *extra):
        return shard_cmd(
            small_dbs,
            store,
            0,
            1,
            uuid.uuid4().hex,
            "--seed",
            "7",
            "--params_npz",
            str(store / "params_{shard_id}.npz"),
            "--checkpoint_every",
            "3",
            *extra,
        )

    killed = tmp_path / "killed"
    killed.mkdir()
    run = Watched(cmd(killed, "--num_epochs", "1000"), env())
    try:
        pid = lambda: run.proc.pid
        resume_from = freeze_and_kill(run, lambda: [pid()], pid, killed, EPOCH_ITERS_1)
    finally:
        run.proc.kill()
        run.finish()
    itr = iteration_of(resume_from, EPOCH_ITERS_1)
    epoch, start = divmod(itr, EPOCH_ITERS_1)
    assert 0 < start  # within the epoch

    run = Watched(cmd(killed, "--num_epochs", str(epoch + 1), "--resume_latest"), env())
    code, out = run.finish()
    assert code == 0, out
    assert "Resuming from the newest checkpoint {} (--resume_latest)".format(resume_from) in out
    assert (
        "Resumed at epoch {} (iteration {}), within it from iteration {}/{}".format(
            epoch, itr, start + 1, EPOCH_ITERS_1
        )
        in out
    )
    assert "Reader advanced past {} records".format(itr * 16) in out
    # the resumed run's first progress line is the iteration after the checkpoint's
    progress = "epoch {0}/{0} iter {1}/{2} |"
    assert progress.format(epoch + 1, start, EPOCH_ITERS_1) not in out
    assert progress.format(epoch + 1, start + 1, EPOCH_ITERS_1) in out
    # only the newest checkpoint of the name remains, and no partial file of a save
    name = "resnet50_gpu1_b16_L10_lr0.05_v2"
    assert sorted(os.listdir(killed)) == sorted(
        ["m_{}.mdl".format(epoch), "params_0.npz", name + ".metrics.csv", name + ".args.json"]
        + [f for f in os.listdir(killed) if f.endswith(".log")]
    )
    # the metrics log goes on where the checkpoint was taken: one header, every iteration once
    with open(str(killed / (name + ".metrics.csv"))) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("shard,epoch,iteration,global_iteration,")
    assert [int(line.split(",")[3]) for line in lines[1:]] == list(
        range(1, (epoch + 1) * EPOCH_ITERS_1 + 1)
    )

    straight = tmp_path / "straight"
    straight.mkdir()
    code, out = Watched(cmd(straight, "--num_epochs", str(epoch + 1)), env()).finish()
    assert code == 0, out
    # one shard: every parameter, momentum and SpatialBN statistic was checkpointed
    assert_same_bits(killed / "params_0.npz", straight / "params_0.npz")


def launcher_cmd(dbs, store, *extra):
    """The launcher running two CPU shards of the trainer (shard_cmd's flags but the launcher's)."""
    trainer = shard_cmd(dbs, store, 0, 2, "unused")[2:]
    for name in ("--num_shards", "--shard_id", "--run_id", "--file_store_path"):
        i = trainer.index(name)
        del trainer[i : i + 2]
    return (
        [sys.executable, "-m", "caffe2.distributed.launch", "--nproc_per_node", "2"]
        + ["--file_store_path", str(store), "--max_restarts", "1", "--term_timeout", "2"]
        + [TRAINER]
        + trainer
        + ["--seed", "7", "--params_npz", str(store / "params_{shard_id}.npz")]
        + ["--checkpoint_every", "3", "--num_epochs", "2"]
        + list(extra)
    )


def test_launcher_restarts_a_killed_shard_from_a_checkpoint_within_an_epoch(small_dbs, tmp_path):
    killed = tmp_path / "killed"
    killed.mkdir()
    run = Watched(launcher_cmd(small_dbs, killed), env())
    pids = {}

    def pid_of(line):
        m = re.match(r"^\[launch\] started shard (\d) \(local rank \d, restart 0\) pid (\d+)", line)
        if m:
            pids[int(m.group(1))] = int(m.group(2))

    try:
        resume_from = freeze_and_kill(
            run, lambda: [pids[0], pids[1]], lambda: pids[1], killed, EPOCH_ITERS_2, pid_of
        )
        # shard 0 stays stopped: the launcher's SIGTERM waits, its SIGKILL ends it, and the
        # newest checkpoint stays the one seen here
        code, out = run.finish()
    finally:
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        run.finish()
    assert code == 0, out
    itr = iteration_of(resume_from, EPOCH_ITERS_2)
    epoch, start = divmod(itr, EPOCH_ITERS_2)
    assert 0 < start
    assert "[launch] shard 1 (pid {}) exited with signal SIGKILL".format(pids[1]) in out
    assert "[launch] shard 0 stopped (signal SIGKILL)" in out
    assert "[launch] restart 1 of 1: starting every shard of this node again" in out
    for shard in (0, 1):
        # shard 0 chose the checkpoint; shard 1 read its choice from the store
        prefix = "[shard {}] INFO:resnet50_trainer:".format(shard)
        assert (
            prefix + "Resuming from the newest checkpoint {} (restart 1)".format(resume_from) in out
        ), out[-5000:]
        assert (
            prefix
            + "Resumed at epoch {} (iteration {}), within it from iteration {}/{}".format(
                epoch, itr, start + 1, EPOCH_ITERS_2
            )
            in out
        )
        assert "[shard {}] epoch 2/2 iter 8/8 |".format(shard) in out
    assert out.rstrip().endswith("[launch] all 2 shard(s) exited 0")
    assert [os.path.basename(p) for p in glob.glob(str(killed / "m_*.mdl*"))] == ["m_1.mdl"]

    straight = tmp_path / "straight"
    straight.mkdir()
    code, out = Watched(launcher_cmd(small_dbs, straight), env()).finish()
    assert code == 0, out
    assert "[launch] restart" not in out and "Resum" not in out
    for shard in (0, 1):
        # SpatialBN's running statistics of shard 1 are its own and not checkpointed (shard 0
        # saves, as upstream): after the restart they start from shard 0's
        a = np.load(killed / "params_{}.npz".format(shard))
        local = [k for k in a.files if shard > 0 and k.endswith(("_rm", "_riv"))]
        assert_same_bits(
            killed / "params_{}.npz".format(shard), straight / "params_{}.npz".format(shard), local
        )
