"""One process of an NCCL world test, run in its own process by test_nccl_world.py.

Usage: nccl_worker.py SCENARIO RANK SIZE STORE_DIR RUN_ID TIMEOUT_MS GPUS
GPUS is this process's comma-separated GPU list. Prints one JSON line with the results on
success; on an error, one JSON line with its type, message and the status blob (exit code 3).
"""
import json
import os
import sys

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace


def gpu(i):
    return caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=i)


def run(op_type, inputs, outputs, device, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            op_type, inputs, outputs, engine="NCCL", device_option=gpu(device), **kwargs
        )
    )


def create_world(rank, size, timeout_ms, gpus):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateCommonWorld",
            ["store"],
            ["cw"],
            name="cw_op",
            engine="NCCL",
            rank=rank,
            size=size,
            gpus=gpus,
            timeout_ms=timeout_ms,
            status_blob="cw_status",
            device_option=gpu(gpus[0]),
        )
    )


def feed(rank, gpus, make):
    """Feeds make(nccl_rank) into 'b<i>' on this process's GPU i; returns the names."""
    names = []
    for i, g in enumerate(gpus):
        name = "b{}".format(i)
        workspace.FeedBlob(name, make(rank * len(gpus) + i), gpu(g))
        names.append(name)
    return names


def collectives(rank, size, timeout_ms, gpus):
    create_world(rank, size, timeout_ms, gpus)
    out = {}
    g0 = gpus[0]
    # Allreduce: NCCL rank r contributes (r + 1) * [0, 1, 2, 3, 4]; run through a net, twice.
    names = feed(rank, gpus, lambda r: np.arange(5, dtype=np.float32) * (r + 1))
    net = core.Net("allreduce_net")
    net.Allreduce(
        ["cw"] + names, names, engine="NCCL", status_blob="ar_status", device_option=gpu(g0)
    )
    workspace.CreateNet(net)
    workspace.RunNet(net.Proto().name)
    out["allreduce"] = [workspace.FetchBlob(n).tolist() for n in names]
    workspace.RunNet(net.Proto().name)  # sums the sums: every value times the world size
    out["allreduce_again"] = [workspace.FetchBlob(n).tolist() for n in names]
    out["status_created"] = workspace.HasBlob("ar_status")
    # float16
    names = feed(rank, gpus, lambda r: np.full(4, r + 0.5, np.float16))
    run("Allreduce", ["cw"] + names, names, g0)
    out["allreduce_half"] = [workspace.FetchBlob(n).astype(float).tolist() for n in names]
    # Broadcast from the last process: its first buffer goes everywhere.
    names = feed(rank, gpus, lambda r: np.array([10 * r, 10 * r + 1], np.int64))
    run("Broadcast", ["cw"] + names, names, g0, root=size - 1)
    out["broadcast"] = [workspace.FetchBlob(n).tolist() for n in names]
    # Allgather: process-major, then input order.
    names = feed(rank, gpus, lambda r: np.array([r, 100 + r], np.int32))
    run("Allgather", ["cw"] + names, ["gathered"], g0)
    out["allgather"] = workspace.FetchBlob("gathered").tolist()
    # ReduceScatter: process p keeps its recv_counts[p] summed elements at the front.
    workspace.FeedBlob("counts", np.array([2] * size, np.int32))
    names = feed(rank, gpus, lambda r: np.arange(2 * size, dtype=np.float32) + r)
    run("ReduceScatter", ["cw"] + names + ["counts"], names + ["counts"], g0)
    out["reduce_scatter"] = [workspace.FetchBlob(n)[:2].tolist() for n in names]
    # A clone works on its own.
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CloneCommonWorld", ["cw"], ["cw2"], name="cw2_op", engine="NCCL", device_option=gpu(g0)
        )
    )
    names = feed(rank, gpus, lambda r: np.array([float(r)], np.float32))
    run("Allreduce", ["cw2"] + names, names, g0)
    out["clone_allreduce"] = [workspace.FetchBlob(n).tolist() for n in names]
    run("DestroyCommonWorld", ["cw2"], ["cw2"], g0)
    return out


def rendezvous_only(rank, size, timeout_ms, gpus):
    create_world(rank, size, timeout_ms, gpus)
    return {"ok": True}


def dead_peer(rank, size, timeout_ms, gpus):
    """Rank 1 exits right after the first allreduce; the others run allreduces until one fails."""
    create_world(rank, size, timeout_ms, gpus)
    names = feed(rank, gpus, lambda r: np.ones(1000, np.float32))
    net = core.Net("train")
    net.Allreduce(
        ["cw"] + names,
        names,
        engine="NCCL",
        status_blob="allreduce_x_status",
        device_option=gpu(gpus[0]),
    )
    workspace.CreateNet(net)
    workspace.RunNet(net.Proto().name)
    if rank == 1:
        print(json.dumps({"exited": True}))
        sys.stdout.flush()
        os._exit(0)
    for _ in range(1000):
        workspace.RunNet(net.Proto().name)
    return {"never": "reached"}


def main():
    scenario, rank, size, store_dir, run_id, timeout_ms, gpus = sys.argv[1:8]
    rank, size, timeout_ms = int(rank), int(size), int(timeout_ms)
    gpus = [int(g) for g in gpus.split(",")]
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    workspace.RunOperatorOnce(
        core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=store_dir, prefix=run_id)
    )
    scenarios = {"collectives": collectives, "rendezvous": rendezvous_only, "dead_peer": dead_peer}
    print(json.dumps(scenarios[scenario](rank, size, timeout_ms, gpus)))
    sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report the type and message for the test to check
        status = None
        for blob in ("allreduce_x_status", "cw_status"):
            if workspace.HasBlob(blob):
                try:
                    status = workspace.FetchBlob(blob).tolist()
                    break
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
        sys.stdout.flush()
        os._exit(3)
