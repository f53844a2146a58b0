"""Checkpointing a data-parallel model: GetCheckpointParams (the blobs a
complete checkpoint holds: the synced blobs of the first device plus the
iteration counters), FinalizeAfterCheckpoint (after loading into the first
device, broadcast them to the other devices and hosts with a
checkpoint_sync_net) and _RunComparison (a debug check that a blob is equal
on every host).

Re-exported by data_parallel_model under the upstream names; see that
module for the overall picture.
"""
import logging

import numpy as np

from caffe2.python import core, scope, workspace
from caffe2.python.data_parallel_model_graph import _ComputeBlobsToSync, stripBlobName
from caffe2.python.data_parallel_model_sync import _SyncAllParams

log = logging.getLogger("data_parallel_model")


def GetCheckpointParams(model):
    """The blobs of a complete checkpoint: the synced blobs of the first
    device plus the unprefixed iteration counters."""
    all_blobs, _ = _ComputeBlobsToSync(model)
    first_prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    first_gpu_blobs = {b for b in all_blobs if str(b).startswith(first_prefix)}
    iteration_blobs = set()
    for op in model.net.Proto().op:
        if op.type == "Iter" or op.type == "AtomicIter":
            if not op.output[0].startswith("{}_".format(model._device_prefix)):
                iteration_blobs.add(op.output[0])
    return first_gpu_blobs.union(iteration_blobs)


def FinalizeAfterCheckpoint(model, blobs=None):
    """After loading a checkpoint into the first device: copies its blobs
    (the synced ones, or `blobs`) to the other devices and hosts. The sync
    net is built and created on the first call."""
    if not hasattr(model, "_checkpoint_net"):
        if blobs is None:
            _, uniq_blob_names = _ComputeBlobsToSync(model)
        else:
            uniq_blob_names = [stripBlobName(p) for p in blobs]

        # The blobs may include non-parameters (momentum...): register them
        # (a shared model keeps them on the first device only).
        log.info("Creating checkpoint synchronization net")
        devices = model.GetDevices()
        holders = devices[:1] if model._shared_model else devices
        for name in uniq_blob_names:
            if name not in model._device_grouped_blobs:
                model._device_grouped_blobs[name] = {
                    d: core.BlobReference(
                        "{}_{}{}{}".format(
                            model._device_prefix, d, scope._NAMESCOPE_SEPARATOR, name
                        )
                    )
                    for d in holders
                }

        model._checkpoint_net = core.Net("checkpoint_sync_net")
        model._checkpoint_net.RunAllOnGPU()

        checkpoint_init_net = None
        if model._rendezvous is not None and model._rendezvous["num_shards"] > 1:
            checkpoint_init_net = core.Net("checkpoint_init_net")
            checkpoint_init_net.RunAllOnGPU()

        _SyncAllParams(
            devices,
            model,
            checkpoint_init_net,
            model._checkpoint_net,
            model._rendezvous,
            uniq_blob_names,
            max_concurrent_distributed_ops=1,
        )
        if checkpoint_init_net:
            workspace.RunNetOnce(checkpoint_init_net)
        workspace.CreateNet(model._checkpoint_net)

    log.info("Run checkpoint net")
    workspace.RunNet(model._checkpoint_net.Proto().name)


def _RunComparison(model, blob_name, device=None):
    """Debug helper: asserts that `blob_name` has the same sum of squares
    on every host (one-hot weighted Allreduce)."""
    if device is None:
        device = model._blob_to_device[blob_name]
    with core.DeviceScope(device):
        rendezvous = model._rendezvous
        if rendezvous is None or rendezvous["num_shards"] == 1:
            return True

        test_data_arr = np.zeros(rendezvous["num_shards"]).astype(np.float32)
        test_data_arr[rendezvous["shard_id"]] = 1
        workspace.FeedBlob("compare_arr", test_data_arr)

        comparison_net = core.Net("allcompare_net")
        kwargs = {}
        if "mpi_rendezvous" in rendezvous:
            kwargs["mpi_rendezvous"] = rendezvous["mpi_rendezvous"]
        comm_world = comparison_net.CreateCommonWorld(
            rendezvous["kv_handler"] or [],
            "initial_sync",
            name=model.net.Proto().name + ".cw_master_select",
            size=rendezvous["num_shards"],
            rank=rendezvous["shard_id"],
            engine=rendezvous["engine"],
            status_blob="cw_master_select",
            **kwargs,
        )

        blob_name_checksum = blob_name + "_checksum"
        comparison_net.SumSqrElements([blob_name], [blob_name_checksum], average=False)
        blob_name_gather = blob_name + "_gather"
        comparison_net.Mul(
            inputs=["compare_arr", blob_name_checksum], outputs=blob_name_gather, broadcast=1
        )
        comparison_net.Allreduce(
            inputs=[comm_world, blob_name_gather],
            outputs=[blob_name_gather],
            engine=rendezvous["engine"],
            status_blob="all_reduce_master_select_status",
        )

        workspace.RunNetOnce(comparison_net)
        gather_arr = workspace.FetchBlob(blob_name_gather)
        baseline = gather_arr[0]
        for i in range(rendezvous["num_shards"]):
            assert gather_arr[i] == baseline, "allcompare failed on shard {}.".format(
                rendezvous["shard_id"]
            )
        return True
