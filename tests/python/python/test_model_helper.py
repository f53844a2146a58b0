"""model_helper.ModelHelper: nets, parameter bookkeeping, gradients,
operator access and ExtractPredictorNet."""
import logging

import numpy as np
import pytest

from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.modeling import initializers
from caffe2.python.modeling.parameter_info import ParameterTags
from caffe2.python.modeling.parameter_sharing import ParameterSharing


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def const(value):
    return ("ConstantFill", {"value": value})


def test_defaults():
    model = model_helper.ModelHelper()
    assert model.name == "model"
    assert model.net.Proto().name.startswith("model")
    assert model.param_init_net.Proto().name.startswith("model_init")
    assert model.arg_scope == {"order": "NCHW", "use_cudnn": True, "cudnn_exhaustive_search": False}
    assert model.params == [] and model.param_to_grad == {}
    assert model.gradient_ops_added is False
    assert model.get_name() == "model"
    model = model_helper.ModelHelper(name="m", arg_scope={"order": "NHWC"})
    assert model.arg_scope["order"] == "NHWC"
    assert model.Proto() is model.net.Proto()
    assert model.InitProto() is model.param_init_net.Proto()


def test_create_param_is_scoped_tagged_and_idempotent():
    model = model_helper.ModelHelper(name="p")
    init = initializers.Initializer("ConstantFill", value=2.0)
    with core.NameScope("a"):
        w = model.create_param("w", [2, 3], init, tags=ParameterTags.WEIGHT)
        again = model.create_param("w", [2, 3], init)
    assert str(w) == "a/w" and again == w
    assert model.params == [w] and model.weights == [w]
    op = model.param_init_net.Proto().op[0]
    assert (op.type, list(op.output)) == ("ConstantFill", ["a/w"])
    with core.NameScope("a"):
        with pytest.raises(AssertionError, match="shape"):
            model.create_param("w", [3, 3], init)
    info = model.get_param_info(w)
    assert info.shape == [2, 3] and info.size == 6
    b = model.create_param("b", [2], init, tags=[ParameterTags.BIAS, ParameterTags.COMPUTED_PARAM])
    assert model.biases == [b] and model.GetComputedParams("") == [b]
    assert b not in model.params


def test_get_params_by_namescope():
    model = model_helper.ModelHelper(name="ns")
    for scope_name in ["x", "x/y", "z"]:
        with core.NameScope(scope_name):
            brew.fc(model, "in", "fc", 2, 2, weight_init=const(1.0))
    names = lambda ps: sorted(str(p) for p in ps)
    assert len(model.GetParams("")) == 6
    assert names(model.GetParams("x")) == ["x/fc_b", "x/fc_w", "x/y/fc_b", "x/y/fc_w"]
    assert names(model.GetParams("x/y/")) == ["x/y/fc_b", "x/y/fc_w"]
    with core.NameScope("z"):
        assert names(model.GetParams()) == ["z/fc_b", "z/fc_w"]
    assert names(model.GetAllParams("z")) == ["z/fc_b", "z/fc_w"]


def test_parameter_sharing():
    model = model_helper.ModelHelper(name="share")
    with core.NameScope("global"):
        with ParameterSharing({"b": "a"}):
            with core.NameScope("a"):
                w_a = brew.fc(model, "x", "fc", 2, 2, weight_init=const(1.0))
            with core.NameScope("b"):
                w_b = brew.fc(model, "x", "fc", 2, 2, weight_init=const(1.0))
    assert str(w_a) == "global/a/fc" and str(w_b) == "global/b/fc"
    assert sorted(str(p) for p in model.params) == ["global/a/fc_b", "global/a/fc_w"]
    assert list(model.net.Proto().op[1].input)[1] == "global/a/fc_w"


def test_add_gradient_operators_and_param_to_grad():
    model = model_helper.ModelHelper(name="g")
    fc = brew.fc(model, "data", "fc", 3, 2, weight_init=const(0.5))
    loss = model.AveragedLoss(fc, "loss")
    grad_map = model.AddGradientOperators([loss])
    assert model.gradient_ops_added
    assert grad_map["fc_w"] == "fc_w_grad"
    assert {str(k): str(v) for k, v in model.param_to_grad.items()} == {
        "fc_w": "fc_w_grad",
        "fc_b": "fc_b_grad",
    }
    infos = model.GetOptimizationParamInfo()
    assert sorted(str(i.grad) for i in infos) == ["fc_b_grad", "fc_w_grad"]
    assert all(i.grad_type() == "dense" for i in infos)

    workspace.FeedBlob("data", np.ones((4, 3), np.float32))
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    np.testing.assert_allclose(workspace.FetchBlob("fc_w_grad"), np.full((2, 3), 0.5, np.float32))


def test_add_gradient_operators_twice_raises():
    model = model_helper.ModelHelper(name="twice")
    loss = model.AveragedLoss(brew.fc(model, "d", "fc", 1, 1, weight_init=const(1.0)), "loss")
    model.AddGradientOperators([loss])
    with pytest.raises(RuntimeError, match="AddGradientOperators twice"):
        model.AddGradientOperators([loss])


def test_duplicate_params_are_rejected():
    model = model_helper.ModelHelper(name="dup")
    fc = brew.fc(model, "d", "fc", 1, 1, weight_init=const(1.0))
    model.AddParameter(model.params[0])
    assert model._Validate() == ["fc_w"]
    with pytest.raises(AssertionError, match="Duplicate params.*fc_w"):
        model.AddGradientOperators([model.AveragedLoss(fc, "loss")])
    assert not model.gradient_ops_added


def test_getattr_operators():
    model = model_helper.ModelHelper(name="ops")
    out = model.Copy("x", "y")
    assert str(out) == "y" and model.net.Proto().op[0].type == "Copy"
    with pytest.raises(AttributeError, match="not a registered operator"):
        model.NoSuchOperatorAnywhere
    with pytest.raises(AttributeError):
        model.__deepcopy_something__
    strict = model_helper.ModelHelper(name="s", allow_not_known_ops=False)
    with pytest.raises(AttributeError, match="not known to be safe"):
        strict.FC
    assert strict.Copy is not None


def test_unknown_op_warns(caplog):
    model = model_helper.ModelHelper(name="warn")
    with caplog.at_level(logging.WARNING):
        model.FC("x", "y")
    assert "does not recognize: FC" in caplog.text


def test_create_db_and_param_model():
    model = model_helper.ModelHelper(name="db")
    with core.NameScope("s"):
        reader = model.CreateDB("reader", db="/tmp/x", db_type="minidb")
    assert str(reader) == "s/reader"
    op = model.param_init_net.Proto().op[0]
    assert op.type == "CreateDB" and op.arg[0].name == "db"
    shared = model_helper.ModelHelper(name="other", param_model=model)
    assert shared.param_init_net is model.param_init_net
    assert shared.params is model.params
    with pytest.raises(AssertionError, match="data_parallel_model"):
        model.GetDevices()


def test_init_params_false_uses_external_params():
    model = model_helper.ModelHelper(name="ext", init_params=False)
    brew.fc(model, "x", "fc", 2, 2)
    assert len(model.param_init_net.Proto().op) == 0
    assert [str(p) for p in model.params] == ["fc_w", "fc_b"]


def test_extract_predictor_net():
    model = model_helper.ModelHelper(name="train")
    fc = brew.fc(model, "data", "fc", 3, 2, weight_init=const(1.0))
    loss = model.AveragedLoss(fc, "loss")
    model.AddGradientOperators([loss])
    predict_net, params = model_helper.ExtractPredictorNet(model.net.Proto(), ["data"], ["fc"])
    assert predict_net.Proto().name.startswith(model.net.Proto().name + "_predict")
    assert [op.type for op in predict_net.Proto().op] == ["FC"]
    assert sorted(params) == ["fc_b", "fc_w"]
    assert list(predict_net.Proto().external_output) == ["fc"]

    bad = core.Net("bad")
    bad.Proto().op.extend([core.CreateOperator("Copy", ["data"], ["out"], is_test=0)])
    with pytest.raises(Exception, match="is_test=0"):
        model_helper.ExtractPredictorNet(bad.Proto(), ["data"], ["out"])
