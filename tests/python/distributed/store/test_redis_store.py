"""RedisStoreHandler against a real redis-server on a free loopback port (ops spec §3.3, §3.9)."""
import socket

import numpy as np
import pytest

from caffe2.distributed.python import StoreHandlerTimeoutError
from caffe2.python import core, workspace

from store_util import create_handler, finish, run_worker, store_add, store_get, store_set


@pytest.fixture(autouse=True)
def _fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def _redis(redis_server, prefix, blob="handler"):
    host, port = redis_server
    return create_handler("redis", blob=blob, host=host, port=port, prefix=prefix)


def test_set_get_add_check(redis_server, run_id):
    h = _redis(redis_server, run_id)
    store_set(h, "x", np.arange(4, dtype=np.float64))
    np.testing.assert_array_equal(store_get(h, "x", out="y"), np.arange(4, dtype=np.float64))
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", [h], [], blob_name=["x"]))
    assert store_add(h, "c", 0).tolist() == [0]
    assert store_add(h, "c", 3).tolist() == [3]
    assert store_add(h, "c", 4).tolist() == [7]


def test_reused_key_is_refused(redis_server, run_id):
    h = _redis(redis_server, run_id)
    store_set(h, "addr", [1])
    h2 = _redis(redis_server, run_id, blob="again")
    with pytest.raises(
        RuntimeError, match="Value at addr was already set \\(perhaps you reused a run ID"
    ):
        store_set(h2, "addr", [1])
    # a fresh run id is a fresh namespace
    h3 = _redis(redis_server, run_id + "next/", blob="fresh")
    store_set(h3, "addr", [2])
    assert store_get(h3, "addr", out="v").tolist() == [2]


def test_wait_timeout_names_missing_keys(redis_server, run_id):
    h = _redis(redis_server, run_id)
    store_set(h, "here", [1])
    with pytest.raises(
        StoreHandlerTimeoutError, match="Wait timeout for name\\(s\\): gone1, gone2"
    ):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "StoreWait", [h], [], blob_name=["here", "gone1", "gone2"], timeout_ms=1000
            )
        )


def test_unreachable_server_names_host_and_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RuntimeError, match="Cannot connect to Redis at 127.0.0.1:{}".format(port)):
        create_handler("redis", host="127.0.0.1", port=port)
    with pytest.raises(RuntimeError, match="required argument 'port'"):
        workspace.RunOperatorOnce(
            core.CreateOperator("RedisStoreHandlerCreate", [], ["h"], host="127.0.0.1")
        )


def test_a_server_that_never_answers_is_named_within_the_timeout():
    # Accepts the connection (the kernel's backlog does) but never replies to a command.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        create_handler("redis", host="127.0.0.1", port=port, prefix="p", timeout_ms=1000)
        with pytest.raises(RuntimeError) as info:
            store_set("handler", "k", np.array([1.0], np.float32))
        # One connection, no retry on a timeout (a retry would wait the timeout again).
        silent.settimeout(0.5)
        connections = []
        try:
            while True:
                connections.append(silent.accept()[0])
        except OSError:
            pass
        for c in connections:
            c.close()
    assert len(connections) == 1, len(connections)
    message = str(info.value)
    assert (
        "Redis at 127.0.0.1:{} did not answer SETNX for key 'k' within 1000 ms".format(port)
        in message
    )
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["still"], shape=[1]))
    with pytest.raises(RuntimeError, match="'timeout_ms' must be positive, got -1"):
        create_handler("redis", host="127.0.0.1", port=port, timeout_ms=-1)


RENDEZVOUS = r"""
import sys
import numpy as np
from caffe2.python import core, workspace
host, port, prefix, rank, size = (
    sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
workspace.RunOperatorOnce(core.CreateOperator(
    "RedisStoreHandlerCreate", [], ["h"], host=host, port=port, prefix=prefix))
workspace.FeedBlob("mine", np.array([rank + 1], dtype=np.int64))
workspace.RunOperatorOnce(core.CreateOperator(
    "StoreSet", ["h", "mine"], [], blob_name="rank_%d" % rank))
for _ in range(10):
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["c"], blob_name="hits"))
total = 0
for r in range(size):
    workspace.RunOperatorOnce(core.CreateOperator(
        "StoreGet", ["h"], ["v"], blob_name="rank_%d" % r))
    total += int(workspace.FetchBlob("v")[0])
print(total)
"""


def test_rendezvous_across_processes(redis_server, run_id):
    host, port = redis_server
    size = 4
    procs = [run_worker(RENDEZVOUS, host, port, run_id, r, size) for r in range(size)]
    outs = [finish(p) for p in procs]
    assert [int(o.strip()) for o in outs] == [sum(range(1, size + 1))] * size
    h = _redis(redis_server, run_id)
    assert store_add(h, "hits", 0).tolist() == [10 * size]


def test_server_gone_mid_run_names_host_and_port(tmp_path):
    import shutil
    import subprocess
    import time

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server binary not found (apt-get install redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
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
                assert proc.poll() is None and time.time() < deadline, "redis-server did not start"
                time.sleep(0.05)
        h = create_handler("redis", host="127.0.0.1", port=port, prefix="gone/")
        store_set(h, "a", [1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with pytest.raises(RuntimeError, match="127.0.0.1:{}".format(port)):
        store_set(h, "b", [2])
