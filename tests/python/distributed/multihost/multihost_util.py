"""Helpers of the multi-host tests: the environment and command of a shard on a simulated host, and
a Redis server on the bridge that every simulated host reaches."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
WORKER = os.path.join(HERE, "host_worker.py")


def python_env():
    """The environment of a process on a simulated host: this checkout's package, one thread."""
    return dict(
        os.environ,
        PYTHONPATH=os.environ.get("C2_TEST_PYTHON_ROOT") or os.path.join(ROOT, "python"),
        OMP_NUM_THREADS="1",
    )


def start_worker(
    hosts, host, scenario, rank, size, store, run_id, interface="eth0", timeout_ms=10000
):
    cmd = [sys.executable, WORKER, scenario, str(rank), str(size), store, run_id, interface]
    return hosts.popen(
        host,
        cmd + [str(timeout_ms)],
        env=python_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class RedisOnBridge(object):
    """redis-server in the root namespace, bound to the bridge address (every host reaches it)."""

    def __init__(self, address):
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.path.exists(binary):
            pytest.skip("redis-server binary not found (apt-get install redis-server)")
        with socket.socket() as s:
            s.bind((address, 0))
            self.port = s.getsockname()[1]
        self.address = address
        self.workdir = tempfile.mkdtemp(prefix="c2_redis_bridge_")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                address,
                "--save",
                "",
                "--appendonly",
                "no",
            ]
            + ["--protected-mode", "no", "--dir", self.workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection((address, self.port), timeout=0.5).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("redis-server did not start on {}".format(self.store))
                time.sleep(0.05)

    @property
    def store(self):
        return "redis:{}:{}".format(self.address, self.port)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        self.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)
