"""AtomicFetchAdd (and its int64 name AtomicFetchAdd64): the fetched and summed values, in place on
a counter, int32 wrap-around, a counter advanced by many threads at once without a lost update,
and the errors. CPU only (the mutex is a host object)."""
import threading

import numpy as np
import pytest

from caffe2.python import core, workspace


def setup_counter(dtype=np.int32, start=5, step=3):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("CreateMutex", [], ["mutex"]))
    workspace.FeedBlob("a", np.array([start], dtype))
    workspace.FeedBlob("b", np.array([step], dtype))


@pytest.mark.parametrize(
    "op_type,dtype", [("AtomicFetchAdd", np.int32), ("AtomicFetchAdd64", np.int64)]
)
def test_fetch_and_add(op_type, dtype):
    setup_counter(dtype)
    workspace.RunOperatorOnce(core.CreateOperator(op_type, ["mutex", "a", "b"], ["sum", "old"]))
    assert workspace.FetchBlob("sum") == 8 and workspace.FetchBlob("old") == 5
    assert workspace.FetchBlob("sum").dtype == dtype and workspace.FetchBlob("sum").shape == ()
    assert workspace.FetchBlob("a") == 5  # not in place: a is untouched


def test_in_place_counter_advanced_by_many_threads():
    setup_counter(start=0, step=1)
    net = core.Net("fetch_add")
    net.AtomicFetchAdd(["mutex", "a", "b"], ["a", "old"])
    workspace.CreateNet(net)
    runs_per_thread, threads = 200, 4

    def run():
        for _ in range(runs_per_thread):
            workspace.RunNet(net.Proto().name)

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert workspace.FetchBlob("a") == runs_per_thread * threads


def test_int32_wraps_around():
    setup_counter(start=2**31 - 1, step=1)
    workspace.RunOperatorOnce(
        core.CreateOperator("AtomicFetchAdd", ["mutex", "a", "b"], ["a", "old"])
    )
    assert workspace.FetchBlob("a") == -(2**31) and workspace.FetchBlob("old") == 2**31 - 1


def test_mixed_types_and_a_missing_mutex_are_refused():
    setup_counter()
    workspace.FeedBlob("b", np.array([1], np.int64))
    op = core.CreateOperator("AtomicFetchAdd", ["mutex", "a", "b"], ["sum", "old"])
    with pytest.raises(RuntimeError, match="one-element tensors of one type, int32 or int64"):
        workspace.RunOperatorOnce(op)
    workspace.FeedBlob("not_a_mutex", np.zeros(1, np.float32))
    op = core.CreateOperator("AtomicFetchAdd", ["not_a_mutex", "a", "a"], ["sum", "old"])
    with pytest.raises(RuntimeError, match="not_a_mutex"):
        workspace.RunOperatorOnce(op)
