"""Gloo common worlds and collectives across real processes on loopback (ops spec §3.5, §3.9)."""
import json
import os
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

from caffe2.python import core, workspace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
WORKER = os.path.join(HERE, "gloo_worker.py")


def start(scenario, rank, size, kind, arg, run_id, timeout_ms=20000, env=None):
    full_env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    full_env.update(env or {})
    return subprocess.Popen(
        [
            sys.executable,
            WORKER,
            scenario,
            str(rank),
            str(size),
            kind,
            str(arg),
            run_id,
            str(timeout_ms),
        ],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result(proc, timeout=90):
    out, err = proc.communicate(timeout=timeout)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    assert lines, "worker printed no result (rc {}):\n{}\n{}".format(proc.returncode, out, err)
    return proc.returncode, json.loads(lines[-1]), err


def run_ranks(scenario, size, kind, arg, run_id=None, timeout_ms=20000, env_of=None):
    run_id = run_id or uuid.uuid4().hex
    procs = [
        start(scenario, r, size, kind, arg, run_id, timeout_ms, env_of(r) if env_of else None)
        for r in range(size)
    ]
    return [result(p) for p in procs]


@pytest.fixture
def store(request, tmp_path):
    kind = request.param
    if kind == "redis":
        _, port = request.getfixturevalue("redis_server")
        return kind, port
    return kind, str(tmp_path)


@pytest.mark.parametrize("store", ["file", "redis"], indirect=True)
@pytest.mark.parametrize("size", [2, 3])
def test_collectives(store, size):
    kind, arg = store
    results = run_ranks("collectives", size, kind, arg)
    assert [rc for rc, _, _ in results] == [0] * size, results
    total = float(sum(range(1, size + 1)))
    for rank, (_, out, _) in enumerate(results):
        # two local buffers per rank, summed over buffers and ranks
        expected = [total + total * i for i in range(5)]
        np.testing.assert_allclose(out["allreduce_a"], expected)
        np.testing.assert_allclose(out["allreduce_b"], expected)
        np.testing.assert_allclose(out["allreduce_again"], [3.0 * size] * 5)
        assert out["status_created"]
        np.testing.assert_allclose(
            out["allreduce_half"], [sum(r + 0.5 for r in range(size))] * 4, rtol=1e-3
        )
        root = size - 1
        assert out["broadcast_i"] == [10 * root, 10 * root + 1]
        assert out["broadcast_j"] == [10 * root, 10 * root + 1]
        gathered = []
        for r in range(size):
            gathered += [r, r, 100 + r, 100 + r]
        assert out["allgather"] == gathered
        column = np.arange(2 * size, dtype=np.float32) * size + sum(range(size))
        np.testing.assert_allclose(out["reduce_scatter"], column[2 * rank : 2 * rank + 2])
        assert out["clone_allreduce"] == [float(sum(range(size)))]
        assert "Inputs/outputs have changed" in out["changed_error"]


def test_missing_rank_times_out_naming_it(tmp_path):
    rc, out, _ = result(start("rendezvous", 0, 3, "file", tmp_path, "lonely", timeout_ms=1500))
    assert rc == 3
    assert out["error_type"].endswith("StoreHandlerTimeoutError")
    assert "rank(s) 1, 2 of 3 never arrived" in out["error"]
    assert "--run_id" in out["error"]
    assert out["status"] == [1]


@pytest.mark.parametrize("store", ["file", "redis"], indirect=True)
def test_mismatched_run_ids_are_named(store):
    kind, arg = store
    tag = uuid.uuid4().hex[:8]
    procs = [
        start("rendezvous", r, 2, kind, arg, "run{}_{}".format(r, tag), timeout_ms=1500)
        for r in range(2)
    ]
    for r, p in enumerate(procs):
        rc, out, _ = result(p)
        assert rc == 3 and "rank(s) {} of 2 never arrived".format(1 - r) in out["error"]
        other = "run{}_{}".format(1 - r, tag) + ("/" if kind == "redis" else "")
        # (a shared Redis may also list other recent runs whose keys end alike)
        assert "Rank {} joined 'cw_op' under another run id (".format(1 - r) in out["error"]
        assert "'{}'".format(other) in out["error"], out["error"]


def test_ranks_with_different_world_sizes_are_told_so(tmp_path):
    run_id = uuid.uuid4().hex
    procs = [
        start("rendezvous", 0, 2, "file", tmp_path, run_id, timeout_ms=1500),
        start("rendezvous", 1, 3, "file", tmp_path, run_id, timeout_ms=1500),
    ]
    (rc0, out0, _), (rc1, out1, _) = [result(p) for p in procs]
    assert rc0 == 3 and rc1 == 3
    assert (
        "rank 1 (host" in out0["error"]
        and "joined with size 3, this rank (0) has size 2" in out0["error"]
    )
    assert (
        "rank 0 (host" in out1["error"]
        and "joined with size 2, this rank (1) has size 3" in out1["error"]
    )
    assert "--num_shards" in out0["error"]


def test_a_big_world_missing_its_peers_says_so_briefly(tmp_path):
    rc, out, _ = result(start("rendezvous", 0, 100000, "file", tmp_path, "big", timeout_ms=1000))
    assert rc == 3
    assert (
        "rank(s) 1, 2, 3, 4, 5, 6, 7, 8, ..., 99999 (99999 ranks) of 100000 never arrived"
        in out["error"]
    )
    assert len(out["error"]) < 2000, len(out["error"])


@pytest.mark.parametrize("store", ["file", "redis"], indirect=True)
def test_duplicate_shard_id_is_refused(store):
    kind, arg = store
    run_id = uuid.uuid4().hex
    procs = [start("rendezvous", 0, 2, kind, arg, run_id, timeout_ms=3000) for _ in range(2)]
    outs = [result(p) for p in procs]
    dup = [o for rc, o, _ in outs if "claimed twice" in o.get("error", "")]
    assert len(dup) == 1, outs
    assert "--shard_id" in dup[0]["error"]
    # the other one waited for rank 1, which never came
    assert all(rc != 0 for rc, _, _ in outs)


@pytest.mark.parametrize("store", ["file", "redis"], indirect=True)
def test_reused_run_id_is_refused(store):
    kind, arg = store
    run_id = uuid.uuid4().hex
    for rc, out, err in run_ranks("rendezvous", 2, kind, arg, run_id=run_id):
        assert rc == 0, (out, err)
    for rc, out, _ in run_ranks("rendezvous", 2, kind, arg, run_id=run_id, timeout_ms=2000):
        assert rc == 3
        assert "run id was reused" in out["error"] and "--run_id" in out["error"]


def test_loopback_address_with_remote_peer_is_refused(tmp_path):
    # Two "hosts" (by the name each rank reports) where rank 0 listens on loopback.
    results = run_ranks(
        "rendezvous_lo",
        2,
        "file",
        tmp_path,
        timeout_ms=5000,
        env_of=lambda r: {"C2_RENDEZVOUS_HOSTNAME": "host" + str(r)},
    )
    for rc, out, _ in results:
        assert rc == 3
        assert "loopback" in out["error"] and "--distributed_interfaces" in out["error"]


@pytest.mark.parametrize("size", [2, 3])
def test_dead_peer_is_named_by_every_survivor(tmp_path, size):
    t0 = time.time()
    results = run_ranks("dead_peer", size, "file", tmp_path, timeout_ms=10000)
    elapsed = time.time() - t0
    assert results[1][0] == 0  # the rank that "died" exited on its own
    for rank, (rc, out, err) in enumerate(results):
        if rank == 1:
            continue
        assert rc == 3, (out, err)
        assert out["error_type"] == "gloo.python.IoError"
        assert "rank 1 (host" in out["error"] and "has exited" in out["error"], out["error"]
        assert "failed on rank {} of {}".format(rank, size) in out["error"]
        assert out["status"] == [1]
    assert elapsed < 60  # no hang: well inside the harness timeout


def test_stuck_peer_times_out_and_is_named(tmp_path):
    """A rank that stays alive but stops answering: the others fail after the collective timeout
    and name it as dead or stuck."""
    t0 = time.time()
    procs = [
        start("stuck_peer", r, 2, "file", tmp_path, "stuck", timeout_ms=3000) for r in range(2)
    ]
    rc, out, err = result(procs[0])
    elapsed = time.time() - t0
    assert rc == 3, (out, err)
    assert out["error_type"] == "gloo.python.IoError"
    assert "rank 1 (host" in out["error"] and "is dead or stuck" in out["error"], out["error"]
    assert elapsed < 30  # 3 s timeout + 3 s of waiting for failure reports, not a hang
    procs[1].kill()
    procs[1].communicate()


class TestInProcess:
    def setup_method(self):
        workspace.ResetWorkspace()

    def test_no_default_engine(self):
        workspace.FeedBlob("cw", np.zeros(1, np.float32))
        workspace.FeedBlob("x", np.zeros(1, np.float32))
        with pytest.raises(RuntimeError, match="engine='GLOO'"):
            workspace.RunOperatorOnce(core.CreateOperator("Allreduce", ["cw", "x"], ["x"]))

    def test_unknown_allreduce_algorithm_is_refused(self):
        workspace.FeedBlob("cw", np.zeros(1, np.float32))
        workspace.FeedBlob("x", np.zeros(1, np.float32))
        op = core.CreateOperator("Allreduce", ["cw", "x"], ["x"], engine="GLOO", algorithm="tree")
        with pytest.raises(RuntimeError, match='algorithm.*"ring_chunked".*got "tree"'):
            workspace.RunOperatorOnce(op)

    def test_create_needs_a_name(self, tmp_path):
        workspace.RunOperatorOnce(
            core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=str(tmp_path))
        )
        op = core.CreateOperator(
            "CreateCommonWorld", ["store"], ["cw"], engine="GLOO", size=1, rank=0
        )
        op.ClearField("name")  # Python always sets a name; C++-built defs may have none
        with pytest.raises(RuntimeError, match="needs a name"):
            workspace.RunOperatorOnce(op)

    def test_timeout_must_be_positive(self, tmp_path):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "FileStoreHandlerCreate", [], ["store"], path=str(tmp_path), prefix="t"
            )
        )
        with pytest.raises(RuntimeError, match="'timeout_ms' must be positive .* got -5"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "CreateCommonWorld",
                    ["store"],
                    ["cw"],
                    name="neg",
                    engine="GLOO",
                    size=1,
                    rank=0,
                    timeout_ms=-5,
                )
            )
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "CreateCommonWorld",
                ["store"],
                ["cw"],
                name="pos",
                engine="GLOO",
                size=1,
                rank=0,
                timeout_ms=5000,
            )
        )

    def test_bad_rank_and_bad_store(self, tmp_path):
        workspace.FeedBlob("notastore", np.zeros(1, np.float32))
        with pytest.raises(RuntimeError, match=r"'rank' must be in \[0, size\)"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "CreateCommonWorld",
                    ["notastore"],
                    ["cw"],
                    name="x",
                    engine="GLOO",
                    size=2,
                    rank=2,
                )
            )
        with pytest.raises(RuntimeError, match="must be a store handler"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "CreateCommonWorld",
                    ["notastore"],
                    ["cw"],
                    name="x",
                    engine="GLOO",
                    size=1,
                    rank=0,
                )
            )

    def test_single_rank_world_and_bad_inputs(self, tmp_path):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "FileStoreHandlerCreate", [], ["store"], path=str(tmp_path), prefix="solo"
            )
        )
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "CreateCommonWorld",
                ["store"],
                ["cw"],
                name="solo_cw",
                engine="GLOO",
                size=1,
                rank=0,
            )
        )
        workspace.FeedBlob("x", np.array([1, 2], np.float32))
        workspace.FeedBlob("y", np.array([3, 4], np.float32))
        workspace.RunOperatorOnce(
            core.CreateOperator("Allreduce", ["cw", "x", "y"], ["x", "y"], engine="GLOO")
        )
        np.testing.assert_allclose(workspace.FetchBlob("x"), [4, 6])
        workspace.FeedBlob("i", np.array([1, 2], np.int32))
        with pytest.raises(RuntimeError, match="dtype INT32; supported: FLOAT, FLOAT16"):
            workspace.RunOperatorOnce(
                core.CreateOperator("Allreduce", ["cw", "i"], ["i"], engine="GLOO")
            )
        workspace.FeedBlob("z", np.zeros(3, np.float32))
        with pytest.raises(RuntimeError, match="same size and dtype"):
            workspace.RunOperatorOnce(
                core.CreateOperator("Allreduce", ["cw", "x", "z"], ["x", "z"], engine="GLOO")
            )
        with pytest.raises(RuntimeError, match="in place|inplace|in-place"):
            workspace.RunOperatorOnce(
                core.CreateOperator("Allreduce", ["cw", "x"], ["w"], engine="GLOO")
            )
        with pytest.raises(RuntimeError, match="must be a common world"):
            workspace.RunOperatorOnce(
                core.CreateOperator("Allreduce", ["x", "y"], ["y"], engine="GLOO")
            )
        # the same name again in this run: refused, not a hang
        with pytest.raises(RuntimeError, match="already joined"):
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "CreateCommonWorld",
                    ["store"],
                    ["cw_again"],
                    name="solo_cw",
                    engine="GLOO",
                    size=1,
                    rank=0,
                )
            )
        workspace.RunOperatorOnce(
            core.CreateOperator("DestroyCommonWorld", ["cw"], ["cw"], engine="GLOO")
        )
        with pytest.raises(RuntimeError, match="destroyed common world"):
            workspace.RunOperatorOnce(
                core.CreateOperator("Allreduce", ["cw", "x"], ["x"], engine="GLOO")
            )

    def test_io_error_is_exported(self):
        from gloo.python import IoError

        assert issubclass(IoError, RuntimeError)
