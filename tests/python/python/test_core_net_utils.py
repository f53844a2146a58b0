"""core's net helpers: clone_and_bind_net and cross-device copies."""
from caffe2.proto import caffe2_pb2
from caffe2.python import core

CPU = core.DeviceOption(caffe2_pb2.CPU)
GPU1 = core.DeviceOption(caffe2_pb2.CUDA, 1)


def test_clone_and_bind_net_prefixes_defined_blobs():
    net = core.Net("bind_src")
    net.Sum(["a", "b"], "c")
    net.Copy("c", "d")
    cloned, remap = core.clone_and_bind_net(net, "bind_dst", "p/", blob_remap={"b": "B"})
    assert cloned.Name() == "bind_dst"
    assert remap == {"a": "a", "b": "B", "c": "p/c", "d": "p/d"}
    assert [(list(op.input), list(op.output)) for op in cloned.Proto().op] == [
        (["a", "B"], ["p/c"]),
        (["p/c"], ["p/d"]),
    ]


def _mixed_device_net(name):
    net = core.Net(name)
    with core.DeviceScope(CPU):
        net.ConstantFill([], "a", shape=[1], value=1.0)
    with core.DeviceScope(GPU1):
        net.Copy("a", "b")
        net.Sum(["a", "b"], "c")
    with core.DeviceScope(CPU):
        net.Copy("c", "d")
    return net


def test_inject_cross_device_copies():
    new_net, blob_to_device = core.InjectCrossDeviceCopies(_mixed_device_net("cross_dev"))
    assert new_net.Name() == "cross_dev_cross_device"
    ops = [
        (op.type, list(op.input), list(op.output), op.device_option.device_type)
        for op in new_net.Proto().op
    ]
    assert ops == [
        ("ConstantFill", [], ["a"], caffe2_pb2.CPU),
        ("CopyCPUToGPU", ["a"], ["a_cuda_1"], caffe2_pb2.CUDA),
        ("Copy", ["a_cuda_1"], ["b"], caffe2_pb2.CUDA),
        ("Sum", ["a_cuda_1", "b"], ["c"], caffe2_pb2.CUDA),
        ("CopyGPUToCPU", ["c"], ["c_cpu"], caffe2_pb2.CUDA),
        ("Copy", ["c_cpu"], ["d"], caffe2_pb2.CPU),
    ]
    assert core.device_equal(blob_to_device["a_cuda_1"], GPU1)
    assert core.device_equal(blob_to_device["d"], CPU)


def test_inject_copies_among_nets_reuses_copies():
    first = core.Net("among_first")
    with core.DeviceScope(CPU):
        first.ConstantFill([], "w", shape=[1], value=1.0)
    second = core.Net("among_second")
    with core.DeviceScope(GPU1):
        second.Copy("w", "w2")
    third = core.Net("among_third")
    with core.DeviceScope(GPU1):
        third.Copy("w", "w3")
    new_nets, blob_to_device = core.InjectDeviceCopiesAmongNets([first, second, third])
    assert [op.type for op in new_nets[1].Proto().op] == ["CopyCPUToGPU", "Copy"]
    # The copy made by the second net is an input of the third.
    assert [op.type for op in new_nets[2].Proto().op] == ["Copy"]
    assert list(new_nets[2].Proto().op[0].input) == ["w_cuda_1"]
    assert "w_cuda_1" in new_nets[2].Proto().external_input
    assert len(core.InjectDeviceCopiesAmongNetsWithoutB2D([first, second])) == 2


def test_place_holder_ops_use_the_op_device():
    net = core.Net("placeholder")
    with core.DeviceScope(GPU1):
        net.Copy("x", "y")
    inputs, outputs = core.InferOpDeviceAsBlobDevices(net.Proto().op[0])
    assert core.device_equal(inputs[0], GPU1)
    new_net, _ = core.InjectCrossDeviceCopies(
        net, blob_to_device={"x": CPU}, placeHolderOps={"Copy"}
    )
    assert [op.type for op in new_net.Proto().op] == ["CopyCPUToGPU", "Copy"]
