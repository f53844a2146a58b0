"""FileStoreHandler and the store ops on a temporary directory (ops spec §3.1, §3.2, §3.4)."""
import os
import time

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


def test_set_get_check_in_one_process(tmp_path):
    h = create_handler("file", path=str(tmp_path), prefix="run1")
    store_set(h, "x", np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(
        store_get(h, "x", out="y"), np.arange(6, dtype=np.float32).reshape(2, 3)
    )
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", [h], [], blob_name=["x"]))
    # the prefix gets its own directory (naming its run id in .c2_run_id); keys are hashed file
    # names; no temporaries left behind
    (run_dir,) = os.listdir(str(tmp_path))
    files = sorted(os.listdir(os.path.join(str(tmp_path), run_dir)))
    assert len(files) == 2 and files[0] == ".c2_run_id"
    assert len(files[1]) == 32 and not files[1].startswith(".")
    with open(os.path.join(str(tmp_path), run_dir, ".c2_run_id")) as f:
        assert f.read() == "run1"


def test_store_set_blob_name_argument(tmp_path):
    h = create_handler("file", path=str(tmp_path))
    workspace.FeedBlob("data", np.array([7], dtype=np.int64))
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", [h, "data"], [], blob_name="key"))
    np.testing.assert_array_equal(store_get(h, "key", out="back"), [7])


def test_wait_names_from_input_tensor(tmp_path):
    h = create_handler("file", path=str(tmp_path))
    store_set(h, "a", [1])
    store_set(h, "b", [2])
    workspace.FeedBlob("names", np.array([b"a", b"b"], dtype=object))
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", [h, "names"], []))
    with pytest.raises(RuntimeError, match="not both"):
        workspace.RunOperatorOnce(
            core.CreateOperator("StoreWait", [h, "names"], [], blob_name=["a"])
        )


def test_add_counts_from_zero(tmp_path):
    h = create_handler("file", path=str(tmp_path))
    assert store_add(h, "c", 0).tolist() == [0]
    assert store_add(h, "c", 5).tolist() == [5]
    out = store_add(h, "c", -2)
    assert out.dtype == np.int64 and out.shape == (1,) and out.tolist() == [3]


def test_wait_timeout_names_missing_keys(tmp_path):
    h = create_handler("file", path=str(tmp_path), prefix="t")
    store_set(h, "present", [1])
    start = time.time()
    with pytest.raises(StoreHandlerTimeoutError) as info:
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "StoreWait", [h], [], blob_name=["present", "missing1", "missing2"], timeout_ms=1000
            )
        )
    assert time.time() - start < 10
    msg = str(info.value)
    assert "Wait timeout for name(s): missing1, missing2" in msg
    assert "present," not in msg
    assert isinstance(info.value, RuntimeError)
    assert StoreHandlerTimeoutError.__module__ == "caffe2.distributed.python"
    with pytest.raises(StoreHandlerTimeoutError, match="never_set"):
        store_get(h, "never_set", timeout_ms=1000)


def test_timeout_through_a_net(tmp_path):
    h = create_handler("file", path=str(tmp_path))
    net = core.Net("waiter")
    net.StoreGet([h], ["nothing"], timeout_ms=1000)
    with pytest.raises(StoreHandlerTimeoutError, match="nothing"):
        workspace.RunNetOnce(net)


def test_missing_directory_is_a_clear_error(tmp_path):
    missing = os.path.join(str(tmp_path), "does", "not", "exist")
    with pytest.raises(RuntimeError, match="store directory '.*does/not/exist' cannot be used"):
        create_handler("file", path=missing)
    with pytest.raises(RuntimeError, match="required argument 'path'"):
        workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["h"]))


def test_wrong_handler_blob(tmp_path):
    workspace.FeedBlob("not_a_handler", np.zeros(2))
    with pytest.raises(RuntimeError, match="must be a store handler"):
        store_get("not_a_handler", "x")


def test_reused_prefix_sees_old_keys_and_set_overwrites(tmp_path):
    # spec §3.2/§3.9: files are never deleted; a reused run id finds stale keys; set overwrites
    h1 = create_handler("file", blob="h1", path=str(tmp_path), prefix="same_run")
    store_set(h1, "addr", [1])
    h2 = create_handler("file", blob="h2", path=str(tmp_path), prefix="same_run")
    assert store_get(h2, "addr", out="old").tolist() == [1]
    store_set(h2, "addr", [2])
    assert store_get(h1, "addr", out="new").tolist() == [2]
    h3 = create_handler("file", blob="h3", path=str(tmp_path), prefix="other_run")
    with pytest.raises(StoreHandlerTimeoutError):
        store_get(h3, "addr", out="none", timeout_ms=1000)


RENDEZVOUS = r"""
import sys
import numpy as np
from caffe2.python import core, workspace
path, rank, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
workspace.RunOperatorOnce(core.CreateOperator(
    "FileStoreHandlerCreate", [], ["h"], path=path, prefix="rdv"))
workspace.FeedBlob("mine", np.array([rank * 10], dtype=np.int64))
workspace.RunOperatorOnce(core.CreateOperator(
    "StoreSet", ["h", "mine"], [], blob_name="rank_%d" % rank))
names = ["rank_%d" % r for r in range(size)]
workspace.RunOperatorOnce(core.CreateOperator("StoreWait", ["h"], [], blob_name=names))
total = 0
for r in range(size):
    workspace.RunOperatorOnce(core.CreateOperator(
        "StoreGet", ["h"], ["v"], blob_name="rank_%d" % r))
    total += int(workspace.FetchBlob("v")[0])
workspace.RunOperatorOnce(core.CreateOperator(
    "StoreAdd", ["h"], ["c"], blob_name="arrived", add_value=1))
print(total)
"""


def test_rendezvous_across_processes(tmp_path):
    size = 4
    procs = [run_worker(RENDEZVOUS, str(tmp_path), r, size) for r in range(size)]
    outs = [finish(p) for p in procs]
    assert [int(o.strip()) for o in outs] == [sum(10 * r for r in range(size))] * size
    h = create_handler("file", path=str(tmp_path), prefix="rdv")
    assert store_add(h, "arrived", 0).tolist() == [size]


WRITER = r"""
import sys
import numpy as np
from caffe2.python import core, workspace
path, n = sys.argv[1], int(sys.argv[2])
workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["h"], path=path))
for i in range(n):
    workspace.FeedBlob("big", np.full(200000, i, dtype=np.int32))
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", ["h", "big"], []))
"""


def test_atomic_writes_never_show_partial_values(tmp_path):
    writer = run_worker(WRITER, str(tmp_path), 30)
    h = create_handler("file", path=str(tmp_path))
    reads = 0
    while writer.poll() is None or reads == 0:
        value = store_get(h, "big", out="seen", timeout_ms=30000)
        assert value.shape == (200000,)
        assert (value == value[0]).all()
        reads += 1
    finish(writer)
    assert reads > 0


def test_file_store_add_is_atomic_across_processes(tmp_path):
    adder = r"""
import sys
from caffe2.python import core, workspace
workspace.RunOperatorOnce(core.CreateOperator(
    "FileStoreHandlerCreate", [], ["h"], path=sys.argv[1]))
for _ in range(25):
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["c"], blob_name="n"))
"""
    procs = [run_worker(adder, str(tmp_path)) for _ in range(3)]
    for p in procs:
        finish(p)
    h = create_handler("file", path=str(tmp_path))
    assert store_add(h, "n", 0).tolist() == [75]
