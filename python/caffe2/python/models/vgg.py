"""Convolutional nets whose fully connected layers hold most of the parameters, as hybrid
parallelism (data_parallel_model's model_parallel_fc) is for: a small VGG-style net for 28x28 and
32x32 images, and AlexNet. Both end in the FC layers fc6, fc7 (ReLU after each) and fc8 (the
logits); the convolutions are data parallel in either case. No dropout: runs stay bit-for-bit
reproducible.

    logits = vgg.create_small_vgg(model, "data", num_input_channels=3, num_labels=10,
                                  image_size=32, fc_width=1024)
"""
from caffe2.python import brew

# (output channels, convolutions) per block; every block ends in a 2x2 max pooling.
SMALL_VGG_BLOCKS = [(32, 1), (64, 1), (128, 2)]


def _conv_relu(model, blob_in, name, dim_in, dim_out, kernel, stride=1, pad=None):
    pad = kernel // 2 if pad is None else pad
    brew.conv(model, blob_in, name, dim_in, dim_out, kernel=kernel, stride=stride, pad=pad)
    return brew.relu(model, name, name)


def _classifier(model, blob_in, dim_in, fc_width, num_labels):
    brew.fc(model, blob_in, "fc6", dim_in, fc_width)
    brew.relu(model, "fc6", "fc6_relu")
    brew.fc(model, "fc6_relu", "fc7", fc_width, fc_width)
    brew.relu(model, "fc7", "fc7_relu")
    return brew.fc(model, "fc7_relu", "fc8", fc_width, num_labels)


def create_small_vgg(model, data, num_input_channels, num_labels, image_size, fc_width=1024):
    """3x3 convolutions in blocks of SMALL_VGG_BLOCKS, each halving the image, then the
    classifier: fc6 (features -> fc_width), fc7 (fc_width -> fc_width), fc8 (-> num_labels)."""
    blob, channels, size = data, num_input_channels, image_size
    for block, (width, convs) in enumerate(SMALL_VGG_BLOCKS):
        for c in range(convs):
            blob = _conv_relu(model, blob, "conv{}_{}".format(block + 1, c + 1), channels, width, 3)
            channels = width
        blob = brew.max_pool(model, blob, "pool{}".format(block + 1), kernel=2, stride=2)
        size //= 2
    if size < 1:
        raise ValueError("create_small_vgg needs images of at least 8x8, got {}".format(image_size))
    return _classifier(model, blob, channels * size * size, fc_width, num_labels)


def _out(size, kernel, stride, pad=0):
    return (size + 2 * pad - kernel) // stride + 1


def create_alexnet(model, data, num_input_channels, num_labels, image_size=227, fc_width=4096):
    """AlexNet (one tower): conv1 96x11x11/4, pool, conv2 256x5x5, pool, conv3 384, conv4 384,
    conv5 256 (3x3), pool, fc6 (256 x 6 x 6 = 9216 -> 4096 at 227x227), fc7 4096, fc8."""
    _conv_relu(model, data, "conv1", num_input_channels, 96, 11, stride=4, pad=0)
    size = _out(image_size, 11, 4)
    brew.max_pool(model, "conv1", "pool1", kernel=3, stride=2)
    size = _out(size, 3, 2)
    _conv_relu(model, "pool1", "conv2", 96, 256, 5)
    brew.max_pool(model, "conv2", "pool2", kernel=3, stride=2)
    size = _out(size, 3, 2)
    _conv_relu(model, "pool2", "conv3", 256, 384, 3)
    _conv_relu(model, "conv3", "conv4", 384, 384, 3)
    _conv_relu(model, "conv4", "conv5", 384, 256, 3)
    brew.max_pool(model, "conv5", "pool5", kernel=3, stride=2)
    size = _out(size, 3, 2)
    if size < 1:
        raise ValueError("create_alexnet needs images of at least 67x67, got {}".format(image_size))
    return _classifier(model, "pool5", 256 * size * size, fc_width, num_labels)
