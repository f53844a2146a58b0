"""ResNet models built with brew (He et al., "Deep Residual Learning for
Image Recognition", 2015): ResNet-50 for 224x224 images and the CIFAR-style
ResNet for 32x32 images."""
from caffe2.python import brew

# (input filters of the first block, base filters, output filters, blocks)
_RESNET50_STAGES = [
    (64, 64, 256, 3),
    (256, 128, 512, 4),
    (512, 256, 1024, 6),
    (1024, 512, 2048, 3),
]


class ResNetBuilder(object):
    """Appends ResNet blocks to a model, starting from `prev_blob`.

    Blob names: `comp_<c>_conv_<i>`, `comp_<c>_spatbn_<i>`,
    `comp_<c>_sum_<i>`, `shortcut_projection_<c>[_spatbn]`, where c counts
    blocks and i the layers of a block.
    """

    def __init__(self, model, prev_blob, no_bias, is_test, spatial_bn_mom=0.9):
        self.model = model
        self.comp_count = 0
        self.comp_idx = 0
        self.prev_blob = prev_blob
        self.is_test = is_test
        self.spatial_bn_mom = spatial_bn_mom
        self.no_bias = 1 if no_bias else 0

    def add_conv(self, in_filters, out_filters, kernel, stride=1, pad=0):
        self.comp_idx += 1
        self.prev_blob = brew.conv(
            self.model,
            self.prev_blob,
            "comp_%d_conv_%d" % (self.comp_count, self.comp_idx),
            in_filters,
            out_filters,
            weight_init=("MSRAFill", {}),
            kernel=kernel,
            stride=stride,
            pad=pad,
            no_bias=self.no_bias,
        )
        return self.prev_blob

    def add_relu(self):
        self.prev_blob = brew.relu(self.model, self.prev_blob, self.prev_blob)  # in place
        return self.prev_blob

    def add_spatial_bn(self, num_filters):
        self.prev_blob = brew.spatial_bn(
            self.model,
            self.prev_blob,
            "comp_%d_spatbn_%d" % (self.comp_count, self.comp_idx),
            num_filters,
            epsilon=1e-3,
            momentum=self.spatial_bn_mom,
            is_test=self.is_test,
        )
        return self.prev_blob

    def _projection(
        self,
        shortcut_blob,
        input_filters,
        output_filters,
        down_sampling,
        spatial_batch_norm,
        bn_kwargs,
    ):
        name = "shortcut_projection_%d" % self.comp_count
        shortcut_blob = brew.conv(
            self.model,
            shortcut_blob,
            name,
            input_filters,
            output_filters,
            weight_init=("MSRAFill", {}),
            kernel=1,
            stride=(2 if down_sampling else 1),
            no_bias=self.no_bias,
        )
        if spatial_batch_norm:
            shortcut_blob = brew.spatial_bn(
                self.model,
                shortcut_blob,
                name + "_spatbn",
                output_filters,
                epsilon=1e-3,
                is_test=self.is_test,
                **bn_kwargs,
            )
        return shortcut_blob

    def _finish_block(self, shortcut_blob, last_conv):
        self.prev_blob = brew.sum(
            self.model,
            [shortcut_blob, last_conv],
            "comp_%d_sum_%d" % (self.comp_count, self.comp_idx),
        )
        self.comp_idx += 1
        self.add_relu()
        self.comp_count += 1

    def add_bottleneck(
        self,
        input_filters,
        base_filters,
        output_filters,
        down_sampling=False,
        spatial_batch_norm=True,
    ):
        """1x1 (reduce), 3x3 (stride 2 when down_sampling), 1x1 (expand),
        plus the shortcut, projected when the width grows."""
        self.comp_idx = 0
        shortcut_blob = self.prev_blob

        self.add_conv(input_filters, base_filters, kernel=1, stride=1)
        if spatial_batch_norm:
            self.add_spatial_bn(base_filters)
        self.add_relu()

        self.add_conv(
            base_filters, base_filters, kernel=3, stride=(2 if down_sampling else 1), pad=1
        )
        if spatial_batch_norm:
            self.add_spatial_bn(base_filters)
        self.add_relu()

        last_conv = self.add_conv(base_filters, output_filters, kernel=1)
        if spatial_batch_norm:
            last_conv = self.add_spatial_bn(output_filters)

        if output_filters > input_filters:
            shortcut_blob = self._projection(
                shortcut_blob,
                input_filters,
                output_filters,
                down_sampling,
                spatial_batch_norm,
                {"momentum": self.spatial_bn_mom},
            )
        self._finish_block(shortcut_blob, last_conv)

    def add_simple_block(
        self, input_filters, num_filters, down_sampling=False, spatial_batch_norm=True
    ):
        """Two 3x3 convolutions plus the shortcut (projected when the
        width changes)."""
        self.comp_idx = 0
        shortcut_blob = self.prev_blob

        self.add_conv(
            input_filters, num_filters, kernel=3, stride=(2 if down_sampling else 1), pad=1
        )
        if spatial_batch_norm:
            self.add_spatial_bn(num_filters)
        self.add_relu()

        last_conv = self.add_conv(num_filters, num_filters, kernel=3, pad=1)
        if spatial_batch_norm:
            last_conv = self.add_spatial_bn(num_filters)

        if num_filters != input_filters:
            shortcut_blob = self._projection(
                shortcut_blob, input_filters, num_filters, down_sampling, spatial_batch_norm, {}
            )
        self._finish_block(shortcut_blob, last_conv)


def create_resnet50(
    model,
    data,
    num_input_channels,
    num_labels,
    label=None,
    is_test=False,
    no_loss=False,
    no_bias=0,
    conv1_kernel=7,
    conv1_stride=2,
    final_avg_kernel=7,
):
    """ResNet-50. Returns the FC output `last_out_L<num_labels>` with
    no_loss, (softmax, loss) with a label, else the softmax."""
    conv_blob = brew.conv(
        model,
        data,
        "conv1",
        num_input_channels,
        64,
        weight_init=("MSRAFill", {}),
        kernel=conv1_kernel,
        stride=conv1_stride,
        pad=3,
        no_bias=no_bias,
    )
    bn_blob = brew.spatial_bn(
        model, conv_blob, "conv1_spatbn_relu", 64, epsilon=1e-3, momentum=0.1, is_test=is_test
    )
    relu_blob = brew.relu(model, bn_blob, bn_blob)
    max_pool = brew.max_pool(model, relu_blob, "pool1", kernel=3, stride=2)

    builder = ResNetBuilder(model, max_pool, no_bias=no_bias, is_test=is_test, spatial_bn_mom=0.1)
    for stage, (first_in, base, out, blocks) in enumerate(_RESNET50_STAGES):
        builder.add_bottleneck(first_in, base, out, down_sampling=stage > 0)
        for _ in range(1, blocks):
            builder.add_bottleneck(out, base, out)

    final_avg = brew.average_pool(
        model,
        builder.prev_blob,
        "final_avg",
        kernel=final_avg_kernel,
        stride=1,
        global_pooling=True,
    )
    last_out = brew.fc(model, final_avg, "last_out_L{}".format(num_labels), 2048, num_labels)
    if no_loss:
        return last_out
    if label is not None:
        (softmax, loss) = model.SoftmaxWithLoss([last_out, label], ["softmax", "loss"])
        return (softmax, loss)
    return brew.softmax(model, last_out, "softmax")


def create_resnet_32x32(model, data, num_input_channels, num_groups, num_labels, is_test=False):
    """The 6n+2-layer ResNet for 32x32 images (n = num_groups); returns
    the softmax."""
    brew.conv(model, data, "conv1", num_input_channels, 16, kernel=3, stride=1)
    brew.spatial_bn(model, "conv1", "conv1_spatbn", 16, epsilon=1e-3, is_test=is_test)
    brew.relu(model, "conv1_spatbn", "relu1")

    filters = [16, 32, 64]
    builder = ResNetBuilder(model, "relu1", no_bias=0, is_test=is_test)
    prev_filters = 16
    for group, width in enumerate(filters):
        for block in range(2 * num_groups):
            builder.add_simple_block(
                prev_filters if block == 0 else width,
                width,
                down_sampling=(block == 0 and group > 0),
            )
        prev_filters = width

    brew.average_pool(model, builder.prev_blob, "final_avg", kernel=8, stride=1)
    brew.fc(model, "final_avg", "last_out", 64, num_labels)
    return brew.softmax(model, "last_out", "softmax")
