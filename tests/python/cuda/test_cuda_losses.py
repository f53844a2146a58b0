"""Device checks of the CUDA loss and metric kernels (operators/loss/*_op.cu: SoftmaxWithLoss,
SpatialSoftmaxWithLoss, LabelCrossEntropy, CrossEntropy, AveragedLoss, Accuracy,
SquaredL2Distance and their gradients) against the CPU kernels: every argument, label layouts,
shapes past one block per row and past the grid cap, inputs fed on the host, the host-side errors,
a GPU net whose ops follow each other on the stream, and (GPU only) what a label out of range
does on the GPU: it makes the loss, the accuracy or the row's values NaN instead of raising."""
import numpy as np
import pytest

from caffe2.python import core, workspace

from cuda_test_util import CPU, check_cpu_gpu, check_gradient_cpu_gpu, gpu, gpu_semantics, needs_gpu

COVERED_OPS = [
    "SoftmaxWithLoss", "SoftmaxWithLossGradient", "SpatialSoftmaxWithLoss",
    "SpatialSoftmaxWithLossGradient", "LabelCrossEntropy", "LabelCrossEntropyGradient",
    "CrossEntropy", "CrossEntropyGradient", "AveragedLoss", "AveragedLossGradient", "Accuracy",
    "SquaredL2Distance", "SquaredL2DistanceGradient",
]

pytestmark = needs_gpu

# Rows past the grid cap of the row kernels (4096 blocks), so their grid-stride loops run.
MANY_ROWS = 5000


def rng(seed):
    return np.random.RandomState(seed)


def logits(r, *shape):
    return (r.randn(*shape) * 3).astype(np.float32)


def labels(r, n, classes, shape=None):
    return r.randint(0, classes, n).astype(np.int32).reshape(shape or (n,))


def probs(r, n, d):
    p = r.rand(n, d).astype(np.float64) + 0.1
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


def check_with_gradient(op, inputs, rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-6):
    out = check_cpu_gpu(op, inputs, rtol=rtol, atol=atol)
    check_gradient_cpu_gpu(op, inputs, rtol=grad_rtol, atol=grad_atol)
    return out


def run_on_gpu(op, inputs):
    workspace.ResetWorkspace()
    for name, value in zip(op.input, inputs):
        workspace.FeedBlob(name, value, gpu())
    op = core.CreateOperator(op.type, list(op.input), list(op.output), device_option=gpu(),
                             arg=list(op.arg))
    workspace.RunOperatorOnce(op)
    return [workspace.FetchBlob(name) for name in op.output]


# ---- SoftmaxWithLoss ----

@pytest.mark.parametrize("n,d", [(6, 7), (64, 1000), (3, 1), (MANY_ROWS, 3), (2, 4097)])
def test_softmax_with_loss_shapes(n, d):
    r = rng(0)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, n, d), labels(r, n, d)])
    assert loss.shape == ()


@pytest.mark.parametrize("label_shape", ["n", "n1"])
def test_softmax_with_loss_label_layouts(label_shape):
    r = rng(1)
    t = labels(r, 8, 5, (8,) if label_shape == "n" else (8, 1))
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    check_with_gradient(op, [logits(r, 8, 5), t])


@pytest.mark.parametrize("n,d", [(6, 7), (64, 1000)])
def test_softmax_with_loss_label_prob(n, d):
    r = rng(2)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
    check_with_gradient(op, [logits(r, n, d), probs(r, n, d)])


@pytest.mark.parametrize("label_prob", [0, 1])
def test_softmax_with_loss_weights_and_scale(label_prob):
    r = rng(3)
    t = probs(r, 9, 6) if label_prob else labels(r, 9, 6)
    w = r.uniform(0, 2, 9).astype(np.float32)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"], scale=0.25,
                             label_prob=label_prob)
    check_with_gradient(op, [logits(r, 9, 6), t, w])


def test_softmax_with_loss_weights_summing_to_zero_give_zero():
    r = rng(4)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"])
    inputs = [logits(r, 4, 3), labels(r, 4, 3), np.zeros(4, np.float32)]
    _, loss = check_with_gradient(op, inputs)
    assert loss == 0


@pytest.mark.parametrize("shape,axis", [((2, 3, 5), 2), ((2, 3, 5), -1), ((4, 3, 2), 1)])
def test_softmax_with_loss_axis(shape, axis):
    r = rng(5)
    n = int(np.prod(shape[:axis if axis >= 0 else axis + len(shape)]))
    d = int(np.prod(shape)) // n
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], axis=axis)
    check_with_gradient(op, [logits(r, *shape), labels(r, n, d)])


def test_softmax_with_loss_clamps_the_log_as_the_cpu():
    x = np.array([[0.0, 200.0, -200.0], [1.0, 2.0, 3.0]], np.float32)  # p[0][2] underflows to 0
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_cpu_gpu(op, [x, np.array([2, 0], np.int32)], rtol=1e-6, atol=1e-6)
    assert np.isfinite(loss)


def test_softmax_with_loss_gradient_op_with_inputs_on_the_host():
    r = rng(6)
    x = logits(r, 5, 4)
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    inputs = [x, labels(r, 5, 4), r.rand(5).astype(np.float32), p.astype(np.float32),
              np.array(1.5, np.float32)]
    op = core.CreateOperator("SoftmaxWithLossGradient", ["X", "T", "W", "P", "dLoss"], ["dX"], scale=2.0)
    check_cpu_gpu(op, inputs, rtol=1e-5, atol=1e-6,
                  input_device_options={"T": CPU, "W": CPU, "dLoss": CPU})


# ---- SpatialSoftmaxWithLoss ----

def spatial_labels(r, n, d, h, w, ignore_fraction=0.3):
    t = r.randint(0, d, (n, h, w)).astype(np.int32)
    t[r.rand(n, h, w) < ignore_fraction] = -1
    return t


@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (1, 21, 16, 16), (2, 2, 700, 800), (3, 1, 2, 3)])
def test_spatial_softmax_with_loss_ignores_minus_one(shape):
    r = rng(7)
    n, d, h, w = shape
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, *shape), spatial_labels(r, n, d, h, w)])
    assert loss.shape == ()


def test_spatial_softmax_with_loss_weights_and_scale():
    r = rng(8)
    w = r.uniform(0, 2, (2, 5, 6)).astype(np.float32)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"], scale=3.0)
    check_with_gradient(op, [logits(r, 2, 4, 5, 6), spatial_labels(r, 2, 4, 5, 6), w])


def test_spatial_softmax_with_loss_all_ignored_is_zero():
    r = rng(9)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    _, loss = check_with_gradient(op, [logits(r, 2, 3, 2, 2), np.full((2, 2, 2), -1, np.int32)])
    assert loss == 0


def test_spatial_softmax_with_loss_labels_on_the_host():
    r = rng(10)
    op = core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    check_cpu_gpu(op, [logits(r, 2, 3, 4, 4), spatial_labels(r, 2, 3, 4, 4)], input_device_options={"T": CPU})


# ---- LabelCrossEntropy, CrossEntropy ----

@pytest.mark.parametrize("n,d,label_shape", [(6, 4, None), (64, 1000, None), (5, 3, "n1"),
                                             (MANY_ROWS, 3, None)])
def test_label_cross_entropy(n, d, label_shape):
    r = rng(11)
    t = labels(r, n, d, (n, 1) if label_shape else None)
    check_with_gradient(core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"]), [probs(r, n, d), t])


def test_label_cross_entropy_of_one_row_and_of_zero_probability():
    r = rng(12)
    op = core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"])
    y, = check_with_gradient(op, [probs(r, 1, 5).reshape(5), np.array([3], np.int32)])
    assert y.shape == (1,)
    x = np.array([[0.0, 1.0], [0.5, 0.5]], np.float32)  # log(max(0, 1e-20))
    check_with_gradient(op, [x, np.array([0, 1], np.int32)], rtol=1e-5, grad_rtol=1e-5)


@pytest.mark.parametrize("shape", [(4, 3), (64, 1000), (MANY_ROWS, 3), (7,), (2, 4097)])
def test_cross_entropy(shape):
    r = rng(13)
    n, d = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
    x, t = probs(r, n, d).reshape(shape), probs(r, n, d).reshape(shape)
    check_with_gradient(core.CreateOperator("CrossEntropy", ["X", "L"], ["Y"]), [x, t])


# ---- AveragedLoss ----

@pytest.mark.parametrize("shape", [(5, 3), (1000003,), (), (2, 3, 4)])
def test_averaged_loss(shape):
    r = rng(14)
    x = np.asarray(r.randn(*shape), np.float32)
    loss, = check_with_gradient(core.CreateOperator("AveragedLoss", ["X"], ["loss"]), [x])
    assert loss.shape == ()


def test_averaged_loss_gradient_with_dloss_on_the_host():
    op = core.CreateOperator("AveragedLossGradient", ["X", "dLoss"], ["dX"])
    check_cpu_gpu(op, [np.zeros((3, 4), np.float32), np.array(6.0, np.float32)],
                  input_device_options={"dLoss": CPU})


# ---- Accuracy ----

@pytest.mark.parametrize("top_k", [1, 2, 5])
@pytest.mark.parametrize("n,d", [(8, 5), (64, 1000), (MANY_ROWS, 6)])
def test_accuracy_top_k(top_k, n, d):
    r = rng(15)
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=top_k)
    acc, = check_cpu_gpu(op, [logits(r, n, d), labels(r, n, d)], rtol=0, atol=0)
    assert acc.shape == ()


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_accuracy_ties_favour_the_lower_class(top_k):
    r = rng(16)
    p = r.randint(0, 3, (40, 6)).astype(np.float32)  # many equal scores
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=top_k)
    check_cpu_gpu(op, [p, labels(r, 40, 6, (40, 1))], rtol=0, atol=0)


def test_accuracy_of_no_rows_and_labels_on_the_host():
    op = core.CreateOperator("Accuracy", ["P", "L"], ["acc"], top_k=2)
    acc, = check_cpu_gpu(op, [np.zeros((0, 3), np.float32), np.zeros(0, np.int32)], rtol=0, atol=0)
    assert acc == 0
    r = rng(17)
    check_cpu_gpu(op, [logits(r, 9, 4), labels(r, 9, 4)], rtol=0, atol=0, input_device_options={"L": CPU})


# ---- SquaredL2Distance ----

@pytest.mark.parametrize("shape", [(4, 6), (64, 1000), (MANY_ROWS, 3), (7,), (2, 3, 4), (2, 4097)])
def test_squared_l2_distance(shape):
    r = rng(18)
    op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
    check_with_gradient(op, [logits(r, *shape), logits(r, *shape)])


def test_squared_l2_distance_of_empty_rows():
    op = core.CreateOperator("SquaredL2Distance", ["X", "Y"], ["Z"])
    z, = check_cpu_gpu(op, [np.zeros((3, 0), np.float32), np.zeros((3, 0), np.float32)])
    assert z.shape == (3,) and not z.any()


# ---- errors checked on the host (the same on the GPU as on the CPU) ----

@pytest.mark.parametrize("op_type,inputs,args,message", [
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.array([0, 4, 1], np.int32)], {},
     r"^\[SoftmaxWithLoss\] label 4 in row 1 is out of range \[0, 4\)"),
    ("SoftmaxWithLoss", [np.zeros((2, 2), np.float32), np.full((2, 2), 0.4, np.float32)], dict(label_prob=1),
     r"^\[SoftmaxWithLoss\] label_prob row 0 sums to 0.8"),
    ("SpatialSoftmaxWithLoss", [np.zeros((1, 3, 1, 2), np.float32), np.array([[[0, 3]]], np.int32)], {},
     r"^\[SpatialSoftmaxWithLoss\] label 3 at position 1 is out of range \[0, 3\)"),
    ("LabelCrossEntropy", [np.full((3, 4), 0.25, np.float32), np.array([0, 1, 9], np.int32)], {},
     r"^\[LabelCrossEntropy\] label 9 in row 2 is out of range \[0, 4\)"),
    ("Accuracy", [np.zeros((2, 3), np.float32), np.array([0, 3], np.int32)], {},
     r"^\[Accuracy\] label 3 in row 1 is out of range \[0, 3\)"),
])
def test_labels_fed_on_the_host_are_checked_as_on_the_cpu(op_type, inputs, args, message):
    names = ["i%d" % i for i in range(len(inputs))]
    op = core.CreateOperator(op_type, names, ["o0", "o1"][:2 if "Softmax" in op_type else 1],
                             device_option=gpu(), **args)
    workspace.ResetWorkspace()
    workspace.FeedBlob("i0", inputs[0], gpu())
    workspace.FeedBlob("i1", inputs[1], CPU)
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


@pytest.mark.parametrize("op_type,inputs,args,message", [
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.zeros(2, np.int32)], {},
     r"^\[SoftmaxWithLoss\] labels \(2,\) must hold one label per row of the 3 x 4 logits"),
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float16), np.zeros(3, np.int32)], {},
     r"^\[SoftmaxWithLoss\] logits must be float, got \S*float16"),
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.zeros(3, np.int32), np.zeros(2, np.float32)], {},
     r"^\[SoftmaxWithLoss\] weights \(2,\) must hold one float per row \(3\)"),
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)], dict(axis=2),
     r"^\[SoftmaxWithLoss\] axis 2 out of range for logits \(3, 4\)"),
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)], dict(order="NHWC"),
     r"^\[SoftmaxWithLoss\] only order NCHW is supported, got NHWC"),
    ("SoftmaxWithLoss", [np.zeros((3, 4), np.float32), np.zeros(3, np.int32)], dict(scale=-1.0),
     r"^\[SoftmaxWithLoss\] scale must be >= 0, got -1"),
    ("SpatialSoftmaxWithLoss", [np.zeros((1, 3, 2, 2), np.float32), np.zeros((1, 2, 3), np.int32)], {},
     r"^\[SpatialSoftmaxWithLoss\] labels must be int32 \(1, 2, 2\)"),
    ("LabelCrossEntropy", [np.zeros((3, 4), np.float32), np.zeros(3, np.int64)], {},
     r"^\[LabelCrossEntropy\] label must be int32, got (long|int64)"),
    ("CrossEntropy", [np.zeros((3, 4), np.float32), np.zeros((3, 3), np.float32)], {},
     r"^\[CrossEntropy\] label must be float and shaped like X \(3, 4\)"),
    ("AveragedLoss", [np.zeros((0, 2), np.float32)], {}, r"^\[AveragedLoss\] cannot average an empty tensor"),
    ("Accuracy", [np.zeros((2, 3), np.float32), np.zeros(2, np.int32)], dict(top_k=4),
     r"^\[Accuracy\] top_k 4 exceeds the number of classes 3"),
    ("Accuracy", [np.zeros((2, 3), np.float32), np.zeros(2, np.int32)], dict(top_k=0),
     r"^\[Accuracy\] top_k must be >= 1, got 0"),
    ("SquaredL2Distance", [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)], {},
     r"^\[SquaredL2Distance\] X \(2, 3\) and Y \(3, 2\) must have the same shape"),
])
def test_shape_and_type_errors_on_the_gpu(op_type, inputs, args, message):
    names = ["i%d" % i for i in range(len(inputs))]
    outputs = ["o0", "o1"] if "Softmax" in op_type else ["o0"]
    op = core.CreateOperator(op_type, names, outputs, device_option=gpu(), **args)
    workspace.ResetWorkspace()
    for name, value in zip(names, inputs):
        workspace.FeedBlob(name, value, gpu())
    with pytest.raises(RuntimeError, match=message):
        workspace.RunOperatorOnce(op)


def test_gradient_input_errors_on_the_gpu():
    workspace.ResetWorkspace()
    for name, value in [("X", np.zeros((3, 4), np.float32)), ("T", np.zeros(3, np.int32)),
                        ("P", np.zeros((3, 4), np.float32)), ("dL", np.zeros(2, np.float32))]:
        workspace.FeedBlob(name, value, gpu())
    op = core.CreateOperator("SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"], device_option=gpu())
    with pytest.raises(RuntimeError, match=r"^\[SoftmaxWithLossGradient\] dLoss must be one float"):
        workspace.RunOperatorOnce(op)
    op = core.CreateOperator("SquaredL2DistanceGradient", ["X", "X", "dL"], ["dX", "dY"], device_option=gpu())
    with pytest.raises(RuntimeError, match=r"^\[SquaredL2DistanceGradient\] dZ \(2,\) must hold 3 values"):
        workspace.RunOperatorOnce(op)


# ---- a GPU net: each op reads the previous one's outputs in stream order ----

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
        names = ["P", "sm_loss", "acc", "xent", "avg_xent", "soft_xent", "dist", "avg_dist", "X_grad",
                 "P_grad"]
        results.append({name: workspace.FetchBlob(name) for name in names})
    for name, expected in results[0].items():
        np.testing.assert_allclose(results[1][name], expected, rtol=1e-4, atol=1e-6, err_msg=name)


# ---- GPU only: labels on the GPU that are out of range poison instead of raising ----

@gpu_semantics
def test_bad_labels_on_the_gpu_make_the_softmax_loss_nan():
    r = rng(20)
    x, t = logits(r, 4, 5), np.array([1, 5, 0, 2], np.int32)
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"])
    p, loss = run_on_gpu(op, [x, t])
    assert np.isnan(loss)
    np.testing.assert_allclose(p, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    w = np.zeros(4, np.float32)  # NaN even though the weights sum to 0
    _, loss = run_on_gpu(core.CreateOperator("SoftmaxWithLoss", ["X", "T", "W"], ["P", "loss"]), [x, t, w])
    assert np.isnan(loss)
    grad = core.CreateOperator("SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"])
    dx, = run_on_gpu(grad, [x, t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[1]).all() and np.isfinite(np.delete(dx, 1, axis=0)).all()
    good = t.copy()
    good[1] = 0
    expected, = run_on_gpu(grad, [x, good, p, np.array(1.0, np.float32)])
    np.testing.assert_allclose(np.delete(dx, 1, axis=0), np.delete(expected, 1, axis=0), rtol=1e-6)


@gpu_semantics
def test_label_prob_rows_not_summing_to_one_on_the_gpu_make_the_loss_nan():
    r = rng(21)
    t = probs(r, 3, 4)
    t[2] *= 0.5
    op = core.CreateOperator("SoftmaxWithLoss", ["X", "T"], ["P", "loss"], label_prob=1)
    p, loss = run_on_gpu(op, [logits(r, 3, 4), t])
    assert np.isnan(loss)
    grad = core.CreateOperator("SoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"], label_prob=1)
    dx, = run_on_gpu(grad, [logits(r, 3, 4), t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[2]).all() and np.isfinite(dx[:2]).all()


@gpu_semantics
def test_bad_labels_on_the_gpu_in_the_other_ops():
    r = rng(22)
    x = logits(r, 1, 3, 2, 2)
    t = np.array([[[0, -1], [3, 1]]], np.int32)  # 3 is out of range, -1 is ignored
    p, loss = run_on_gpu(core.CreateOperator("SpatialSoftmaxWithLoss", ["X", "T"], ["P", "loss"]), [x, t])
    assert np.isnan(loss) and np.isfinite(p).all()
    grad = core.CreateOperator("SpatialSoftmaxWithLossGradient", ["X", "T", "P", "dL"], ["dX"])
    dx, = run_on_gpu(grad, [x, t, p, np.array(1.0, np.float32)])
    assert np.isnan(dx[0, :, 1, 0]).all() and (dx[0, :, 0, 1] == 0).all()
    assert np.isfinite(dx[0, :, 0, 0]).all() and np.isfinite(dx[0, :, 1, 1]).all()

    probs_x, labels_bad = probs(r, 3, 4), np.array([0, -2, 3], np.int32)
    y, = run_on_gpu(core.CreateOperator("LabelCrossEntropy", ["X", "L"], ["Y"]), [probs_x, labels_bad])
    assert np.isnan(y[1]) and np.isfinite(y[[0, 2]]).all()
    dx, = run_on_gpu(core.CreateOperator("LabelCrossEntropyGradient", ["X", "L", "dY"], ["dX"]),
                     [probs_x, labels_bad, np.ones(3, np.float32)])
    assert np.isnan(dx[1]).all() and np.isfinite(dx[[0, 2]]).all()

    acc, = run_on_gpu(core.CreateOperator("Accuracy", ["P", "L"], ["acc"]), [probs_x, np.array([0, 4, 1], np.int32)])
    assert np.isnan(acc)
