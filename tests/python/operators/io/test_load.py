"""Load from Python: a truncated, missing or directory path, missing blobs, bit flips and cuts of a
saved file, and a changed value in a keyed-store checkpoint are RuntimeErrors naming the DB, key
or blob, and the process stays usable afterwards."""
import os

import numpy as np
import pytest

from caffe2.python import core, workspace


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.SwitchWorkspace("load_errors_test", True)
    workspace.ResetWorkspace()
    yield
    workspace.SwitchWorkspace("default", True)


def save(path, **blobs):
    for name, value in blobs.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(
        core.CreateOperator("Save", list(blobs), [], db=path, db_type="minidb", absolute_path=1)
    )


def load(path, outputs, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "Load", [], outputs, db=path, db_type="minidb", absolute_path=1, **kwargs
        )
    )


def test_truncated_minidb_names_the_file(tmp_path):
    path = str(tmp_path / "t.minidb")
    save(path, a=np.arange(10, dtype=np.float32), b=np.ones(3, np.float32))
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-7])
    with pytest.raises(RuntimeError) as info:
        load(path, ["a", "b"])
    assert info.value.args[0].startswith("[Load]") and path in str(info.value)
    # The process stays usable.
    save(str(tmp_path / "ok.minidb"), c=np.zeros(2, np.float32))
    load(str(tmp_path / "ok.minidb"), ["c"])
    np.testing.assert_array_equal(workspace.FetchBlob("c"), [0, 0])


def test_missing_db_path(tmp_path):
    path = str(tmp_path / "missing.minidb")
    with pytest.raises(RuntimeError) as info:
        load(path, ["a"])
    assert "missing.minidb" in str(info.value)


def test_missing_blob_in_db(tmp_path):
    path = str(tmp_path / "m.minidb")
    save(path, a=np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match="Expected to load 2 blobs, got 1 only"):
        load(path, ["a", "zz"])
    load(path, ["a", "zz"], allow_incomplete=1)
    assert workspace.HasBlob("a")


def test_a_directory_is_not_a_minidb(tmp_path):
    with pytest.raises(RuntimeError, match="is a directory, not a minidb file") as err:
        load(str(tmp_path), ["a"], load_all=1)
    assert str(tmp_path) in str(err.value)
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["still"], shape=[1]))


def test_bit_flips_and_cuts_of_a_saved_file_are_errors(tmp_path):
    # Files written here carry integrity records (core/db/integrity.h): no changed value and
    # no subset of the blobs loads silently.
    path = str(tmp_path / "ckpt.minidb")
    save(path, w=np.full(4, 2.0, np.float32), s=np.array([b"hello"], dtype=object))
    with open(path, "rb") as f:
        data = f.read()
    rng = np.random.RandomState(0)
    for i in rng.choice(len(data), 40, replace=False):
        flipped = bytearray(data)
        flipped[i] ^= 1 << int(rng.randint(8))
        with open(path, "wb") as f:
            f.write(bytes(flipped))
        try:
            load(path, [], load_all=1)
        except RuntimeError as e:
            assert path in str(e)
            continue
        # Only a flip that leaves every value intact (e.g. in a BlobProto field nobody reads) may
        # load.
        np.testing.assert_array_equal(workspace.FetchBlob("w"), np.full(4, 2.0, np.float32))
        assert list(workspace.FetchBlob("s")) == [b"hello"]
    for cut in [0, len(data) // 2, len(data) - 1]:
        with open(path, "wb") as f:
            f.write(data[:cut])
        with pytest.raises(RuntimeError, match="truncated|empty") as info:
            load(path, [], load_all=1)
        assert path in str(info.value)
    with open(path, "wb") as f:
        f.write(data)
    load(path, [], load_all=1)
    np.testing.assert_array_equal(workspace.FetchBlob("w"), np.full(4, 2.0, np.float32))


@pytest.mark.parametrize("db_type", ["lmdb", "leveldb"])
def test_changed_value_in_a_keyed_store_checkpoint_is_an_error(tmp_path, db_type):
    # lmdb and leveldb checkpoints carry a seal (core/db/integrity.h): a changed value does not
    # load.
    path = str(tmp_path / "ckpt")
    marker = (
        np.random.RandomState(1).rand(16).astype(np.float32)
    )  # incompressible (leveldb compresses)
    for name, value in {"w": marker, "s": np.array([b"hello"], dtype=object)}.items():
        workspace.FeedBlob(name, value)
    workspace.RunOperatorOnce(
        core.CreateOperator("Save", ["w", "s"], [], db=path, db_type=db_type, absolute_path=1)
    )

    def load_keyed():
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "Load", [], [], db=path, db_type=db_type, absolute_path=1, load_all=1
            )
        )

    workspace.ResetWorkspace()
    load_keyed()
    assert sorted(workspace.Blobs()) == ["s", "w"]  # the integrity records are not blobs
    np.testing.assert_array_equal(workspace.FetchBlob("w"), marker)
    flipped = 0
    for name in os.listdir(path):
        with open(os.path.join(path, name), "rb") as f:
            data = bytearray(f.read())
        at = data.find(marker.tobytes())
        while at >= 0:  # every copy (lmdb's copy-on-write leaves stale pages in the file)
            data[at + 5] ^= 0x10
            flipped += 1
            at = data.find(marker.tobytes(), at + 1)
        with open(os.path.join(path, name), "wb") as f:
            f.write(bytes(data))
    assert flipped
    with pytest.raises(RuntimeError, match="orrupt") as info:
        load_keyed()
    assert path in str(info.value)
    workspace.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["still"], shape=[1]))


def test_the_same_blob_in_two_dbs_is_an_error(tmp_path):
    first, second = str(tmp_path / "first.minidb"), str(tmp_path / "second.minidb")
    save(first, a=np.arange(3, dtype=np.float32))
    save(second, b=np.ones(2, np.float32))

    def load_dbs(dbs, outputs):
        op = core.CreateOperator(
            "Load", [], outputs, dbs=dbs, db_type="minidb", absolute_path=1, load_all=0
        )
        workspace.RunOperatorOnce(op)

    load_dbs([first, second], ["a", "b"])  # disjoint DBs load both blobs
    np.testing.assert_array_equal(workspace.FetchBlob("b"), np.ones(2, np.float32))
    for dbs, outputs in (([first, first], ["a"]), ([first, second, first], ["a", "b"])):
        with pytest.raises(
            RuntimeError, match=r"blob 'a' is present in two DBs: minidb DB '.*first"
        ):
            load_dbs(dbs, outputs)
    np.testing.assert_array_equal(workspace.FetchBlob("a"), np.arange(3, dtype=np.float32))
