"""One rank of a Gloo test, run in its own process by test_gloo_ops.py.

Usage: gloo_worker.py SCENARIO RANK SIZE STORE_KIND STORE_ARG RUN_ID [TIMEOUT_MS]
STORE_KIND is "file" (STORE_ARG: directory) or "redis" (STORE_ARG: port on 127.0.0.1).
Prints one JSON line with the results on success; errors propagate (non-zero exit).
"""
import json
import os
import sys

import numpy as np

from caffe2.python import core, workspace


def create_store(kind, arg, run_id):
    if kind == "file":
        op = core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=arg, prefix=run_id)
    else:
        op = core.CreateOperator(
            "RedisStoreHandlerCreate",
            [],
            ["store"],
            host="127.0.0.1",
            port=int(arg),
            prefix=run_id + "/",
        )
    workspace.RunOperatorOnce(op)


def create_world(rank, size, timeout_ms, name="cw_op", blob="cw", **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateCommonWorld",
            ["store"],
            [blob],
            name=name,
            engine="GLOO",
            rank=rank,
            size=size,
            timeout_ms=timeout_ms,
            **kwargs,
        )
    )


def run(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(op_type, inputs, outputs, engine="GLOO", **kwargs)
    )


def collectives(rank, size, timeout_ms):
    create_world(rank, size, timeout_ms)
    out = {}
    # Allreduce of two local buffers, twice through one net (the algorithm is built once).
    workspace.FeedBlob("a", np.full(5, rank + 1, np.float32))
    workspace.FeedBlob("b", np.arange(5, dtype=np.float32) * (rank + 1))
    net = core.Net("allreduce_net")
    net.Allreduce(["cw", "a", "b"], ["a", "b"], engine="GLOO", status_blob="ar_status")
    workspace.CreateNet(net)
    workspace.RunNet(net.Proto().name)
    out["allreduce_a"] = workspace.FetchBlob("a").tolist()
    out["allreduce_b"] = workspace.FetchBlob("b").tolist()
    workspace.FeedBlob("a", np.full(5, 1, np.float32))  # same size: same buffer is reused
    workspace.FeedBlob("b", np.full(5, 2, np.float32))
    workspace.RunNet(net.Proto().name)
    out["allreduce_again"] = workspace.FetchBlob("a").tolist()
    out["status_created"] = workspace.HasBlob("ar_status")
    # float16
    workspace.FeedBlob("h", np.full(4, rank + 0.5, np.float16))
    run("Allreduce", ["cw", "h"], ["h"])
    out["allreduce_half"] = workspace.FetchBlob("h").astype(float).tolist()
    # Broadcast from the last rank: its first buffer goes everywhere.
    workspace.FeedBlob("i", np.array([10 * rank, 10 * rank + 1], np.int64))
    workspace.FeedBlob("j", np.array([-1, -1], np.int64))
    run("Broadcast", ["cw", "i", "j"], ["i", "j"], root=size - 1)
    out["broadcast_i"] = workspace.FetchBlob("i").tolist()
    out["broadcast_j"] = workspace.FetchBlob("j").tolist()
    run("Barrier", ["cw"], [])
    # Allgather of two buffers: rank-major, then input order.
    workspace.FeedBlob("g1", np.array([rank, rank], np.int32))
    workspace.FeedBlob("g2", np.array([100 + rank, 100 + rank], np.int32))
    run("Allgather", ["cw", "g1", "g2"], ["gathered"])
    out["allgather"] = workspace.FetchBlob("gathered").tolist()
    # ReduceScatter: rank r keeps recv_counts[r] summed elements at the front.
    counts = np.array([2] * size, np.int32)
    workspace.FeedBlob("rs", np.arange(2 * size, dtype=np.float32) + rank)
    workspace.FeedBlob("counts", counts)
    run("ReduceScatter", ["cw", "rs", "counts"], ["rs", "counts"])
    out["reduce_scatter"] = workspace.FetchBlob("rs")[:2].tolist()
    # A clone works independently of the original.
    workspace.RunOperatorOnce(
        core.CreateOperator("CloneCommonWorld", ["cw"], ["cw2"], engine="GLOO", name="cw2_op")
    )
    workspace.FeedBlob("c", np.array([float(rank)], np.float32))
    run("Allreduce", ["cw2", "c"], ["c"])
    out["clone_allreduce"] = workspace.FetchBlob("c").tolist()
    # A buffer that changed size after the first run is refused on every rank alike.
    workspace.FeedBlob("a", np.zeros(7, np.float32))
    workspace.FeedBlob("b", np.zeros(7, np.float32))
    try:
        workspace.RunNet(net.Proto().name)
        out["changed_error"] = ""
    except RuntimeError as e:
        out["changed_error"] = str(e)
    # Destroyed right after its last collective: every rank closes only once the others close too
    # (CloseGracefully), so no slower rank sees "connection reset by peer".
    run("DestroyCommonWorld", ["cw2"], ["cw2"])
    return out


def rendezvous_only(rank, size, timeout_ms, **kwargs):
    create_world(rank, size, timeout_ms, status_blob="cw_status", **kwargs)
    return {"ok": True}


def dead_peer(rank, size, timeout_ms, stuck=False):
    """Rank 1 exits (or, stuck, hangs) right after the rendezvous; the others run allreduce until
    it fails."""
    create_world(rank, size, timeout_ms)
    workspace.FeedBlob("x", np.ones(1000, np.float32))
    net = core.Net("train")
    net.Allreduce(["cw", "x"], ["x"], engine="GLOO", status_blob="allreduce_x_status")
    workspace.CreateNet(net)
    workspace.RunNet(net.Proto().name)
    if rank == 1:
        print(json.dumps({"exited": True}))
        sys.stdout.flush()
        if stuck:
            import time

            time.sleep(timeout_ms / 1000.0 + 15)  # alive but silent past the others' timeout
        os._exit(0)
    for _ in range(1000):
        workspace.RunNet(net.Proto().name)
    return {"never": "reached"}


def main():
    scenario, rank, size, kind, arg, run_id = sys.argv[1:7]
    timeout_ms = int(sys.argv[7]) if len(sys.argv) > 7 else 20000
    rank, size = int(rank), int(size)
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    create_store(kind, arg, run_id)
    if scenario == "collectives":
        out = collectives(rank, size, timeout_ms)
    elif scenario == "rendezvous":
        out = rendezvous_only(rank, size, timeout_ms)
    elif scenario == "rendezvous_lo":
        out = rendezvous_only(rank, size, timeout_ms, interface="lo")
    elif scenario == "dead_peer":
        out = dead_peer(rank, size, timeout_ms)
    elif scenario == "stuck_peer":
        out = dead_peer(rank, size, timeout_ms, stuck=True)
    else:
        raise SystemExit("unknown scenario " + scenario)
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report the type and message for the test to check
        status = None
        if workspace.HasBlob("cw_status"):
            try:
                status = workspace.FetchBlob("cw_status").tolist()
            except Exception:
                status = None
        if workspace.HasBlob("allreduce_x_status"):
            try:
                status = workspace.FetchBlob("allreduce_x_status").tolist()
            except Exception:
                status = None
        print(
            json.dumps(
                {
                    "error_type": type(e).__module__ + "." + type(e).__name__,
                    "error": str(e),
                    "status": status,
                }
            )
        )
        sys.exit(3)
