"""Data-parallel ResNet training across devices and machines (upstream's resnet50_trainer.py).

    python examples/resnet50_trainer.py --train_data DB [--test_data DB] --num_shards N --shard_id K
        --run_id R (--redis_host H [--redis_port P] | --file_store_path /shared/dir) [--use_cpu 1]

Every upstream flag keeps its meaning (spec core-api §3.18, ops §3.8). Fixed upstream bugs:
`--use_cpu` and `--model_parallel` parse "0"/"false"/"no" as False (upstream's `type=bool` made any
non-empty string True); exported input/output names are "<prefix>_<dev>/data" and
"<prefix>_<dev>/softmax" (upstream wrote "[]_gpu/data"); `--num_channels 1` decodes grayscale;
`--load_model_path` works on a CPU-only build; no removed NumPy calls. Beyond upstream:

  --model resnet50|resnet|vgg|alexnet
                            resnet: the CIFAR-style 6n+2-layer ResNet (16/32/64 channels, global
                            average pooling, so any image size works); n from --resnet_blocks;
                            vgg: a small VGG-style net (28x28, 32x32); alexnet. vgg and alexnet end
                            in fc6, fc7 (--fc_width wide) and fc8
  --model_parallel_fc L,..  hybrid parallelism (CPU devices): split these FC layers by output rows
                            over all devices of all shards; every shard then checkpoints its part
  --scale S                 resize the shorter image side to S before cropping (upstream: 256)
  --lr_warmup_epochs E      ramp the learning rate linearly from --lr_warmup_start x base over
                            E epochs
  --lr_linear_scaling       multiply the base learning rate by --num_shards (the global batch grows)
  --lr_step_epochs E        the step policy's period in epochs (upstream: 30)
  --num_test_iters N        test batches per epoch (upstream: 100)
  --run_name / --log_dir    where the CSV logs go ({shard_id} in the name is replaced)
  --print_every N           a progress line every N iterations (default 10)
  --checkpoint_every N      also save a checkpoint every N iterations, within epochs
  --resume_latest           resume from the newest checkpoint of --save_model_name (if any)
Checkpoints (`<file_store_path>/<save_model_name>_<epoch>.mdl` at the end of each epoch, and
`<save_model_name>_<epoch>_it<iteration>.mdl` every --checkpoint_every iterations) are written by
shard 0 only, to a temporary name and renamed into place; with --checkpoint_every only the newest is
kept. Resuming (--load_model_path, --resume_latest, or a restart by caffe2.distributed.launch, which
sets C2_RESTART_COUNT > 0) restores the iteration counter, the parameters and the optimizer state
(momenta), moves every shard's reader past the records the interrupted run consumed
(DBReaderSkip), and carries on with the epoch after the saved one, or within the saved epoch from
the iteration after the saved one. With several shards, shard 0 picks the newest checkpoint and
tells the others through the rendezvous store, so that all load the same one.

Output: one progress line every --print_every iterations (`epoch 1/3 iter 120/468 | loss 0.4120
acc 0.875 | 1234 img/s | lr 0.1 | ETA 2m13s`), the test accuracy after each epoch, and at the end
`Final test accuracy: <a>`. Logs in --log_dir: upstream's per-epoch CSV
(`<name>_<timestamp>.log`, experiment_util.ModelTrainerLog; its input counts are those up to the
end of the epoch, where upstream's were those up to its start), a per-iteration metrics CSV
(`<name>.metrics.csv`, continued by a resumed run) and the arguments (`<name>.args.json`); see
resnet50_trainer_metrics. `python -m caffe2.python.tools.plot_log <name>.metrics.csv...` plots them.

This script holds the training loop; its flags, model, checkpoints and reports are in the sibling
modules resnet50_trainer_args, resnet50_trainer_model, resnet50_trainer_checkpoint and
resnet50_trainer_metrics, whose names it re-exports.
"""
import logging
import os
import time

import numpy as np

from caffe2.python import (
    core,
    data_parallel_model,
    dyndep,
    experiment_util,
    model_helper,
    timeout_guard,
    workspace,
)

# The parts of the trainer, by purpose; their names are re-exported here (tests and tools import
# them from resnet50_trainer).
from resnet50_trainer_args import build_parser, check_args, str2bool  # noqa: F401
from resnet50_trainer_checkpoint import (  # noqa: F401
    checkpoint_name,
    latest_checkpoint,
    list_checkpoints,
    load_model,
    part_name,
    remove_stale_partial_saves,
    resume_point,
    save_model,
    save_params_npz,
    saves_checkpoints,
)
from resnet50_trainer_metrics import (  # noqa: F401
    METRICS_COLUMNS,
    TrainingReport,
    format_duration,
    metrics_name,
    write_args,
)
from resnet50_trainer_model import (  # noqa: F401
    add_image_input,
    add_null_input,
    build_forward,
    build_optimizer,
    create_small_resnet,
    learning_rate_args,
)

dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:file_store_handler_ops")
dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:redis_store_handler_ops")

logging.basicConfig()
log = logging.getLogger("resnet50_trainer")
log.setLevel(logging.DEBUG)


# ---- training -----------------------------------------------------------------------------------


def run_epoch(
    args,
    epoch,
    train_model,
    test_model,
    total_batch_size,
    num_shards,
    explog,
    report,
    start=0,
    shard_id=0,
):
    """Runs the iterations start..epoch_iters-1 of the epoch, then the test; shard 0 saves a
    checkpoint every --checkpoint_every iterations within the epoch. `report` (TrainingReport)
    prints the progress and writes the metrics log. Returns the next epoch and the test
    accuracy."""
    epoch_iters = int(args.epoch_size / total_batch_size / num_shards)
    prefix = "{}_{}".format(train_model._device_prefix, train_model._devices[0])
    lr_blob = data_parallel_model.GetLearningRateBlobNames(train_model)[0]
    for i in range(start, epoch_iters):
        timeout = 600.0 if i == start and epoch == args.first_epoch else 60.0
        with timeout_guard.CompleteInTimeOrDie(timeout):
            t1 = time.time()
            workspace.RunNet(train_model.net.Proto().name)
            t2 = time.time()
        loss = float(workspace.FetchBlob(prefix + "/loss"))
        accuracy = float(workspace.FetchBlob(prefix + "/accuracy"))
        learning_rate = float(np.asarray(workspace.FetchBlob(lr_blob)).reshape(-1)[0])
        report.iteration(epoch, i + 1, loss, accuracy, learning_rate, total_batch_size, t2 - t1)
        # Within the epoch only: its end has a checkpoint of its own, after the test.
        if (
            saves_checkpoints(train_model, shard_id)
            and args.checkpoint_every > 0
            and i + 1 < epoch_iters
        ):
            itr = int(np.asarray(workspace.FetchBlob("optimizer_iteration")).reshape(-1)[0])
            if itr % args.checkpoint_every == 0:
                save_model(args, train_model, epoch, iteration=itr)
    # The images this shard trained on up to the end of this epoch (upstream passed those up to
    # its start, so that the log's first row said 0 inputs/s and every other the previous
    # epoch's count over this epoch's time).
    num_images = (epoch + 1) * epoch_iters * total_batch_size
    test_accuracy = 0
    if test_model is not None:
        ntests = 0
        for _ in range(args.num_test_iters):
            workspace.RunNet(test_model.net.Proto().name)
            for d in test_model._devices:
                test_accuracy += float(
                    workspace.FetchBlob("{}_{}/accuracy".format(test_model._device_prefix, d))
                )
                ntests += 1
        test_accuracy /= ntests
    report.epoch_end(epoch, test_accuracy if test_model is not None else None)
    explog.log(
        input_count=num_images,
        batch_count=(i + epoch * epoch_iters),
        additional_values={
            "accuracy": accuracy,
            "loss": loss,
            "learning_rate": learning_rate,
            "epoch": epoch,
            "test_accuracy": test_accuracy,
        },
    )
    assert loss < 40, "Exploded gradients :("
    return epoch + 1, test_accuracy


def restart_count():
    """C2_RESTART_COUNT, set by caffe2.distributed.launch: 0 at first, k after the k-th restart."""
    text = os.environ.get("C2_RESTART_COUNT", "0").strip() or "0"
    if not text.isdigit():
        log.warning("Ignoring C2_RESTART_COUNT=%r: not a count", text)
        return 0
    return int(text)


def checkpoint_to_resume(args, shard_id, use_store, parts=0):
    """The checkpoint to resume from: --load_model_path; else, with --resume_latest or after a
    restart by the launcher, the newest of --save_model_name in --file_store_path (whole: with every
    one of `parts` model-parallel parts; None: start from scratch). With a rendezvous store, shard
    0 chooses and the others read its choice, so that every shard loads the same checkpoint even if
    another node still sees an older one."""
    if args.load_model_path is not None:
        return args.load_model_path
    restarts = restart_count()
    if not (args.resume_latest or restarts > 0):
        return None
    why = "restart {}".format(restarts) if restarts > 0 else "--resume_latest"
    key = "resnet50_trainer/resume_checkpoint"
    if not use_store or shard_id == 0:
        path = latest_checkpoint(args.file_store_path, args.save_model_name, parts)
        if use_store:  # the name only: other nodes may mount the directory elsewhere
            name = os.path.basename(path) if path else ""
            workspace.FeedBlob(key, np.array([name.encode()], dtype=object))
            workspace.RunOperatorOnce(
                core.CreateOperator("StoreSet", ["store_handler", key], [], blob_name=key)
            )
    else:
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "StoreGet", ["store_handler"], [key], blob_name=key, timeout_ms=600000
            )
        )
        name = workspace.FetchBlob(key).reshape(-1)[0].decode()
        path = os.path.join(args.file_store_path, name) if name else None
    if path is None:
        log.info(
            "No checkpoint of %r in %s (%s): starting from scratch",
            args.save_model_name,
            args.file_store_path,
            why,
        )
    else:
        log.info("Resuming from the newest checkpoint %s (%s)", path, why)
    return path


def rendezvous_for(args):
    if "OMPI_COMM_WORLD_SIZE" in os.environ:
        num_shards = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        shard_id = int(os.environ["OMPI_COMM_WORLD_RANK"])
        return num_shards, dict(
            kv_handler=None,
            num_shards=num_shards,
            shard_id=shard_id,
            engine="GLOO",
            exit_nets=None,
            mpi_rendezvous=True,
        )
    if args.num_shards <= 1:
        return 1, None
    if not args.run_id:
        raise SystemExit(
            "--run_id is required with --num_shards > 1: every shard of one run "
            "must use the same, fresh run id"
        )
    if args.redis_host is not None:
        store_op = core.CreateOperator(
            "RedisStoreHandlerCreate",
            [],
            ["store_handler"],
            host=args.redis_host,
            port=args.redis_port,
            prefix=args.run_id,
        )
    else:
        if not os.path.isdir(args.file_store_path):
            raise SystemExit(
                "--file_store_path {!r} is not a directory: create it on a file "
                "system every shard sees".format(args.file_store_path)
            )
        store_op = core.CreateOperator(
            "FileStoreHandlerCreate",
            [],
            ["store_handler"],
            path=args.file_store_path,
            prefix=args.run_id,
        )
    workspace.RunOperatorOnce(store_op)
    interfaces = args.distributed_interfaces.split(",") if args.distributed_interfaces else [""]
    return args.num_shards, dict(
        kv_handler="store_handler",
        shard_id=args.shard_id,
        num_shards=args.num_shards,
        engine="GLOO",
        transport=args.distributed_transport,
        interface=interfaces[0],
        exit_nets=None,
    )


def Train(args):
    if args.gpus is not None:
        gpus = [int(x) for x in args.gpus.split(",")]
    else:
        gpus = list(range(args.num_gpus))
    num_gpus = len(gpus)
    log.info("Running on devices: {}".format(gpus))
    total_batch_size = args.batch_size
    batch_per_device = total_batch_size // num_gpus
    assert (
        total_batch_size % num_gpus == 0
    ), "Number of devices must divide the batch size ({} % {})".format(total_batch_size, num_gpus)
    num_shards, rendezvous = rendezvous_for(args)
    shard_id = rendezvous["shard_id"] if rendezvous else 0  # under mpirun: the MPI rank
    global_batch_size = total_batch_size * num_shards
    epoch_iters = int(args.epoch_size / global_batch_size)
    assert epoch_iters > 0, "Epoch size must be larger than the global batch size"
    args.epoch_size = epoch_iters * global_batch_size
    log.info("Using epoch size: {}".format(args.epoch_size))

    # Upstream timed the cuDNN algorithms (cudnn_exhaustive_search True); here kernels follow fixed
    # rules unless --exhaustive_search asks for timing, so runs are reproducible
    # (docs/determinism.md).
    train_arg_scope = {
        "order": "NCHW",
        "use_cudnn": True,
        "cudnn_exhaustive_search": args.exhaustive_search,
        "ws_nbytes_limit": args.cudnn_workspace_limit_mb * 1024 * 1024,
    }
    train_model = model_helper.ModelHelper(name="resnet50", arg_scope=train_arg_scope)
    hybrid_layers = [name for name in args.model_parallel_fc.split(",") if name]

    # One reader for all devices of this shard (DBReader is thread-safe), sharded across shards.
    reader = None
    if args.train_data != "null":
        reader = train_model.CreateDB(
            "reader",
            db=args.train_data,
            db_type=args.db_type,
            num_shards=num_shards,
            shard_id=shard_id,
        )

    def input_fn(model):
        if reader is None:
            add_null_input(model, batch_per_device, args.image_size, args)
        else:
            add_image_input(
                model,
                reader,
                batch_per_device,
                args.image_size,
                args.dtype,
                is_test=False,
                args=args,
            )

    data_parallel_model.Parallelize(
        train_model,
        input_builder_fun=input_fn,
        forward_pass_builder_fun=lambda m, s: build_forward(m, s, args, is_test=False),
        optimizer_builder_fun=lambda m: build_optimizer(m, args, epoch_iters),
        devices=gpus,
        rendezvous=rendezvous,
        optimize_gradient_memory=False,
        cpu_device=args.use_cpu,
        shared_model=args.use_cpu and not hybrid_layers,
        combine_spatial_bn=args.use_cpu and not hybrid_layers,
        bucket_size_mb=args.bucket_size_mb,
        model_parallel_fc=hybrid_layers or None,
    )
    data_parallel_model.OptimizeGradientMemory(train_model, {}, set(), False)
    if args.seed is not None:
        # Every random fill of the initial parameters draws from a fixed seed, and so does the
        # augmentation (per shard: each shard's records get their own draws). ImageInput seeds each
        # record from this and the record's place in the reader, so a resumed run (its reader
        # advanced by DBReaderSkip) augments every record as the uninterrupted run did.
        for op in train_model.param_init_net.Proto().op:
            if not op.device_option.HasField("random_seed"):
                op.device_option.random_seed = args.seed
        for op in train_model.net.Proto().op:
            if op.type == "ImageInput" and not op.device_option.HasField("random_seed"):
                op.device_option.random_seed = (args.seed * 1000003 + shard_id + 1) % 2**32
    workspace.RunNetOnce(train_model.param_init_net)
    workspace.CreateNet(train_model.net)

    test_model = None
    if args.test_data is not None:
        test_arg_scope = {
            "order": "NCHW",
            "use_cudnn": True,
            "cudnn_exhaustive_search": args.exhaustive_search,
        }
        test_model = model_helper.ModelHelper(
            name="resnet50_test", arg_scope=test_arg_scope, init_params=False
        )

        test_reader = test_model.CreateDB("test_reader", db=args.test_data, db_type=args.db_type)

        def test_input_fn(model):
            add_image_input(
                model,
                test_reader,
                batch_per_device,
                args.image_size,
                args.dtype,
                is_test=True,
                args=args,
            )

        data_parallel_model.Parallelize(
            test_model,
            input_builder_fun=test_input_fn,
            forward_pass_builder_fun=lambda m, s: build_forward(m, s, args, is_test=True),
            param_update_builder_fun=None,
            devices=gpus,
            rendezvous=rendezvous if hybrid_layers else None,  # its split layers exchange too
            cpu_device=args.use_cpu,
            shared_model=args.use_cpu and not hybrid_layers,
            model_parallel_fc=hybrid_layers or None,
        )  # upstream omitted this: CPU devices > 0 had no params
        workspace.RunNetOnce(test_model.param_init_net)
        workspace.CreateNet(test_model.net)

    epoch, start = 0, 0
    resume_from = checkpoint_to_resume(
        args,
        shard_id,
        rendezvous is not None and rendezvous["kv_handler"] is not None,
        parts=num_shards if hybrid_layers else 0,
    )
    if resume_from is not None:
        epoch, itr, start = load_model(args, train_model, epoch_iters, path=resume_from)
        log.info(
            "Resumed at epoch {} (iteration {}){}".format(
                epoch,
                itr,
                ", within it from iteration {}/{}".format(start + 1, epoch_iters) if start else "",
            )
        )
        if reader is not None:
            # Each shard's reader continues where the interrupted run's left off.
            workspace.RunOperatorOnce(
                core.CreateOperator(
                    "DBReaderSkip", [reader], [], num_records=itr * total_batch_size
                )
            )
            log.info("Reader advanced past {} records".format(itr * total_batch_size))
    args.first_epoch = epoch

    expname = "resnet50_gpu%d_b%d_L%d_lr%.2f_v2" % (
        num_gpus,
        total_batch_size,
        args.num_labels,
        args.base_learning_rate,
    )
    if args.run_name:
        expname = args.run_name.replace("{shard_id}", str(shard_id))
    os.makedirs(args.log_dir, exist_ok=True)
    explog = experiment_util.ModelTrainerLog(os.path.join(args.log_dir, expname), args)
    # A resumed run's first row counts the images trained since the resume only.
    explog.last_input_count = (epoch * epoch_iters + start) * total_batch_size
    name = os.path.join(args.log_dir, metrics_name(expname, args.run_name, shard_id, num_shards))
    write_args(name + ".args.json", args)
    report = TrainingReport(
        name + ".metrics.csv",
        shard_id,
        args.num_epochs,
        epoch_iters,
        args.print_every,
        resume_from=None if resume_from is None else epoch * epoch_iters + start,
    )
    test_accuracy = 0.0
    try:
        while epoch < args.num_epochs:
            epoch, test_accuracy = run_epoch(
                args,
                epoch,
                train_model,
                test_model,
                total_batch_size,
                num_shards,
                explog,
                report,
                start=start,
                shard_id=shard_id,
            )
            start = 0
            if saves_checkpoints(train_model, shard_id):
                save_model(args, train_model, epoch - 1)
    finally:
        report.close()
    if args.params_npz:
        save_params_npz(args.params_npz.format(shard_id=shard_id), train_model)
    if test_model is not None:
        print("Final test accuracy: {:.4f}".format(test_accuracy))
    return test_accuracy


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    if args.autotune_cache:
        workspace.GlobalInit(["caffe2", "--caffe2_autotune_cache=" + args.autotune_cache])
    if args.model_parallel and args.use_cpu:
        raise SystemExit("--model_parallel needs GPUs")
    return Train(args)


if __name__ == "__main__":
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    main()
