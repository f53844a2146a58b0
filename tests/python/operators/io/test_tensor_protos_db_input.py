"""TensorProtosDBInput, the prefetch base and DBReader sharding / resume, on real LMDB files."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import caffe2_pybind11_state as C
from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (
    DBWriter,
    bytes_proto,
    float_proto,
    int32_proto,
    tensor_protos_record,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def string_proto_raw(value):
    proto = caffe2_pb2.TensorProto()
    proto.data_type = caffe2_pb2.TensorProto.STRING
    proto.dims.append(1)
    proto.string_data.append(value)
    return proto


def record(i):
    """Record i: uint8 (2, 3) filled with i, float (4,) = i + [0..3], INT32 label i (no dims),
    string."""
    return tensor_protos_record(
        bytes_proto(np.full((2, 3), i, np.uint8)),
        float_proto(i + np.arange(4, dtype=np.float32), dims=[4]),
        int32_proto(i),
        string_proto_raw(b"item%d" % i),
    )


def make_db(tmp_path, n, make=record, name="db", db_type="lmdb"):
    path = str(tmp_path / name)
    with DBWriter(db_type, path) as writer:
        for i in range(n):
            writer.put(b"%08d" % i, make(i))
    return path


def create_reader(path, name="reader", **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator("CreateDB", [], [name], db=path, db_type="lmdb", **kwargs)
    )


def read_op(reader="reader", batch_size=1, outputs=("data", "floats", "label", "names"), **kwargs):
    return core.CreateOperator(
        "TensorProtosDBInput", [reader], list(outputs), batch_size=batch_size, **kwargs
    )


def run_batches(op, count, blob="label"):
    name = create_net(op)
    batches = []
    for _ in range(count):
        workspace.RunNet(name)
        batches.append(workspace.FetchBlob(blob).copy())
    return batches


def create_net(*ops):
    """Creates (replacing) a net of `ops`; returns its name."""
    net = core.Net("input_net")
    net.Proto().op.extend(ops)
    workspace.CreateNet(net, overwrite=True)
    return net.Name()


@pytest.mark.parametrize("no_prefetch", [False, True])
def test_batches_stack_every_proto_with_its_type(tmp_path, no_prefetch):
    create_reader(make_db(tmp_path, 10))
    name = create_net(read_op(batch_size=4, no_prefetch=no_prefetch))
    for start in (0, 4, 8):
        workspace.RunNet(name)
        ids = [(start + k) % 10 for k in range(4)]
        data = workspace.FetchBlob("data")
        assert data.dtype == np.uint8 and data.shape == (4, 2, 3)
        np.testing.assert_array_equal(
            data, np.array(ids, np.uint8)[:, None, None] * np.ones((2, 3))
        )
        floats = workspace.FetchBlob("floats")
        assert floats.dtype == np.float32 and floats.shape == (4, 4)
        np.testing.assert_array_equal(floats, np.array(ids)[:, None] + np.arange(4))
        label = workspace.FetchBlob("label")
        assert label.dtype == np.int32 and label.shape == (4,)
        np.testing.assert_array_equal(label, ids)
        names = workspace.FetchBlob("names")
        assert names.shape == (4, 1)
        assert [n[0] for n in names] == [b"item%d" % i for i in ids]


def test_batch_size_zero_gives_one_record_unbatched(tmp_path):
    create_reader(make_db(tmp_path, 3))
    workspace.RunOperatorOnce(read_op(batch_size=0))
    assert workspace.FetchBlob("data").shape == (2, 3)
    assert workspace.FetchBlob("floats").shape == (4,)
    assert workspace.FetchBlob("label").shape == ()


def test_sharded_readers_are_disjoint_and_wrap_around(tmp_path):
    path = make_db(tmp_path, 5)
    create_reader(path, "r0", num_shards=2, shard_id=0)
    create_reader(path, "r1", num_shards=2, shard_id=1)
    got0 = run_batches(read_op("r0", no_prefetch=True), 5)
    got1 = run_batches(read_op("r1", no_prefetch=True), 5)
    assert [int(b[0]) for b in got0] == [0, 2, 4, 0, 2]
    assert [int(b[0]) for b in got1] == [1, 3, 1, 3, 1]


def test_one_reader_shared_by_two_ops_gives_disjoint_records(tmp_path):
    create_reader(make_db(tmp_path, 8))
    workspace.RunNet(
        create_net(
            read_op(batch_size=2, outputs=("a", "af", "al", "an")),
            read_op(batch_size=2, outputs=("b", "bf", "bl", "bn")),
        )
    )
    seen = list(workspace.FetchBlob("al")) + list(workspace.FetchBlob("bl"))
    assert len(set(seen)) == 4  # both ops prefetch, so the four records are any disjoint ones


def test_reader_position_serializes_and_resumes(tmp_path):
    create_reader(make_db(tmp_path, 10))
    op = read_op(batch_size=3, no_prefetch=True)
    first = run_batches(op, 1)
    saved = C.serialize_blob("reader")
    expected = run_batches(op, 2)
    workspace.ResetWorkspace()
    C.deserialize_blob("reader", saved)
    resumed = run_batches(op, 2)
    np.testing.assert_array_equal(first[0], [0, 1, 2])
    for want, got in zip(expected, resumed):
        np.testing.assert_array_equal(want, got)
    np.testing.assert_array_equal(resumed[1], [6, 7, 8])


def corrupt_at(bad):
    def make(i):
        return b"\xff\xff not a proto" if i == bad else record(i)

    return make


@pytest.mark.parametrize("no_prefetch", [False, True])
def test_corrupt_record_error_names_db_and_key_then_reading_goes_on(tmp_path, no_prefetch):
    path = make_db(tmp_path, 6, make=corrupt_at(3))
    create_reader(path)
    name = create_net(read_op(batch_size=2, no_prefetch=no_prefetch))
    workspace.RunNet(name)  # records 0, 1
    with pytest.raises(RuntimeError) as err:
        workspace.RunNet(name)  # records 2, 3
    msg = str(err.value)
    assert "[TensorProtosDBInput]" in msg and "'00000003'" in msg and path in msg
    assert "not a serialized TensorProtos" in msg
    workspace.RunNet(name)  # the reader went on: records 4, 5
    np.testing.assert_array_equal(workspace.FetchBlob("label"), [4, 5])


def test_wrong_number_of_protos(tmp_path):
    create_reader(make_db(tmp_path, 2))
    with pytest.raises(RuntimeError, match=r"'00000000'.*holds 4 tensor protos but the op has 2"):
        workspace.RunOperatorOnce(read_op(batch_size=1, outputs=("a", "b")))


def test_records_that_disagree_on_dims(tmp_path):
    def make(i):
        return tensor_protos_record(bytes_proto(np.zeros((i + 1, 2), np.uint8)), int32_proto(i))

    create_reader(make_db(tmp_path, 2, make=make))
    with pytest.raises(RuntimeError, match=r"'00000001'.*proto 0 is .*\(2, 2\).*first record"):
        workspace.RunOperatorOnce(read_op(batch_size=2, outputs=("a", "b")))


def test_missing_db_names_the_path(tmp_path):
    path = str(tmp_path / "nowhere")
    with pytest.raises(RuntimeError, match="nowhere"):
        create_reader(path)


def test_prefetch_op_shuts_down_cleanly_mid_stream(tmp_path):
    create_reader(make_db(tmp_path, 50))
    for _ in range(5):
        workspace.RunNet(create_net(read_op(batch_size=7)))
        workspace.ResetWorkspace()
        create_reader(make_db(tmp_path, 50, name="db%d" % _))


def test_replacing_the_reader_while_the_net_lives_is_safe(tmp_path):
    # Rerunning an init net replaces the reader blob under a prefetching op: the background thread
    # never touches the input blob, so the next runs read the new reader.
    old, new = make_db(tmp_path, 20, name="old"), make_db(
        tmp_path, 20, make=lambda i: record(100 + i), name="new"
    )
    create_reader(old)
    name = create_net(read_op(batch_size=4))
    workspace.RunNet(name)
    for _ in range(20):
        create_reader(new)
        workspace.RunNet(name)
    assert all(workspace.FetchBlob("label") >= 100)


def test_reader_blob_replaced_by_a_tensor_gives_an_error_then_recovers(tmp_path):
    path = make_db(tmp_path, 8)
    create_reader(path)
    name = create_net(read_op(batch_size=2))
    workspace.RunNet(name)  # 0, 1 (2, 3 in flight)
    workspace.FeedBlob("reader", np.zeros(1, np.float32))
    workspace.RunNet(name)  # the batch in flight is good; reading the next one fails quietly
    np.testing.assert_array_equal(workspace.FetchBlob("label"), [2, 3])
    with pytest.raises(RuntimeError, match="DBReader"):
        workspace.RunNet(name)
    create_reader(path)
    workspace.RunNet(name)
    np.testing.assert_array_equal(workspace.FetchBlob("label"), [0, 1])
