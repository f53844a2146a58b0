"""Data-parallel ResNet training across devices and machines (upstream's resnet50_trainer.py).

    python examples/resnet50_trainer.py --train_data DB [--test_data DB] --num_shards N --shard_id K
        --run_id R (--redis_host H [--redis_port P] | --file_store_path /shared/dir) [--use_cpu 1]

Every upstream flag keeps its meaning (spec core-api §3.18, ops §3.8). Fixed upstream bugs:
`--use_cpu` and `--model_parallel` parse "0"/"false"/"no" as False (upstream's `type=bool` made any
non-empty string True); exported input/output names are "<prefix>_<dev>/data" and
"<prefix>_<dev>/softmax" (upstream wrote "[]_gpu/data"); `--num_channels 1` decodes grayscale;
`--load_model_path` works on a CPU-only build; no removed NumPy calls. Beyond upstream:

  --model resnet50|resnet   resnet: the CIFAR-style 6n+2-layer ResNet (16/32/64 channels, global
                            average pooling, so any image size works); n from --resnet_blocks
  --scale S                 resize the shorter image side to S before cropping (upstream: 256)
  --lr_warmup_epochs E      ramp the learning rate linearly from --lr_warmup_start x base over
                            E epochs
  --lr_linear_scaling       multiply the base learning rate by --num_shards (the global batch grows)
  --lr_step_epochs E        the step policy's period in epochs (upstream: 30)
  --num_test_iters N        test batches per epoch (upstream: 100)
  --run_name / --log_dir    where the CSV log goes
Checkpoints (`<file_store_path>/<save_model_name>_<epoch>.mdl`) are written by shard 0 only, to a
temporary name and renamed into place; resuming restores the iteration counter, the parameters and
the optimizer state (momenta), moves every shard's reader past the records the interrupted run
consumed (DBReaderSkip), and carries on with the epoch after the saved one.
"""
import argparse
import glob
import logging
import os
import time

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import (
    brew,
    core,
    data_parallel_model,
    dyndep,
    experiment_util,
    optimizer,
    timeout_guard,
    workspace,
)
from caffe2.python import model_helper
from caffe2.python import predictor_exporter as pred_exp
from caffe2.python import predictor_py_utils as pred_utils
from caffe2.python.models import resnet
from caffe2.python.predictor_constants import predictor_constants

dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:file_store_handler_ops")
dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:redis_store_handler_ops")

logging.basicConfig()
log = logging.getLogger("resnet50_trainer")
log.setLevel(logging.DEBUG)


def str2bool(text):
    """Upstream used type=bool; "0", "false", "no", "off" and "" now mean False."""
    return str(text).strip().lower() not in ("0", "false", "no", "off", "")


# ---- the model ----------------------------------------------------------------------------------


def add_image_input(model, reader, batch_size, img_size, dtype, is_test, args):
    data, label = brew.image_input(
        model,
        reader,
        ["data", "label"],
        batch_size=batch_size,
        output_type=dtype,
        use_gpu_transform=(model._device_type == caffe2_pb2.CUDA),
        use_caffe_datum=True,
        mean=128.0,
        std=128.0,
        scale=args.scale,
        crop=img_size,
        mirror=1,
        is_test=is_test,
        color=1 if args.num_channels == 3 else 0,
    )
    model.StopGradient(data, data)


def add_null_input(model, batch_size, img_size, args):
    model.param_init_net.GaussianFill(
        [], ["data"], shape=[batch_size, args.num_channels, img_size, img_size]
    )
    # A fixed seed (upstream drew a new batch per process): every run, and a resumed one, trains on
    # the same synthetic batch, so runs can be compared bit for bit.
    model.param_init_net.Proto().op[-1].device_option.random_seed = 1234
    model.param_init_net.ConstantFill(
        [], ["label"], shape=[batch_size], value=1, dtype=core.DataType.INT32
    )


def create_small_resnet(model, data, num_input_channels, num_labels, num_blocks, is_test):
    """The CIFAR-style ResNet (6n+2 layers, 16/32/64 channels) ending in the FC logits."""
    brew.conv(model, data, "conv1", num_input_channels, 16, kernel=3, stride=1, pad=1, no_bias=1)
    brew.spatial_bn(model, "conv1", "conv1_spatbn", 16, epsilon=1e-3, momentum=0.9, is_test=is_test)
    brew.relu(model, "conv1_spatbn", "relu1")
    builder = resnet.ResNetBuilder(model, "relu1", no_bias=1, is_test=is_test)
    prev = 16
    for group, width in enumerate([16, 32, 64]):
        for block in range(num_blocks):
            builder.add_simple_block(
                prev if block == 0 else width, width, down_sampling=(block == 0 and group > 0)
            )
        prev = width
    brew.average_pool(model, builder.prev_blob, "final_avg", kernel=1, global_pooling=True)
    return brew.fc(model, "final_avg", "last_out_L{}".format(num_labels), 64, num_labels)


def build_forward(model, loss_scale, args, is_test):
    with brew.arg_scope(
        [brew.conv, brew.fc],
        WeightInitializer=None,
        BiasInitializer=None,
        enable_tensor_core=args.enable_tensor_core,
        float16_compute=args.float16_compute,
    ):
        if args.model == "resnet50":
            pred = resnet.create_resnet50(
                model,
                "data",
                num_input_channels=args.num_channels,
                num_labels=args.num_labels,
                no_bias=True,
                no_loss=True,
                is_test=is_test,
            )
        else:
            pred = create_small_resnet(
                model, "data", args.num_channels, args.num_labels, args.resnet_blocks, is_test
            )
    if args.dtype == "float16":
        pred = model.net.HalfToFloat(pred, pred + "_fp32")
    softmax, loss = model.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    loss = model.Scale(loss, scale=loss_scale)
    brew.accuracy(model, [softmax, "label"], "accuracy")
    return [loss]


def learning_rate_args(args, epoch_iters):
    base = args.base_learning_rate * (args.num_shards if args.lr_linear_scaling else 1)
    stepsize = max(1, int(args.lr_step_epochs * epoch_iters))
    if args.lr_warmup_epochs > 0:
        warmup = max(1, int(args.lr_warmup_epochs * epoch_iters))
        return base, dict(
            policy="composite",
            sub_policy_num_iters=[warmup, 1],
            sub_policy_0_policy="linearWarmup",
            sub_policy_0_start_multiplier=args.lr_warmup_start,
            sub_policy_0_num_iter=warmup,
            sub_policy_1_policy="step",
            sub_policy_1_stepsize=stepsize,
            sub_policy_1_gamma=0.1,
        )
    return base, dict(policy="step", stepsize=stepsize, gamma=0.1)


def build_optimizer(model, args, epoch_iters):
    base, lr_args = learning_rate_args(args, epoch_iters)
    if args.float16_compute:
        return optimizer.build_fp16_sgd(
            model,
            base,
            momentum=0.9,
            nesterov=1,
            weight_decay=args.weight_decay,
            dynamic_loss_scale=args.dynamic_loss_scale,
            **lr_args
        )
    assert not args.dynamic_loss_scale, "--dynamic_loss_scale needs --float16_compute"
    optimizer.add_weight_decay(model, args.weight_decay)
    return optimizer.build_multi_precision_sgd(model, base, momentum=0.9, nesterov=1, **lr_args)


# ---- checkpoints --------------------------------------------------------------------------------


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


# ---- training -----------------------------------------------------------------------------------


def run_epoch(args, epoch, train_model, test_model, total_batch_size, num_shards, explog):
    epoch_iters = int(args.epoch_size / total_batch_size / num_shards)
    prefix = "{}_{}".format(train_model._device_prefix, train_model._devices[0])
    for i in range(epoch_iters):
        timeout = 600.0 if i == 0 and epoch == args.first_epoch else 60.0
        with timeout_guard.CompleteInTimeOrDie(timeout):
            t1 = time.time()
            workspace.RunNet(train_model.net.Proto().name)
            t2 = time.time()
        fmt = "Finished iteration {}/{} of epoch {} ({:.2f} images/sec)"
        log.info(fmt.format(i + 1, epoch_iters, epoch, total_batch_size / (t2 - t1)))
        loss = float(workspace.FetchBlob(prefix + "/loss"))
        accuracy = float(workspace.FetchBlob(prefix + "/accuracy"))
        log.info("Training loss: {:.4f}, accuracy: {:.4f}".format(loss, accuracy))
    num_images = epoch * epoch_iters * total_batch_size
    learning_rate = workspace.FetchBlob(
        data_parallel_model.GetLearningRateBlobNames(train_model)[0]
    )
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
        log.info("Test accuracy after epoch {}: {:.4f}".format(epoch, test_accuracy))
    explog.log(
        input_count=num_images,
        batch_count=(i + epoch * epoch_iters),
        additional_values={
            "accuracy": accuracy,
            "loss": loss,
            "learning_rate": float(np.asarray(learning_rate).reshape(-1)[0]),
            "epoch": epoch,
            "test_accuracy": test_accuracy,
        },
    )
    assert loss < 40, "Exploded gradients :("
    return epoch + 1, test_accuracy


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
        shared_model=args.use_cpu,
        combine_spatial_bn=args.use_cpu,
        bucket_size_mb=args.bucket_size_mb,
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
            cpu_device=args.use_cpu,
            shared_model=args.use_cpu,
        )  # upstream omitted this: CPU devices > 0 had no params
        workspace.RunNetOnce(test_model.param_init_net)
        workspace.CreateNet(test_model.net)

    epoch = 0
    if args.load_model_path is not None:
        epoch, itr = load_model(args, train_model)
        log.info("Resumed at epoch {} (iteration {})".format(epoch, itr))
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
        expname = args.run_name
    explog = experiment_util.ModelTrainerLog(os.path.join(args.log_dir, expname), args)
    test_accuracy = 0.0
    while epoch < args.num_epochs:
        epoch, test_accuracy = run_epoch(
            args, epoch, train_model, test_model, total_batch_size, num_shards, explog
        )
        if shard_id == 0:
            save_model(args, train_model, epoch - 1)
    if args.params_npz:
        save_params_npz(args.params_npz.format(shard_id=shard_id), train_model)
    if test_model is not None:
        print("Final test accuracy: {:.4f}".format(test_accuracy))
    return test_accuracy


def save_params_npz(path, model):
    """Writes the parameters of the first device and their optimizer state (momentum) to an .npz,
    by unprefixed name, so that runs and shards can be compared."""
    prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    names = [str(p) for p in model.GetAllParams(prefix)]
    names += [n + "_momentum" for n in names if workspace.HasBlob(n + "_momentum")]
    np.savez(path, **{n[len(prefix) :]: workspace.FetchBlob(n) for n in names})
    log.info("Wrote %d parameters to %s", len(names), path)


def build_parser():
    parser = argparse.ArgumentParser(description="Caffe2: data-parallel ResNet training")
    parser.add_argument(
        "--train_data",
        type=str,
        default=None,
        required=True,
        help="Path to training data (or 'null' to simulate)",
    )
    parser.add_argument("--test_data", type=str, default=None, help="Path to test data")
    parser.add_argument("--db_type", type=str, default="lmdb", help="Database type (lmdb, ...)")
    parser.add_argument("--gpus", type=str, help="Comma separated list of device ids")
    parser.add_argument("--num_gpus", type=int, default=1, help="Number of devices (0..n-1)")
    parser.add_argument(
        "--model_parallel",
        type=str2bool,
        default=False,
        help="Split the model across devices (not supported on CPU)",
    )
    parser.add_argument("--num_channels", type=int, default=3, help="Number of color channels")
    parser.add_argument("--image_size", type=int, default=227, help="Input image size (crop)")
    parser.add_argument("--num_labels", type=int, default=1000, help="Number of labels")
    parser.add_argument("--batch_size", type=int, default=32, help="Batch size, total over devices")
    parser.add_argument(
        "--epoch_size", type=int, default=1500000, help="Images per epoch, over all machines"
    )
    parser.add_argument("--num_epochs", type=int, default=1000, help="Number of epochs")
    parser.add_argument("--base_learning_rate", type=float, default=0.1, help="Initial LR")
    parser.add_argument("--weight_decay", type=float, default=1e-4, help="Weight decay (L2)")
    parser.add_argument(
        "--cudnn_workspace_limit_mb", type=int, default=64, help="cuDNN workspace limit in MB"
    )
    parser.add_argument("--num_shards", type=int, default=1, help="Number of machines")
    parser.add_argument("--shard_id", type=int, default=0, help="This machine's shard id")
    parser.add_argument("--run_id", type=str, help="Unique run identifier (e.g. uuid)")
    parser.add_argument("--redis_host", type=str, help="Host of the Redis server (rendezvous)")
    parser.add_argument("--redis_port", type=int, default=6379, help="Port of the Redis server")
    parser.add_argument(
        "--file_store_path",
        type=str,
        default="/tmp",
        help="Rendezvous directory (shared by all shards) and model directory",
    )
    parser.add_argument(
        "--save_model_name",
        type=str,
        default="resnet50_model",
        help="Save the trained model to this name",
    )
    parser.add_argument(
        "--load_model_path",
        type=str,
        default=None,
        help="Load a checkpoint (<name>_<epoch>.mdl) and resume",
    )
    parser.add_argument("--use_cpu", type=str2bool, default=False, help="Use CPU devices")
    parser.add_argument(
        "--dtype",
        default="float",
        choices=["float", "float16"],
        help="Data type for parameters and compute",
    )
    parser.add_argument("--float16_compute", action="store_true", help="fp16 compute and SGD")
    parser.add_argument(
        "--dynamic_loss_scale",
        action="store_true",
        help="with --float16_compute: scale the loss gradient dynamically and "
        "skip steps with Inf/NaN gradients (beyond upstream)",
    )
    parser.add_argument("--enable_tensor_core", action="store_true", help="Use tensor cores")
    parser.add_argument(
        "--distributed_transport",
        type=str,
        default="tcp",
        help="Transport for the collectives (tcp or ibverbs)",
    )
    parser.add_argument(
        "--distributed_interfaces",
        type=str,
        default="",
        help="Network interfaces for the collectives (comma separated)",
    )
    # beyond upstream
    parser.add_argument(
        "--model",
        choices=["resnet50", "resnet"],
        default="resnet50",
        help="resnet50, or the CIFAR-style 6n+2-layer ResNet for small images",
    )
    parser.add_argument(
        "--resnet_blocks", type=int, default=3, help="n of the 6n+2-layer ResNet (3: ResNet-20)"
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=256,
        help="Resize the shorter image side to this before cropping",
    )
    parser.add_argument(
        "--lr_warmup_epochs",
        type=float,
        default=0.0,
        help="Ramp the learning rate up linearly over this many epochs",
    )
    parser.add_argument(
        "--lr_warmup_start",
        type=float,
        default=0.1,
        help="Learning rate multiplier at the start of the warmup",
    )
    parser.add_argument(
        "--lr_step_epochs",
        type=float,
        default=30,
        help="Multiply the learning rate by 0.1 every this many epochs",
    )
    parser.add_argument(
        "--lr_linear_scaling",
        action="store_true",
        help="Multiply the base learning rate by the number of shards",
    )
    parser.add_argument(
        "--bucket_size_mb",
        type=float,
        default=0.0,
        help="Fuse small gradients into all-reduce buckets of this size (0: off)",
    )
    parser.add_argument("--num_test_iters", type=int, default=100, help="Test batches per epoch")
    parser.add_argument(
        "--exhaustive_search",
        action="store_true",
        help="Time the convolution algorithms (cuDNN, oneDNN) on the first call of "
        "each shape instead of following fixed rules; see --autotune_cache",
    )
    parser.add_argument(
        "--autotune_cache",
        type=str,
        default=None,
        help="File of timed algorithm choices, read and appended to, so that other "
        "shards and later runs make the same choices",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="Seed of the initial parameters' random fills (default: a new one per run)",
    )
    parser.add_argument(
        "--params_npz",
        type=str,
        default=None,
        help="After training, write the parameters and momenta to this .npz "
        "({shard_id} is replaced)",
    )
    parser.add_argument("--run_name", type=str, default=None, help="Name of the CSV log")
    parser.add_argument("--log_dir", type=str, default=".", help="Directory of the CSV log")
    return parser


def check_args(parser, args):
    """Refuses values that make no sense, naming the flag (argparse only checks the types)."""
    positive = [
        "num_shards",
        "num_gpus",
        "batch_size",
        "epoch_size",
        "num_epochs",
        "image_size",
        "num_labels",
        "num_channels",
        "num_test_iters",
        "scale",
    ]
    for name in positive:
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error("--{} must be at least 1, got {}".format(name, value))
    if not 0 <= args.shard_id < args.num_shards:
        parser.error(
            "--shard_id must be in [0, --num_shards) = [0, {}), got {}".format(
                args.num_shards, args.shard_id
            )
        )
    for name in ["base_learning_rate", "weight_decay", "bucket_size_mb", "lr_warmup_epochs"]:
        if getattr(args, name) < 0:
            parser.error("--{} must be >= 0, got {}".format(name, getattr(args, name)))


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
