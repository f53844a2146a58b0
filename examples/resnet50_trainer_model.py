"""The model built by examples/resnet50_trainer.py: the image (or synthetic) input, ResNet-50,
the CIFAR-style 6n+2-layer ResNet, a small VGG-style net or AlexNet with its loss, and the
learning-rate policy and SGD optimizer. Re-exported by resnet50_trainer, whose Train hands these
builders to data_parallel_model.
"""
from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, optimizer
from caffe2.python.models import resnet, vgg


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
        elif args.model in ("vgg", "alexnet"):
            create = vgg.create_small_vgg if args.model == "vgg" else vgg.create_alexnet
            pred = create(
                model,
                "data",
                args.num_channels,
                args.num_labels,
                args.image_size,
                fc_width=args.fc_width or (1024 if args.model == "vgg" else 4096),
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
            **lr_args,
        )
    assert not args.dynamic_loss_scale, "--dynamic_loss_scale needs --float16_compute"
    optimizer.add_weight_decay(model, args.weight_decay)
    return optimizer.build_multi_precision_sgd(model, base, momentum=0.9, nesterov=1, **lr_args)
