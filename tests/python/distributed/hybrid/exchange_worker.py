"""One rank of the model-parallel exchange tests, run in its own process by
test_model_parallel_exchange.py.

Usage: exchange_worker.py RANK SIZE K STORE_DIR RUN_ID OUT.npz [SCENARIO]
Every global buffer's data follow from its global index (data_for), so the test can compute what
each rank must end with. Results go to OUT.npz; errors propagate (non-zero exit).
"""
import os
import sys

import numpy as np

from caffe2.python import core, workspace

BATCH = 3
COLUMNS_PER_SHARD = [3, 1, 2, 2, 1, 4]  # uneven, first entries used for G shards


def data_for(g, shape, dtype=np.float32, salt=0):
    rng = np.random.RandomState(1000 * salt + g)
    return (rng.randn(*shape) * 10).astype(dtype)


def gathered_rows(g):
    return 1 + g % 3


def main():
    rank, size, k = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store_dir, run_id, out_path = sys.argv[4], sys.argv[5], sys.argv[6]
    scenario = sys.argv[7] if len(sys.argv) > 7 else "all"
    G = size * k
    columns = COLUMNS_PER_SHARD[:G]
    workspace.RunOperatorOnce(
        core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=store_dir, prefix=run_id)
    )
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateCommonWorld",
            ["store"],
            ["cw"],
            name="mp_cw",
            engine="GLOO",
            rank=rank,
            size=size,
            timeout_ms=5000 if scenario == "dead_peer" else 20000,
        )
    )
    local = [rank * k + i for i in range(k)]
    if scenario == "dead_peer":  # rank 1 leaves after one exchange; the others go on
        for i, g in enumerate(local):
            workspace.FeedBlob("p%d" % i, data_for(g, (G * BATCH, columns[g])))
        net = core.Net("exchange")
        net.ColumnShardsToBatch(
            ["cw"] + ["p%d" % i for i in range(k)],
            ["y%d" % i for i in range(k)],
            engine="GLOO",
            columns=columns,
            status_blob="exchange_status",
        )
        workspace.CreateNet(net)
        workspace.RunNet(net.Proto().name)
        if rank == 1:
            os._exit(0)
        try:
            for _ in range(100):
                workspace.RunNet(net.Proto().name)
        except Exception as e:
            with open(out_path + ".error", "w") as f:
                f.write(
                    "{}\n{}\nstatus {}".format(
                        type(e).__name__, e, workspace.FetchBlob("exchange_status").tolist()
                    )
                )
            raise
        return
    if scenario == "bad_columns":
        for i, g in enumerate(local):
            workspace.FeedBlob("p%d" % i, data_for(g, (G * BATCH, columns[g])))
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "ColumnShardsToBatch",
                ["cw"] + ["p%d" % i for i in range(k)],
                ["y%d" % i for i in range(k)],
                engine="GLOO",
                columns=columns[:-1] + [columns[-1] + 1],
            )
        )
        return

    net = core.Net("exchanges")
    net.AllgatherBatch(["cw"] + ["x%d" % i for i in range(k)], ["gathered"], engine="GLOO")
    net.AllgatherBatch(
        ["cw"] + ["u%d" % i for i in range(k)],
        ["gathered_uneven"],
        engine="GLOO",
        rows=[gathered_rows(g) for g in range(G)],
    )
    net.ReduceScatterBatch(["cw", "stack"], ["rs%d" % i for i in range(k)], engine="GLOO")
    net.ColumnShardsToBatch(
        ["cw"] + ["p%d" % i for i in range(k)],
        ["y%d" % i for i in range(k)],
        engine="GLOO",
        columns=columns,
    )
    net.BatchToColumnShards(
        ["cw"] + ["y%d" % i for i in range(k)],
        ["back%d" % i for i in range(k)],
        engine="GLOO",
        columns=columns,
    )
    results = {}
    for run in range(2):  # the second run reuses the exchanges on new data
        for i, g in enumerate(local):
            workspace.FeedBlob("x%d" % i, data_for(g, (BATCH, 2, 2), salt=run))
            workspace.FeedBlob("u%d" % i, data_for(g, (gathered_rows(g), 4), np.int64, salt=run))
            workspace.FeedBlob("p%d" % i, data_for(g, (G * BATCH, columns[g]), salt=run + 5))
        workspace.FeedBlob("stack", data_for(rank, (G * BATCH, 5), salt=run + 7))
        if run == 0:
            workspace.CreateNet(net)
        workspace.RunNet(net.Proto().name)
        for name in ["gathered", "gathered_uneven"]:
            results["%s_run%d" % (name, run)] = workspace.FetchBlob(name)
        for i in range(k):
            for name in ["rs", "y", "back"]:
                results["%s%d_run%d" % (name, i, run)] = workspace.FetchBlob("%s%d" % (name, i))
    np.savez(out_path, **results)


if __name__ == "__main__":
    main()
