"""Training and inference speed against PyTorch (Debian python3-torch) on identical models and
weights, side by side in one run: LeNet (1x28x28; batch 64 and 256), a CIFAR-style ResNet-20
(1x28x28; batch 128) and optionally ResNet-50 (3x224x224; batch 32, --resnet50).

Each model is first checked to give the same loss in both frameworks for the same weights and batch
(relative difference under 1e-4). Then it prints images/s for both, the ratio (ours / PyTorch) and
the achieved GFLOP/s (conv + FC; a training step counts 3 x forward) against the measured SGEMM
peak. PyTorch runs in its best configuration (2 threads, OPENBLAS_NUM_THREADS=1; run under
LD_PRELOAD=libtcmalloc_minimal.so.4 for the figures of BENCHMARKS.md).

    python benchmarks/bench_cnn_vs_pytorch.py [--steps 10] [--repeats 1] [--resnet50]
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from caffe2.python import core, workspace  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None


# ---- model description shared by both frameworks -------------------------------------------
# A model is a list of layers: ("conv", name, cin, cout, k, stride, pad), ("bn", name, c),
# ("relu",), ("maxpool", k, stride), ("gap",), ("fc", name, cin, cout), ("res_begin",),
# ("res_end", shortcut) where shortcut is None or a ("conv"...) + ("bn"...) pair.


def lenet():
    return [
        ("conv", "conv1", 1, 20, 5, 1, 0),
        ("maxpool", 2, 2),
        ("conv", "conv2", 20, 50, 5, 1, 0),
        ("maxpool", 2, 2),
        ("fc", "fc3", 800, 500),
        ("relu",),
        ("fc", "pred", 500, 10),
    ]


def resnet(stages, blocks, cin=1, classes=10, widths=(16, 32, 64), bottleneck=False, stem=None):
    layers = stem or [
        ("conv", "conv1", cin, widths[0], 3, 1, 1),
        ("bn", "bn1", widths[0]),
        ("relu",),
    ]
    c = layers[0][3] if stem else widths[0]
    for s in range(stages):
        for b in range(blocks[s]):
            stride = 2 if (b == 0 and s > 0) else 1
            out = widths[s] * (4 if bottleneck else 1)
            p = "s%d_b%d" % (s, b)
            shortcut = None
            if stride != 1 or c != out:
                shortcut = [
                    ("conv", p + "_proj", c, out, 1, stride, 0),
                    ("bn", p + "_proj_bn", out),
                ]
            body = []
            if bottleneck:
                body = [
                    ("conv", p + "_c1", c, widths[s], 1, 1, 0),
                    ("bn", p + "_bn1", widths[s]),
                    ("relu",),
                    ("conv", p + "_c2", widths[s], widths[s], 3, stride, 1),
                    ("bn", p + "_bn2", widths[s]),
                    ("relu",),
                    ("conv", p + "_c3", widths[s], out, 1, 1, 0),
                    ("bn", p + "_bn3", out),
                ]
            else:
                body = [
                    ("conv", p + "_c1", c, out, 3, stride, 1),
                    ("bn", p + "_bn1", out),
                    ("relu",),
                    ("conv", p + "_c2", out, out, 3, 1, 1),
                    ("bn", p + "_bn2", out),
                ]
            layers += [("res", body, shortcut), ("relu",)]
            c = out
    layers += [("gap",), ("fc", "pred", c, classes)]
    return layers


def resnet20():
    return resnet(3, [3, 3, 3])


def resnet50():
    stem = [("conv", "conv1", 3, 64, 7, 2, 3), ("bn", "bn1", 64), ("relu",), ("maxpool", 3, 2)]
    return resnet(
        4, [3, 4, 6, 3], widths=(64, 128, 256, 512), bottleneck=True, classes=1000, stem=stem
    )


def init_weights(layers, rng, params=None):
    params = {} if params is None else params
    for layer in layers:
        kind = layer[0]
        if kind == "conv":
            _, name, cin, cout, k, _, _ = layer
            params[name + "_w"] = (
                rng.randn(cout, cin, k, k) * np.sqrt(2.0 / (cin * k * k))
            ).astype(np.float32)
        elif kind == "bn":
            _, name, c = layer
            params[name + "_s"] = np.ones(c, np.float32)
            params[name + "_b"] = np.zeros(c, np.float32)
            params[name + "_rm"] = np.zeros(c, np.float32)
            params[name + "_rv"] = np.ones(c, np.float32)
        elif kind == "fc":
            _, name, cin, cout = layer
            params[name + "_w"] = (rng.randn(cout, cin) * np.sqrt(1.0 / cin)).astype(np.float32)
            params[name + "_b"] = np.zeros(cout, np.float32)
        elif kind == "res":
            init_weights(layer[1], rng, params)
            if layer[2]:
                init_weights(layer[2], rng, params)
    return params


def count_flops(layers, shape):
    """Conv + FC flops (2 x multiply-adds) of one image of `shape` (C, H, W), and the output
    shape."""
    c, h, w = shape
    flops = 0
    for layer in layers:
        kind = layer[0]
        if kind == "conv":
            _, _, cin, cout, k, s, p = layer
            h, w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
            flops += 2 * cin * cout * k * k * h * w
            c = cout
        elif kind == "maxpool":
            _, k, s = layer
            h, w = (h - k) // s + 1, (w - k) // s + 1
        elif kind == "gap":
            h, w = 1, 1
        elif kind == "fc":
            flops += 2 * layer[2] * layer[3]
            c, h, w = layer[3], 1, 1
        elif kind == "res":
            body, (c2, h2, w2) = count_flops(layer[1], (c, h, w))
            short = count_flops(layer[2], (c, h, w))[0] if layer[2] else 0
            flops += body + short
            c, h, w = c2, h2, w2
    return flops, (c, h, w)


# ---- caffe2 ------------------------------------------------------------------------------------


def build_caffe2(layers, params, train):
    net = core.Net("bench_train" if train else "bench_infer")
    counter = [0]

    def emit(layers, x):
        for layer in layers:
            kind = layer[0]
            counter[0] += 1
            out = "t%d" % counter[0]
            if kind == "conv":
                _, name, _, _, k, s, p = layer
                x = net.Conv([x, name + "_w"], out, kernel=k, stride=s, pad=p)
            elif kind == "bn":
                name = layer[1]
                ins = [x, name + "_s", name + "_b", name + "_rm", name + "_rv"]
                if train:
                    x = net.SpatialBN(
                        ins,
                        [out, name + "_rm", name + "_rv", out + "_sm", out + "_siv"],
                        is_test=0,
                        epsilon=1e-5,
                        momentum=0.9,
                    )[0]
                else:
                    x = net.SpatialBN(ins, out, is_test=1, epsilon=1e-5)
            elif kind == "relu":
                x = net.Relu(x, out)
            elif kind == "maxpool":
                x = net.MaxPool(x, out, kernel=layer[1], stride=layer[2])
            elif kind == "gap":
                x = net.AveragePool(x, out, global_pooling=1)
            elif kind == "flatten":
                x = net.Flatten(x, out)
            elif kind == "fc":
                x = net.FC([x, layer[1] + "_w", layer[1] + "_b"], out)
            elif kind == "res":
                body = emit(layer[1], x)
                short = emit(layer[2], x) if layer[2] else x
                x = net.Sum([body, short], out)
        return x

    logits = emit(layers, "data")
    if not train:
        return net, logits
    _, loss = net.SoftmaxWithLoss([logits, "label"], ["softmax", "loss"])
    grads = net.AddGradientOperators([loss])
    for name in params:
        if name.endswith("_rm") or name.endswith("_rv"):
            continue
        grad = grads[name]
        net.MomentumSGDUpdate(
            [grad, name + "_mom", "lr", name], [grad, name + "_mom", name], momentum=0.9
        )
    return net, loss


def run_caffe2(layers, params, data, label, train, steps, repeats=1):
    workspace.ResetWorkspace()
    for k, v in params.items():
        workspace.FeedBlob(k, v.copy())
        workspace.FeedBlob(k + "_mom", np.zeros_like(v))
    workspace.FeedBlob("data", data)
    workspace.FeedBlob("label", label)
    workspace.FeedBlob("lr", np.array([0.01], np.float32))
    net, out = build_caffe2(layers, params, train)
    workspace.CreateNet(net)
    workspace.RunNet(net)
    first = workspace.FetchBlob(str(out)).copy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        workspace.RunNet(net, steps)
        best = min(best, (time.perf_counter() - start) / max(steps, 1))
    return first, best


# ---- PyTorch -----------------------------------------------------------------------------------


def torch_forward(layers, p, x, train):
    for layer in layers:
        kind = layer[0]
        if kind == "conv":
            _, name, _, _, k, s, pad = layer
            x = F.conv2d(x, p[name + "_w"], stride=s, padding=pad)
        elif kind == "bn":
            name = layer[1]
            x = F.batch_norm(
                x,
                p[name + "_rm"],
                p[name + "_rv"],
                p[name + "_s"],
                p[name + "_b"],
                training=train,
                momentum=0.1,
                eps=1e-5,
            )
        elif kind == "relu":
            x = F.relu(x)
        elif kind == "maxpool":
            x = F.max_pool2d(x, layer[1], layer[2])
        elif kind == "gap":
            x = F.adaptive_avg_pool2d(x, 1)
        elif kind == "flatten":
            x = x.flatten(1)
        elif kind == "fc":
            x = F.linear(x.flatten(1), p[layer[1] + "_w"], p[layer[1] + "_b"])
        elif kind == "res":
            body = torch_forward(layer[1], p, x, train)
            short = torch_forward(layer[2], p, x, train) if layer[2] else x
            x = body + short
    return x


def run_torch(layers, params, data, label, train, steps, out_params=None, repeats=1):
    torch.set_num_threads(2)
    p = {}
    for k, v in params.items():
        p[k] = torch.from_numpy(v.copy())
    trainable = [t for k, t in p.items() if not (k.endswith("_rm") or k.endswith("_rv"))]
    for t in trainable:
        t.requires_grad_(train)
    x = torch.from_numpy(data)
    y = torch.from_numpy(label.astype(np.int64))
    opt = torch.optim.SGD(trainable, lr=0.01, momentum=0.9) if train else None

    def step():
        if not train:
            with torch.no_grad():
                return torch_forward(layers, p, x, False)
        opt.zero_grad()
        loss = F.cross_entropy(torch_forward(layers, p, x, True), y)
        loss.backward()
        opt.step()
        return loss

    first = step().detach().numpy().copy()
    if out_params is not None:
        out_params.update(p)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - start) / max(steps, 1))
    return first, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--resnet50", action="store_true")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="time the steps this many times and keep the fastest (for a shared, noisy machine)",
    )
    parser.add_argument("--peak", type=float, default=205.0, help="SGEMM GFLOP/s of the machine")
    args = parser.parse_args()
    if torch is None:
        raise SystemExit("PyTorch (Debian python3-torch) is needed for this benchmark")
    workspace.GlobalInit(["bench", "--caffe2_log_level=2"])
    cases = [
        ("LeNet", lenet(), (1, 28, 28), 64, True),
        ("LeNet", lenet(), (1, 28, 28), 256, True),
        ("ResNet-20", resnet20(), (1, 28, 28), 128, True),
    ]
    if args.resnet50:
        cases += [
            ("ResNet-50", resnet50(), (3, 224, 224), 32, True),
            ("ResNet-50", resnet50(), (3, 224, 224), 32, False),
        ]
    print(
        "%-10s %-6s %5s %12s %12s %7s %10s %10s %9s"
        % (
            "model",
            "mode",
            "batch",
            "ours img/s",
            "torch img/s",
            "ratio",
            "ours GF/s",
            "torch GF/s",
            "loss diff",
        )
    )
    for name, layers, shape, batch, train in cases:
        rng = np.random.RandomState(0)
        params = init_weights(layers, rng)
        data = rng.randn(batch, *shape).astype(np.float32)
        label = rng.randint(0, layers[-1][3], size=batch).astype(np.int32)
        ours_first, ours_t = run_caffe2(
            layers, params, data, label, train, args.steps, args.repeats
        )
        torch_first, torch_t = run_torch(
            layers, params, data, label, train, args.steps, repeats=args.repeats
        )
        diff = float(
            np.max(np.abs(ours_first - torch_first))
            / max(1e-12, float(np.max(np.abs(torch_first))))
        )
        flops = count_flops(layers, shape)[0] * batch * (3 if train else 1)
        print(
            "%-10s %-6s %5d %12.1f %12.1f %7.2f %10.1f %10.1f %9.1e%s"
            % (
                name,
                "train" if train else "infer",
                batch,
                batch / ours_t,
                batch / torch_t,
                torch_t / ours_t,
                flops / ours_t / 1e9,
                flops / torch_t / 1e9,
                diff,
                "" if diff < 1e-4 else "  MISMATCH",
            )
        )
    print("SGEMM peak used for reference: %.0f GFLOP/s" % args.peak)


if __name__ == "__main__":
    main()
