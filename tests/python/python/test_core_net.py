"""core: BlobReference, CreateOperator, DeviceOption and Net building.

Nets are only built here (not run), with the CPU operators the runtime
always registers."""
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, scope, workspace


def test_datatype_values():
    assert core.DataType.UNDEFINED == 0
    assert core.DataType.FLOAT == 1
    assert core.DataType.INT32 == 2
    assert core.DataType.BYTE == 3
    assert core.DataType.STRING == 4
    assert core.DataType.BOOL == 5
    assert core.DataType.INT64 == 10
    assert core.DataType.FLOAT16 == 12
    assert core.DataType.DOUBLE == 13


def test_is_operator():
    assert core.IsOperator("Sum")
    assert core.IsOperatorWithEngine("Sum", "DEFAULT")
    assert core.IsOperatorWithEngine("Sum", "")
    assert not core.IsOperator("NoSuchOperatorAtAll")
    assert "ConstantFill" in core._REGISTERED_OPERATORS


def test_device_option_always_sets_type_and_gpu_id():
    option = core.DeviceOption(caffe2_pb2.CPU)
    assert option.HasField("device_type") and option.HasField("cuda_gpu_id")
    assert not option.HasField("random_seed")
    assert not option.HasField("node_name")
    option = core.DeviceOption(caffe2_pb2.CUDA, 3, random_seed=7, node_name="n")
    assert (option.device_type, option.cuda_gpu_id, option.random_seed, option.node_name) == (
        caffe2_pb2.CUDA,
        3,
        7,
        "n",
    )


def test_device_equality_helpers():
    cpu = core.DeviceOption(caffe2_pb2.CPU, 0)
    cpu_other_id = core.DeviceOption(caffe2_pb2.CPU, 2)
    gpu0 = core.DeviceOption(caffe2_pb2.CUDA, 0)
    gpu1 = core.DeviceOption(caffe2_pb2.CUDA, 1)
    assert core.device_option_equal(cpu, cpu_other_id)
    assert core.device_option_equal(cpu, caffe2_pb2.DeviceOption())
    assert not core.device_option_equal(cpu, gpu0)
    assert not core.device_option_equal(gpu0, gpu1)
    assert core.device_option_equal(gpu0, core.DeviceOption(caffe2_pb2.CUDA, 0, random_seed=3))
    assert not core.device_option_equal(
        gpu0, core.DeviceOption(caffe2_pb2.CUDA, 0, random_seed=3), ignore_random_seed=False
    )
    assert core.device_equal(gpu0, gpu0)
    assert not core.device_equal(cpu, cpu_other_id)


def test_blob_reference_equality_and_hash():
    ref = core.BlobReference("a/b")
    assert ref == "a/b" and ref == b"a/b" and ref == core.BlobReference("a/b")
    assert ref != "a" and ref != 3
    assert {ref: 1}["a/b"] == 1
    assert str(ref) == "a/b"
    assert repr(ref) == 'BlobReference("a/b")'
    assert core.BlobReference(b"x") == "x"
    assert core.BlobReference(7) == "7"
    assert ref.meta == {}


def test_blob_reference_concatenation():
    net = core.Net("blobref_add")
    ref = core.BlobReference("x", net)
    assert (ref + "_grad") == "x_grad"
    assert (ref + "_grad").Net() is net
    assert ("pre_" + ref) == "pre_x"
    with pytest.raises(RuntimeError):
        ref + 1
    with pytest.raises(RuntimeError):
        1 + ref


def test_blob_reference_name_scope():
    ref = core.BlobReference("gpu_0/conv1/w")
    assert ref.GetNameScope() == "gpu_0/conv1/"
    assert ref.GetUnscopedName() == "w"
    assert core.BlobReference("w").GetNameScope() == ""


def test_blob_reference_creates_ops_in_its_net():
    net = core.Net("blobref_ops")
    x = net.ConstantFill([], "x", shape=[1], value=1.0)
    y = x.Copy([], "y")
    assert y == "y" and y.Net() is net
    z = x.Sum("y", "z")
    assert list(net.Proto().op[-1].input) == ["x", "y"]
    assert z == "z"
    with pytest.raises(RuntimeError, match="not a registered operator"):
        x.NoSuchOperatorAtAll()
    with pytest.raises(RuntimeError):
        core.BlobReference("free").Copy([], "q")
    assert not hasattr(core.BlobReference("free"), "Proto")
    assert not hasattr(x, "NoSuchOperatorAtAll")


def test_scoped_names():
    assert core.ScopedName("x") == "x"
    with core.NameScope("s"):
        assert core.ScopedName("x") == "s/x"
        assert core.ScopedName(b"x") == "s/x"
        assert core.ScopedBlobReference("x") == "s/x"


def test_create_operator_basic_fields():
    op = core.CreateOperator("Sum", ["a", "b"], "c")
    assert op.type == "Sum"
    assert list(op.input) == ["a", "b"] and list(op.output) == ["c"]
    assert op.HasField("name") and op.name == ""
    assert not op.HasField("device_option")
    assert not op.HasField("engine")
    op = core.CreateOperator("Sum", ("a",), ["c"], name="n", engine="CUDNN", control_input=["dep"])
    assert op.name == "n" and op.engine == "CUDNN"
    assert list(op.control_input) == ["dep"]


def test_create_operator_scopes_strings_only():
    with core.NameScope("s"):
        op = core.CreateOperator("Sum", ["a", core.BlobReference("t/b")], "c")
    assert list(op.input) == ["s/a", "t/b"]
    assert list(op.output) == ["s/c"]


def test_create_operator_rejects_bad_blob_types():
    with pytest.raises(TypeError):
        core.CreateOperator("Sum", [1], ["c"])
    with pytest.raises(TypeError):
        core.CreateOperator("Sum", 1, ["c"])


def test_create_operator_device_option():
    gpu = core.DeviceOption(caffe2_pb2.CUDA, 1)
    with core.DeviceScope(gpu):
        op = core.CreateOperator("Sum", ["a"], ["b"])
        assert op.device_option == gpu
        explicit = core.DeviceOption(caffe2_pb2.CPU)
        op2 = core.CreateOperator("Sum", ["a"], ["b"], device_option=explicit)
        assert op2.device_option == explicit
    op3 = core.CreateOperator("Sum", ["a"], ["b"], random_seed=11)
    assert op3.device_option.random_seed == 11
    assert not any(arg.name == "random_seed" for arg in op3.arg)


def test_create_operator_arguments_in_order():
    extra = caffe2_pb2.Argument(name="input_as_shape", i=0)
    op = core.CreateOperator(
        "ConstantFill",
        [],
        ["y"],
        arg=[extra],
        shape=[2, 3],
        value=1.0,
        dtype=core.DataType.INT32,
        run_once="s",
    )
    assert [a.name for a in op.arg] == ["input_as_shape", "shape", "value", "dtype", "run_once"]
    args = {a.name: a for a in op.arg}
    assert list(args["shape"].ints) == [2, 3]
    assert args["value"].HasField("f")
    assert args["dtype"].i == core.DataType.INT32
    assert args["run_once"].s == b"s"


def test_net_names_are_globally_unique():
    a = core.Net("unique_name_test")
    b = core.Net("unique_name_test")
    c = core.Net("unique_name_test")
    assert (a.Name(), b.Name(), c.Name()) == (
        "unique_name_test",
        "unique_name_test_1",
        "unique_name_test_2",
    )
    assert str(a) == "unique_name_test"
    from_proto = core.Net(a.Proto())
    assert from_proto.Name() == "unique_name_test_3"
    assert a.Proto().name == "unique_name_test"


def test_net_op_methods_and_auto_names():
    net = core.Net("autoname")
    x = net.ConstantFill([], shape=[1], value=1.0)
    assert x == "autoname/ConstantFill"
    assert x.Net() is net
    y = net.ConstantFill([], shape=[1], value=1.0)
    assert y == "autoname/ConstantFill_2"
    outs = net.Copy([x], 2)
    assert outs == ("autoname/Copy:0", "autoname/Copy:1")
    assert net.NextName() == "autoname_blob_0"
    assert net.NextName() == "autoname_blob_1"
    assert net.NextName("Copy", output_id=0) == "autoname/Copy_2:0"
    assert net.Print(x, []) is None


def test_auto_names_under_a_name_scope():
    net = core.Net("scoped_auto")
    with core.NameScope("gpu_0"):
        a = net.ConstantFill([], shape=[1], value=1.0)
        b = net.ConstantFill([], shape=[1], value=1.0)
    assert a == "gpu_0/scoped_auto/ConstantFill"
    assert b == "gpu_0/scoped_auto/ConstantFill_2"
    # Without the scope the unscoped name is free again.
    assert net.NextName("ConstantFill") == "scoped_auto/ConstantFill"


def test_net_from_netdef_recovers_auto_name_index():
    proto = caffe2_pb2.NetDef(name="recover_idx")
    proto.op.add(type="Sum", input=["recover_idx_blob_11"], output=["recover_idx_blob_3"])
    net = core.Net(proto)
    assert net.Name() == "recover_idx"
    assert net.NextName() == "recover_idx_blob_12"


def test_undefined_inputs_become_external_inputs():
    net = core.Net("ext_inputs")
    net.Sum(["a", "b"], "c")
    net.Sum(["c", "a", "d"], "e")
    assert list(net.Proto().external_input) == ["a", "b", "d"]
    assert net.BlobIsDefined("c") and net.BlobIsDefined("a")
    assert not net.BlobIsDefined("zz")
    assert net.is_external_input("a") and not net.is_external_input("c")
    assert net.UsesBlob("a") and not net.UsesBlob("e")
    assert net.UsedBlobNames() == {"a", "b", "c", "d", "e"}
    assert net.GetBlobRef("c").Net() is net
    with pytest.raises(KeyError):
        net.GetBlobRef("zz")
    assert [str(b) for b in net.external_inputs] == ["a", "b", "d"]


def test_external_inputs_and_outputs():
    net = core.Net("ext_io")
    x = net.AddExternalInput("x")
    assert x == "x"
    y, z = net.AddExternalInputs("y", "z")
    assert (y, z) == ("y", "z")
    with pytest.raises(AssertionError):
        net.AddExternalInput("x")
    out = net.Sum([x, y], "out")
    net.AddExternalOutput(out)
    with pytest.raises(AssertionError):
        net.AddExternalOutput(core.BlobReference("undefined"))
    assert [str(b) for b in net.external_outputs] == ["out"]
    with core.NameScope("s"):
        scoped = net.AddScopedExternalInputs("w")
    assert scoped == ["s/w"]


def test_unknown_operator_suggests_names():
    net = core.Net("suggest")
    with pytest.raises(AttributeError) as info:
        net.ConstantFil([], "x")
    message = str(info.value)
    assert "Method ConstantFil is not a registered operator." in message
    assert "Did you mean: [" in message and "ConstantFill" in message
    with pytest.raises(AttributeError):
        net.__no_such_dunder__


def test_next_blob_names():
    net = core.Net("nextblob")
    assert net.NextBlob("t") == "t"
    assert net.NextBlob("t") == "t_auto_0"
    assert net.NextBlob("t") == "t_auto_1"
    with core.NameScope("s"):
        assert net.NextScopedBlob("u") == "s/u"


def test_operator_tracebacks_are_recorded():
    net = core.Net("tracebacks")
    net.ConstantFill([], "x", shape=[1], value=1.0)
    records = workspace.operator_tracebacks[net.Name()]
    assert list(records) == [0]
    filename, line, function = records[0][0]
    assert filename == __file__
    assert function == "test_operator_tracebacks_are_recorded"
    net.PopulateProtoWithFileName()
    assert net.Proto().op[0].name.startswith(__file__ + ":")


def test_clone_with_remap_and_mask():
    net = core.Net("to_clone")
    net.Sum(["a", "b"], "c")
    net.Copy("c", "d")
    net.AddExternalOutput(net.GetBlobRef("d"))
    clone = net.Clone("cloned", blob_remap={"a": "A", "d": "D"})
    assert clone.Name() == "cloned"
    assert list(clone.Proto().op[0].input) == ["A", "b"]
    assert list(clone.Proto().external_input) == ["A", "b"]
    assert list(clone.Proto().external_output) == ["D"]
    assert clone.BlobIsDefined("D")
    partial = net.Clone("cloned_mask", op_id_mask=[1])
    assert [op.type for op in partial.Proto().op] == ["Copy"]


def test_clone_partial():
    net = core.Net("partial")
    net.Sum(["a", "b"], "c")
    net.Copy("c", "d")
    net.Copy("x", "y")
    new_net, outs = net.ClonePartial("sub", {"c": "in_c"}, ["d"])
    assert [op.type for op in new_net.Proto().op] == ["Copy"]
    assert list(new_net.Proto().op[0].input) == ["in_c"]
    assert list(new_net.Proto().op[0].output) == ["sub/d"]
    assert list(new_net.Proto().external_input) == ["in_c"]
    assert outs == ["sub/d"]
    new_net, outs = net.ClonePartial("sub2", ["a"], ["d"])
    assert list(new_net.Proto().external_input) == ["a", "b"]
    assert [list(op.output) for op in new_net.Proto().op] == [["sub2/c"], ["sub2/d"]]


def test_ssa_helpers():
    net = core.Net("ssa")
    net.Sum(["a", "b"], "c")
    net.Sum(["c", "a"], "c")
    net.Copy("c", "d")
    ssa, versions = core.get_ssa(net)
    assert ssa[0] == ([("a", 0), ("b", 0)], [("c", 1)])
    assert ssa[1] == ([("c", 1), ("a", 0)], [("c", 2)])
    assert versions["c"] == 2 and versions["d"] == 1
    assert core.get_undefined_blobs(ssa) == {"a", "b"}
    assert core.get_output_producers(ssa)[("c", 2)] == 1
    assert core.get_op_ids_in_path(ssa, versions, [], ["d"]) == [0, 1, 2]
    assert core.get_op_ids_in_path(ssa, versions, ["c"], ["d"]) == [2]


def test_run_all_on_gpu_sets_the_net_device():
    net = core.Net("on_gpu")
    net.Sum(["a"], "b")
    net.RunAllOnGPU(gpu_id=2, use_cudnn=True)
    proto = net.Proto()
    assert proto.device_option.device_type == caffe2_pb2.CUDA
    assert proto.device_option.cuda_gpu_id == 2
    assert not proto.op[0].HasField("device_option")
    assert proto.op[0].engine == "CUDNN"


def test_const():
    net = core.Net("const")
    net.Const([1, 2, 3], "ints32", dtype="int32")
    net.Const([1.5, 2.5], "floats")
    net.Const(True, "flag")
    net.Const(["a", "b"], "strs")
    net.Const(__import__("numpy").array([1], dtype="int64"), "ints64")
    types = [op.type for op in net.Proto().op]
    assert types == [
        "GivenTensorIntFill",
        "GivenTensorFill",
        "ConstantFill",
        "GivenTensorStringFill",
        "GivenTensorInt64Fill",
    ]
    args = {a.name: a for a in net.Proto().op[1].arg}
    assert list(args["shape"].ints) == [2]
    assert list(args["values"].floats) == [1.5, 2.5]


def test_set_rand_seed():
    net = core.Net("seeds")
    net.ConstantFill([], "a", shape=[1])
    net.ConstantFill([], "b", shape=[1])
    net.set_rand_seed(seed=10)
    assert [op.device_option.random_seed for op in net.Proto().op] == [10, 11]
    net.set_rand_seed(seed=5, sequence_seed=False)
    assert [op.device_option.random_seed for op in net.Proto().op] == [5, 5]


def test_append_net():
    first = core.Net("append_a")
    first.Sum(["a"], "b")
    second = core.Net("append_b")
    second.Sum(["b", "z"], "c")
    first.AppendNet(second)
    assert [op.type for op in first.Proto().op] == ["Sum", "Sum"]
    assert list(first.Proto().external_input) == ["a", "z"]


def test_attributes():
    net = core.Net("attrs")
    net.add_attribute("k", 1)
    net.add_attribute("k", 2)
    assert net.get_attributes("k") == [1, 2]
    assert net.get_attributes("none") == []


def test_output_to_list_and_net_names():
    assert core.output_to_list(None) == []
    ref = core.BlobReference("x")
    assert core.output_to_list(ref) == [ref]
    assert core.output_to_list((ref, ref)) == [ref, ref]
    net = core.Net("names")
    assert core.get_net_name(net) == "names"
    assert core.get_net_name(net.Proto()) == "names"
    assert core.get_net_name("other") == "other"


def test_global_init_args():
    core.GlobalInit(["caffe2", "--caffe2_log_level=0"])
    assert "--caffe2_log_level=0" in core.GetGlobalInitArgs()


def test_infer_op_device_as_blob_devices():
    op = core.CreateOperator(
        "Sum", ["a", "b"], ["c"], device_option=core.DeviceOption(caffe2_pb2.CUDA, 1)
    )
    inputs, outputs = core.InferOpDeviceAsBlobDevices(op)
    assert len(inputs) == 2 and len(outputs) == 1
    assert inputs[0].cuda_gpu_id == 1
    net = core.Net("blob_devices")
    net.Proto().op.extend([op])
    assert core.InferBlobDevices(net)["c"].device_type == caffe2_pb2.CUDA


def test_scope_cleanup():
    assert scope.CurrentNameScope() == ""
    assert scope.CurrentDeviceScope() is None
