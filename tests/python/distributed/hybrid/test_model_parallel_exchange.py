"""The model-parallel exchanges (AllgatherBatch, ReduceScatterBatch, ColumnShardsToBatch,
BatchToColumnShards; engine GLOO) across real processes over a file store, against numpy."""
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, HERE)
from exchange_worker import (  # noqa: E402
    BATCH,
    COLUMNS_PER_SHARD,
    data_for,
    gathered_rows,
)


def run_ranks(tmp_path, size, k, scenario="all"):
    """Runs `size` workers; returns [(returncode, results or None, log text)] by rank."""
    run_id = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    procs = []
    for rank in range(size):
        log = open(tmp_path / "rank{}.log".format(rank), "w")
        cmd = [sys.executable, os.path.join(HERE, "exchange_worker.py"), str(rank), str(size)]
        cmd += [str(k), str(tmp_path), run_id, str(tmp_path / "rank{}.npz".format(rank)), scenario]
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    out = []
    for rank, (proc, log) in enumerate(procs):
        proc.wait(timeout=120)
        log.close()
        text = (tmp_path / "rank{}.log".format(rank)).read_text()
        path = tmp_path / "rank{}.npz".format(rank)
        out.append((proc.returncode, dict(np.load(path)) if path.exists() else None, text))
    return out


@pytest.mark.parametrize("size,k", [(2, 1), (3, 1), (2, 2), (1, 2), (1, 1)])
def test_exchanges_match_numpy(tmp_path, size, k):
    G = size * k
    columns = COLUMNS_PER_SHARD[:G]
    starts = np.cumsum([0] + columns)
    for rank, (rc, res, log) in enumerate(run_ranks(tmp_path, size, k)):
        assert rc == 0, log
        for run in range(2):
            gathered = np.concatenate([data_for(g, (BATCH, 2, 2), salt=run) for g in range(G)])
            np.testing.assert_array_equal(res["gathered_run%d" % run], gathered)
            uneven = np.concatenate(
                [data_for(g, (gathered_rows(g), 4), np.int64, salt=run) for g in range(G)]
            )
            np.testing.assert_array_equal(res["gathered_uneven_run%d" % run], uneven)
            stacks = [data_for(r, (G * BATCH, 5), salt=run + 7) for r in range(size)]
            full = np.hstack([data_for(g, (G * BATCH, columns[g]), salt=run + 5) for g in range(G)])
            for i in range(k):
                g = rank * k + i
                block = slice(g * BATCH, (g + 1) * BATCH)
                summed = stacks[0][block].copy()
                for s in stacks[1:]:
                    summed += s[block]  # rank order, as the op sums
                np.testing.assert_array_equal(res["rs%d_run%d" % (i, run)], summed)
                np.testing.assert_array_equal(res["y%d_run%d" % (i, run)], full[block])
                np.testing.assert_array_equal(
                    res["back%d_run%d" % (i, run)], full[:, starts[g] : starts[g + 1]]
                )


def test_columns_that_disagree_with_the_inputs_are_refused(tmp_path):
    for rc, _, log in run_ranks(tmp_path, 1, 2, scenario="bad_columns"):
        assert rc != 0
        assert "ColumnShardsToBatch" in log and "input 2 ('p1')" in log and "expected shape" in log


def test_a_dead_peer_is_named(tmp_path):
    results = run_ranks(tmp_path, 3, 1, scenario="dead_peer")
    assert results[1][0] == 0  # it left on its own
    for rank in (0, 2):
        rc, _, log = results[rank]
        assert rc != 0
        error = (tmp_path / "rank{}.npz.error".format(rank)).read_text()
        assert error.startswith("IoError"), error
        assert "rank 1 (host" in error and "has exited" in error, error
        assert "status [1]" in error


class TestGradientsAndErrors:
    def test_each_pair_is_the_others_gradient(self):
        columns = {"columns": [1, 2]}
        cases = [
            ("AllgatherBatch", ["cw", "a", "b"], ["y"], "ReduceScatterBatch", {"rows": [1, 2]}),
            ("ReduceScatterBatch", ["cw", "y"], ["a", "b"], "AllgatherBatch", {}),
            ("ColumnShardsToBatch", ["cw", "a", "b"], ["c", "d"], "BatchToColumnShards", columns),
            ("BatchToColumnShards", ["cw", "c", "d"], ["a", "b"], "ColumnShardsToBatch", columns),
        ]
        for op_type, ins, outs, grad_type, args in cases:
            op = core.CreateOperator(op_type, ins, outs, engine="GLOO", **args)
            grads, in_grads = core.GradientRegistry.GetGradientForOp(
                op, [o + "_grad" for o in outs]
            )
            assert [g.type for g in grads] == [grad_type]
            assert list(grads[0].input) == ["cw"] + [o + "_grad" for o in outs]
            assert list(grads[0].output) == [i + "_grad" for i in ins[1:]]
            assert grads[0].engine == "GLOO"
            assert {a.name for a in grads[0].arg} == set(args)
            assert in_grads[0] is None

    def test_an_output_without_gradient_is_refused(self):
        op = core.CreateOperator(
            "ColumnShardsToBatch", ["cw", "a", "b"], ["c", "d"], engine="GLOO", columns=[1, 2]
        )
        with pytest.raises(Exception, match="output 1 \\('d'\\) has no gradient"):
            core.GradientRegistry.GetGradientForOp(op, ["c_grad", None])

    def test_default_engine_says_to_use_gloo(self):
        workspace.ResetWorkspace()
        workspace.FeedBlob("cw", np.zeros(1, np.float32))
        workspace.FeedBlob("x", np.zeros(1, np.float32))
        with pytest.raises(RuntimeError, match="engine='GLOO'"):
            workspace.RunOperatorOnce(core.CreateOperator("AllgatherBatch", ["cw", "x"], ["y"]))

    def test_not_a_world_and_bad_shapes(self, tmp_path):
        workspace.ResetWorkspace()
        workspace.FeedBlob("x", np.ones((2, 3), np.float32))
        with pytest.raises(RuntimeError, match="must be a common world"):
            workspace.RunOperatorOnce(
                core.CreateOperator("AllgatherBatch", ["x", "x"], ["y"], engine="GLOO")
            )
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "FileStoreHandlerCreate", [], ["store"], path=str(tmp_path), prefix="solo"
            )
        )
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "CreateCommonWorld", ["store"], ["cw"], name="solo", engine="GLOO", size=1, rank=0
            )
        )
        workspace.FeedBlob("odd", np.ones((3, 3), np.float32))
        with pytest.raises(RuntimeError, match="has 3 rows, which do not split into 2 equal"):
            workspace.RunOperatorOnce(
                core.CreateOperator("ReduceScatterBatch", ["cw", "odd"], ["a", "b"], engine="GLOO")
            )
        workspace.FeedBlob("i", np.ones((2, 3), np.int32))
        with pytest.raises(RuntimeError, match="sums float only"):
            workspace.RunOperatorOnce(
                core.CreateOperator("ReduceScatterBatch", ["cw", "i"], ["a"], engine="GLOO")
            )
        with pytest.raises(RuntimeError, match="rows has 1 entries; it needs one per global"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "AllgatherBatch", ["cw", "x", "x"], ["y"], engine="GLOO", rows=[2]
                )
            )
        with pytest.raises(RuntimeError, match="columns has 2 entries"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "ColumnShardsToBatch", ["cw", "x"], ["y"], engine="GLOO", columns=[1, 2]
                )
            )
        # A one-rank world with one buffer: the exchanges are copies.
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "ColumnShardsToBatch", ["cw", "x"], ["y"], engine="GLOO", columns=[3]
            )
        )
        np.testing.assert_array_equal(workspace.FetchBlob("y"), np.ones((2, 3), np.float32))
        assert caffe2_pb2  # the proto module imports with the extension
