"""One shard of the hybrid-parallel training tests (test_hybrid_training.py), or the
single-process reference.

Usage: hybrid_worker.py OUT_DIR NUM_SHARDS SHARD_ID DEVICES FIRST_ITER LAST_ITER [RUN_ID]
  NUM_SHARDS 0: the reference, one process and one device with the whole global batch of the
  hybrid runs of G = DEVICES global devices, and no model-parallel layer.
  FIRST_ITER > 0: resume from the checkpoint a run up to FIRST_ITER left in OUT_DIR.
Writes OUT_DIR/losses_<shard>.npy (this shard's share of the mean loss per iteration) and
OUT_DIR/params_<shard>.npz (device 0's parameters and momenta; every device's split ones under
"<device>/<name>"). The initial parameters and the data of every iteration follow from names
and iteration numbers only, so every run starts and trains alike.
"""
import os
import sys
import zlib

import numpy as np

from caffe2.python import brew, core, data_parallel_model, model_helper, optimizer, workspace

BATCH = 2  # examples per device
MODEL_PARALLEL = ["fc6", "fc7"]


def build_logits(model):
    brew.conv(model, "data", "conv1", 2, 3, kernel=3, pad=1)
    brew.relu(model, "conv1", "conv1")
    brew.fc(model, "conv1", "fc6", 3 * 4 * 4, 10)
    brew.relu(model, "fc6", "fc6r")
    brew.fc(model, "fc6r", "fc7", 10, 7)
    brew.relu(model, "fc7", "fc7r")
    return brew.fc(model, "fc7r", "fc8", 7, 5)


def build_forward(model, loss_scale):
    build_logits(model)
    softmax, loss = model.SoftmaxWithLoss(["fc8", "label"], ["softmax", "loss"])
    return [model.Scale(loss, "loss_scaled", scale=loss_scale)]


def initial_value(name, shape):
    rng = np.random.RandomState(zlib.crc32(name.encode()))
    return (rng.randn(*shape) * 0.3).astype(np.float32)


def global_batch(iteration, global_devices):
    """The training batch (one for every iteration, so the loss must fall); others for evals."""
    rng = np.random.RandomState(7 if iteration < 99 else iteration)
    data = rng.randn(global_devices * BATCH, 2, 4, 4).astype(np.float32)
    label = rng.randint(0, 5, size=global_devices * BATCH).astype(np.int32)
    return data, label


def main():
    out_dir, num_shards, shard_id = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    devices, first, last = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    run_id = sys.argv[7] if len(sys.argv) > 7 else "hybrid"
    reference = num_shards == 0
    global_devices = devices if reference else num_shards * devices
    local = [0] if reference else list(range(devices))
    batch = BATCH * (global_devices if reference else 1)
    rendezvous = None
    if not reference:
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "FileStoreHandlerCreate", [], ["store"], path=out_dir, prefix=run_id
            )
        )
        rendezvous = dict(
            kv_handler="store", shard_id=shard_id, num_shards=num_shards, engine="GLOO"
        )
    model = model_helper.ModelHelper(name="hybrid")

    def add_optimizer(m):
        return optimizer.build_sgd(m, 0.1, momentum=0.9, policy="fixed")

    data_parallel_model.Parallelize(
        model,
        input_builder_fun=lambda m: None,
        forward_pass_builder_fun=build_forward,
        optimizer_builder_fun=add_optimizer,
        devices=local,
        rendezvous=rendezvous,
        cpu_device=True,
        model_parallel_fc=None if reference else MODEL_PARALLEL,
    )
    for i, d in enumerate(local):  # shapes for the init net's shape inference
        workspace.FeedBlob("cpu_%d/data" % d, np.zeros((batch, 2, 4, 4), np.float32))
        workspace.FeedBlob("cpu_%d/label" % d, np.zeros(batch, np.int32))
    workspace.RunNetOnce(model.param_init_net)
    rows = {}
    if not reference:
        for layer in MODEL_PARALLEL:
            info = model._model_parallel[layer]
            rows[info["weight"]] = rows[info["bias"]] = info["starts"]
    for i, d in enumerate(local):
        g = shard_id * devices + i
        for p in model.GetParams("cpu_%d/" % d):
            name = str(p).split("/", 1)[1]
            full_shape = workspace.FetchBlob(str(p)).shape
            if name in rows:
                full_shape = (rows[name][-1],) + full_shape[1:]
            value = initial_value(name, full_shape)
            if name in rows:
                value = value[rows[name][g] : rows[name][g + 1]]
            workspace.FeedBlob(str(p), value)
    ckpt = os.path.join(out_dir, "ckpt_shard0.minidb")
    part = os.path.join(out_dir, "ckpt_part{}.minidb".format(shard_id))
    if first > 0:
        if shard_id == 0:
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "Load", [], [], db=ckpt, db_type="minidb", load_all=1, absolute_path=1
                )
            )
        data_parallel_model.FinalizeAfterCheckpoint(model)
        data_parallel_model.LoadModelParallelPart(model, part)
    workspace.CreateNet(model.net)
    losses = []
    for it in range(first, last):
        data, label = global_batch(it, global_devices)
        for i, d in enumerate(local):
            g = shard_id * devices + i
            rows_of = slice(g * BATCH, g * BATCH + batch)
            workspace.FeedBlob("cpu_%d/data" % d, data[rows_of])
            workspace.FeedBlob("cpu_%d/label" % d, label[rows_of])
        workspace.RunNet(model.net.Proto().name)
        losses.append(sum(float(workspace.FetchBlob("cpu_%d/loss_scaled" % d)) for d in local))
    name = "ref" if reference else str(shard_id)
    np.save(os.path.join(out_dir, "losses_{}_{}.npy".format(name, first)), np.array(losses))
    blobs = {
        str(b).split("/", 1)[1]: workspace.FetchBlob(str(b))
        for b in data_parallel_model.GetCheckpointParams(model)
        if str(b).startswith("cpu_0/")
    }
    for b in data_parallel_model.ModelParallelBlobs(model):
        if not b.endswith("_full"):
            blobs[b] = workspace.FetchBlob(b)
    np.savez(os.path.join(out_dir, "params_{}.npz".format(name)), **blobs)
    if not reference:
        if shard_id == 0:
            state = [str(b) for b in data_parallel_model.GetCheckpointParams(model)]
            workspace.RunOperatorOnce(
                core.CreateOperator("Save", state, [], db=ckpt, db_type="minidb", absolute_path=1)
            )
        data_parallel_model.SaveModelParallelPart(model, part)


if __name__ == "__main__":
    main()
