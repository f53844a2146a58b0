"""Checkpoints of examples/resnet50_trainer.py: writing a model (shard 0, atomically), removing
the partial files of interrupted saves, resuming from a checkpoint, and writing the parameters to an
.npz for comparison. Re-exported by resnet50_trainer; logs to its "resnet50_trainer" logger.
"""
import glob
import logging
import os

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, data_parallel_model, workspace
from caffe2.python import predictor_exporter as pred_exp
from caffe2.python import predictor_py_utils as pred_utils
from caffe2.python.predictor_constants import predictor_constants

log = logging.getLogger("resnet50_trainer")


def save_model(args, model, epoch):
    """Shard 0 writes <file_store_path>/<save_model_name>_<epoch>.mdl atomically."""
    prefix = "{}_{}".format(model._device_prefix, model._devices[0])
    inputs = {prefix + "/data", prefix + "/label"}  # made by a null input's init ops: not state
    meta = pred_exp.PredictorExportMeta(
        predict_net=model.net.Proto(),
        parameters=[
            p for p in data_parallel_model.GetCheckpointParams(model) if str(p) not in inputs
        ],
        inputs=[prefix + "/data"],
        outputs=[prefix + "/softmax"],
        shapes={
            prefix + "/softmax": (1, args.num_labels),
            prefix + "/data": (args.num_channels, args.image_size, args.image_size),
        },
    )
    final = os.path.join(args.file_store_path, "{}_{}.mdl".format(args.save_model_name, epoch))
    remove_stale_partial_saves(args)
    temp = final + ".tmp{}".format(os.getpid())
    pred_exp.save_to_db(db_type="minidb", db_destination=temp, predictor_export_meta=meta)
    os.replace(temp, final)
    log.info("Saved checkpoint %s", final)
    previous = os.path.join(
        args.file_store_path, "{}_{}.mdl".format(args.save_model_name, epoch - 1)
    )
    if os.path.exists(previous):
        os.remove(previous)


def remove_stale_partial_saves(args):
    """Removes the partial files (<name>_<epoch>.mdl.tmp<pid>) of saves whose process died."""
    pattern = os.path.join(
        args.file_store_path, "{}_*.mdl.tmp*".format(glob.escape(args.save_model_name))
    )
    for path in glob.glob(pattern):
        pid = path.rsplit(".tmp", 1)[1]
        if pid.isdigit() and not os.path.exists("/proc/{}".format(pid)):
            log.info("Removing %s, left by a save that was interrupted", path)
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


def load_model(args, model):
    """Restores the parameters, optimizer state and iteration counter; returns the next epoch."""
    path = args.load_model_path
    log.info("Loading checkpoint %s", path)
    meta_net_def = pred_exp.load_from_db(path, "minidb")
    device = core.DeviceOption(model._device_type, model._devices[0])
    # Only the global init net (it loads the saved blobs): the predict init net would refill the
    # inputs with the export's per-image shapes, which a --train_data null run never refills.
    with core.DeviceScope(device):
        workspace.RunNetOnce(
            pred_utils.GetNet(meta_net_def, predictor_constants.GLOBAL_INIT_NET_TYPE)
        )
    itr = workspace.FetchBlob("optimizer_iteration")
    workspace.FeedBlob("optimizer_iteration", itr, device_option=core.DeviceOption(caffe2_pb2.CPU))
    data_parallel_model.FinalizeAfterCheckpoint(model)
    stem = os.path.basename(path)[: -len(".mdl")]
    return int(stem.rsplit("_", 1)[1]) + 1, int(itr.reshape(-1)[0])


def save_params_npz(path, model):
    """Writes the parameters of the first device and their optimizer state (momentum) to an .npz,
    by unprefixed name, so that runs and shards can be compared."""
    prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    names = [str(p) for p in model.GetAllParams(prefix)]
    names += [n + "_momentum" for n in names if workspace.HasBlob(n + "_momentum")]
    np.savez(path, **{n[len(prefix) :]: workspace.FetchBlob(n) for n in names})
    log.info("Wrote %d parameters to %s", len(names), path)
