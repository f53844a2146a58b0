"""python -m caffe2.distributed.launch with a tiny fake script (written to tmp_path) that prints its
args and environment and then behaves by its shard id: the flags and environment of every shard,
the prefixed output (also when shards write more than a pipe holds), a failing shard stopping the
others and being named with its exit code or signal, restarts under fresh run ids, exhausted
restarts, the flags the launcher refuses, and SIGTERM to the launcher. The launcher with the real
trainer is in tests/python/examples/test_resnet50_trainer_restarts.py.

Every launcher's output goes to a file; a shard that must still be running when another fails waits
for it by a "ready" file, so no test depends on timing."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from caffe2.distributed import launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

FAKE = r"""
import json, os, signal, sys, time
argv = sys.argv[1:]
mode, ready_dir = argv[argv.index("--mode") + 1], argv[argv.index("--ready_dir") + 1]
shard = int(argv[argv.index("--shard_id") + 1])
restart = int(os.environ["C2_RESTART_COUNT"])
print("ARGS " + json.dumps(argv))
print("ENV " + json.dumps({k: v for k, v in os.environ.items() if k.startswith("C2_")}))
print("to stderr from shard {}".format(shard), file=sys.stderr)


def ready(shard):
    return os.path.join(ready_dir, "ready{}.{}".format(shard, restart))


def sleep():
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(ready(shard), "w").close()  # up (and any handler in place)
    time.sleep(600)


if mode == "chatty":
    for i in range(4000):
        print("shard {} line {} ".format(shard, i) + "x" * 80)
        print("shard {} err {} ".format(shard, i) + "y" * 80, file=sys.stderr)
elif mode == "sleep":
    sleep()
elif mode != "ok" and shard == 1 and (mode != "fail_once" or restart == 0):
    while not os.path.exists(ready(0)):
        time.sleep(0.01)
    print("shard 1 gives up", flush=True)
    if mode == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(3)
elif mode != "ok" and not (mode == "fail_once" and restart > 0):
    sleep()
"""

STARTED = re.compile(
    r"^\[launch\] started shard (\d+) \(local rank (\d+), restart (\d+)\) pid (\d+)$"
)


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "fake.py"
    path.write_text(FAKE)
    (tmp_path / "ready").mkdir()
    (tmp_path / "store").mkdir()
    return tmp_path


def env():
    return dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))


def launch_cmd(tmp, mode, *flags):
    return (
        [sys.executable, "-m", "caffe2.distributed.launch"]
        + list(flags)
        + ["--", str(tmp / "fake.py"), "--mode", mode, "--ready_dir", str(tmp / "ready")]
    )


def run_launcher(tmp, mode, *flags, timeout=120):
    """Runs the launcher to its end, its stdout and stderr to one file; returns (code, output)."""
    log = tmp / "launcher.log"
    with open(log, "w") as f:
        code = subprocess.run(
            launch_cmd(tmp, mode, *flags),
            env=env(),
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        ).returncode
    return code, log.read_text()


def shard_records(out, kind):
    """{shard: [the decoded JSON of each of its `kind` lines (ARGS or ENV), in order]}."""
    found = {}
    for m in re.finditer(r"^\[shard (\d+)\] {} (.*)$".format(kind), out, re.M):
        found.setdefault(int(m.group(1)), []).append(json.loads(m.group(2)))
    return found


def started(out):
    """[(shard, local rank, restart, pid)] from the launcher's "started" lines."""
    return [tuple(int(g) for g in m.groups()) for m in map(STARTED.match, out.splitlines()) if m]


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def flag(argv, name):
    return argv[argv.index(name) + 1]


@pytest.mark.parametrize("rendezvous", ["file", "redis", "redis_default_port"])
def test_shards_get_their_flags_environment_and_prefixes(fake, rendezvous):
    where = {
        "file": ["--file_store_path", str(fake / "store")],
        "redis": ["--redis_host", "store.example", "--redis_port", "7000"],
        "redis_default_port": ["--redis_host", "store.example"],
    }[rendezvous]
    expected = where + (["--redis_port", "6379"] if rendezvous == "redis_default_port" else [])
    # node 1 of 2, three shards per node: shards 3, 4, 5 of 6
    flags = ["--nnodes", "2", "--node_rank", "1", "--nproc_per_node", "3", "--run_id", "job7"]
    code, out = run_launcher(fake, "ok", *(flags + where))
    assert code == 0, out
    args, envs = shard_records(out, "ARGS"), shard_records(out, "ENV")
    assert sorted(args) == [3, 4, 5] and sorted(envs) == [3, 4, 5]
    for shard in (3, 4, 5):
        (argv,), (environ,) = args[shard], envs[shard]
        assert argv[:4] == ["--mode", "ok", "--ready_dir", str(fake / "ready")]  # theirs first
        tail = ["--num_shards", "6", "--shard_id", str(shard), "--run_id", "job7"] + expected
        assert argv[4:] == tail
        assert environ == {
            "C2_SHARD_ID": str(shard),
            "C2_NUM_SHARDS": "6",
            "C2_RUN_ID": "job7",
            "C2_LOCAL_RANK": str(shard - 3),
            "C2_RESTART_COUNT": "0",
        }
        assert "[shard {}] to stderr from shard {}".format(shard, shard) in out
    assert sorted(s[:3] for s in started(out)) == [(3, 0, 0), (4, 1, 0), (5, 2, 0)]
    # every line is the launcher's or a shard's
    assert all(re.match(r"^\[(launch|shard [345])\] ", line) for line in out.splitlines()), out
    assert out.rstrip().endswith("[launch] all 3 shard(s) exited 0")


def test_default_run_id_is_fresh_and_shared(fake):
    ids = []
    for _ in range(2):
        code, out = run_launcher(
            fake, "ok", "--nproc_per_node", "2", "--file_store_path", str(fake / "store")
        )
        assert code == 0, out
        runs = {flag(a[0], "--run_id") for a in shard_records(out, "ARGS").values()}
        assert len(runs) == 1
        ids.append(runs.pop())
    assert ids[0] != ids[1] and all(re.match(r"^[0-9a-f]{16}$", i) for i in ids)


def test_shards_writing_more_than_a_pipe_holds_do_not_stall(fake):
    # 3 shards x 2 streams x ~360 KiB, far beyond the 64 KiB of a pipe
    code, out = run_launcher(
        fake, "chatty", "--nproc_per_node", "3", "--file_store_path", str(fake / "store")
    )
    assert code == 0, out[-2000:]
    for shard in range(3):
        for kind in ("line", "err"):
            lines = re.findall(r"^\[shard {0}\] shard {0} {1} \d+ ".format(shard, kind), out, re.M)
            assert len(lines) == 4000, (shard, kind)


@pytest.mark.parametrize(
    "mode,how", [("fail", "exit code 3"), ("killed", "signal SIGKILL")], ids=["exit", "signal"]
)
def test_failing_shard_stops_the_others_and_is_named(fake, mode, how):
    t0 = time.time()
    code, out = run_launcher(
        fake, mode, "--nproc_per_node", "3", "--file_store_path", str(fake / "store")
    )
    assert code == 1, out
    assert time.time() - t0 < 60  # shards 0 and 2 sleep 600 s: they were stopped, not waited for
    pids = {s: pid for s, _, _, pid in started(out)}
    assert "[launch] shard 1 (pid {}) exited with {}: stopping the job".format(pids[1], how) in out
    for shard in (0, 2):
        assert "[launch] stopping shard {} (pid {}): SIGTERM".format(shard, pids[shard]) in out
        assert "[launch] shard {} stopped (signal SIGTERM)".format(shard) in out
        assert gone(pids[shard])
    report = "[launch] error: shard 1 (pid {}) failed with {}; its last 4 line(s):".format(
        pids[1], how
    )
    assert report in out, out
    tail = out[out.index(report) :].splitlines()[1:5]
    assert tail[0].startswith("[launch]   | ARGS ") and tail[3] == "[launch]   | shard 1 gives up"
    assert out.rstrip().endswith(
        "[launch] error: the job failed (no restarts allowed, 0 of 0): shard 1 " + how
    )


def test_shard_ignoring_sigterm_is_killed(fake):
    code, out = run_launcher(
        fake,
        "ignore_term",
        "--nproc_per_node",
        "2",
        "--file_store_path",
        str(fake / "store"),
        "--term_timeout",
        "1",
    )
    assert code == 1, out
    pid0 = [pid for s, _, _, pid in started(out) if s == 0][0]
    assert "[launch] shard 0 (pid {}) still runs after 1 s: SIGKILL".format(pid0) in out
    assert "[launch] shard 0 stopped (signal SIGKILL)" in out


def test_restart_under_a_fresh_run_id_then_success(fake):
    code, out = run_launcher(
        fake,
        "fail_once",
        "--nproc_per_node",
        "2",
        "--file_store_path",
        str(fake / "store"),
        "--run_id",
        "base",
        "--max_restarts",
        "1",
    )
    assert code == 0, out
    assert [(s, r) for s, _, r, _ in started(out)] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert "[launch] shard 1" in out and "failed with exit code 3; its last 4 line(s):" in out
    assert (
        "[launch] restart 1 of 1: starting every shard of this node again under run id base.r1 "
        "(C2_RESTART_COUNT=1)" in out
    )
    for shard in (0, 1):
        runs = [flag(a, "--run_id") for a in shard_records(out, "ARGS")[shard]]
        envs = [(e["C2_RUN_ID"], e["C2_RESTART_COUNT"]) for e in shard_records(out, "ENV")[shard]]
        assert runs == ["base", "base.r1"]
        assert envs == [("base", "0"), ("base.r1", "1")]
    assert out.rstrip().endswith("[launch] all 2 shard(s) exited 0")


def test_exhausted_restarts_fail_naming_the_shard(fake):
    code, out = run_launcher(
        fake,
        "fail",
        "--nproc_per_node",
        "2",
        "--file_store_path",
        str(fake / "store"),
        "--run_id",
        "base",
        "--max_restarts",
        "2",
    )
    assert code == 1, out
    runs = [flag(a, "--run_id") for a in shard_records(out, "ARGS")[1]]
    assert runs == ["base", "base.r1", "base.r2"]
    assert "[launch] restart 2 of 2:" in out and "restart 3" not in out
    assert out.rstrip().endswith(
        "[launch] error: the job failed (all restarts used, 2 of 2): shard 1 exit code 3"
    )


def test_sigterm_to_the_launcher_stops_every_shard(fake):
    log = fake / "launcher.log"
    with open(log, "w") as f:
        proc = subprocess.Popen(
            launch_cmd(
                fake, "sleep", "--nproc_per_node", "2", "--file_store_path", str(fake / "store")
            ),
            env=env(),
            stdout=f,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.time() + 60
            while not all((fake / "ready" / "ready{}.0".format(s)).exists() for s in (0, 1)):
                assert time.time() < deadline and proc.poll() is None, log.read_text()
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    out = log.read_text()
    assert "[launch] received SIGTERM: stopped every shard" in out
    for shard, _, _, pid in started(out):
        assert "[launch] shard {} stopped (signal SIGTERM)".format(shard) in out
        assert gone(pid)


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--nnodes", "2", "--file_store_path", "."], "--run_id is required with --nnodes > 1"),
        (
            ["--nnodes", "2", "--node_rank", "2", "--run_id", "r"],
            "--node_rank must be in [0, --nnodes) = [0, 2), got 2",
        ),
        (["--nproc_per_node", "2"], "more than one shard needs a rendezvous"),
        (["--nproc_per_node", "0"], "--nproc_per_node must be at least 1"),
        (["--file_store_path", "/no/such/dir"], "is not a directory"),
        (["--redis_port", "1"], "--redis_port needs --redis_host"),
        (["--max_restarts", "-1"], "--max_restarts and --term_timeout must be >= 0"),
    ],
)
def test_refused_flags(fake, capsys, flags, message):
    with pytest.raises(SystemExit) as e:
        launch.parse_args(flags + [str(fake / "fake.py")])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_refused_script_args(fake, capsys):
    script = str(fake / "fake.py")
    with pytest.raises(SystemExit):
        launch.parse_args(["--file_store_path", ".", script, "--shard_id=1", "--run_id", "x"])
    assert "remove --run_id, --shard_id from the script's args" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launch.parse_args([])
    assert "no script to run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launch.parse_args([str(fake / "missing.py")])
    assert "does not exist" in capsys.readouterr().err
    # with Redis alone, --file_store_path is the script's own (the trainer's checkpoint directory)
    args = launch.parse_args(["--redis_host", "h", "--", script, "--file_store_path", "/ckpt"])
    assert (args.script, args.script_args) == (script, ["--file_store_path", "/ckpt"])
