"""LeNet and a CIFAR-style ResNet-20 give the same loss and, after one SGD-with-momentum step, the
same weights in our runtime and in PyTorch for the same initial weights and batch (forward and
backward agree). Skips when PyTorch (Debian python3-torch) is absent."""
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import bench_cnn_vs_pytorch as models  # noqa: E402

from caffe2.python import workspace  # noqa: E402


@pytest.mark.parametrize(
    "name, layers, batch", [("lenet", models.lenet(), 8), ("resnet20", models.resnet20(), 4)]
)
def test_loss_and_updated_weights_match(name, layers, batch):
    rng = np.random.RandomState(3)
    params = models.init_weights(layers, rng)
    data = rng.randn(batch, 1, 28, 28).astype(np.float32)
    label = rng.randint(0, 10, size=batch).astype(np.int32)
    ours_loss, _ = models.run_caffe2(layers, params, data, label, True, steps=0)
    ours_w = {k: workspace.FetchBlob(k) for k in params if k.endswith("_w")}
    torch_p = {}
    torch_loss, _ = models.run_torch(layers, params, data, label, True, steps=0, out_params=torch_p)
    np.testing.assert_allclose(ours_loss, torch_loss, rtol=1e-4)
    for k, w in ours_w.items():
        np.testing.assert_allclose(w, torch_p[k].detach().numpy(), rtol=1e-3, atol=1e-5, err_msg=k)
