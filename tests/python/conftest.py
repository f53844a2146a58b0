"""Puts the source tree's python/ first on sys.path, so tests import the package under test (or the
folder C2_TEST_PYTHON_ROOT names: scripts/run_sanitizers.sh points it at the sanitized build), and
provides `redis_server`: a real redis-server on a free loopback port for the session. Registers the
`device_check` marker of the CUDA device checks."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ.get("C2_TEST_PYTHON_ROOT") or os.path.join(ROOT, "python"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "device_check: a CUDA device check (skips without a GPU); `-m device_check` "
        "selects them (tests/python/operators/device_check.py)",
    )


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server():
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if binary is None:
        pytest.skip("redis-server binary not found (apt-get install redis-server)")
    port = _free_port()
    workdir = tempfile.mkdtemp(prefix="c2_redis_")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("redis-server did not start on port {}".format(port))
                time.sleep(0.05)
        yield ("127.0.0.1", port)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
