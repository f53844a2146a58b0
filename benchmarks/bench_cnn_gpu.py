"""ResNet-50 training images/s on one GPU against PyTorch on the same GPU, side by side in one run
(issue #7): fp32 and fp16, batch 32 and 64, identical weights and batch.

Ours: the net of bench_cnn_vs_pytorch.py on CUDA device 0 (cuDNN convolutions with
exhaustive_search, as resnet50_trainer.py runs them; fp32 convolutions with allow_tf32=1, the
math PyTorch uses by default). fp16: float16 data, weights, activations
and momenta with float BN parameters, FP16MomentumSGDUpdate, and the loss in float
(HalfToFloat before SoftmaxWithLoss), as upstream's fp16 recipe.
PyTorch, in the configuration a user would pick: cudnn.benchmark, fp32 (TF32 convolutions, its
default) or AMP float16 autocast with a GradScaler; NCHW and channels_last, the faster one reported.

Before timing, the first step's loss of both is compared (fp32) to show the nets agree.

    python benchmarks/bench_cnn_gpu.py [--steps 20] [--batches 32 64] [--dtypes float float16]
    python benchmarks/bench_cnn_gpu.py --small --device cpu   # plumbing check without a GPU
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cnn_vs_pytorch as shared  # noqa: E402

from caffe2.proto import caffe2_pb2  # noqa: E402
from caffe2.python import core, workspace  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None

FLOAT_IN_FP16 = ("_s", "_b", "_rm", "_rv")  # BN scale, bias, running stats stay float


def _bn_param(name):
    return (name.endswith(FLOAT_IN_FP16) and "_bn" in name) or name.startswith("bn1_")


def build_ours(layers, params, dtype, device, exhaustive):
    net, loss = shared.build_caffe2(layers, params, True)
    proto = net.Proto()
    if dtype == "float16":
        # Rebuild forward with a float loss so AddGradientOperators emits FloatToHalf for the
        # logits' gradient.
        fwd = core.Net("fp16_train")
        fwd.AddExternalInputs(*proto.external_input)
        fwd_proto = fwd.Proto()
        for op in proto.op:
            if op.type == "SoftmaxWithLoss":
                break
            fwd_proto.op.extend([op])
        logits = fwd_proto.op[-1].output[0]
        fwd.HalfToFloat(logits, logits + "_fp32")
        _, loss = fwd.SoftmaxWithLoss([logits + "_fp32", "label"], ["softmax", "loss"])
        grads = fwd.AddGradientOperators([loss])
        for name in params:
            if name.endswith("_rm") or name.endswith("_rv"):
                continue
            op_type = "MomentumSGDUpdate" if _bn_param(name) else "FP16MomentumSGDUpdate"
            fwd.__getattr__(op_type)(
                [grads[name], name + "_mom", "lr", name],
                [grads[name], name + "_mom", name],
                momentum=0.9,
            )
        net, proto = fwd, fwd.Proto()
    for op in proto.op:
        if op.type in ("Conv", "ConvGradient"):
            op.arg.extend([core.utils.MakeArgument("exhaustive_search", int(exhaustive))])
            # PyTorch's default for float convolutions is TF32; ours is strict float unless asked.
            if dtype == "float":
                op.arg.extend([core.utils.MakeArgument("allow_tf32", 1)])
    proto.device_option.CopyFrom(device)
    return net, loss


def feed(params, data, label, dtype, device):
    workspace.ResetWorkspace()
    half = dtype == "float16"
    for k, v in params.items():
        v = v.astype(np.float16) if half and not _bn_param(k) else v
        workspace.FeedBlob(k, v.copy(), device)
        workspace.FeedBlob(k + "_mom", np.zeros_like(v), device)
    workspace.FeedBlob("data", data.astype(np.float16) if half else data, device)
    workspace.FeedBlob("label", label, device)
    workspace.FeedBlob("lr", np.array([0.01], np.float32), device)


def run_ours(layers, params, data, label, dtype, device, steps, exhaustive):
    feed(params, data, label, dtype, device)
    net, loss = build_ours(layers, params, dtype, device, exhaustive)
    workspace.CreateNet(net)
    workspace.RunNet(net)  # the first step picks the cuDNN algorithms
    first = float(workspace.FetchBlob(str(loss)))
    workspace.RunNet(net)
    start = time.perf_counter()
    workspace.RunNet(net, steps)
    workspace.FetchBlob(str(loss))  # waits for the device
    return first, (time.perf_counter() - start) / steps


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def run_torch(layers, params, data, label, dtype, steps, channels_last, dev):
    torch.backends.cudnn.benchmark = True
    p = {k: torch.from_numpy(v.copy()).to(dev) for k, v in params.items()}
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    for k, t in p.items():
        if t.dim() == 4:
            p[k] = t.contiguous(memory_format=fmt)
    trainable = [t for k, t in p.items() if not (k.endswith("_rm") or k.endswith("_rv"))]
    for t in trainable:
        t.requires_grad_(True)
    x = torch.from_numpy(data).to(dev).contiguous(memory_format=fmt)
    y = torch.from_numpy(label.astype(np.int64)).to(dev)
    opt = torch.optim.SGD(trainable, lr=0.01, momentum=0.9)
    amp = dtype == "float16"
    scaler = torch.amp.GradScaler(dev.type, enabled=amp) if amp else None

    def step():
        opt.zero_grad(set_to_none=True)
        if scaler is None:
            loss = F.cross_entropy(shared.torch_forward(layers, p, x, True), y)
            loss.backward()
            opt.step()
            return loss
        with torch.autocast(dev.type, dtype=torch.float16):
            loss = F.cross_entropy(shared.torch_forward(layers, p, x, True), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    first = float(step())
    step()
    _sync(dev)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(dev)
    return first, (time.perf_counter() - start) / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--dtypes", nargs="+", default=["float", "float16"])
    parser.add_argument(
        "--device",
        choices=["gpu", "cpu"],
        default="gpu",
        help="cpu: run our side on the CPU to check the plumbing (fp16 then "
        "fails at its first float16 convolution)",
    )
    parser.add_argument("--small", action="store_true", help="ResNet-20 on 1x28x28 instead")
    parser.add_argument("--no_exhaustive_search", action="store_true")
    args = parser.parse_args()
    workspace.GlobalInit(["bench", "--caffe2_log_level=2"])
    on_gpu = args.device == "gpu"
    if on_gpu and workspace.NumCudaDevices() < 1:
        raise SystemExit("no GPU: use --device cpu for a plumbing check")
    device = caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA if on_gpu else caffe2_pb2.CPU)
    layers, shape = (
        (shared.resnet20(), (1, 28, 28)) if args.small else (shared.resnet50(), (3, 224, 224))
    )
    if on_gpu:
        print(
            "GPU:",
            workspace.GetDeviceProperties(0)["name"]
            if hasattr(workspace, "GetDeviceProperties")
            else "device 0",
        )
    print(
        "%-6s %5s %12s %14s %14s %7s %10s"
        % ("dtype", "batch", "ours img/s", "torch NCHW", "torch NHWC", "ratio", "loss diff")
    )
    for dtype in args.dtypes:
        for batch in args.batches:
            rng = np.random.RandomState(0)
            params = shared.init_weights(layers, rng)
            data = rng.randn(batch, *shape).astype(np.float32)
            label = rng.randint(0, layers[-1][3], size=batch).astype(np.int32)
            try:
                ours_first, ours_t = run_ours(
                    layers,
                    params,
                    data,
                    label,
                    dtype,
                    device,
                    args.steps,
                    not args.no_exhaustive_search,
                )
                ours = "%12.1f" % (batch / ours_t)
            except Exception as e:  # report and go on with the other configurations
                ours_first, ours_t, ours = None, None, "failed"
                print("ours %s batch %d failed: %s" % (dtype, batch, str(e).splitlines()[0]))
            torch_rates, torch_first = [], None
            if torch is not None and (on_gpu or dtype == "float"):
                dev = torch.device("cuda" if on_gpu else "cpu")
                for channels_last in (False, True):
                    first, t = run_torch(
                        layers, params, data, label, dtype, args.steps, channels_last, dev
                    )
                    torch_first = first if torch_first is None else torch_first
                    torch_rates.append(batch / t)
            best = max(torch_rates) if torch_rates else None
            ratio = "%7.2f" % ((batch / ours_t) / best) if ours_t and best else "      -"
            diff = (
                "%10.1e" % abs(ours_first - torch_first)
                if ours_first is not None and torch_first is not None
                else "         -"
            )
            print(
                "%-6s %5d %s %14s %14s %s %s"
                % (
                    dtype,
                    batch,
                    ours,
                    *(["%14.1f" % r for r in torch_rates] or ["-", "-"]),
                    ratio,
                    diff,
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
