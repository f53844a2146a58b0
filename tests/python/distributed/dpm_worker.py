"""One shard of a data-parallel run, started by test_data_parallel_distributed.py.

Usage: dpm_worker.py SHARD NUM_SHARDS DEVICES STORE_KIND STORE_ARG RUN_ID ITERS [BUCKET_MB [MODES]]
NUM_SHARDS 0 means a single process without rendezvous (the reference run). The global batch is
fixed; shard s, device d takes its contiguous slice. MODES is a comma list: "helpers" (the
multi-host helpers, CPU), "gpu" (GPU devices: shard s uses GPUs s * DEVICES .. s * DEVICES +
DEVICES - 1, so the shards of one machine use different GPUs; then FinalizeAfterCheckpoint is
checked too), "nccl" (use_nccl=True). Prints one JSON line: the summed scaled loss per iteration
and the final parameters (by unprefixed name).
"""
import json
import sys

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, data_parallel_model as dpm, model_helper, optimizer
from caffe2.python import workspace

GLOBAL_BATCH = 24
IN, HIDDEN, OUT = 8, 16, 4


def global_batch(iteration):
    rng = np.random.RandomState(1000 + iteration)
    x = rng.randn(GLOBAL_BATCH, IN).astype(np.float32)
    y = rng.randint(0, OUT, size=GLOBAL_BATCH).astype(np.int32)
    return x, y


def main():
    shard, num_shards, devices, kind, arg, run_id, iters = sys.argv[1:8]
    bucket_mb = float(sys.argv[8]) if len(sys.argv) > 8 else 0.0
    modes = set(sys.argv[9].split(",")) if len(sys.argv) > 9 else set()
    helpers, on_gpu = "helpers" in modes, "gpu" in modes
    shard, num_shards, devices, iters = int(shard), int(num_shards), int(devices), int(iters)
    first = shard * devices if on_gpu and num_shards > 0 else 0
    device_ids = list(range(first, first + devices))
    prefix = "gpu" if on_gpu else "cpu"

    def device_option(d):
        return core.DeviceOption(caffe2_pb2.CUDA if on_gpu else caffe2_pb2.CPU, d)

    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    rendezvous = None
    if num_shards > 0:
        if kind == "file":
            op = core.CreateOperator(
                "FileStoreHandlerCreate", [], ["store_handler"], path=arg, prefix=run_id
            )
        else:
            op = core.CreateOperator(
                "RedisStoreHandlerCreate",
                [],
                ["store_handler"],
                host="127.0.0.1",
                port=int(arg),
                prefix=run_id,
            )
        workspace.RunOperatorOnce(op)
        rendezvous = dict(
            kv_handler="store_handler",
            shard_id=shard,
            num_shards=num_shards,
            engine="GLOO",
            exit_nets=None,
        )
    shards = max(num_shards, 1)
    per_device = GLOBAL_BATCH // (shards * devices)

    model = model_helper.ModelHelper(name="mlp")

    # Shard 0 (and the reference) start from fixed weights, the other shards from different ones:
    # the initial broadcast must make every shard start from shard 0's.
    rng = np.random.RandomState(7 if shard == 0 else 100 + shard)

    def given(*shape):
        return ("GivenTensorFill", {"values": (rng.randn(*shape) * 0.4).astype(np.float32)})

    init = {
        "w1": given(HIDDEN, IN),
        "b1": given(HIDDEN),
        "w2": given(OUT, HIDDEN),
        "b2": given(OUT),
    }

    def forward(m, loss_scale):
        fc1 = brew.fc(m, "data", "fc1", IN, HIDDEN, weight_init=init["w1"], bias_init=init["b1"])
        relu = brew.relu(m, fc1, "relu1")
        fc2 = brew.fc(m, relu, "fc2", HIDDEN, OUT, weight_init=init["w2"], bias_init=init["b2"])
        _, loss = m.SoftmaxWithLoss([fc2, "label"], ["softmax", "loss"])
        return [m.Scale(loss, "scaled_loss", scale=loss_scale)]

    def opt(m):
        return optimizer.build_sgd(m, 0.1, momentum=0.9, policy="fixed")

    dpm.Parallelize(
        model,
        input_builder_fun=lambda m: None,
        forward_pass_builder_fun=forward,
        optimizer_builder_fun=opt,
        devices=device_ids,
        rendezvous=rendezvous,
        cpu_device=not on_gpu,
        bucket_size_mb=bucket_mb,
        use_nccl="nccl" in modes,
    )

    def feed(iteration):
        x, y = global_batch(iteration)
        for d, device in enumerate(device_ids):
            start = (shard * devices + d) * per_device
            workspace.FeedBlob(
                "{}_{}/data".format(prefix, device),
                x[start : start + per_device],
                device_option(device),
            )
            workspace.FeedBlob(
                "{}_{}/label".format(prefix, device),
                y[start : start + per_device],
                device_option(device),
            )

    if helpers:
        # a per-host counter summed across hosts by every run of the net
        workspace.FeedBlob("hosts_seen", np.array([1.0], np.float32))
        dpm.AddDistributedBlobSync(model, ["hosts_seen"])
    feed(0)
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    losses = []
    for it in range(iters):
        feed(it)
        workspace.RunNet(model.net.Proto().name)
        losses.append(
            sum(
                float(workspace.FetchBlob("{}_{}/scaled_loss".format(prefix, d)))
                for d in device_ids
            )
        )
    master = "{}_{}/".format(prefix, device_ids[0])
    params = {
        str(p)[len(master) :]: workspace.FetchBlob(str(p)).tolist()
        for p in model.params
        if str(p).startswith(master)
    }
    result = {"losses": losses, "params": params}
    if on_gpu and num_shards > 0:
        # A "loaded checkpoint": shard 0's first GPU's values win everywhere.
        for d, device in enumerate(device_ids):
            value = np.full((HIDDEN, IN), 10.0 * shard + d + 1, np.float32)
            workspace.FeedBlob("gpu_{}/fc1_w".format(device), value, device_option(device))
        dpm.FinalizeAfterCheckpoint(model)
        result["after_finalize"] = sorted(
            set(float(workspace.FetchBlob("gpu_{}/fc1_w".format(d)).mean()) for d in device_ids)
        )
    if helpers:
        result["hosts_seen"] = workspace.FetchBlob("hosts_seen").tolist()
        dpm.Synchronize(model)
        dpm.Synchronize(model)
        result["compare_equal"] = bool(dpm._RunComparison(model, "cpu_0/fc1_w"))
        # A "loaded checkpoint": shard 0's values win on every device of every shard.
        for d in range(devices):
            value = np.full((HIDDEN, IN), 10.0 * shard + d, np.float32)
            workspace.FeedBlob("cpu_{}/fc1_w".format(d), value)
        dpm.FinalizeAfterCheckpoint(model)
        result["after_finalize"] = sorted(
            set(float(workspace.FetchBlob("cpu_{}/fc1_w".format(d)).mean()) for d in range(devices))
        )
        result["checkpoint_params"] = sorted(str(b) for b in dpm.GetCheckpointParams(model))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
