"""The command line of examples/resnet50_trainer.py: its argument parser (upstream's flags and
the ones beyond upstream), the boolean flag type and the checks of flag values. Re-exported by
resnet50_trainer, which parses the flags with build_parser and check_args.
"""
import argparse


def str2bool(text):
    """Upstream used type=bool; "0", "false", "no", "off" and "" now mean False."""
    return str(text).strip().lower() not in ("0", "false", "no", "off", "")


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
    parser.add_argument(
        "--checkpoint_every",
        type=int,
        default=0,
        help="Also save a checkpoint every N iterations within epochs "
        "(<name>_<epoch>_it<iteration>.mdl), keeping only the newest (0: at epoch ends only)",
    )
    parser.add_argument(
        "--resume_latest",
        action="store_true",
        help="Resume from the newest checkpoint of --save_model_name in --file_store_path (none: "
        "start from scratch); implied by C2_RESTART_COUNT > 0 (caffe2.distributed.launch)",
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
        choices=["resnet50", "resnet", "vgg", "alexnet"],
        default="resnet50",
        help="resnet50; the CIFAR-style 6n+2-layer ResNet for small images; a small VGG-style net "
        "(28x28, 32x32); AlexNet. vgg and alexnet end in the FC layers fc6, fc7, fc8",
    )
    parser.add_argument(
        "--fc_width", type=int, default=None, help="width of fc6 and fc7 (vgg: 1024, alexnet: 4096)"
    )
    parser.add_argument(
        "--model_parallel_fc",
        type=str,
        default="",
        help="FC layers to split across all devices of all shards (hybrid parallelism, CPU), "
        "comma separated, e.g. fc6,fc7,fc8",
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
    parser.add_argument(
        "--run_name", type=str, default=None, help="Name of the CSV logs ({shard_id} is replaced)"
    )
    parser.add_argument(
        "--log_dir",
        type=str,
        default=".",
        help="Directory of the CSV logs (per epoch, per iteration) and the arguments' JSON",
    )
    parser.add_argument(
        "--print_every",
        type=int,
        default=10,
        help="Print a progress line every N iterations (and at the first one and each epoch's "
        "last)",
    )
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
        "print_every",
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
    if args.resume_latest and args.load_model_path is not None:
        parser.error("--resume_latest and --load_model_path exclude each other")
    for name in [
        "base_learning_rate",
        "weight_decay",
        "bucket_size_mb",
        "lr_warmup_epochs",
        "checkpoint_every",
    ]:
        if getattr(args, name) < 0:
            parser.error("--{} must be >= 0, got {}".format(name, getattr(args, name)))
