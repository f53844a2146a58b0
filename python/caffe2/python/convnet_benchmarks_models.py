"""The model builders of caffe2.python.convnet_benchmarks (upstream's benchmark nets).

Each builder takes ``(order, cudnn_ws)`` and returns ``(model, input_size)``: a
``model_helper.ModelHelper`` whose net reads the blobs ``data`` (a batch of ``input_size`` x
``input_size`` RGB images, or ``[batch, input_size]`` for MLP) and ``label`` (int32 class ids in
[0, 1000)) and ends in ``pred`` (softmax, 1000 classes; ``last`` for MLP), ``xent`` and the scalar
``loss``. Layer names and sizes follow upstream, and so the blob names of the nets do.
"""

from caffe2.python import brew, model_helper

XAVIER = ("XavierFill", {})
CONSTANT = ("ConstantFill", {})


def _model(name, order, cudnn_ws):
    arg_scope = {"order": order, "use_cudnn": True, "cudnn_exhaustive_search": True}
    if cudnn_ws:
        arg_scope["ws_nbytes_limit"] = cudnn_ws
    return model_helper.ModelHelper(name=name, arg_scope=arg_scope)


def _conv_relu(model, blob_in, name, dim_in, dim_out, kernel, **kwargs):
    """A convolution named ``name`` followed by an in-place ReLU."""
    conv = brew.conv(model, blob_in, name, dim_in, dim_out, kernel, XAVIER, CONSTANT, **kwargs)
    return brew.relu(model, conv, conv)


def _fc_relu(model, blob_in, name, dim_in, dim_out):
    fc = brew.fc(model, blob_in, name, dim_in, dim_out, XAVIER, CONSTANT)
    return brew.relu(model, fc, fc)


def _softmax_loss(model, logits):
    pred = brew.softmax(model, logits, "pred")
    xent = model.net.LabelCrossEntropy([pred, "label"], "xent")
    model.net.AveragedLoss(xent, "loss")
    return pred


def MLP(order, cudnn_ws):
    """Twenty layers of three parallel 256-wide FCs, summed, then a 1000-way FC.

    As upstream, the loss reads the FC output ``last`` directly (no softmax)."""
    model = model_helper.ModelHelper(name="MLP")
    d = 256
    depth = 20
    width = 3
    for i in range(depth):
        for j in range(width):
            current = "fc_{}_{}".format(i, j) if i > 0 else "data"
            next_ = "fc_{}_{}".format(i + 1, j)
            brew.fc(
                model,
                current,
                next_,
                dim_in=d,
                dim_out=d,
                weight_init=XAVIER,
                bias_init=XAVIER,
            )
    brew.sum(model, ["fc_{}_{}".format(depth, j) for j in range(width)], ["sum"])
    brew.fc(model, "sum", "last", dim_in=d, dim_out=1000, weight_init=XAVIER, bias_init=XAVIER)
    xent = model.net.LabelCrossEntropy(["last", "label"], "xent")
    model.net.AveragedLoss(xent, "loss")
    return model, d


def AlexNet(order, cudnn_ws):
    """AlexNet (the one-tower variant of Soumith's convnet-benchmarks), 224x224 inputs."""
    model = _model("alexnet", order, cudnn_ws)
    relu1 = _conv_relu(model, "data", "conv1", 3, 64, 11, stride=4, pad=2)
    pool1 = brew.max_pool(model, relu1, "pool1", kernel=3, stride=2)
    relu2 = _conv_relu(model, pool1, "conv2", 64, 192, 5, pad=2)
    pool2 = brew.max_pool(model, relu2, "pool2", kernel=3, stride=2)
    relu3 = _conv_relu(model, pool2, "conv3", 192, 384, 3, pad=1)
    relu4 = _conv_relu(model, relu3, "conv4", 384, 256, 3, pad=1)
    relu5 = _conv_relu(model, relu4, "conv5", 256, 256, 3, pad=1)
    pool5 = brew.max_pool(model, relu5, "pool5", kernel=3, stride=2)
    relu6 = _fc_relu(model, pool5, "fc6", 256 * 6 * 6, 4096)
    relu7 = _fc_relu(model, relu6, "fc7", 4096, 4096)
    fc8 = brew.fc(model, relu7, "fc8", 4096, 1000, XAVIER, CONSTANT)
    _softmax_loss(model, fc8)
    return model, 224


def OverFeat(order, cudnn_ws):
    """OverFeat (fast model), 231x231 inputs."""
    model = _model("overfeat", order, cudnn_ws)
    relu1 = _conv_relu(model, "data", "conv1", 3, 96, 11, stride=4)
    pool1 = brew.max_pool(model, relu1, "pool1", kernel=2, stride=2)
    relu2 = _conv_relu(model, pool1, "conv2", 96, 256, 5)
    pool2 = brew.max_pool(model, relu2, "pool2", kernel=2, stride=2)
    relu3 = _conv_relu(model, pool2, "conv3", 256, 512, 3, pad=1)
    relu4 = _conv_relu(model, relu3, "conv4", 512, 1024, 3, pad=1)
    relu5 = _conv_relu(model, relu4, "conv5", 1024, 1024, 3, pad=1)
    pool5 = brew.max_pool(model, relu5, "pool5", kernel=2, stride=2)
    relu6 = _fc_relu(model, pool5, "fc6", 1024 * 6 * 6, 3072)
    relu7 = _fc_relu(model, relu6, "fc7", 3072, 4096)
    fc8 = brew.fc(model, relu7, "fc8", 4096, 1000, XAVIER, CONSTANT)
    _softmax_loss(model, fc8)
    return model, 231


def VGGA(order, cudnn_ws):
    """VGG model A (eight 3x3 convolutions, three FCs), 231x231 inputs."""
    model = _model("vgga", order, cudnn_ws)
    relu1 = _conv_relu(model, "data", "conv1", 3, 64, 3, pad=1)
    pool1 = brew.max_pool(model, relu1, "pool1", kernel=2, stride=2)
    relu2 = _conv_relu(model, pool1, "conv2", 64, 128, 3, pad=1)
    pool2 = brew.max_pool(model, relu2, "pool2", kernel=2, stride=2)
    relu3 = _conv_relu(model, pool2, "conv3", 128, 256, 3, pad=1)
    relu4 = _conv_relu(model, relu3, "conv4", 256, 256, 3, pad=1)
    pool4 = brew.max_pool(model, relu4, "pool4", kernel=2, stride=2)
    relu5 = _conv_relu(model, pool4, "conv5", 256, 512, 3, pad=1)
    relu6 = _conv_relu(model, relu5, "conv6", 512, 512, 3, pad=1)
    pool6 = brew.max_pool(model, relu6, "pool6", kernel=2, stride=2)
    relu7 = _conv_relu(model, pool6, "conv7", 512, 512, 3, pad=1)
    relu8 = _conv_relu(model, relu7, "conv8", 512, 512, 3, pad=1)
    pool8 = brew.max_pool(model, relu8, "pool8", kernel=2, stride=2)
    relu_ix = _fc_relu(model, pool8, "fcix", 512 * 7 * 7, 4096)
    relu_x = _fc_relu(model, relu_ix, "fcx", 4096, 4096)
    fc_xi = brew.fc(model, relu_x, "fcxi", 4096, 1000, XAVIER, CONSTANT)
    _softmax_loss(model, fc_xi)
    return model, 231


def _InceptionModule(
    model, input_blob, input_depth, output_name, conv1_depth, conv3_depths, conv5_depths, pool_depth
):
    """GoogLeNet's inception module: 1x1, 1x1+3x3, 1x1+5x5 and 3x3-pool+1x1 paths, concatenated
    along the channels into ``output_name`` (``conv1_depth + conv3_depths[1] + conv5_depths[1] +
    pool_depth`` channels)."""
    conv1 = _conv_relu(model, input_blob, output_name + ":conv1", input_depth, conv1_depth, 1)
    conv3_reduce = _conv_relu(
        model, input_blob, output_name + ":conv3_reduce", input_depth, conv3_depths[0], 1
    )
    conv3 = _conv_relu(
        model, conv3_reduce, output_name + ":conv3", conv3_depths[0], conv3_depths[1], 3, pad=1
    )
    conv5_reduce = _conv_relu(
        model, input_blob, output_name + ":conv5_reduce", input_depth, conv5_depths[0], 1
    )
    conv5 = _conv_relu(
        model, conv5_reduce, output_name + ":conv5", conv5_depths[0], conv5_depths[1], 5, pad=2
    )
    pool = brew.max_pool(model, input_blob, output_name + ":pool", kernel=3, stride=1, pad=1)
    pool_proj = _conv_relu(model, pool, output_name + ":pool_proj", input_depth, pool_depth, 1)
    return brew.concat(model, [conv1, conv3, conv5, pool_proj], output_name)


def Inception(order, cudnn_ws):
    """GoogLeNet (Inception v1) without its auxiliary heads, 224x224 inputs.

    Like upstream, a softmax is added on top of the last FC so the net has a proper backward."""
    model = _model("inception", order, cudnn_ws)
    relu1 = _conv_relu(model, "data", "conv1", 3, 64, 7, stride=2, pad=3)
    pool1 = brew.max_pool(model, relu1, "pool1", kernel=3, stride=2, pad=1)
    conv2a = _conv_relu(model, pool1, "conv2a", 64, 64, 1)
    relu2 = _conv_relu(model, conv2a, "conv2", 64, 192, 3, pad=1)
    pool2 = brew.max_pool(model, relu2, "pool2", kernel=3, stride=2, pad=1)
    # (input depth, name, 1x1 depth, 3x3 depths, 5x5 depths, pool projection depth)
    inc3 = _InceptionModule(model, pool2, 192, "inc3", 64, [96, 128], [16, 32], 32)
    inc4 = _InceptionModule(model, inc3, 256, "inc4", 128, [128, 192], [32, 96], 64)
    pool5 = brew.max_pool(model, inc4, "pool5", kernel=3, stride=2, pad=1)
    inc5 = _InceptionModule(model, pool5, 480, "inc5", 192, [96, 208], [16, 48], 64)
    inc6 = _InceptionModule(model, inc5, 512, "inc6", 160, [112, 224], [24, 64], 64)
    inc7 = _InceptionModule(model, inc6, 512, "inc7", 128, [128, 256], [24, 64], 64)
    inc8 = _InceptionModule(model, inc7, 512, "inc8", 112, [144, 288], [32, 64], 64)
    inc9 = _InceptionModule(model, inc8, 528, "inc9", 256, [160, 320], [32, 128], 128)
    pool9 = brew.max_pool(model, inc9, "pool9", kernel=3, stride=2, pad=1)
    inc10 = _InceptionModule(model, pool9, 832, "inc10", 256, [160, 320], [32, 128], 128)
    inc11 = _InceptionModule(model, inc10, 832, "inc11", 384, [192, 384], [48, 128], 128)
    pool11 = brew.average_pool(model, inc11, "pool11", kernel=7, stride=1)
    fc = brew.fc(model, pool11, "fc", 1024, 1000, XAVIER, CONSTANT)
    _softmax_loss(model, fc)
    return model, 224


MODELS = {
    "AlexNet": AlexNet,
    "OverFeat": OverFeat,
    "VGGA": VGGA,
    "Inception": Inception,
    "MLP": MLP,
}
