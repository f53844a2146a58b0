"""ImageInput on a GPU (operators/io/image_input_op_gpu.cc): the batch copied as it is, and the
GPU transform (uint8 crops normalized into NCHW float or float16 on the device), against the CPU
op on the same records in test mode (centre crops, no mirror)."""
import numpy as np
import pytest

from caffe2.python import core, workspace
from caffe2.python.tools.db_writer import (DBWriter, encode_png, int32_proto, string_proto,
                                           tensor_protos_record)

from cuda_test_util import CPU, gpu, gpu_semantics, needs_gpu

COVERED_OPS = ["ImageInput"]
pytestmark = needs_gpu
SIZES = [(40, 60), (60, 40), (50, 50), (33, 71), (64, 64), (45, 45)]


def _write_png_db(tmp_path, channels=3):
    rng = np.random.RandomState(15)
    path = str(tmp_path / "images")
    with DBWriter("lmdb", path) as writer:
        for i, (h, w) in enumerate(SIZES):
            image = rng.randint(0, 256, size=(h, w, channels)).astype(np.uint8)
            if channels == 1:
                image = image[:, :, 0]
            writer.put(b"%08d" % i, tensor_protos_record(string_proto(encode_png(image)),
                                                         int32_proto(i, dims=[1])))
    return path


def _run(path, device_option, batch_size=len(SIZES), **args):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("CreateDB", [], ["reader"], db=path,
                                                  db_type="lmdb"))
    workspace.RunOperatorOnce(core.CreateOperator(
        "ImageInput", ["reader"], ["data", "label"], batch_size=batch_size,
        device_option=device_option, **args))
    return workspace.FetchBlob("data"), workspace.FetchBlob("label")


ARGS = dict(scale=32, crop=28, is_test=1, mean=128.0, std=64.0)


def test_batch_copied_to_the_gpu(tmp_path):
    path = _write_png_db(tmp_path)
    cpu_data, cpu_label = _run(path, CPU, **ARGS)
    data, label = _run(path, gpu(), **ARGS)
    np.testing.assert_allclose(data, cpu_data, atol=1e-6)
    np.testing.assert_array_equal(label, cpu_label)


@gpu_semantics
@pytest.mark.parametrize("output_type,tol", [("float", 1e-5), ("float16", 1e-2)])
@pytest.mark.parametrize("channels,mean_std", [
    (3, dict(mean=128.0, std=64.0)),
    (3, dict(mean_per_channel=[100.0, 120.0, 140.0], std_per_channel=[50.0, 60.0, 70.0])),
    (1, dict(mean=10.0, std=2.0)),
])
def test_gpu_transform_matches_the_cpu_op(tmp_path, output_type, tol, channels, mean_std):
    path = _write_png_db(tmp_path, channels)
    args = dict(scale=32, crop=28, is_test=1, color=int(channels == 3), **mean_std)
    cpu_data, cpu_label = _run(path, CPU, **args)
    data, label = _run(path, gpu(), use_gpu_transform=1, output_type=output_type, **args)
    assert data.shape == (len(SIZES), channels, 28, 28)
    assert data.dtype == (np.float16 if output_type == "float16" else np.float32)
    np.testing.assert_allclose(data.astype(np.float32).transpose(0, 2, 3, 1), cpu_data,
                               rtol=tol, atol=tol)
    np.testing.assert_array_equal(label, cpu_label)


@gpu_semantics
def test_gpu_transform_mirrors_in_test_mode_like_upstream(tmp_path):
    path = _write_png_db(tmp_path)
    # 24 images (the reader wraps around the 6 records): each is mirrored with probability 1/2.
    plain, _ = _run(path, gpu(), batch_size=24, use_gpu_transform=1, **ARGS)
    mirrored, _ = _run(path, gpu(), batch_size=24, use_gpu_transform=1, mirror=1, **ARGS)
    flipped = [np.allclose(m, p[:, :, ::-1]) for m, p in zip(mirrored, plain)]
    same = [np.allclose(m, p) for m, p in zip(mirrored, plain)]
    assert all(f or s for f, s in zip(flipped, same)) and any(flipped)
