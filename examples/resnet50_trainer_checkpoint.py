"""Checkpoints of examples/resnet50_trainer.py: writing a model (shard 0, atomically), removing
the partial files of interrupted saves, finding the newest checkpoint and resuming from it (at an
epoch's end or within an epoch), and writing the parameters to an .npz for comparison. Re-exported
by resnet50_trainer; logs to its "resnet50_trainer" logger.

Names in --file_store_path: `<save_model_name>_<epoch>.mdl` at the end of an epoch (upstream's),
`<save_model_name>_<epoch>_it<global iteration>.mdl` within one (--checkpoint_every).
"""
import glob
import logging
import os
import re

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, data_parallel_model, workspace
from caffe2.python import predictor_exporter as pred_exp
from caffe2.python import predictor_py_utils as pred_utils
from caffe2.python.predictor_constants import predictor_constants

log = logging.getLogger("resnet50_trainer")


def checkpoint_name(name, epoch, iteration=None):
    """<name>_<epoch>.mdl at the end of an epoch, <name>_<epoch>_it<iteration>.mdl within one."""
    if iteration is None:
        return "{}_{}.mdl".format(name, epoch)
    return "{}_{}_it{}.mdl".format(name, epoch, iteration)


def list_checkpoints(directory, name):
    """The checkpoints of `name` in `directory`, oldest first: within an epoch by iteration, and
    its end after them (temporary files of saves in progress are not checkpoints)."""
    pattern = re.compile(r"^{}_(\d+)(?:_it(\d+))?\.mdl$".format(re.escape(name)))
    found = []
    for entry in os.listdir(directory):
        m = pattern.match(entry)
        if m:
            epoch, iteration = int(m.group(1)), m.group(2)
            key = (epoch, 1, 0) if iteration is None else (epoch, 0, int(iteration))
            found.append((key, os.path.join(directory, entry)))
    return [path for _, path in sorted(found)]


def latest_checkpoint(directory, name):
    """The newest checkpoint of `name` in `directory`, or None."""
    found = list_checkpoints(directory, name) if os.path.isdir(directory) else []
    return found[-1] if found else None


def save_model(args, model, epoch, iteration=None):
    """Shard 0 writes <file_store_path>/<save_model_name>_<epoch>.mdl (at the end of an epoch) or
    <save_model_name>_<epoch>_it<iteration>.mdl (within it) atomically. Without --checkpoint_every
    it then removes the previous epoch's checkpoint (upstream's naming); with it, every other
    checkpoint of this name, so that only the newest remains."""
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
    final = os.path.join(
        args.file_store_path, checkpoint_name(args.save_model_name, epoch, iteration)
    )
    remove_stale_partial_saves(args)
    temp = final + ".tmp{}".format(os.getpid())
    pred_exp.save_to_db(db_type="minidb", db_destination=temp, predictor_export_meta=meta)
    os.replace(temp, final)
    log.info("Saved checkpoint %s", final)
    if getattr(args, "checkpoint_every", 0) > 0:
        for path in list_checkpoints(args.file_store_path, args.save_model_name):
            if path != final:
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
        return
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


def resume_point(path, itr, epoch_iters):
    """(epoch, iteration within it) at which a run resumed from the checkpoint `path`, saved after
    `itr` iterations, carries on. After an epoch's end (<name>_<epoch>.mdl): the next epoch, from
    its start, as upstream. Otherwise from the saved iteration count."""
    stem = os.path.basename(path)[: -len(".mdl")] if path.endswith(".mdl") else ""
    m = re.match(r"^.*_(\d+)$", stem)
    if m:
        return int(m.group(1)) + 1, 0
    epoch, start = divmod(itr, epoch_iters)
    m = re.match(r"^.*_(\d+)_it(\d+)$", stem)
    if m and (int(m.group(1)), int(m.group(2))) != (epoch, itr):
        log.warning(
            "%s was saved at epoch %s, iteration %s; with this epoch size the iteration count %d "
            "is in epoch %d",
            path,
            m.group(1),
            m.group(2),
            itr,
            epoch,
        )
    return epoch, start


def load_model(args, model, epoch_iters, path=None):
    """Restores the parameters, optimizer state and iteration counter from `path` (default:
    --load_model_path); returns (epoch, global iteration, iteration within the epoch) to carry on
    from."""
    path = path or args.load_model_path
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
    itr = int(itr.reshape(-1)[0])
    epoch, start = resume_point(path, itr, epoch_iters)
    return epoch, itr, start


def save_params_npz(path, model):
    """Writes the parameters of the first device and their optimizer state (momentum) to an .npz,
    by unprefixed name, so that runs and shards can be compared."""
    prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    names = [str(p) for p in model.GetAllParams(prefix)]
    names += [n + "_momentum" for n in names if workspace.HasBlob(n + "_momentum")]
    np.savez(path, **{n[len(prefix) :]: workspace.FetchBlob(n) for n in names})
    log.info("Wrote %d parameters to %s", len(names), path)
