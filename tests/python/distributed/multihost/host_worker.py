"""One shard of a multi-host test, run on a simulated host by test_multihost.py.

Usage: host_worker.py SCENARIO RANK SIZE STORE RUN_ID INTERFACE TIMEOUT_MS
STORE is "file:/dir" or "redis:HOST:PORT"; INTERFACE is the Gloo interface ("eth0", "lo", or "" for
the address the host name resolves to). Prints JSON lines: {"ready": ...} after the rendezvous, then
the results; a failure prints {"error_type", "error", "after_s"} and exits 3.
"""
import json
import sys
import time

import numpy as np

from caffe2.python import core, workspace

N = 1 << 18  # 1 MiB of float32 per allreduce: many TCP segments across the link


def emit(**fields):
    print(json.dumps(fields))
    sys.stdout.flush()


def create_store(store, run_id):
    kind, _, where = store.partition(":")
    if kind == "file":
        op = core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=where, prefix=run_id)
    else:
        host, port = where.rsplit(":", 1)
        op = core.CreateOperator(
            "RedisStoreHandlerCreate", [], ["store"], host=host, port=int(port), prefix=run_id
        )
    workspace.RunOperatorOnce(op)


def create_world(rank, size, interface, timeout_ms):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateCommonWorld",
            ["store"],
            ["cw"],
            name="multihost",
            engine="GLOO",
            rank=rank,
            size=size,
            interface=interface,
            timeout_ms=timeout_ms,
        )
    )


def allreduce_net():
    net = core.Net("allreduce")
    net.Allreduce(["cw", "x"], ["x"], engine="GLOO", status_blob="x_status")
    workspace.CreateNet(net)
    return net.Proto().name


def collectives(rank, size):
    """Allreduce and broadcast by value: every rank returns what it holds afterwards."""
    workspace.FeedBlob("x", np.arange(N, dtype=np.float32) * (rank + 1))
    workspace.RunNet(allreduce_net())
    x = workspace.FetchBlob("x")
    expected = np.arange(N, dtype=np.float32) * (size * (size + 1) / 2)
    workspace.FeedBlob("b", np.full(3, 10.0 * rank, np.float32))
    workspace.RunOperatorOnce(
        core.CreateOperator("Broadcast", ["cw", "b"], ["b"], engine="GLOO", root=size - 1)
    )
    workspace.RunOperatorOnce(core.CreateOperator("Barrier", ["cw"], [], engine="GLOO"))
    return {
        "allreduce_ok": bool(np.array_equal(x, expected)),
        "broadcast": workspace.FetchBlob("b").tolist(),
    }


def algorithms(rank, size):
    """Each Allreduce algorithm (and the automatic choice on either side of 1 MiB) on sizes that do
    not divide evenly, in float32 and float16, with two local buffers: {case: exact?}."""
    out = {}
    cases = [
        ("auto_small", "auto", 1000, np.float32),
        ("auto_large", "auto", (1 << 18) + 77, np.float32),
        ("ring_small", "ring_chunked", 999, np.float32),
        ("ring_half", "ring_chunked", 4099, np.float16),
        ("halving_doubling_large", "halving_doubling", (1 << 18) + 5, np.float32),
    ]
    for case, algorithm, n, dtype in cases:
        base = (np.arange(n) % 7).astype(dtype)
        a, b = "a_" + case, "b_" + case
        workspace.FeedBlob(a, base * (rank + 1))
        workspace.FeedBlob(b, base * (rank + 2))
        net = core.Net("net_" + case)
        net.Allreduce(["cw", a, b], [a, b], engine="GLOO", algorithm=algorithm)
        workspace.CreateNet(net)
        total = sum(range(1, size + 1)) + sum(range(2, size + 2))
        ok = True
        for _ in range(2):  # built once, run again on the same buffers
            workspace.FeedBlob(a, base * (rank + 1))
            workspace.FeedBlob(b, base * (rank + 2))
            workspace.RunNet(net.Proto().name)
            for blob in (a, b):
                ok = ok and np.array_equal(workspace.FetchBlob(blob), (base * total).astype(dtype))
        out[case] = bool(ok)
    return out


def until_failure():
    """Allreduces until one fails (the test cuts a link meanwhile); the error is the result."""
    workspace.FeedBlob("x", np.ones(N, np.float32))
    name = allreduce_net()
    rounds = 0
    while True:
        workspace.RunNet(name)
        rounds += 1
        if rounds == 5:
            emit(running=True)
        if rounds > 100000:
            return {"never": "failed"}


def main():
    scenario, rank, size, store, run_id, interface, timeout_ms = sys.argv[1:8]
    rank, size, timeout_ms = int(rank), int(size), int(timeout_ms)
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    create_store(store, run_id)
    create_world(rank, size, interface, timeout_ms)
    emit(ready=True)
    if scenario == "collectives":
        emit(**collectives(rank, size))
    elif scenario == "algorithms":
        emit(**algorithms(rank, size))
    elif scenario == "until_failure":
        emit(**until_failure())
    else:
        raise SystemExit("unknown scenario " + scenario)


if __name__ == "__main__":
    started = time.time()
    try:
        main()
    except Exception as e:  # the test checks the type and message
        emit(
            error_type=type(e).__module__ + "." + type(e).__name__,
            error=str(e),
            after_s=time.time() - started,
        )
        sys.exit(3)
