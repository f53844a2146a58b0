"""ResNet-50 inference (3x224x224, batch 32) with the inference transforms, against PyTorch's frozen
TorchScript, side by side in one run and on the same weights:

- ours, plain: the net of bench_cnn_vs_pytorch.py (Conv, SpatialBN in test mode, Relu, ...);
- ours, transformed: workspace.ApplyTransform("OptimizeForInference", net) (SpatialBN folded into
  the Conv before it, Conv + Relu fused, the convolutions chained in oneDNN's blocked layout with
  the residual Sum and Relu fused in; caffe2.python.net_transforms);
- PyTorch eager, and TorchScript traced, torch.jit.freeze'd (BN folded) and
  torch.jit.optimize_for_inference'd (oneDNN blocked layout kept between ops), the peer's best
  inference configuration (2 threads; run under LD_PRELOAD=libtcmalloc_minimal.so.4 as
  BENCHMARKS.md says).

Prints images/s, the ratios against frozen TorchScript and the largest output difference of each
against PyTorch eager (the transforms change the rounding, not the result).

    python benchmarks/bench_inference_transforms.py [--steps 5] [--repeats 2] [--batch 32]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from caffe2.python import workspace  # noqa: E402
from bench_cnn_vs_pytorch import build_caffe2, init_weights, resnet50, torch_forward  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def best_seconds(run, steps, repeats):
    run()  # warm up: plans, caches, allocations
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            run()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def time_caffe2(net_proto, out, steps, repeats):
    workspace.CreateNet(net_proto, True)
    name = net_proto.name
    seconds = best_seconds(lambda: workspace.RunNet(name), steps, repeats)
    return seconds, workspace.FetchBlob(out).copy()


class Model(torch.nn.Module if torch else object):
    def __init__(self, layers, params):
        super().__init__()
        self.layers = layers
        self.p = {k: torch.from_numpy(v.copy()) for k, v in params.items()}
        for k, v in self.p.items():
            self.register_buffer(k, v)

    def forward(self, x):
        return torch_forward(self.layers, {k: getattr(self, k) for k in self.p}, x, False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    if torch is None:
        raise SystemExit("PyTorch (Debian python3-torch) is needed for this benchmark")
    torch.set_num_threads(2)
    workspace.GlobalInit(["bench", "--caffe2_log_level=2"])
    layers = resnet50()
    rng = np.random.RandomState(0)
    params = init_weights(layers, rng)
    data = rng.randn(args.batch, 3, 224, 224).astype(np.float32)

    workspace.ResetWorkspace()
    for k, v in params.items():
        workspace.FeedBlob(k, v.copy())
    workspace.FeedBlob("data", data)
    net, out = build_caffe2(layers, params, False)
    plain = net.Proto()
    transformed = workspace.ApplyTransform("OptimizeForInference", plain)
    transformed.name = "bench_infer_transformed"
    types = [op.type for op in transformed.op]
    counts = ", ".join("%d %s" % (types.count(t), t) for t in sorted(set(types)))
    print("transformed: %d ops (was %d): %s" % (len(types), len(plain.op), counts))
    t_plain, y_plain = time_caffe2(plain, str(out), args.steps, args.repeats)
    t_fused, y_fused = time_caffe2(transformed, str(out), args.steps, args.repeats)

    model = Model(layers, params).eval()
    x = torch.from_numpy(data)
    with torch.no_grad():
        t_eager = best_seconds(lambda: model(x), args.steps, args.repeats)
        y_torch = model(x).numpy()
        frozen = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x)))
        t_frozen = best_seconds(lambda: frozen(x), args.steps, args.repeats)
        y_frozen = frozen(x).numpy()

    scale = float(np.max(np.abs(y_torch)))
    print(
        "%-34s %9s %16s %12s"
        % ("ResNet-50 inference, batch %d" % args.batch, "img/s", "vs TorchScript", "max rel diff")
    )
    for name, t, y in (
        ("ours, plain", t_plain, y_plain),
        ("ours, OptimizeForInference", t_fused, y_fused),
        ("PyTorch eager", t_eager, y_torch),
        ("PyTorch TorchScript frozen", t_frozen, y_frozen),
    ):
        diff = float(np.max(np.abs(y - y_torch))) / scale
        print("%-34s %9.1f %15.2fx %12.1e" % (name, args.batch / t, t_frozen / t, diff))


if __name__ == "__main__":
    main()
