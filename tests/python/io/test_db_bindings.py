"""The DB bindings of caffe2_pybind11_state: Mode, create_db, DB, Cursor, Transaction."""
import pytest

from caffe2.python import caffe2_pybind11_state as C

DB_TYPES = ["minidb", "lmdb", "leveldb"]


def write(db_type, path, records, mode=C.Mode.new):
    db = C.create_db(db_type, path, mode)
    txn = db.new_transaction()
    for key, value in records:
        txn.put(key, value)
    txn.commit()
    del txn
    db.close()


def read(db_type, path):
    db = C.create_db(db_type, path, C.Mode.read)
    cursor = db.new_cursor()
    records = []
    while cursor.valid():
        records.append((cursor.key(), cursor.value()))
        cursor.next()
    return records


def test_mode_values_are_exported():
    assert int(C.Mode.read) == 0 and int(C.Mode.write) == 1 and int(C.Mode.new) == 2
    assert C.read == C.Mode.read and C.new == C.Mode.new


def test_registered_dbs():
    names = C.registered_dbs()
    for name in ["minidb", "MiniDB", "lmdb", "LMDB", "leveldb", "LevelDB"]:
        assert name in names


@pytest.mark.parametrize("db_type", DB_TYPES)
def test_write_then_read(tmp_path, db_type):
    path = str(tmp_path / "db")
    write(db_type, path, [("b", b"\x00\x01"), (b"a", "text")])
    records = read(db_type, path)
    expected = [(b"b", b"\x00\x01"), (b"a", b"text")]
    if db_type != "minidb":
        expected.sort()
    assert records == expected
    cursor = C.create_db(db_type, path, C.Mode.read).new_cursor()
    assert cursor.supports_seek() == (db_type != "minidb")
    cursor.next()
    cursor.seek_to_first()
    assert cursor.key() == expected[0][0]


def test_minidb_write_mode_appends(tmp_path):
    path = str(tmp_path / "m")
    write("minidb", path, [("a", "1")])
    write("minidb", path, [("b", "2")], mode=C.Mode.write)
    assert [k for k, _ in read("minidb", path)] == [b"a", b"b"]
    # Each record is 8 + 2 bytes; the file also holds its integrity header and one trailer per
    # session.
    with open(path, "rb") as f:
        data = f.read()
    assert data.count(b"\x01\x00\x00\x00\x01\x00\x00\x00a1") == 1
    assert (
        data.count(b"__caffe2_minidb_integrity__") == 2 * 2
    )  # key and BlobProto name, per trailer


def test_unknown_type_is_none_and_missing_path_raises(tmp_path):
    assert C.create_db("nosuchdb", str(tmp_path / "x"), C.Mode.read) is None
    missing = str(tmp_path / "missing")
    with pytest.raises(RuntimeError, match="missing"):
        C.create_db("minidb", missing, C.Mode.read)
