"""brew: helper registry, arg_scope merging and forwarding, the ops and
parameters each helper emits.

Helpers whose operators are not built yet are checked on the NetDef they
produce, with those op types registered in Python only for the test
(`pretend_registered`); the runs at the end need the real operators and
skip themselves until they exist."""

import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.modeling.parameter_info import ParameterTags
from op_registry_util import pretend_registered


def args(op):
    out = {}
    for a in op.arg:
        if a.HasField("f"):
            out[a.name] = round(a.f, 6)  # stored as float32
        elif a.HasField("i"):
            out[a.name] = a.i
        elif a.HasField("s"):
            out[a.name] = a.s.decode()
        else:
            out[a.name] = list(a.ints) or list(a.floats) or list(a.strings)
    return out


def last_op(model):
    return model.net.Proto().op[-1]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


CONST = ("ConstantFill", {"value": 0.5})


def test_registry_and_wrappers():
    for name in [
        "arg_scope",
        "fc",
        "conv",
        "conv_nd",
        "conv_transpose",
        "group_conv",
        "group_conv_deprecated",
        "packed_fc",
        "dropout",
        "max_pool",
        "average_pool",
        "lrn",
        "softmax",
        "spatial_bn",
        "instance_norm",
        "layer_norm",
        "relu",
        "prelu",
        "tanh",
        "concat",
        "depth_concat",
        "sum",
        "transpose",
        "iter",
        "accuracy",
        "add_weight_decay",
        "elementwise_linear",
        "image_input",
        "db_input",
        "video_input",
        "batch_mat_mul",
        "max_pool_with_index",
        "fc_decomp",
        "fc_prune",
        "fc_sparse",
        "cond",
        "loop",
    ]:
        assert brew.has_helper(name), name
        assert getattr(brew, name).__name__ == name
    assert brew.has_helper(brew.fc)


def test_unknown_helper_is_a_clear_error():
    with pytest.raises(AttributeError, match="not registered in brew"):
        brew.no_such_helper


def test_register_custom_helper_once():
    def my_custom_helper(model, x, **kwargs):
        return model.net.Copy(x, "copied", **kwargs)

    if not brew.has_helper("my_custom_helper"):
        brew.Register(my_custom_helper)
    with pytest.raises(AttributeError, match="already exists"):
        brew.Register(my_custom_helper)
    model = model_helper.ModelHelper(name="custom")
    brew.my_custom_helper(model, "x")
    assert last_op(model).type == "Copy"


def test_helper_needs_a_model():
    with pytest.raises(RuntimeError, match="must be a ModelHelper"):
        brew.fc("not a model", "x", "y", 1, 1)
    model = model_helper.ModelHelper(name="kw")
    brew.fc(model=model, blob_in="x", blob_out="y", dim_in=1, dim_out=1, weight_init=CONST)
    assert last_op(model).type == "FC"


def test_fc_params_blob_names_and_forwarded_arg_scope():
    model = model_helper.ModelHelper(name="fc")
    with core.NameScope("s"):
        out = brew.fc(model, "data", "fc1", dim_in=4, dim_out=3, weight_init=CONST, axis=1)
    assert str(out) == "s/fc1"
    op = last_op(model)
    assert list(op.input) == ["s/data", "s/fc1_w", "s/fc1_b"]
    # Helpers with **kwargs receive the model's arg scope.
    assert args(op) == {"order": "NCHW", "use_cudnn": 1, "cudnn_exhaustive_search": 0, "axis": 1}
    init = model.param_init_net.Proto().op
    assert [(o.type, list(o.output)) for o in init] == [
        ("ConstantFill", ["s/fc1_w"]),
        ("ConstantFill", ["s/fc1_b"]),
    ]
    assert args(init[0])["shape"] == [3, 4]
    assert args(init[1])["shape"] == [3]
    assert [str(w) for w in model.weights] == ["s/fc1_w"]
    assert [str(b) for b in model.biases] == ["s/fc1_b"]


def test_fc_default_initializers_and_tensor_core():
    with pretend_registered("XavierFill"):
        model = model_helper.ModelHelper(name="fcx")
        brew.fc(model, "x", "y", 2, 2, enable_tensor_core=True, float16_compute=True)
    assert model.param_init_net.Proto().op[0].type == "XavierFill"
    op = last_op(model)
    assert op.engine == "TENSORCORE" and args(op)["float16_compute"] == 1


def test_fc_freeze_bias_is_computed_param():
    model = model_helper.ModelHelper(name="freeze")
    brew.fc(model, "x", "y", 2, 2, weight_init=CONST, freeze_bias=1)
    assert [str(p) for p in model.params] == ["y_w"]
    assert [str(p) for p in model.GetComputedParams("")] == ["y_b"]


def test_arg_scope_merges_and_restores():
    model = model_helper.ModelHelper(name="scope")
    with brew.arg_scope([brew.fc], weight_init=CONST, axis=2):
        with brew.arg_scope(brew.fc, axis=3):
            brew.fc(model, "x", "a", 1, 1)
            assert args(last_op(model))["axis"] == 3
        brew.fc(model, "x", "b", 1, 1)
        assert args(last_op(model))["axis"] == 2
        brew.fc(model, "x", "c", 1, 1, axis=4)  # explicit wins
        assert args(last_op(model))["axis"] == 4
    assert brew.arg_scope is not None
    from caffe2.python.helpers.arg_scope import get_current_scope

    assert get_current_scope() == {}


def test_arg_scope_restored_after_exception():
    from caffe2.python.helpers.arg_scope import get_current_scope

    with pytest.raises(ValueError):
        with brew.arg_scope([brew.fc], axis=2):
            raise ValueError("boom")
    assert get_current_scope() == {}


def test_helper_without_kwargs_only_gets_named_keys():
    def strict_helper(model, blob_in, blob_out, order="NCHW"):
        return model.net.Copy(blob_in, blob_out), order

    if not brew.has_helper("strict_helper"):
        brew.Register(strict_helper)
    model = model_helper.ModelHelper(name="strict", arg_scope={"order": "NHWC"})
    _, order = brew.strict_helper(model, "x", "y")
    assert order == "NHWC"  # use_cudnn etc. were dropped, no TypeError


def test_conv_blob_names_shapes_and_cudnn_args():
    with pretend_registered("Conv", "XavierFill"):
        model = model_helper.ModelHelper(
            name="conv", arg_scope={"ws_nbytes_limit": 1024, "cudnn_exhaustive_search": True}
        )
        brew.conv(model, "data", "conv1", 3, 16, 5, stride=2, pad=1)
        nhwc = model_helper.ModelHelper(name="nhwc", arg_scope={"order": "NHWC"})
        brew.conv(nhwc, "data", "c", 4, 8, [3, 5], group=2, no_bias=1, use_cudnn=False)
        with pytest.raises(ValueError, match="use_cudnn=True"):
            brew.conv(model, "data", "bad", 3, 3, 1, engine="NNPACK")
    op = last_op(model)
    assert (op.type, list(op.input)) == ("Conv", ["data", "conv1_w", "conv1_b"])
    assert op.engine == "CUDNN"
    a = args(op)
    assert a["kernel"] == 5 and a["order"] == "NCHW" and a["stride"] == 2
    assert a["exhaustive_search"] == 1 and a["ws_nbytes_limit"] == 1024
    assert "group" not in a
    assert args(model.param_init_net.Proto().op[0])["shape"] == [16, 3, 5, 5]

    op = last_op(nhwc)
    assert list(op.input) == ["data", "c_w"] and op.engine == ""
    a = args(op)
    assert (a["kernel_h"], a["kernel_w"], a["group"]) == (3, 5, 2)
    assert args(nhwc.param_init_net.Proto().op[0])["shape"] == [8, 3, 5, 2]


def test_conv_nd_transpose_and_group_deprecated():
    with pretend_registered("Conv", "ConvTranspose", "DepthSplit", "Concat", "XavierFill"):
        model = model_helper.ModelHelper(name="cnd")
        brew.conv_nd(model, "x", "c3", 2, 4, [3, 3, 3])
        assert args(last_op(model))["kernels"] == [3, 3, 3]
        brew.conv_transpose(model, "x", "ct", 2, 4, 3)
        assert last_op(model).type == "ConvTranspose"
        assert args(model.param_init_net.Proto().op[-2])["shape"] == [2, 4, 3, 3]
        out = brew.group_conv_deprecated(model, "x", "g", 4, 4, 3, group=2)
        assert str(out) == "g"
        types = [o.type for o in model.net.Proto().op[-4:]]
        assert types == ["DepthSplit", "Conv", "Conv", "Concat"]
        with pytest.raises(ValueError, match="divisible"):
            brew.group_conv_deprecated(model, "x", "h", 3, 4, 3, group=2)


def test_spatial_bn_params_and_outputs():
    with pretend_registered("SpatialBN"):
        model = model_helper.ModelHelper(name="bn")
        out = brew.spatial_bn(model, "x", "bn", 8, epsilon=1e-3, momentum=0.1, is_test=False)
        test_model = model_helper.ModelHelper(name="bnt")
        brew.spatial_bn(test_model, "x", "bn", 8, is_test=True)
    assert str(out) == "bn"
    op = last_op(model)
    assert list(op.input) == ["x", "bn_s", "bn_b", "bn_rm", "bn_riv"]
    assert list(op.output) == ["bn", "bn_rm", "bn_riv", "bn_sm", "bn_siv"]
    assert args(op)["order"] == "NCHW" and args(op)["is_test"] == 0
    assert [str(p) for p in model.params] == ["bn_s", "bn_b"]
    assert [str(p) for p in model.GetComputedParams("")] == ["bn_rm", "bn_riv"]
    values = [args(o)["value"] for o in model.param_init_net.Proto().op]
    assert values == [1.0, 0.0, 0.0, 1.0]
    assert list(last_op(test_model).output) == ["bn"]


def test_activation_pool_softmax_ops():
    with pretend_registered(
        "Relu",
        "Tanh",
        "MaxPool",
        "AveragePool",
        "Softmax",
        "PRelu",
        "Transpose",
        "LRN",
        "Dropout",
        "MaxPoolWithIndex",
        "Accuracy",
    ):
        model = model_helper.ModelHelper(name="act")
        brew.relu(model, "x", "x")
        assert last_op(model).engine == "CUDNN"
        assert list(last_op(model).output) == ["x"]
        brew.tanh(model, "x", "t", use_cudnn=False)
        assert last_op(model).engine == ""
        brew.max_pool(model, "x", "p", kernel=2, stride=2)
        assert args(last_op(model))["kernel"] == 2
        brew.average_pool(model, "x", "a", kernel=7, global_pooling=True)
        assert args(last_op(model))["global_pooling"] == 1
        brew.softmax(model, "x", "sm")
        assert last_op(model).type == "Softmax"
        brew.prelu(model, "x", "pr", num_channels=4)
        assert list(last_op(model).input) == ["x", "pr_slope"]
        brew.transpose(model, "x", "tr", axes=[1, 0])
        lrn = brew.lrn(model, "x", "l", size=5, use_cudnn=False)
        assert str(lrn) == "l"
        assert list(last_op(model).output) == ["l", "_l_scale"]
        d = brew.dropout(model, "x", "d", ratio=0.5, is_test=0)
        assert str(d) == "d"
        assert list(last_op(model).output) == ["d", "_d_mask"]
        with pytest.raises(ValueError, match="is_test"):
            brew.dropout(model, "x", "d2")
        brew.max_pool_with_index(model, "x", "mpi", kernel=2)
        assert list(last_op(model).output) == ["mpi", "mpi_index"]
        brew.accuracy(model, ["sm", "label"], "acc", top_k=1)
        assert last_op(model).type == "Accuracy"
        assert len(last_op(model).arg) == 0


def test_concat_sum_elementwise_linear_layer_norm():
    with pretend_registered("Concat", "ElementwiseLinear", "LayerNorm", "Mul", "Add"):
        model = model_helper.ModelHelper(name="misc")
        c = brew.concat(model, ["a", "b"], "c", axis=1)
        assert str(c) == "c"
        op = last_op(model)
        assert list(op.output) == ["c", "_c_concat_dims"]
        assert "order" not in args(op) and args(op)["axis"] == 1
        brew.depth_concat(model, ["a", "b"], "dc")
        assert args(last_op(model))["order"] == "NCHW"
        s = brew.sum(model, ["a", "b"], "s")
        assert str(s) == "s" and last_op(model).type == "Sum"
        brew.elementwise_linear(model, "x", "el", 4)
        assert list(last_op(model).input) == ["x", "el_w", "el_b"]
        out, mean, std = brew.layer_norm(model, "x", "ln", 4)
        assert str(out) == "ln_biased"
        assert [o.type for o in model.net.Proto().op[-3:]] == ["LayerNorm", "Mul", "Add"]


def test_image_input_nchw_cpu_adds_nhwc2nchw():
    with pretend_registered("ImageInput", "NHWC2NCHW"):
        model = model_helper.ModelHelper(name="img")
        with core.NameScope("gpu_0"):
            data, label = brew.image_input(
                model, "reader", ["data", "label"], batch_size=4, is_test=False, crop=8
            )
    ops = model.net.Proto().op
    assert list(ops[0].output) == ["gpu_0/data_nhwc", "gpu_0/label"]
    # The model's arg scope leaks into ImageInput's arguments.
    assert args(ops[0])["use_cudnn"] == 1
    assert (ops[1].type, list(ops[1].output)) == ("NHWC2NCHW", ["gpu_0/data"])
    assert str(data) == "gpu_0/data"
    with pytest.raises(AssertionError, match="is_test"):
        brew.image_input(model, "reader", ["d", "l"])


def test_iter_and_add_weight_decay_run():
    model = model_helper.ModelHelper(name="train")
    with core.NameScope("s"):
        it = brew.iter(model, "iter")
        fc = brew.fc(model, "data", "fc", 2, 1, weight_init=CONST)
        loss = model.AveragedLoss(fc, "loss")
    model.AddGradientOperators([loss])
    with core.NameScope("s"):
        brew.add_weight_decay(model, 0.1)
        brew.add_weight_decay(model, 0.0)  # no-op
    init = model.param_init_net.Proto().op
    assert init[0].device_option.device_type == 0
    assert args(init[0])["dtype"] == core.DataType.INT64
    assert [list(o.output)[0] for o in init][-2:] == ["s/wd", "s/ONE"]
    ws_op = last_op(model)
    assert (ws_op.type, list(ws_op.input)) == (
        "WeightedSum",
        ["s/fc_w_grad", "s/ONE", "s/fc_w", "s/wd"],
    )
    workspace.FeedBlob("s/data", np.ones((2, 2), np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.CreateNet(model.net)
    workspace.RunNet(model.net, 3)
    assert workspace.FetchBlob(str(it)).tolist() == [3]
    # grad = 2 rows x 0.5 (AveragedLoss) + 0.1 * 0.5
    np.testing.assert_allclose(workspace.FetchBlob("s/fc_w_grad"), [[1.05, 1.05]], rtol=1e-6)


def test_db_input_and_tensor_protos():
    with pretend_registered("TensorProtosDBInput"):
        model = model_helper.ModelHelper(name="dbin")
        brew.db_input(model, ["d", "l"], batch_size=2, db="x.db", db_type="minidb")
    assert list(model.param_init_net.Proto().op[0].output) == ["dbreader_x.db"]
    op = last_op(model)
    assert (op.type, list(op.input)) == ("TensorProtosDBInput", ["dbreader_x.db"])


def test_parameter_tags_constants():
    assert (ParameterTags.WEIGHT, ParameterTags.BIAS, ParameterTags.COMPUTED_PARAM) == (
        "WEIGHT",
        "BIAS",
        "COMPUTED_PARAM",
    )


needs_conv = pytest.mark.skipif(
    not workspace.C.OpSchema.get("Conv"), reason="needs the Conv operator"
)
needs_bn = pytest.mark.skipif(
    not workspace.C.OpSchema.get("SpatialBN"), reason="needs the SpatialBN operator"
)


@needs_conv
def test_conv_relu_pool_net_runs_and_has_gradients():
    model = model_helper.ModelHelper(name="run_conv")
    conv = brew.conv(model, "data", "conv", 2, 4, 3, pad=1)
    relu = brew.relu(model, conv, conv)
    pool = brew.max_pool(model, relu, "pool", kernel=2, stride=2)
    fc = brew.fc(model, pool, "fc", 4 * 2 * 2, 3)
    loss = model.AveragedLoss(fc, "loss")
    model.AddGradientOperators([loss])
    workspace.FeedBlob("data", np.random.rand(2, 2, 4, 4).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("conv_w_grad").shape == (4, 2, 3, 3)


@needs_bn
def test_spatial_bn_net_runs():
    model = model_helper.ModelHelper(name="run_bn")
    brew.spatial_bn(model, "data", "bn", 3, epsilon=1e-3, is_test=False)
    workspace.FeedBlob("data", np.random.rand(2, 3, 4, 4).astype(np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    out = workspace.FetchBlob("bn")
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-4)
