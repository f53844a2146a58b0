"""data_workers: fetcher threads, rebatching, coordinators, errors."""
import numpy as np
import pytest

from caffe2.python import core, data_workers, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def counting_fetcher(rows):
    state = {"next": 0}

    def fetch(worker_id, batch_size):
        start = state["next"]
        state["next"] += rows
        data = np.arange(start, start + rows, dtype=np.float32)
        return [data.reshape(rows, 1), data.astype(np.int32)]

    return fetch


def test_rebatches_to_batch_size_and_feeds():
    net = core.Net("dw")
    coordinator = data_workers.init_data_input_workers(
        net,
        ["data", "label"],
        counting_fetcher(3),
        batch_size=4,
        num_worker_threads=1,
        input_source_name="rebatch",
    )
    coordinator.start()
    try:
        seen = []
        for _ in range(3):
            data, label = coordinator.get_next_batch(timeout=10)
            assert data.shape == (4, 1) and label.shape == (4,)
            assert np.array_equal(data[:, 0], label)
            seen.extend(label.tolist())
        assert seen == list(range(12))  # nothing lost or repeated
        coordinator.feed_next_batch(timeout=10)
        assert workspace.FetchBlob("data").shape == (4, 1)
        assert workspace.FetchBlob("label").dtype == np.int32
        assert coordinator.get_metrics()["fetched_batches"] >= 4
    finally:
        assert coordinator.stop()
    assert not coordinator.is_active()


def test_scoped_names_and_dont_rebatch():
    net = core.Net("dw2")
    with core.NameScope("gpu_0"):
        coordinator = data_workers.init_data_input_workers(
            net,
            ["data", "label"],
            counting_fetcher(3),
            batch_size=4,
            num_worker_threads=2,
            dont_rebatch=True,
            input_source_name="scoped",
        )
    assert coordinator.input_blob_names == ["gpu_0/data", "gpu_0/label"]
    coordinator.start()
    try:
        data, _ = coordinator.get_next_batch(timeout=10)
        assert data.shape == (3, 1)
    finally:
        coordinator.stop()


def test_fetcher_error_is_reported():
    def broken(worker_id, batch_size):
        raise IOError("disk on fire")

    coordinator = data_workers.init_data_input_workers(
        core.Net("dw3"), ["x"], broken, batch_size=2, input_source_name="broken"
    )
    coordinator.start()
    with pytest.raises(RuntimeError, match="disk on fire"):
        coordinator.get_next_batch(timeout=10)
    coordinator.stop()


def test_mismatched_arrays_are_reported():
    def bad(worker_id, batch_size):
        return [np.zeros((2, 1)), np.zeros(3)]

    coordinator = data_workers.init_data_input_workers(
        core.Net("dw4"), ["x", "y"], bad, batch_size=2, input_source_name="bad"
    )
    coordinator.start()
    with pytest.raises(RuntimeError, match="different first dimensions"):
        coordinator.get_next_batch(timeout=10)
    coordinator.stop()


def test_timeout_without_data():
    coordinator = data_workers.init_data_input_workers(
        core.Net("dw5"), ["x"], lambda w, b: None, batch_size=2, input_source_name="empty"
    )
    coordinator.start()
    with pytest.raises(RuntimeError, match="no batch"):
        coordinator.get_next_batch(timeout=0.3)
    coordinator.stop()
    assert data_workers.global_coordinator().stop()


@pytest.mark.skipif(not workspace.C.OpSchema.get("Python"), reason="needs the Python operator")
def test_dequeue_op_in_net():
    net = core.Net("dw6")
    net.Copy("data", "copy")
    coordinator = data_workers.init_data_input_workers(
        net,
        ["data"],
        lambda w, b: [np.ones((b, 2), np.float32)],
        batch_size=3,
        input_source_name="op",
    )
    assert net.Proto().op[0].type == "Python"
    coordinator.start()
    try:
        workspace.RunNetOnce(net)
        assert workspace.FetchBlob("copy").shape == (3, 2)
    finally:
        coordinator.stop()
