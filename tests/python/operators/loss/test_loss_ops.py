"""Device checks over the loss ops together: the errors checked on the host (the same on the GPU as
on the CPU), a GPU net of losses and their gradients whose ops follow each other on the stream,
and (GPU only) labels out of range on the GPU that make the loss, the accuracy or the row's
values NaN instead of raising. Each op's own checks are in its test_<op>.py."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from device_check import CPU, gpu, gpu_semantics, needs_gpu
from loss_inputs import labels, logits, probs, rng, run_on_gpu

COVERED_CUDA_OPS = [
    "SoftmaxWithLoss",
    "SoftmaxWithLossGradient",
    "SpatialSoftmaxWithLoss",
    "SpatialSoftmaxWithLossGradient",
    "LabelCrossEntropy",
    "LabelCrossEntropyGradient",
    "CrossEntropy",
    "CrossEntropyGradient",
    "AveragedLoss",
    "AveragedLossGradient",
    "Accuracy",
    "SquaredL2Distance",
    "SquaredL2DistanceGradient",
]


@needs_gpu
@pytest.mark.parametrize(
    "op_type,inputs,args,message",
    [
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.array([0, 4, 1], np.int32)],
            {},
            r"^\[SoftmaxWithLoss\] label 4 in row 1 is out of range \[0, 4\)",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((2, 2), np.float32), np.full((2, 2), 0.4, np.float32)],
            dict(label_prob=1),
            r"^\[SoftmaxWithLoss\] label_prob row 0 sums to 0.8",
        ),
        (
            "SpatialSoftmaxWithLoss",
            [np.zeros((1, 3, 1, 2), np.float32), np.array([[[0, 3]]], np.int32)],
            {},
            r"^\[SpatialSoftmaxWithLoss\] label 3 at position 1 is out of range \[0, 3\)",
        ),
        (
            "LabelCrossEntropy",
            [np.full((3, 4), 0.25, np.float32), np.array([0, 1, 9], np.int32)],
            {},
            r"^\[LabelCrossEntropy\] label 9 in row 2 is out of range \[0, 4\)",
        ),
        (
            "Accuracy",
            [np.zeros((2, 3), np.float32), np.array([0, 3], np.int32)],
            {},
            r"^\[Accuracy\] label 3 in row 1 is out of range \[0, 3\)",
        ),
    ],
)
def test_labels_fed_on_the_host_are_checked_as_on_the_cpu(op_type, inputs, args, message):
    names = ["i%d" % i for i in range(len(inputs))]
    op = core.CreateOperator(
        op_type,
        names,
        ["o0", "o1"][: 2 if "Softmax" in op_type else 1],
        device_option=gpu(),
        **args,
    )
    workspace.ResetWorkspace()
    workspace.FeedBlob("i0", inputs[0], gpu())
    workspace.FeedBlob("i1", inputs[1], CPU)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


@needs_gpu
@pytest.mark.parametrize(
    "op_type,inputs,args,message",
    [
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.zeros(2, np.int32)],
            {},
            r"^\[SoftmaxWithLoss\] labels \(2,\) must hold one label per row of the 3 x 4 logits",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float16), np.zeros(3, np.int32)],
            {},
            r"^\[SoftmaxWithLoss\] logits must be float, got \S*float16",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32), np.zeros(2, np.float32)],
            {},
            r"^\[SoftmaxWithLoss\] weights \(2,\) must hold one float per row \(3\)",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)],
            dict(axis=2),
            r"^\[SoftmaxWithLoss\] axis 2 out of range for logits \(3, 4\)",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)],
            dict(order="NHWC"),
            r"^\[SoftmaxWithLoss\] only order NCHW is supported, got NHWC",
        ),
        (
            "SoftmaxWithLoss",
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)],
            dict(scale=-1.0),
            r"^\[SoftmaxWithLoss\] scale must be >= 0, got -1",
        ),
        (
            "SpatialSoftmaxWithLoss",
            [np.zeros((1, 3, 2, 2), np.float32), np.zeros((1, 2, 3), np.int32)],
            {},
            r"^\[SpatialSoftmaxWithLoss\] labels must be int32 \(1, 2, 2\)",
        ),
        (
            "LabelCrossEntropy",
            [np.zeros((3, 4), np.float32), np.zeros(3, np.int64)],
            {},
            r"^\[LabelCrossEntropy\] label must be int32, got (long|int64)",
        ),
        (
            "CrossEntropy",
            [np.zeros((3, 4), np.float32), np.zeros((3, 3), np.float32)],
            {},
            r"^\[CrossEntropy\] label must be float and shaped like X \(3, 4\)",
        ),
        (
            "AveragedLoss",
            [np.zeros((0, 2), np.float32)],
            {},
            r"^\[AveragedLoss\] cannot average an empty tensor",
        ),
        (
            "Accuracy",
            [np.zeros((2, 3), np.float32), np.zeros(2, np.int32)],
            dict(top_k=4),
            r"^\[Accuracy\] top_k 4 exceeds the number of classes 3",
        ),
        (
            "Accuracy",
            [np.zeros((2, 3), np.float32), np.zeros(2, np.int32)],
            dict(top_k=0),
            r"^\[Accuracy\] top_k must be >= 1, got 0",
        ),
        (
            "SquaredL2Distance",
            [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)],
            {},
            r"^\[SquaredL2Distance\] X \(2, 3\) and Y \(3, 2\) must have the same shape",
        ),
    ],
)
def test_shape_and_type_errors_on_the_gpu(op_type, inputs, args, message):
    names = ["i%d" % i for i in range(len(inputs))]
    outputs = ["o0", "o1"] if "Softmax" in op_type else ["o0"]
    op = core.CreateOperator(op_type, names, outputs, device_option=gpu(), **args)
    workspace.ResetWorkspace()
    for name, value in zip(names, inputs):
        workspace.FeedBlob(name, value, gpu())
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


@needs_gpu
def test_gradient_input_errors_on_the_gpu():
    workspace.ResetWorkspace()
    for name, value in [
        ("X", np.zeros((3, 4), np.float32)),
        ("T", np.zeros(3, np.int32)),
        ("P", np.zeros((3, 4), np.float32)),
        ("dL", np.zeros(2, np.float32)),
    ]:
        workspace.FeedBlob(name, value, gpu())
    op = core.CreateOperator(
        "SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"], device_option=gpu()
    )
    with pytest.raises(RuntimeError, match=r"^\[SoftmaxWithLossGradient\] dLoss must be one float"):
        workspace.RunOperatorOnce(op)
    op = core.CreateOperator(
        "SquaredL2DistanceGradient", ["X", "X", "dL"], ["dX", "dY"], device_option=gpu()
    )
    with pytest.raises(
        RuntimeError, match=r"^\[SquaredL2DistanceGradient\] dZ \(2,\) must hold 3 values"
    ):
        workspace.RunOperatorOnce(op)


def loss_net(device_option):
    net = core.Net("losses")
    net.Proto().device_option.CopyFrom(device_option)
    net.SoftmaxWithLoss(["X", "T"], ["P", "sm_loss"], scale=0.5)
    net.Accuracy(["P", "T"], ["acc"], top_k=3)
    net.LabelCrossEntropy(["P", "T"], ["xent"])
    net.AveragedLoss(["xent"], ["avg_xent"])
    net.CrossEntropy(["P", "Q"], ["soft_xent"])
    net.SquaredL2Distance(["P", "Q"], ["dist"])
    net.AveragedLoss(["dist"], ["avg_dist"])
    net.AddGradientOperators(["sm_loss", "avg_xent", "avg_dist"])
    return net


@needs_gpu
def test_a_gpu_net_of_losses_and_their_gradients_matches_the_cpu():
    r = rng(19)
    feeds = {"X": logits(r, 32, 10), "T": labels(r, 32, 10), "Q": probs(r, 32, 10)}
    results = []
    for device_option in (CPU, gpu()):
        net = loss_net(device_option)
        workspace.ResetWorkspace()
        for name, value in feeds.items():
            workspace.FeedBlob(name, value, device_option)
        workspace.RunNetOnce(net)
        names = [
            "P",
            "sm_loss",
            "acc",
            "xent",
            "avg_xent",
            "soft_xent",
            "dist",
            "avg_dist",
            "X_grad",
            "P_grad",
        ]
        results.append({name: workspace.FetchBlob(name) for name in names})
    for name, expected in results[0].items():
        np.testing.assert_allclose(results[1][name], expected, rtol=1e-4, atol=1e-6, err_msg=name)


@needs_gpu
@gpu_semantics
def test_bad_labels_on_the_gpu_in_the_other_ops():
    r = rng(22)
    x = logits(r, 1, 3, 2, 2)
    t = np.array([[[0, -1], [3, 1]]], np.int32)  # 3 is out of range, -1 is ignored
    p, loss = run_on_gpu(
        core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"]), [x, t]
    )
    assert np.isnan(loss) and np.isfinite(p).all()
    grad = core.CreateOperator("SpatialSoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"])
    (dx,) = run_on_gpu(grad, [x, t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[0, :, 1, 0]).all() and (dx[0, :, 0, 1] == 0).all()
    assert np.isfinite(dx[0, :, 0, 0]).all() and np.isfinite(dx[0, :, 1, 1]).all()

    probs_x, labels_bad = probs(r, 3, 4), np.array([0, -2, 3], np.int32)
    (y,) = run_on_gpu(
        core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"]), [probs_x, labels_bad]
    )
    assert np.isnan(y[1]) and np.isfinite(y[[0, 2]]).all()
    (dx,) = run_on_gpu(
        core.CreateOperator("LabelCrossEntropyGradient", ["X", "L", "dY"], ["dX"]),
        [probs_x, labels_bad, np.ones(3, np.float32)],
    )
    assert np.isnan(dx[1]).all() and np.isfinite(dx[[0, 2]]).all()

    (acc,) = run_on_gpu(
        core.CreateOperator("Accuracy", ["P", "L"], ["acc"]),
        [probs_x, np.array([0, 4, 1], np.int32)],
    )
    assert np.isnan(acc)
