"""caffe2.python.convnet_benchmarks: every upstream benchmark net builds, runs forward and backward
on the CPU with the layer sizes upstream's nets have, a finite loss that matches the softmax it
read, gradients for every parameter and upstream's plain SGD step; the command line runs and
prints its timing.

Batch sizes are small so the whole file runs in about 20 s on two cores."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from caffe2.python import convnet_benchmarks as cb
from caffe2.python import workspace

B = "batch"  # stands for the batch size in the shape tables below

# name: (number of parameter blobs, last FC, {blob: NCHW shape after the run})
NETS = {
    "AlexNet": (
        16,
        "fc8",
        {
            "conv1": (B, 64, 55, 55),
            "pool1": (B, 64, 27, 27),
            "pool2": (B, 192, 13, 13),
            "conv4": (B, 256, 13, 13),
            "pool5": (B, 256, 6, 6),
            "fc7": (B, 4096),
        },
    ),
    "OverFeat": (
        16,
        "fc8",
        {
            "conv1": (B, 96, 56, 56),
            "pool1": (B, 96, 28, 28),
            "conv2": (B, 256, 24, 24),
            "pool2": (B, 256, 12, 12),
            "pool5": (B, 1024, 6, 6),
            "fc6": (B, 3072),
        },
    ),
    "VGGA": (
        22,
        "fcxi",
        {
            "conv1": (B, 64, 231, 231),
            "pool1": (B, 64, 115, 115),
            "pool2": (B, 128, 57, 57),
            "pool4": (B, 256, 28, 28),
            "pool6": (B, 512, 14, 14),
            "pool8": (B, 512, 7, 7),
            "fcx": (B, 4096),
        },
    ),
    "Inception": (
        2 * (3 + 9 * 6 + 1),  # three stem convs, nine modules of six convs, one FC
        "fc",
        {
            "conv1": (B, 64, 112, 112),
            "pool1": (B, 64, 56, 56),
            "conv2": (B, 192, 56, 56),
            "pool2": (B, 192, 28, 28),
            "inc3:conv3": (B, 128, 28, 28),
            "inc3": (B, 256, 28, 28),
            "inc4": (B, 480, 28, 28),
            "pool5": (B, 480, 14, 14),
            "inc5": (B, 512, 14, 14),
            "inc6": (B, 512, 14, 14),
            "inc7": (B, 512, 14, 14),
            "inc8": (B, 528, 14, 14),
            "inc9:conv5": (B, 128, 14, 14),
            "inc9": (B, 832, 14, 14),
            "pool9": (B, 832, 7, 7),
            "inc10": (B, 832, 7, 7),
            "inc11": (B, 1024, 7, 7),
            "pool11": (B, 1024, 1, 1),
        },
    ),
    "MLP": (2 * (20 * 3 + 1), "last", {"fc_20_2": (B, 256), "sum": (B, 256)}),
}


def build_and_run(name, batch_size, order="NCHW", forward_only=False):
    argv = ["--model", name, "--batch_size", str(batch_size), "--order", order, "--cpu"]
    args = cb.GetArgumentParser().parse_args(argv + (["--forward_only"] if forward_only else []))
    workspace.ResetWorkspace()
    model = cb.BuildBenchmarkModel(cb.MODELS[name], args)
    assert model.Proto().type == "dag" and model.Proto().num_workers == 2
    model.param_init_net.Proto().device_option.random_seed = 1234
    workspace.RunNetOnce(model.param_init_net)
    before = {str(p): workspace.FetchBlob(p) for p in model.params}
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net)
    return model, before


def expected_shape(shape, batch_size, order):
    shape = tuple(batch_size if d == B else d for d in shape)
    if order == "NHWC" and len(shape) == 4:
        shape = (shape[0], shape[2], shape[3], shape[1])
    return shape


def check_forward(name, model, batch_size, order):
    num_params, last_fc, shapes = NETS[name]
    assert len(model.params) == num_params
    for blob, shape in shapes.items():
        assert workspace.FetchBlob(blob).shape == expected_shape(shape, batch_size, order), blob
    label = workspace.FetchBlob("label")
    assert label.shape == (batch_size,) and label.dtype == np.int32
    assert label.min() >= 0 and label.max() <= 999
    loss = workspace.FetchBlob("loss")
    assert loss.shape == () and np.isfinite(loss)
    pred = workspace.FetchBlob("pred" if name != "MLP" else last_fc)
    assert pred.shape == (batch_size, 1000)
    # LabelCrossEntropy clips the probability at 1e-20 before the log; AveragedLoss averages.
    picked = np.maximum(pred[np.arange(batch_size), label].astype(np.float64), 1e-20)
    np.testing.assert_allclose(loss, np.mean(-np.log(picked)), rtol=1e-5)
    if name != "MLP":
        np.testing.assert_allclose(pred.sum(axis=1), 1.0, rtol=1e-5)
        assert 5.0 < loss < 9.0  # about log(1000) for random weights and data
    return pred, label


@pytest.mark.parametrize(
    "name, batch_size, order",
    [
        ("AlexNet", 2, "NCHW"),
        ("OverFeat", 1, "NCHW"),
        ("VGGA", 1, "NCHW"),
        ("Inception", 2, "NCHW"),
        ("MLP", 4, "NCHW"),
        ("Inception", 1, "NHWC"),
        ("AlexNet", 1, "NHWC"),
    ],
)
def test_model_forward_backward_and_sgd_step(name, batch_size, order):
    model, before = build_and_run(name, batch_size, order)
    pred, label = check_forward(name, model, batch_size, order)

    last_fc = NETS[name][1]
    for param in model.params:
        grad = workspace.FetchBlob(model.param_to_grad[param])
        assert grad.shape == before[str(param)].shape, param
        assert np.all(np.isfinite(grad)), param
    assert workspace.FetchBlob("iter") == 1
    np.testing.assert_allclose(workspace.FetchBlob("LR"), [-1e-8], rtol=1e-6)
    if name == "MLP":
        # Upstream's MLP feeds the raw FC output to LabelCrossEntropy, which divides by the score
        # clipped at 1e-20: d loss / d last[b, label[b]] = -1 / (batch * max(score, 1e-20)).
        last_grad = workspace.FetchBlob(model.param_to_grad["last_b"])
        rows = np.arange(batch_size)
        d_last = np.zeros_like(pred)
        d_last[rows, label] = -1.0 / (batch_size * np.maximum(pred[rows, label], 1e-20))
        np.testing.assert_allclose(last_grad, d_last.sum(axis=0), rtol=1e-5)
        # Each weight took upstream's step, param + LR * grad (huge here, but finite).
        for param in model.params:
            grad = workspace.FetchBlob(model.param_to_grad[param])
            expected = before[str(param)] + np.float32(-1e-8) * grad
            np.testing.assert_allclose(workspace.FetchBlob(param), expected, rtol=1e-5, atol=1e-6)
        return

    assert np.any(workspace.FetchBlob(model.param_to_grad[model.params[0]]) != 0)
    # Softmax + cross entropy + average: d loss / d logits = (pred - onehot(label)) / batch.
    bias_grad = workspace.FetchBlob(model.param_to_grad[last_fc + "_b"])
    onehot = np.zeros_like(pred)
    onehot[np.arange(batch_size), label] = 1
    np.testing.assert_allclose(bias_grad, (pred - onehot).mean(axis=0), atol=1e-6)

    # AddParameterUpdate: param += LR * grad, LR = base_lr = -1e-8 at the first iteration. A bias
    # starts at 0 (ConstantFill), so the step is visible in float32 there.
    assert not before[last_fc + "_b"].any()
    np.testing.assert_allclose(
        workspace.FetchBlob(last_fc + "_b"), -1e-8 * bias_grad, rtol=1e-5, atol=1e-20
    )


def test_forward_only_adds_no_backward_or_update():
    model, before = build_and_run("AlexNet", 1, forward_only=True)
    check_forward("AlexNet", model, 1, "NCHW")
    types = [op.type for op in model.net.Proto().op]
    assert not any(t.endswith("Gradient") or t == "WeightedSum" for t in types), types
    assert "iter" not in workspace.Blobs()
    for param in model.params:
        np.testing.assert_array_equal(workspace.FetchBlob(param), before[str(param)])


def test_builders_return_upstream_input_sizes_and_use_cudnn_scope():
    sizes = {name: cb.MODELS[name]("NCHW", None)[1] for name in cb.MODELS}
    assert sizes == {"AlexNet": 224, "OverFeat": 231, "VGGA": 231, "Inception": 224, "MLP": 256}
    model, _ = cb.AlexNet("NHWC", 1024)
    conv1 = [op for op in model.net.Proto().op if op.type == "Conv"][0]
    args = {a.name: a for a in conv1.arg}
    assert conv1.engine == "CUDNN"
    assert args["order"].s == b"NHWC" and args["ws_nbytes_limit"].i == 1024
    assert args["exhaustive_search"].i == 1 and args["kernel"].i == 11
    assert args["stride"].i == 4 and args["pad"].i == 2


def test_benchmark_layer_wise_times_every_op(capsys):
    args = cb.GetArgumentParser().parse_args(
        ["--model", "MLP", "--batch_size", "2", "--cpu", "--iterations", "2"]
        + ["--warmup_iterations", "1", "--layer_wise_benchmark", "--net_type", "simple"]
    )
    workspace.ResetWorkspace()
    times = cb.Benchmark(cb.MLP, args)
    out = capsys.readouterr().out
    assert "MLP: running forward-backward." in out
    per_op = re.findall(r"^\s*([0-9.]+) ms\.\s+(\w+)", out, re.M)
    assert len(times) == 1 + len(per_op) and len(per_op) > 2 * 61  # forward, backward, updates
    assert {"FC", "FCGradient", "Sum", "WeightedSum"} <= {t for _, t in per_op}
    assert all(t >= 0 for t in times)
    assert workspace.FetchBlob("iter") == 1 + 2 + 2  # warmup, main and layer-wise runs


def run_cli(args, cwd):
    cmd = [sys.executable, "-m", "caffe2.python.convnet_benchmarks"] + args
    return subprocess.run(
        cmd, cwd=str(cwd), capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )


def test_command_line_alexnet_forward_only(tmp_path):
    proc = run_cli(
        ["--model", "AlexNet", "--batch_size", "1", "--iterations", "1"]
        + ["--warmup_iterations", "0", "--cpu", "--forward_only"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "AlexNet: running forward only." in proc.stdout
    match = re.search(r"Milliseconds per iter: (\d+(?:\.\d+)?(?:e[+-]?\d+)?)", proc.stdout)
    assert match and float(match.group(1)) > 0, proc.stdout


def test_command_line_dump_model_and_upstream_only_flags(tmp_path):
    proc = run_cli(
        ["--model", "MLP", "--batch_size", "2", "--iterations", "1", "--warmup_iterations", "0"]
        + ["--cpu", "--dump_model", "--use-nvtx", "--htrace_span_log_path", "/tmp/unused"]
        + ["--num_workers", "1", "--net_type", "simple"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "MLP: running forward-backward." in proc.stdout
    assert "Milliseconds per iter" in proc.stdout
    init_text = (tmp_path / "MLP_init_batch_2.pbtxt").read_text()
    net_text = (tmp_path / "MLP.pbtxt").read_text()
    assert 'output: "data"' in init_text and "GaussianFill" in init_text
    assert 'type: "FCGradient"' in net_text and 'type: "simple"' in net_text
    assert "num_workers: 1" in net_text


def test_command_line_without_model_prints_help(tmp_path):
    proc = run_cli([], tmp_path)
    assert proc.returncode == 0 and "--batch_size" in proc.stdout
    proc = run_cli(["--model", "LeNet", "--cpu"], tmp_path)
    assert proc.returncode == 2 and "unknown --model 'LeNet'" in proc.stderr
