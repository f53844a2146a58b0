"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/<target>/): well-formed inputs the fuzzer
mutates from. Run with the project's Python after a build; the output is committed, so a change here
is followed by a rerun:

    .venv/bin/python tests/fuzz/make_seed_corpus.py tests/fuzz/corpus
"""
import hashlib
import os
import sys
import tempfile

import numpy as np

from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.tools.db_writer import (
    bytes_proto,
    datum_record,
    encode_png,
    float_proto,
    int32_proto,
    string_proto,
    tensor_protos_record,
)


def small_cnn():
    model = model_helper.ModelHelper(name="seed_cnn")
    brew.conv(model, "data", "conv1", 1, 4, kernel=3, pad=1)
    brew.spatial_bn(model, "conv1", "bn1", 4, epsilon=1e-3, is_test=False)
    brew.relu(model, "bn1", "relu1")
    brew.max_pool(model, "relu1", "pool1", kernel=2, stride=2)
    brew.fc(model, "pool1", "fc1", 4 * 4 * 4, 10)
    softmax, loss = model.SoftmaxWithLoss(["fc1", "label"], ["softmax", "loss"])
    brew.accuracy(model, [softmax, "label"], "accuracy")
    model.AddGradientOperators([loss])
    return model


def netdefs():
    model = small_cnn()
    yield "cnn_init", model.param_init_net.Proto()
    yield "cnn_train", model.net.Proto()
    dag = core.Net("seed_dag")
    dag.Proto().type = "dag"
    dag.Proto().num_workers = 2
    dag.ConstantFill([], ["x"], shape=[2, 3], value=1.0)
    dag.Reshape(["x"], ["y", "old_shape"], shape=[3, 2])
    dag.Concat(["y", "y"], ["z", "split"], axis=0)
    dag.TopK(["z"], ["values", "indices"], k=1)
    dag.Sum(["x", "x"], ["s"])
    dag.Transpose(["x"], ["t"], axes=[1, 0])
    dag.ImageInput(
        [], ["data", "label"], batch_size=2, crop=4, scale=4, db="/nonexistent", db_type="minidb"
    )
    dag.Save(["x"], [], db="/nonexistent/seed.minidb", db_type="minidb")
    dag.CreateCommonWorld([], ["cw"], size=2, rank=0, timeout_ms=1000)
    yield "dag_mix", dag.Proto()


def blob_records():
    arrays = {
        "float": np.arange(6, dtype=np.float32).reshape(2, 3),
        "double": np.array([1.5, -2.0]),
        "int32": np.array([[1, -2], [3, 4]], dtype=np.int32),
        "int64": np.array([2**40, -1], dtype=np.int64),
        "uint8": np.array([0, 255, 7], dtype=np.uint8),
        "bool": np.array([True, False]),
        "float16": np.array([0.5, 2.0], dtype=np.float16),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "string": np.array([b"hello", b""], dtype=object),
    }
    for name, value in arrays.items():
        workspace.FeedBlob("seed_" + name, value)
        yield "blob_" + name, workspace.SerializeBlob("seed_" + name)
    pixels = (np.arange(64, dtype=np.uint8) * 3).reshape(8, 8)
    png = encode_png(pixels)
    yield "image_png", tensor_protos_record(string_proto(png), int32_proto(3, dims=[1]))
    yield "image_raw", tensor_protos_record(bytes_proto(pixels, dims=(8, 8, 1)), int32_proto(1))
    yield "image_multi", tensor_protos_record(
        string_proto(png), int32_proto([0, 2]), float_proto([0.5, 0.5]), float_proto([1.0, 2.0])
    )
    yield "datum_png", datum_record(5, encoded=png)
    yield "datum_raw", datum_record(2, pixels=pixels.reshape(1, 8, 8))


def minidb_files():
    with tempfile.TemporaryDirectory() as tmp:
        workspace.FeedBlob("a", np.arange(4, dtype=np.float32))
        workspace.FeedBlob("b", np.array([b"text"], dtype=object))
        for name, blobs in (("two_blobs", ["a", "b"]), ("one_blob", ["a"])):
            path = os.path.join(tmp, name)
            workspace.RunOperatorOnce(
                core.CreateOperator("Save", blobs, [], db=path, db_type="minidb", absolute_path=1)
            )
            with open(path, "rb") as f:
                yield "minidb_" + name, f.read()


def write(out_dir, target, items):
    folder = os.path.join(out_dir, target)
    os.makedirs(folder, exist_ok=True)
    for name, value in items:
        data = value if isinstance(value, bytes) else value.SerializeToString()
        path = os.path.join(folder, "{}_{}".format(name, hashlib.sha1(data).hexdigest()[:8]))
        with open(path, "wb") as f:
            f.write(data)


def main(out_dir):
    workspace.ResetWorkspace()
    write(out_dir, "fuzz_netdef", netdefs())
    write(out_dir, "fuzz_blob_record", blob_records())
    write(out_dir, "fuzz_minidb", minidb_files())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus"))
