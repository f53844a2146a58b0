"""The gradient IR of core (GradientRegistry, IR): naming, SSA version
checks and gradient accumulation, checked against upstream's names.

The forward ops are made-up types with Python gradients (the C++ registry
has none for them, so core falls back to these); nets are built, never run.
"""
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core


def _grad_op(op, op_type, inputs, outputs):
    """A gradient op as a C++ gradient maker would make it."""
    grad = caffe2_pb2.OperatorDef(
        type=op_type, name="", input=inputs, output=outputs, is_gradient_op=True
    )
    if op.HasField("device_option"):
        grad.device_option.CopyFrom(op.device_option)
    return grad


@core.GradientRegistry.RegisterGradient("IrTestDense")
def _dense_gradient(op, g_output):
    """One op reading inputs and output gradients (like FC), writing
    `<input>_grad` for every input."""
    grads = [str(g) for g in g_output if g is not None]
    grad_op = _grad_op(
        op, "IrTestDenseGradient", list(op.input) + grads, [i + "_grad" for i in op.input]
    )
    return [grad_op], [i + "_grad" for i in op.input]


@core.GradientRegistry.RegisterGradient("IrTestInPlace")
def _in_place_gradient(op, g_output):
    """One op reading outputs and output gradients (like Relu)."""
    grad_op = _grad_op(
        op, "IrTestInPlaceGradient", list(op.output) + [str(g_output[0])], [op.input[0] + "_grad"]
    )
    return [grad_op], [op.input[0] + "_grad"]


@core.GradientRegistry.RegisterGradient("IrTestPassThrough")
def _pass_through_gradient(op, g_output):
    """No op: every input gradient is the output gradient (like Sum)."""
    return [], [g_output[0]] * len(op.input)


@core.GradientRegistry.RegisterGradient("IrTestSparse")
def _sparse_gradient(op, g_output):
    """Inputs (DATA, INDICES): a sparse gradient of DATA made by an op."""
    data = op.input[0]
    grad_op = _grad_op(
        op,
        "IrTestSparseGradient",
        [op.input[1], str(g_output[0])],
        [data + "_grad_indices", data + "_grad_values"],
    )
    return [grad_op], [core.GradientSlice(data + "_grad_indices", data + "_grad_values"), None]


@core.GradientRegistry.RegisterGradient("IrTestGather")
def _gather_gradient(op, g_output):
    """Inputs (DATA, INDICES): the sparse gradient is (INDICES, dY)."""
    return [], [core.GradientSlice(op.input[1], g_output[0]), None]


@core.GradientRegistry.RegisterGradient("IrTestNoGradient")
def _no_gradient(op, g_output):
    return [], [None] * len(op.input)


def _net(name, ops):
    """A Net holding (type, inputs, outputs) ops."""
    net = core.Net(name)
    for op_type, inputs, outputs in ops:
        net.Proto().op.extend([core.CreateOperator(op_type, inputs, outputs)])
    return net


def _grad_ops(net, first_grad_op):
    return [(op.type, list(op.input), list(op.output)) for op in net.Proto().op[first_grad_op:]]


def test_chain_names_and_autogen_seed():
    net = _net(
        "ir_chain",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("IrTestDense", ["y"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["z"])
    assert _grad_ops(net, 2) == [
        ("ConstantFill", ["z"], ["z_autogen_grad"]),
        ("IrTestDenseGradient", ["y", "z_autogen_grad"], ["y_grad"]),
        ("IrTestDenseGradient", ["x", "y_grad"], ["x_grad"]),
    ]
    seed = net.Proto().op[2]
    assert [(a.name, a.f, a.HasField("f")) for a in seed.arg] == [("value", 1.0, True)]
    assert grad_map == {"x": "x_grad", "y": "y_grad", "z": "z_autogen_grad"}
    assert all(
        isinstance(k, core.BlobReference) and isinstance(v, core.BlobReference)
        for k, v in grad_map.items()
    )


def test_autogen_seed_follows_name_and_device_scope():
    net = _net("ir_scoped_seed", [("IrTestDense", ["x"], ["z"])])
    option = core.DeviceOption(caffe2_pb2.CUDA, 1)
    with core.NameScope("s"), core.DeviceScope(option):
        grad_map = net.AddGradientOperators(["z"])
    seed = net.Proto().op[1]
    assert (list(seed.input), list(seed.output)) == (["s/z"], ["s/z_autogen_grad"])
    assert seed.device_option == option
    assert grad_map["z"] == "s/z_autogen_grad"


def test_scoped_blob_reference_target_is_scoped_twice():
    # Upstream quirk: the BlobReference keeps its name, the output string
    # built from it gets the scope again.
    net = _net("ir_double_scope", [("IrTestDense", ["s/x"], ["s/z"])])
    with core.NameScope("s"):
        net.AddGradientOperators([core.BlobReference("s/z")])
    seed = net.Proto().op[1]
    assert list(seed.input) == ["s/z"]
    assert list(seed.output) == ["s/s/z_autogen_grad"]


def test_given_output_gradient():
    net = _net("ir_given", [("IrTestDense", ["x"], ["z"])])
    grad_map = net.AddGradientOperators({"z": "z_given"})
    assert _grad_ops(net, 1) == [("IrTestDenseGradient", ["x", "z_given"], ["x_grad"])]
    assert grad_map["z"] == "z_given"


def test_skip_leaves_the_first_ops_out():
    net = _net(
        "ir_skip",
        [
            ("IrTestDense", ["data"], ["x"]),
            ("IrTestDense", ["x"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["z"], skip=1)
    assert "data" not in grad_map and grad_map["x"] == "x_grad"
    assert len(net.Proto().op) == 4


def test_fan_out_accumulates_with_autosplit_and_sum():
    net = _net(
        "ir_fanout",
        [
            ("IrTestDense", ["x"], ["y1"]),
            ("IrTestDense", ["x"], ["y2"]),
            ("IrTestDense", ["x"], ["y3"]),
        ],
    )
    grad_map = net.AddGradientOperators(["y1", "y2", "y3"])
    assert _grad_ops(net, 3) == [
        ("ConstantFill", ["y1"], ["y1_autogen_grad"]),
        ("ConstantFill", ["y2"], ["y2_autogen_grad"]),
        ("ConstantFill", ["y3"], ["y3_autogen_grad"]),
        ("IrTestDenseGradient", ["x", "y3_autogen_grad"], ["x_grad"]),
        ("IrTestDenseGradient", ["x", "y2_autogen_grad"], ["_x_grad_autosplit_0"]),
        ("IrTestDenseGradient", ["x", "y1_autogen_grad"], ["_x_grad_autosplit_1"]),
        ("Sum", ["x_grad", "_x_grad_autosplit_0", "_x_grad_autosplit_1"], ["x_grad"]),
    ]
    assert grad_map["x"] == "x_grad"


def test_accumulation_of_a_pass_through_puts_the_in_place_input_first():
    net = _net(
        "ir_swap",
        [
            ("IrTestDense", ["x"], ["z"]),
            ("IrTestPassThrough", ["x"], ["y"]),
        ],
    )
    grad_map = net.AddGradientOperators(["z", "y"])
    assert _grad_ops(net, 2)[2:] == [
        ("IrTestDenseGradient", ["x", "z_autogen_grad"], ["x_grad"]),
        ("Sum", ["x_grad", "y_autogen_grad"], ["x_grad"]),
    ]
    assert grad_map["x"] == "x_grad"


def test_accumulation_of_pass_throughs_only():
    net = _net(
        "ir_pass_only",
        [
            ("IrTestPassThrough", ["x"], ["y"]),
            ("IrTestPassThrough", ["x"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["y", "z"])
    assert _grad_ops(net, 2)[2:] == [("Sum", ["z_autogen_grad", "y_autogen_grad"], ["x_grad"])]
    assert grad_map["x"] == "x_grad"


def test_target_also_read_by_an_op_gets_its_seed_summed():
    net = _net(
        "ir_target_read",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("IrTestDense", ["y"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["y", "z"])
    assert _grad_ops(net, 2) == [
        ("ConstantFill", ["y"], ["y_autogen_grad"]),
        ("ConstantFill", ["z"], ["z_autogen_grad"]),
        ("IrTestDenseGradient", ["y", "z_autogen_grad"], ["_y_grad_autosplit_0"]),
        ("Sum", ["y_autogen_grad", "_y_grad_autosplit_0"], ["y_autogen_grad"]),
        ("IrTestDenseGradient", ["x", "y_autogen_grad"], ["x_grad"]),
    ]
    assert grad_map["y"] == "y_autogen_grad"


def test_sum_copies_the_device_of_a_gradient_op():
    option = core.DeviceOption(caffe2_pb2.CUDA, 1)
    with core.DeviceScope(option):
        net = _net(
            "ir_sum_device",
            [
                ("IrTestDense", ["x"], ["y1"]),
                ("IrTestDense", ["x"], ["y2"]),
            ],
        )
    net.AddGradientOperators({"y1": "g1", "y2": "g2"})
    sum_op = net.Proto().op[-1]
    assert sum_op.type == "Sum"
    assert sum_op.device_option == option


def test_in_place_chain():
    net = _net(
        "ir_in_place",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("IrTestInPlace", ["y"], ["y"]),
        ],
    )
    grad_map = net.AddGradientOperators({"y": "y_out_grad"})
    assert _grad_ops(net, 2) == [
        ("IrTestInPlaceGradient", ["y", "y_out_grad"], ["y_grad"]),
        ("IrTestDenseGradient", ["x", "y_grad"], ["x_grad"]),
    ]
    assert grad_map == {"x": "x_grad", "y": "y_grad"}


def test_reading_an_overwritten_output_fails():
    net = _net(
        "ir_overwritten_output",
        [
            ("IrTestInPlace", ["x"], ["y"]),
            ("IrTestInPlace", ["y"], ["y"]),
        ],
    )
    with pytest.raises(
        RuntimeError, match='needs output "y" at version 0, but currently ' "we have version 1"
    ):
        net.AddGradientOperators(["y"])


def test_reading_an_overwritten_input_fails():
    net = _net(
        "ir_overwritten",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("IrTestDense", ["w"], ["x"]),
        ],
    )
    with pytest.raises(
        RuntimeError, match='needs input "x" at version 0, but currently ' "we have version 1"
    ):
        net.AddGradientOperators(["y"])


def test_sparse_gradients_accumulate_with_two_concats():
    net = _net(
        "ir_sparse",
        [
            ("IrTestSparse", ["x", "i1"], ["y1"]),
            ("IrTestSparse", ["x", "i2"], ["y2"]),
        ],
    )
    grad_map = net.AddGradientOperators({"y1": "g1", "y2": "g2"})
    assert _grad_ops(net, 2) == [
        (
            "IrTestSparseGradient",
            ["i2", "g2"],
            ["_x_grad_indices_autosplit_0", "_x_grad_values_autosplit_0"],
        ),
        (
            "IrTestSparseGradient",
            ["i1", "g1"],
            ["_x_grad_indices_autosplit_1", "_x_grad_values_autosplit_1"],
        ),
        (
            "Concat",
            ["_x_grad_indices_autosplit_0", "_x_grad_indices_autosplit_1"],
            ["x_grad_indices_concat", "x_grad_indices_concat_split"],
        ),
        (
            "Concat",
            ["_x_grad_values_autosplit_0", "_x_grad_values_autosplit_1"],
            ["x_grad_values_concat", "x_grad_values_concat_split"],
        ),
    ]
    for concat in net.Proto().op[-2:]:
        assert [(a.name, a.i) for a in concat.arg] == [("axis", 0)]
    g = grad_map["x"]
    assert isinstance(g, core.GradientSlice)
    assert (g.indices, g.values) == ("x_grad_indices_concat", "x_grad_values_concat")
    assert isinstance(g.indices, core.BlobReference)
    assert "i1" not in grad_map


def test_sparse_pass_through_gradients_accumulate():
    net = _net(
        "ir_gather",
        [
            ("IrTestGather", ["x", "i1"], ["y1"]),
            ("IrTestGather", ["x", "i2"], ["y2"]),
        ],
    )
    grad_map = net.AddGradientOperators({"y1": "g1", "y2": "g2"})
    assert _grad_ops(net, 2) == [
        ("Concat", ["i2", "i1"], ["x_grad_indices_concat", "x_grad_indices_concat_split"]),
        ("Concat", ["g2", "g1"], ["x_grad_values_concat", "x_grad_values_concat_split"]),
    ]
    assert grad_map["x"] == core.GradientSlice("x_grad_indices_concat", "x_grad_values_concat")


def test_single_sparse_gradient_is_a_gradient_slice():
    net = _net("ir_gather_one", [("IrTestGather", ["x", "i"], ["y"])])
    grad_map = net.AddGradientOperators({"y": "gy"})
    assert grad_map["x"] == core.GradientSlice("i", "gy")
    assert len(net.Proto().op) == 1


def test_mixing_sparse_and_dense_gradients_fails():
    net = _net(
        "ir_mixed",
        [
            ("IrTestGather", ["x", "i"], ["y1"]),
            ("IrTestDense", ["x"], ["y2"]),
        ],
    )
    with pytest.raises(
        RuntimeError,
        match="Gradients for param ''x'' " "failed to verify: Automatic " "aggregation of a mix",
    ):
        net.AddGradientOperators({"y1": "g1", "y2": "g2"})


def test_no_gradient_stops_the_backward_pass():
    net = _net(
        "ir_nograd",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("IrTestNoGradient", ["y"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["z"])
    assert grad_map == {"z": "z_autogen_grad"}
    assert [op.type for op in net.Proto().op[2:]] == ["ConstantFill"]


def test_stop_gradient_output_must_be_consumed():
    orphan = [core.CreateOperator("StopGradient", ["x"], ["y"])]
    with pytest.raises(ValueError, match="StopGradient's output 'y' is " "orphan"):
        core.IR(orphan)
    consumed = orphan + [core.CreateOperator("IrTestDense", ["y"], ["z"])]
    core.IR(consumed)


def test_stop_gradient_blocks_gradients():
    net = _net(
        "ir_stop",
        [
            ("IrTestDense", ["x"], ["y"]),
            ("StopGradient", ["y"], ["y"]),
            ("IrTestDense", ["y"], ["z"]),
        ],
    )
    grad_map = net.AddGradientOperators(["z"])
    assert "x" not in grad_map
    assert [op.type for op in net.Proto().op[3:]] == ["ConstantFill", "IrTestDenseGradient"]


def test_unregistered_gradient_raises():
    op = core.CreateOperator("IrTestUnregistered", ["x"], ["y"])
    with pytest.raises(
        Exception, match=r"Exception when creating gradient " r"for \[IrTestUnregistered\]"
    ):
        core.GradientRegistry.GetGradientForOp(op, ["y_grad"])


def test_cpp_gradients_come_first():
    op = core.CreateOperator("Sum", ["a", "b"], ["c"])
    grad_ops, g_input = core.GradientRegistry.GetGradientForOp(op, ["c_grad"])
    assert grad_ops == [] and g_input == ["c_grad", "c_grad"]
    # Two-character gradient names stay dense.
    grad_ops, g_input = core.GradientRegistry.GetGradientForOp(op, ["cg"])
    assert g_input == ["cg", "cg"]
    op = core.CreateOperator("StopGradient", ["a"], ["b"])
    assert core.GradientRegistry.GetGradientForOp(op, ["b_grad"]) == ([], [None])


def test_get_index_from_gradient_list():
    g_list = ["a_grad", None, core.GradientSlice("i", "v")]
    assert core.GetIndexFromGradientList(g_list, "a_grad") == 0
    assert core.GetIndexFromGradientList(g_list, "v") == 2
    assert core.GetIndexFromGradientList(g_list, "i") == 2
    assert core.GetIndexFromGradientList(g_list, "zz") is None


def test_ys_must_be_list_or_dict():
    with pytest.raises(TypeError):
        core.GradientRegistry.GetBackwardPass([], "y")


@pytest.mark.parametrize(
    "op,message",
    [
        (
            core.CreateOperator("Dropout", ["X"], ["Y"]),
            r"\[Dropout\] the gradient needs output 1, but the op has 1 output\(s\)",
        ),
        (
            core.CreateOperator("SpatialBN", ["X", "s", "b", "m", "v"], ["Y"]),
            r"\[SpatialBN\] the gradient needs output \d, but the op has 1 output\(s\)",
        ),
    ],
)
def test_a_gradient_maker_reading_a_missing_blob_names_the_op(op, message):
    with pytest.raises(Exception, match=message):  # core re-raises it with the op
        core.GradientRegistry.GetGradientForOp(op, [b + "_grad" for b in op.output])
