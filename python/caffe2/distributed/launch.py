"""Starts the shards of a distributed training script on this machine, watches them, and restarts
them all after a failure (a launcher in the manner of torchrun, for scripts with upstream Caffe2's
trainer command line, such as examples/resnet50_trainer.py).

    python -m caffe2.distributed.launch [--nproc_per_node N] [--nnodes M --node_rank R]
        (--file_store_path DIR | --redis_host HOST [--redis_port PORT]) [--run_id ID]
        [--max_restarts K] [--term_timeout S] [--] SCRIPT [SCRIPT ARGS...]

Each node of a job runs one launcher, which starts N processes (shards) of

    <this python> SCRIPT ARGS... --num_shards W --shard_id S --run_id ID <rendezvous flags>

where W = nnodes x nproc_per_node and S = node_rank x nproc_per_node + local rank. The same values
are in the environment of every shard, for scripts that prefer it: C2_SHARD_ID, C2_NUM_SHARDS,
C2_RUN_ID, C2_LOCAL_RANK (0..N-1 on this node) and C2_RESTART_COUNT (0, then 1, 2, ... after each
restart). PYTHONUNBUFFERED=1 is set too (unless set already), so that prints arrive in time.

Flags:
  --nproc_per_node N   shards on this node (default 1)
  --nnodes M           nodes in the job (default 1)
  --node_rank R        this node's place in 0..M-1 (default 0)
  --file_store_path D  rendezvous through files in D, a directory every shard sees (on several
                       nodes: a shared file system); the trainer also writes its checkpoints there
  --redis_host H       rendezvous through the Redis server at H ...
  --redis_port P       ... on port P (default 6379). Both rendezvous flags may be given: the
                       trainer then meets through Redis and keeps its checkpoints in D
  --run_id ID          the rendezvous namespace; every node of one job must pass the same. Default
                       (one node only): a fresh random one
  --max_restarts K     after a failure, restart every shard of this node up to K times (default
                       0: none)
  --term_timeout S     seconds between SIGTERM and SIGKILL when stopping shards (default 5)
A `--` before SCRIPT is optional. A rendezvous flag is needed when W > 1; --num_shards, --shard_id
and --run_id are the launcher's to set, and SCRIPT ARGS may not contain them.

Output: every line a shard writes (stdout and stderr) is copied to this stdout as `[shard S] line`;
the launcher's own events (`[launch] started shard S ... pid P`, failures, restarts, stops) are
lines starting with `[launch] `.

Exit behaviour: the launcher returns 0 once every shard has exited 0. When a shard exits non-zero
or is killed by a signal, the launcher stops every other shard of this node (SIGTERM, then SIGKILL
after --term_timeout seconds) and reports the shard, its exit code or signal and its last lines of
output. If fewer than --max_restarts restarts were made, it then starts every shard again, under
the run id `ID.r<k>` for the k-th restart (so that every node computes the same one without talking
to the others) and with C2_RESTART_COUNT=k; otherwise it exits with 1. Resuming is the script's
job: resnet50_trainer.py, seeing C2_RESTART_COUNT > 0, loads the newest checkpoint of its
--save_model_name. SIGINT or SIGTERM to the launcher stops every shard; it then exits with 128 +
the signal number.

Two nodes, two shards each, meeting through Redis on host `head` (checkpoints in /shared/ckpt, a
directory both nodes mount; the trainer's --file_store_path goes among the script's args):

    node0$ python -m caffe2.distributed.launch --nnodes 2 --node_rank 0 --nproc_per_node 2 \\
               --redis_host head --run_id job42 --max_restarts 3 \\
               examples/resnet50_trainer.py --train_data /data/train_lmdb \\
               --file_store_path /shared/ckpt --checkpoint_every 500
    node1$ python -m caffe2.distributed.launch --nnodes 2 --node_rank 1 --nproc_per_node 2 \\
               --redis_host head --run_id job42 --max_restarts 3 \\
               examples/resnet50_trainer.py --train_data /data/train_lmdb \\
               --file_store_path /shared/ckpt --checkpoint_every 500

When a shard on one node fails, the shards on the other node fail too (their collectives name the
lost peer within the collective timeout), so both launchers restart, both under `job42.r1`. Each
launcher counts only the failures it sees, so a node whose shards fail twice for one cause (say,
once in training and once waiting at the rendezvous) moves on to another run id than its peers;
give --max_restarts some room.
"""
import argparse
import collections
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid

TAIL_LINES = 10  # lines of a failed shard's output repeated in the failure report
_OWN_FLAGS = ("--num_shards", "--shard_id", "--run_id")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m caffe2.distributed.launch",
        description="Start, watch and restart the shards of a distributed training script.",
    )
    parser.add_argument("--nproc_per_node", type=int, default=1, help="shards on this node")
    parser.add_argument("--nnodes", type=int, default=1, help="nodes in the job")
    parser.add_argument("--node_rank", type=int, default=0, help="this node's rank, 0..nnodes-1")
    parser.add_argument("--file_store_path", default=None, help="file store directory")
    parser.add_argument("--redis_host", default=None, help="Redis server of the rendezvous")
    parser.add_argument("--redis_port", type=int, default=None, help="its port (default 6379)")
    parser.add_argument("--run_id", default=None, help="the same on every node (default: random)")
    parser.add_argument("--max_restarts", type=int, default=0, help="restarts after failures")
    parser.add_argument(
        "--term_timeout", type=float, default=5.0, help="seconds from SIGTERM to SIGKILL"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="[--] SCRIPT [SCRIPT ARGS]")
    return parser


def _flag_name(arg):
    return arg.split("=", 1)[0]


def parse_args(argv=None):
    """Parses and checks the launcher's flags; the script and its args go to .script and
    .script_args."""
    parser = build_parser()
    args = parser.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("no script to run: give SCRIPT [SCRIPT ARGS] after the launcher's flags")
    args.script, args.script_args = command[0], command[1:]
    for name in ("nproc_per_node", "nnodes"):
        if getattr(args, name) < 1:
            parser.error("--{} must be at least 1, got {}".format(name, getattr(args, name)))
    if not 0 <= args.node_rank < args.nnodes:
        parser.error(
            "--node_rank must be in [0, --nnodes) = [0, {}), got {}".format(
                args.nnodes, args.node_rank
            )
        )
    if args.max_restarts < 0 or args.term_timeout < 0:
        parser.error("--max_restarts and --term_timeout must be >= 0")
    if args.nnodes > 1 and not args.run_id:
        parser.error(
            "--run_id is required with --nnodes > 1: every node must pass the same run id "
            "(a random default would differ from node to node)"
        )
    if args.redis_port is not None and args.redis_host is None:
        parser.error("--redis_port needs --redis_host")
    if args.nnodes * args.nproc_per_node > 1 and not (args.file_store_path or args.redis_host):
        parser.error(
            "more than one shard needs a rendezvous: pass --file_store_path DIR (a directory "
            "every shard sees) or --redis_host HOST"
        )
    if args.file_store_path is not None and not os.path.isdir(args.file_store_path):
        parser.error(
            "--file_store_path {!r} is not a directory: create it (on several nodes, on a file "
            "system every node mounts)".format(args.file_store_path)
        )
    if not os.path.isfile(args.script):
        parser.error("the script {!r} does not exist".format(args.script))
    ours = list(_OWN_FLAGS)
    ours += ["--file_store_path"] if args.file_store_path is not None else []
    ours += ["--redis_host", "--redis_port"] if args.redis_host is not None else []
    given = sorted({_flag_name(a) for a in args.script_args if _flag_name(a) in ours})
    if given:
        parser.error(
            "the launcher sets {} for every shard: remove {} from the script's args".format(
                ", ".join(ours), ", ".join(given)
            )
        )
    if not args.run_id:
        args.run_id = uuid.uuid4().hex[:16]
    return args


def restart_run_id(run_id, restart):
    """The run id of the shards after `restart` restarts: the same on every node."""
    return run_id if restart == 0 else "{}.r{}".format(run_id, restart)


def exit_description(code):
    """'exit code 3' or 'signal SIGKILL' for a Popen return code."""
    if code is not None and code < 0:
        try:
            return "signal " + signal.Signals(-code).name
        except ValueError:
            return "signal {}".format(-code)
    return "exit code {}".format(code)


class _Shard(object):
    """One running shard: its process, the thread copying its output, and its last lines."""

    def __init__(self, launcher, shard_id, local_rank, cmd, env, events):
        self.shard_id = shard_id
        self.local_rank = local_rank
        self.tail = collections.deque(maxlen=TAIL_LINES)
        self.proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.pid = self.proc.pid
        self._launcher = launcher
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.waiter = threading.Thread(target=self._wait, args=(events,), daemon=True)
        self.waiter.start()

    def _read(self):
        prefix = "[shard {}] ".format(self.shard_id)
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.tail.append(line)
            self._launcher.emit(prefix + line)
        self.proc.stdout.close()

    def _wait(self, events):
        events.put((self, self.proc.wait()))


class Launcher(object):
    """Runs the shards of this node (see the module's doc string); run() returns the exit code."""

    def __init__(self, args, out=None, err=None):
        self.args = args
        self.world = args.nnodes * args.nproc_per_node
        self.interrupted = None  # the signal number, once SIGINT or SIGTERM arrived
        self._out = out or sys.stdout
        self._err = err or sys.stderr
        # Held while a line is written, and while a shard is started and announced, so that
        # `started shard S ... pid P` comes before any line of S (tools read pids from it).
        self._lock = threading.RLock()

    def emit(self, line, error=False):
        """Writes one line (whole, flushed); a closed stdout must not stop the readers."""
        stream = self._err if error else self._out
        with self._lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass

    def say(self, text, error=False):
        for line in text.splitlines():
            self.emit("[launch] " + line, error)

    def shard_command(self, shard_id, run_id):
        a = self.args
        cmd = [sys.executable, a.script] + list(a.script_args)
        cmd += ["--num_shards", str(self.world), "--shard_id", str(shard_id), "--run_id", run_id]
        if a.file_store_path is not None:
            cmd += ["--file_store_path", a.file_store_path]
        if a.redis_host is not None:
            cmd += ["--redis_host", a.redis_host, "--redis_port", str(a.redis_port or 6379)]
        return cmd

    def shard_env(self, shard_id, local_rank, run_id, restart):
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.update(
            C2_SHARD_ID=str(shard_id),
            C2_NUM_SHARDS=str(self.world),
            C2_RUN_ID=run_id,
            C2_LOCAL_RANK=str(local_rank),
            C2_RESTART_COUNT=str(restart),
        )
        return env

    def on_signal(self, signum, frame):
        self.interrupted = signum

    def run(self):
        a = self.args
        self.say(
            "{} shard(s) on this node (node rank {} of {} node(s), {} shard(s) in all), run id {}, "
            "up to {} restart(s)".format(
                a.nproc_per_node, a.node_rank, a.nnodes, self.world, a.run_id, a.max_restarts
            )
        )
        restart = 0
        while True:
            shards, failed, code = self._attempt(restart)
            if self.interrupted is not None:
                name = signal.Signals(self.interrupted).name
                self.say("received {}: stopped every shard".format(name), error=True)
                return 128 + self.interrupted
            if failed is None:
                self.say("all {} shard(s) exited 0".format(len(shards)))
                return 0
            report = "shard {} (pid {}) failed with {}".format(
                failed.shard_id, failed.pid, exit_description(code)
            )
            last = list(failed.tail)
            if restart < a.max_restarts:
                restart += 1
                self.say(report + "; its last {} line(s):".format(len(last)))
                self.say("\n".join("  | " + line for line in last))
                self.say(
                    "restart {} of {}: starting every shard of this node again under run id "
                    "{} (C2_RESTART_COUNT={})".format(
                        restart, a.max_restarts, restart_run_id(a.run_id, restart), restart
                    )
                )
                continue
            self.say("error: " + report + "; its last {} line(s):".format(len(last)), True)
            self.say("\n".join("  | " + line for line in last), True)
            used = "no restarts allowed" if not a.max_restarts else "all restarts used"
            self.say(
                "error: the job failed ({}, {} of {}): shard {} {}".format(
                    used, restart, a.max_restarts, failed.shard_id, exit_description(code)
                ),
                True,
            )
            return 1

    def _attempt(self, restart):
        """Starts every local shard, waits; returns (shards, first failed shard or None, code)."""
        a = self.args
        run_id = restart_run_id(a.run_id, restart)
        events = queue.Queue()
        shards = []
        failed, code = None, None
        try:
            for local_rank in range(a.nproc_per_node):
                if self.interrupted is not None:
                    break
                shard_id = a.node_rank * a.nproc_per_node + local_rank
                with self._lock:
                    shard = _Shard(
                        self,
                        shard_id,
                        local_rank,
                        self.shard_command(shard_id, run_id),
                        self.shard_env(shard_id, local_rank, run_id, restart),
                        events,
                    )
                    shards.append(shard)
                    self.say(
                        "started shard {} (local rank {}, restart {}) pid {}".format(
                            shard_id, local_rank, restart, shard.pid
                        )
                    )
            running = set(shards)
            while running and self.interrupted is None:
                try:
                    shard, status = events.get(timeout=0.2)
                except queue.Empty:
                    continue
                running.discard(shard)
                if status == 0:
                    self.say("shard {} (pid {}) exited 0".format(shard.shard_id, shard.pid))
                else:
                    failed, code = shard, status
                    self.say(
                        "shard {} (pid {}) exited with {}: stopping the job".format(
                            shard.shard_id, shard.pid, exit_description(status)
                        )
                    )
                    break
        finally:
            self._stop(shards)
        return shards, failed, code

    def _stop(self, shards):
        """SIGTERM to every live shard, SIGKILL to those alive after --term_timeout, then waits
        for their output to end (bounded: a grandchild may keep a pipe open)."""
        live = [s for s in shards if s.proc.poll() is None]
        for s in live:
            self.say("stopping shard {} (pid {}): SIGTERM".format(s.shard_id, s.pid))
            try:
                s.proc.terminate()
            except OSError:
                pass
        deadline = time.time() + self.args.term_timeout
        for s in live:
            try:
                s.proc.wait(timeout=max(0.0, deadline - time.time()))
            except subprocess.TimeoutExpired:
                self.say(
                    "shard {} (pid {}) still runs after {:g} s: SIGKILL".format(
                        s.shard_id, s.pid, self.args.term_timeout
                    )
                )
                s.proc.kill()
                s.proc.wait()
            self.say(
                "shard {} stopped ({})".format(s.shard_id, exit_description(s.proc.returncode))
            )
        for s in shards:
            s.reader.join(timeout=5.0)
            s.waiter.join(timeout=5.0)


def main(argv=None):
    args = parse_args(argv)
    launcher = Launcher(args)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, launcher.on_signal)
    return launcher.run()


if __name__ == "__main__":
    sys.exit(main())
