"""Shape and type inference of Split, OneHot, SparseToDense and LengthsRangeFill against what the
ops produce when run (shapes that depend on runtime values are reported as unknown, with the
type)."""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace
from caffe2.python._import_c_extension import infer_shapes_and_types_from_map


def raw_inference(net, dims):
    """Every inferred TensorShape by name, the unknown ones included (InferShapesAndTypes drops
    those, as upstream)."""
    out = caffe2_pb2.TensorShapes()
    out.ParseFromString(infer_shapes_and_types_from_map([net.Proto().SerializeToString()], dims))
    return {s.name: s for s in out.shapes}


def infer_and_run(net, feeds):
    workspace.ResetWorkspace()
    for name, value in feeds.items():
        workspace.FeedBlob(name, value)
    shapes, types = workspace.InferShapesAndTypes(
        [net], {k: list(v.shape) for k, v in feeds.items()}
    )
    workspace.RunNetOnce(net)
    return shapes, types


def test_split_with_sizes_argument_and_equal_pieces():
    net = core.Net("split")
    net.Split(["x"], ["a", "b"], axis=1, split=[1, 3])
    net.Split(["x"], ["p", "q"], axis=-1)
    net.Split(["x"], ["s0", "s1", "s2", "s3"], axis=1, add_axis=1)
    shapes, types = infer_and_run(net, {"x": np.zeros((2, 4, 6), np.float32)})
    for name in ["a", "b", "p", "q", "s0", "s3"]:
        assert shapes[name] == list(workspace.FetchBlob(name).shape), name
        assert types[name] == core.DataType.FLOAT
    assert shapes["a"] == [2, 1, 6] and shapes["p"] == [2, 4, 3] and shapes["s0"] == [2, 6]


def test_split_sizes_from_input_are_runtime_values():
    net = core.Net("split_in")
    net.Split(["x", "sizes"], ["a", "b"], axis=0)
    workspace.ResetWorkspace()
    shapes, types = workspace.InferShapesAndTypes([net], {"x": [4, 2], "sizes": [2]})
    assert "a" not in shapes  # unknown until run


def test_value_dependent_shapes_keep_their_types():
    net = core.Net("value_dependent")
    net.OneHot(["idx", "size"], ["onehot"])
    net.LengthsRangeFill(["lengths"], ["ranges"])
    net.SparseToDense(["sidx", "values", "like"], ["dense"])
    net.SparseToDense(["sidx", "values"], ["dense_max"])
    feeds = {
        "idx": np.array([0, 2], np.int64),
        "size": np.array(3, np.int64),
        "lengths": np.array([2, 3], np.int32),
        "sidx": np.array([1, 3], np.int32),
        "values": np.ones((2, 5), np.float32),
        "like": np.zeros((6,), np.float32),
    }
    shapes, types = infer_and_run(net, feeds)
    raw = raw_inference(net, {k: list(v.shape) for k, v in feeds.items()})
    assert raw["onehot"].unknown_shape and raw["onehot"].data_type == core.DataType.FLOAT
    assert raw["ranges"].unknown_shape and raw["ranges"].data_type == core.DataType.INT32
    assert "onehot" not in shapes and "ranges" not in shapes
    assert shapes["dense"] == [6, 5] == list(workspace.FetchBlob("dense").shape)
    assert types["dense"] == core.DataType.FLOAT
    assert "dense_max" not in shapes
    np.testing.assert_array_equal(workspace.FetchBlob("ranges"), [0, 1, 0, 1, 2])
