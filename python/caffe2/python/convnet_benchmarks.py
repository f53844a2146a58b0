"""Benchmark for common convnets (upstream's ``caffe2.python.convnet_benchmarks``).

Builds AlexNet, OverFeat, VGG model A, Inception (GoogLeNet v1) or an MLP with ``brew``, feeds
random data and labels from the init net, optionally adds the backward pass and a plain SGD
update, and times the net with ``workspace.BenchmarkNet``::

    python -m caffe2.python.convnet_benchmarks --model AlexNet --batch_size 16 --cpu

The builders live in ``convnet_benchmarks_models`` and are re-exported here.
"""

import argparse
import sys

from caffe2.python import brew, workspace
from caffe2.python.convnet_benchmarks_models import (  # noqa: F401 (re-exported)
    MODELS,
    MLP,
    AlexNet,
    Inception,
    OverFeat,
    VGGA,
    _InceptionModule,
)


def AddParameterUpdate(model):
    """Adds a fixed-rate SGD step on every parameter: enough work to time a training step, not a
    schedule that trains these models."""
    ITER = brew.iter(model, "iter")
    LR = model.net.LearningRate(
        ITER, "LR", base_lr=-1e-8, policy="step", stepsize=10000, gamma=0.999
    )
    ONE = model.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
    for param in model.params:
        param_grad = model.param_to_grad[param]
        model.net.WeightedSum([param, ONE, param_grad, LR], param)


def BuildBenchmarkModel(model_gen, arg):
    """The model ``Benchmark`` runs: ``model_gen``'s net with random ``data`` and ``label`` blobs
    created by the init net and, unless ``arg.forward_only``, gradients and an SGD update."""
    model, input_size = model_gen(arg.order, arg.cudnn_ws)
    model.Proto().type = arg.net_type
    model.Proto().num_workers = arg.num_workers

    # So that everything runs without feeding anything, the init net creates data and label too.
    if arg.model == "MLP":
        input_shape = [arg.batch_size, input_size]
    elif arg.order == "NCHW":
        input_shape = [arg.batch_size, 3, input_size, input_size]
    else:
        input_shape = [arg.batch_size, input_size, input_size, 3]
    model.param_init_net.GaussianFill([], "data", shape=input_shape, mean=0.0, std=1.0)
    model.param_init_net.UniformIntFill([], "label", shape=[arg.batch_size], min=0, max=999)

    if arg.forward_only:
        print("{}: running forward only.".format(arg.model))
    else:
        print("{}: running forward-backward.".format(arg.model))
        model.AddGradientOperators(["loss"])
        AddParameterUpdate(model)
        if arg.order == "NHWC" and not arg.cpu:
            print("Note: the cuDNN kernels of some ops may refuse NHWC inputs.")

    if not arg.cpu:
        model.param_init_net.RunAllOnGPU()
        model.net.RunAllOnGPU()

    if arg.engine:
        for op in model.net.Proto().op:
            op.engine = arg.engine

    if arg.dump_model:
        # The nets as text protos, to run elsewhere.
        with open("{0}_init_batch_{1}.pbtxt".format(arg.model, arg.batch_size), "w") as fid:
            fid.write(str(model.param_init_net.Proto()))
        with open("{0}.pbtxt".format(arg.model), "w") as fid:
            fid.write(str(model.net.Proto()))
    return model


def Benchmark(model_gen, arg):
    """Builds the model, runs its init net once and times ``arg.iterations`` runs of the net
    after ``arg.warmup_iterations``; prints the time per iteration (and per operator with
    ``arg.layer_wise_benchmark``). Returns ``workspace.BenchmarkNet``'s list of milliseconds."""
    model = BuildBenchmarkModel(model_gen, arg)
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    times = workspace.BenchmarkNet(
        model.net.Proto().name, arg.warmup_iterations, arg.iterations, arg.layer_wise_benchmark
    )
    _PrintTimes(model, times, arg.iterations)
    return times


def _PrintTimes(model, times, iterations):
    # Upstream's C++ benchmark logs these lines itself; this build's returns the numbers.
    if iterations > 0:
        per_iter = times[0]
        rate = 1000.0 / per_iter if per_iter > 0 else float("inf")
        print(
            "Main run finished. Milliseconds per iter: {:.6g}. Iters per second: {:.6g}".format(
                per_iter, rate
            )
        )
    if len(times) > 1:
        ops = model.net.Proto().op
        print("Time per operator type (ms per iter, per op):")
        for i, (op, t) in enumerate(zip(ops, times[1:])):
            name = op.name or "/".join(op.output) or str(i)
            print("{:>12.6f} ms.  {}  ({})".format(t, op.type, name))
    sys.stdout.flush()


def GetArgumentParser():
    parser = argparse.ArgumentParser(description="Caffe2 benchmark.")
    parser.add_argument("--batch_size", type=int, default=128, help="The batch size.")
    parser.add_argument("--model", type=str, help="The model to benchmark.")
    parser.add_argument("--order", type=str, default="NCHW", help="The order to evaluate.")
    parser.add_argument("--cudnn_ws", type=int, help="The cudnn workspace size.")
    parser.add_argument(
        "--iterations", type=int, default=10, help="Number of iterations to run the network."
    )
    parser.add_argument(
        "--warmup_iterations",
        type=int,
        default=10,
        help="Number of warm-up iterations before benchmarking.",
    )
    parser.add_argument(
        "--forward_only", action="store_true", help="If set, only run the forward pass."
    )
    parser.add_argument(
        "--layer_wise_benchmark",
        action="store_true",
        help="Also time each operator.",
    )
    parser.add_argument("--cpu", action="store_true", help="Run on the CPU (default: GPU 0).")
    parser.add_argument(
        "--engine",
        type=str,
        default="",
        help="An engine set on every op of the net (e.g. CUDNN, DNNL).",
    )
    parser.add_argument(
        "--dump_model", action="store_true", help="Write the init net and the net as .pbtxt files."
    )
    parser.add_argument("--net_type", type=str, default="dag")
    parser.add_argument("--num_workers", type=int, default=2)
    parser.add_argument("--use-nvtx", default=False, action="store_true")
    parser.add_argument("--htrace_span_log_path", type=str)
    return parser


def main(argv=None):
    args, extra_args = GetArgumentParser().parse_known_args(argv)
    if not args.batch_size or not args.model or not args.order:
        GetArgumentParser().print_help()
        return 0
    if args.model not in MODELS:
        GetArgumentParser().error(
            "unknown --model {!r}; choose one of {}".format(args.model, ", ".join(MODELS))
        )
    # Upstream also passes --caffe2_use_nvtx / --caffe2_htrace_span_log_path; this build has
    # neither NVTX ranges nor HTrace, so those options are accepted and ignored.
    if args.use_nvtx or args.htrace_span_log_path:
        print("Note: --use-nvtx and --htrace_span_log_path have no effect in this build.")
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=0"] + extra_args)
    Benchmark(MODELS[args.model], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
