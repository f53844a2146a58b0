"""DBReaderSkip (extension): skipping k records leaves a reader exactly where reading them through
ImageInput would, for a sharded reader too; so a resumed run reads what the interrupted one would
have read next."""
import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import DBWriter, datum_record, encode_png

RECORDS, BATCH = 40, 4


@pytest.fixture
def label_db(tmp_path):
    """Datum records whose label is the record index."""
    path = str(tmp_path / "labels_lmdb")
    with DBWriter("lmdb", path) as writer:
        for i in range(RECORDS):
            writer.put(
                "%08d" % i, datum_record(i, encoded=encode_png(np.full((4, 4), i, np.uint8)))
            )
    return path


def labels_read(path, iterations, skip=0, num_shards=1, shard_id=0):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateDB",
            [],
            ["reader"],
            db=path,
            db_type="lmdb",
            num_shards=num_shards,
            shard_id=shard_id,
        )
    )
    if skip:
        workspace.RunOperatorOnce(
            core.CreateOperator("DBReaderSkip", ["reader"], [], num_records=skip)
        )
    net = core.Net("input")
    net.ImageInput(
        ["reader"],
        ["data", "label"],
        batch_size=BATCH,
        use_caffe_datum=1,
        color=0,
        crop=4,
        scale=4,
        is_test=1,
    )
    workspace.CreateNet(net)
    out = []
    for _ in range(iterations):
        workspace.RunNet(net.Proto().name)
        out.append(workspace.FetchBlob("label").tolist())
    return out


@pytest.mark.parametrize("num_shards,shard_id", [(1, 0), (2, 1), (3, 2)])
def test_skip_resumes_where_reading_left_off(label_db, num_shards, shard_id):
    straight = labels_read(label_db, 6, num_shards=num_shards, shard_id=shard_id)
    resumed = labels_read(label_db, 3, skip=3 * BATCH, num_shards=num_shards, shard_id=shard_id)
    assert resumed == straight[3:]
    # shard s reads records s, s + n, ... (wrapping around)
    assert straight[0][0] == shard_id and straight[0][1] == shard_id + num_shards


def test_skip_wraps_around(label_db):
    assert labels_read(label_db, 1, skip=RECORDS + 2) == [[2, 3, 4, 5]]


def test_bad_arguments(label_db):
    workspace.ResetWorkspace()
    with pytest.raises(RuntimeError, match="missing required argument 'num_records'"):
        workspace.RunOperatorOnce(core.CreateOperator("DBReaderSkip", ["r"], []))
    workspace.FeedBlob("r", np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match="must be >= 0"):
        workspace.RunOperatorOnce(core.CreateOperator("DBReaderSkip", ["r"], [], num_records=-1))
    with pytest.raises(RuntimeError, match="must be a DB reader"):
        workspace.RunOperatorOnce(core.CreateOperator("DBReaderSkip", ["r"], [], num_records=1))
