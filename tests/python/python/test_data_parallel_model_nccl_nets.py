"""data_parallel_model with the NCCL engine across hosts: one world reducing every gradient on the
GPUs, broadcasts, staging of host blobs, bucketing, and when the engine is chosen (built, not
run)."""
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace
from caffe2.python import data_parallel_model as dpm

from dpm_test_util import (
    args,
    COLLECTIVES,
    fc_forward,
    GLOO,
    gloo_model,
    HAS_NCCL,
    no_input,
    ops_of,
    pretend_registered,
    sgd,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


# ------------------------------- multi-host GPU nets, NCCL engine (not run)

NCCL_COLLECTIVES = COLLECTIVES + ("DestroyCommonWorld",)


def nccl_model(forward=fc_forward, rendezvous=None, devices=(0, 1), **kwargs):
    model = model_helper.ModelHelper(name="dpm_nccl")
    with pretend_registered(*NCCL_COLLECTIVES):
        dpm.Parallelize_GPU(
            model,
            no_input,
            forward,
            optimizer_builder_fun=sgd,
            devices=list(devices),
            rendezvous=rendezvous or dict(GLOO, engine="NCCL"),
            **kwargs,
        )
    return model


def test_nccl_one_world_reduces_every_gradient_on_the_gpus():
    model = nccl_model(max_concurrent_distributed_ops=4)
    init_ops = model.param_init_net.Proto().op
    create = ops_of(model.param_init_net, "CreateCommonWorld")
    assert [(op.name, list(op.input), list(op.output), op.engine) for op in create] == [
        ("allreduce_0_cw_op", ["store_handler"], ["allreduce_0_cw"], "NCCL")
    ]
    assert args(create[0]) == dict(
        size=2, rank=0, timeout_ms=30000, gpus=[0, 1], status_blob="create_allreduce_cw_0_status"
    )
    assert (create[0].device_option.device_type, create[0].device_option.cuda_gpu_id) == (
        caffe2_pb2.CUDA,
        0,
    )
    clones = [op for op in init_ops if op.type == "CloneCommonWorld"]
    assert [(op.name, list(op.input), op.engine) for op in clones] == [
        ("broadcast_0_cw_op", ["allreduce_0_cw"], "NCCL")
    ]
    allreduce = ops_of(model.net, "Allreduce")
    grads = ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    assert [op.name for op in allreduce] == grads
    # one world whatever max_concurrent_distributed_ops says, chained into one order
    assert [list(op.input) for op in allreduce] == [
        ["allreduce_0_cw", "gpu_0/" + g, "gpu_1/" + g] for g in grads
    ]
    assert [list(op.control_input) for op in allreduce] == [
        [],
        ["gpu_0/fc2_b_grad"],
        ["gpu_0/fc2_w_grad"],
        ["gpu_0/fc1_b_grad"],
    ]
    assert all(list(op.output) == list(op.input[1:]) for op in allreduce)
    assert all(
        op.engine == "NCCL"
        and op.device_option.device_type == caffe2_pb2.CUDA
        and op.device_option.cuda_gpu_id == 0
        for op in allreduce
    )
    assert [args(op) for op in allreduce] == [
        dict(status_blob="allreduce_{}_status".format(g)) for g in grads
    ]
    # no host copies, no local Sum tree
    assert not ops_of(model.net, "Sum") and not ops_of(model.net, "CopyGPUToCPU")
    dpm._AnalyzeOperators(model)


def test_nccl_initial_broadcast_of_gpu_params():
    model = nccl_model()
    bcast = ops_of(model.param_init_net, "Broadcast")
    names = sorted(
        [
            "fc1_w",
            "fc1_b",
            "fc2_w",
            "fc2_b",
            "fc1_w_momentum",
            "fc1_b_momentum",
            "fc2_w_momentum",
            "fc2_b_momentum",
        ]
    )
    assert [op.name for op in bcast] == names
    assert [list(op.input) for op in bcast] == [
        ["broadcast_0_cw", "gpu_0/" + n, "gpu_1/" + n] for n in names
    ]
    assert all(
        op.engine == "NCCL" and op.device_option.device_type == caffe2_pb2.CUDA for op in bcast
    )
    assert "root" not in args(bcast[0])  # rank 0's first GPU
    assert not ops_of(model.param_init_net, "CopyGPUToCPU")


def conv_bn_forward_with_host_counter(model, loss_scale):
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        model.param_init_net.ConstantFill(
            [], "counter", shape=[1], value=0, dtype=core.DataType.INT64
        )
    return fc_forward(model, loss_scale)


@pytest.mark.skipif(
    not core.IsOperator("CopyCPUToGPU"),
    reason="a build without CUDA (the sanitizer build) has no GPU copy ops to build the net from",
)
def test_nccl_stages_host_blobs_through_the_gpus():
    model = nccl_model(forward=conv_bn_forward_with_host_counter)
    ops = model.param_init_net.Proto().op
    to_gpu = [
        (list(op.input), list(op.output), op.device_option.cuda_gpu_id)
        for op in ops
        if op.type == "CopyCPUToGPU"
    ]
    assert to_gpu == [
        (["gpu_0/counter"], ["gpu_0/counter_nccl_stage"], 0),
        (["gpu_1/counter"], ["gpu_1/counter_nccl_stage"], 1),
    ]
    bcast = [op for op in ops if op.type == "Broadcast" and op.name == "counter"][0]
    assert list(bcast.input) == [
        "broadcast_0_cw",
        "gpu_0/counter_nccl_stage",
        "gpu_1/counter_nccl_stage",
    ]
    back = [
        (list(op.input), list(op.output), op.device_option.cuda_gpu_id)
        for op in ops
        if op.type == "CopyGPUToCPU"
    ]
    assert back == [
        (["gpu_0/counter_nccl_stage"], ["gpu_0/counter"], 0),
        (["gpu_1/counter_nccl_stage"], ["gpu_1/counter"], 1),
    ]
    where = {op.type: i for i, op in enumerate(ops) if "counter" in "".join(op.input) + op.name}
    assert where["CopyCPUToGPU"] < where["Broadcast"] < where["CopyGPUToCPU"]


def test_nccl_bucketing():
    model = nccl_model(bucket_size_mb=1)
    allreduce = ops_of(model.net, "Allreduce")
    assert [op.name for op in allreduce] == ["dpm_bucket_0"]
    assert list(allreduce[0].input) == [
        "allreduce_0_cw",
        "gpu_0/dpm_bucket_0",
        "gpu_1/dpm_bucket_0",
    ]
    assert args(allreduce[0]) == dict(status_blob="allreduce_dpm_bucket_0_status")
    dpm._AnalyzeOperators(model)


@pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL engine")
def test_gpu_model_with_gloo_rendezvous_switches_to_nccl():
    model = nccl_model(rendezvous=dict(GLOO))
    assert {
        op.engine
        for op in model.param_init_net.Proto().op
        if "CommonWorld" in op.type or op.type == "Broadcast"
    } == {"NCCL"}
    assert {op.engine for op in ops_of(model.net, "Allreduce")} == {"NCCL"}
    assert model._rendezvous["engine"] == "GLOO"  # the CPU-side helpers keep Gloo


def test_gpu_model_with_mpi_rendezvous_keeps_gloo():
    model = nccl_model(rendezvous=dict(GLOO, kv_handler=None, mpi_rendezvous=True))
    assert {op.engine for op in ops_of(model.net, "Allreduce")} == {"GLOO"}
    create = ops_of(model.param_init_net, "CreateCommonWorld")[0]
    assert "gpus" not in args(create)


def test_cpu_model_keeps_gloo_with_an_nccl_build():
    model = gloo_model()
    assert {op.engine for op in ops_of(model.net, "Allreduce")} == {"GLOO"}


@pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL engine")
def test_gloo_world_for_host_blobs_of_an_nccl_model():
    """AddDistributedBlobSync sums host blobs with the rendezvous' Gloo: it makes a Gloo world
    of its own instead of cloning the NCCL one."""
    model = nccl_model(rendezvous=dict(GLOO))
    with pretend_registered(*NCCL_COLLECTIVES):
        dpm.AddDistributedBlobSync(model, ["hosts_seen"])
    create = ops_of(model.param_init_net, "CreateCommonWorld")
    assert [(op.output[0], op.engine) for op in create] == [
        ("allreduce_0_cw", "NCCL"),
        ("blob_sync_cw_hosts_seen", "GLOO"),
    ]
    assert not [
        op for op in ops_of(model.param_init_net, "CloneCommonWorld") if op.engine == "GLOO"
    ]
