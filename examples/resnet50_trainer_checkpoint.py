"""Checkpoints of examples/resnet50_trainer.py: writing a model (shard 0, atomically), removing
the partial files of interrupted saves, finding the newest checkpoint and resuming from it (at an
epoch's end or within an epoch), and writing the parameters to an .npz for comparison. Re-exported
by resnet50_trainer; logs to its "resnet50_trainer" logger.

Names in --file_store_path: `<save_model_name>_<epoch>.mdl` at the end of an epoch (upstream's),
`<save_model_name>_<epoch>_it<global iteration>.mdl` within one (--checkpoint_every).

With model-parallel FC layers (--model_parallel_fc) every shard also writes its part of them,
`<checkpoint>.part<shard_id>` (data_parallel_model.SaveModelParallelPart), and a checkpoint counts
only once every shard's part is there. Each shard keeps its two newest, so that a run killed while
the shards write one still has the previous one whole.
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


def part_name(path, shard_id):
    """The file of shard `shard_id`'s model-parallel part of the checkpoint `path`."""
    return "{}.part{}".format(path, shard_id)


def _shard_id(model):
    return model._rendezvous["shard_id"] if model._rendezvous else 0


def saves_checkpoints(model, shard_id):
    """Whether this shard writes checkpoints: shard 0, and every shard of a hybrid model."""
    return shard_id == 0 or data_parallel_model.IsModelParallel(model)


def list_checkpoints(directory, name, parts=0, suffix=""):
    """The checkpoints of `name` in `directory`, oldest first: within an epoch by iteration, and
    its end after them (temporary files of saves in progress are not checkpoints; with `parts`,
    neither are those that lack one of the shards' parts). With `suffix`, the files named like
    checkpoints plus it (".part1": shard 1's parts)."""
    pattern = re.compile(
        r"^{}_(\d+)(?:_it(\d+))?\.mdl{}$".format(re.escape(name), re.escape(suffix))
    )
    found = []
    for entry in os.listdir(directory):
        m = pattern.match(entry)
        if m:
            epoch, iteration = int(m.group(1)), m.group(2)
            key = (epoch, 1, 0) if iteration is None else (epoch, 0, int(iteration))
            path = os.path.join(directory, entry)
            if all(os.path.exists(part_name(path, s)) for s in range(parts)):
                found.append((key, path))
    return [path for _, path in sorted(found)]


def latest_checkpoint(directory, name, parts=0):
    """The newest (whole, with `parts`) checkpoint of `name` in `directory`, or None."""
    found = list_checkpoints(directory, name, parts) if os.path.isdir(directory) else []
    return found[-1] if found else None


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def save_model(args, model, epoch, iteration=None):
    """Shard 0 writes <file_store_path>/<save_model_name>_<epoch>.mdl (at the end of an epoch) or
    <save_model_name>_<epoch>_it<iteration>.mdl (within it) atomically, and with model-parallel
    layers every shard its part beside it. Without --checkpoint_every it then removes the
    previous epoch's checkpoint (upstream's naming); with it, every other checkpoint of this name,
    so that only the newest remains (the newest two with model-parallel parts)."""
    hybrid = data_parallel_model.IsModelParallel(model)
    shard_id = _shard_id(model)
    final = os.path.join(
        args.file_store_path, checkpoint_name(args.save_model_name, epoch, iteration)
    )
    remove_stale_partial_saves(args)
    if hybrid:
        data_parallel_model.SaveModelParallelPart(model, part_name(final, shard_id))
    if shard_id == 0:
        _save_shared_state(args, model, final)
    log.info("Saved checkpoint %s%s", final, " (part {})".format(shard_id) if hybrid else "")
    directory, name = args.file_store_path, args.save_model_name
    if hybrid:  # the newest two of this shard's files
        if shard_id == 0:
            for path in list_checkpoints(directory, name)[:-2]:
                _remove(path)
        for path in list_checkpoints(directory, name, suffix=".part{}".format(shard_id))[:-2]:
            _remove(path)
    elif getattr(args, "checkpoint_every", 0) > 0:
        for path in list_checkpoints(directory, name):
            if path != final:
                _remove(path)
    else:
        _remove(os.path.join(directory, "{}_{}.mdl".format(name, epoch - 1)))


def _save_shared_state(args, model, final):
    """Writes the data-parallel state (device 0's synced blobs and the iteration) to `final`."""
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
    temp = final + ".tmp{}".format(os.getpid())
    pred_exp.save_to_db(db_type="minidb", db_destination=temp, predictor_export_meta=meta)
    os.replace(temp, final)


def remove_stale_partial_saves(args):
    """Removes the partial files (<name>_<epoch>.mdl[.part<k>].tmp<pid>) of saves whose process
    died."""
    pattern = os.path.join(
        args.file_store_path, "{}_*.mdl*.tmp*".format(glob.escape(args.save_model_name))
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
    if data_parallel_model.IsModelParallel(model):
        data_parallel_model.LoadModelParallelPart(model, part_name(path, _shard_id(model)))
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
