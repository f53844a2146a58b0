"""modeling (initializers, parameter_info, parameter_sharing) and the
optimizer / regularizer contexts."""
import pytest

from caffe2.python import core, scope
from caffe2.python.modeling import initializers
from caffe2.python.modeling.parameter_info import ParameterInfo
from caffe2.python.modeling.parameter_sharing import ParameterSharing, parameter_sharing_context
from caffe2.python.optimizer_context import DEFAULT_OPTIM, OptimizerContext, UseOptimizer
from caffe2.python.regularizer_context import RegularizerContext, UseRegularizer


def test_initializer_creates_op_with_kwargs():
    net = core.Net("init_test")
    info = initializers.Initializer("ConstantFill", value=3.0).create_param(
        core.BlobReference("p"), net, [2, 2]
    )
    op = net.Proto().op[0]
    assert (op.type, list(op.output)) == ("ConstantFill", ["p"])
    assert {a.name for a in op.arg} == {"shape", "value"}
    assert info.shape == [2, 2] and info.size == 4 and str(info) == "p"


def test_update_initializer():
    init = initializers.update_initializer(None, ("ConstantFill", {}), ("XavierFill", {}))
    assert init.operator_name == "ConstantFill"
    init = initializers.update_initializer(None, None, ("XavierFill", {}))
    assert init.operator_name == "XavierFill"
    init = initializers.update_initializer(
        initializers.PseudoFP16Initializer, None, ("XavierFill", {})
    )
    assert isinstance(init, initializers.PseudoFP16Initializer)
    with pytest.raises(Exception, match="overwrites are not allowed"):
        init.update("ConstantFill", {})
    init = initializers.update_initializer(
        initializers.ExternalInitializer, ("XavierFill", {}), None
    )
    net = core.Net("ext")
    with core.NameScope("s"):
        info = init.create_param("w", net, [1])
    assert str(info.blob) == "s/w" and not net.Proto().op


def test_parameter_info_optimizer_set_once_and_grad_type():
    info = ParameterInfo(0, core.BlobReference("w"), shape=[3])
    with pytest.raises(AssertionError, match="not set"):
        info.grad_type()
    info.grad = core.BlobReference("w_grad")
    assert info.grad_type() == "dense"
    info.grad = core.GradientSlice("i", "v")
    assert info.grad_type() == "sparse"
    info.optimizer = "opt"
    with pytest.raises(AssertionError, match="already been set"):
        info.optimizer = "other"
    assert info.parameter == info.blob


def test_parameter_sharing_nested_and_restored():
    with core.NameScope("model"):
        with ParameterSharing({"b": "a", "c": ""}):
            with core.NameScope("b"):
                assert parameter_sharing_context.get_parameter_name("w") == "model/a/w"
            with core.NameScope("c"):
                assert parameter_sharing_context.get_parameter_name("w") == "model/w"
            with ParameterSharing({"a": "z"}):
                with core.NameScope("b"):
                    # b -> a -> z, resolved recursively
                    assert parameter_sharing_context.get_parameter_name("w") == "model/z/w"
        with core.NameScope("b"):
            assert parameter_sharing_context.get_parameter_name("w") == "model/b/w"
    with pytest.raises(AssertionError, match="prefix"):
        with ParameterSharing({"a": "a/b"}):
            pass
    assert scope.CurrentNameScope() == ""


def test_optimizer_context_nesting():
    ctx = OptimizerContext.current()
    assert not ctx.has_optimizer(DEFAULT_OPTIM)
    with UseOptimizer("outer"):
        with UseOptimizer({"WEIGHT": "w_opt"}):
            assert ctx.get_optimizer(DEFAULT_OPTIM) == "outer"
            assert ctx.get_optimizer("WEIGHT") == "w_opt"
        assert not ctx.has_optimizer("WEIGHT")
    assert not ctx.has_optimizer(DEFAULT_OPTIM)
    with pytest.raises(AssertionError, match="not provided"):
        ctx.get_optimizer("BIAS")


def test_regularizer_context():
    ctx = RegularizerContext.current()
    with UseRegularizer({"l2": 0.1}):
        assert ctx.get_regularizer("l2") == 0.1
    assert not ctx.has_regularizer("l2")
