"""data_parallel_model: the structure of the GPU and multi-host (Gloo) nets, built without running
them (no GPU here; the multi-process runs are in tests/python/distributed). The NCCL nets,
bucketing and BMUF have files of their own."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace
from caffe2.python import data_parallel_model as dpm
from caffe2.python import data_parallel_model_utils as dpm_utils

from dpm_test_util import (
    args,
    COLLECTIVES,
    conv_bn_forward,
    fc_forward,
    GLOO,
    gloo_model,
    gpu_model,
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


# ------------------------------------------------ GPU nets (not run)


def sum_tree(model, grad):
    return [
        (op.device_option.cuda_gpu_id, [int(b.split("/")[0][4:]) for b in op.input])
        for op in ops_of(model.net, "Sum")
        if op.output[0].endswith("/" + grad)
    ]


@pytest.mark.parametrize(
    "devices,tree",
    [
        ([0, 1], [(0, [0, 1])]),
        ([0, 1, 2, 3], [(0, [0, 1]), (2, [2, 3]), (0, [0, 2])]),
        (
            [0, 1, 2, 3, 4, 5, 6, 7],
            [
                (0, [0, 1]),
                (2, [2, 3]),
                (4, [4, 5]),
                (6, [6, 7]),
                (0, [0, 2]),
                (4, [4, 6]),
                (0, [0, 4]),
            ],
        ),
        (
            list(range(16)),
            [(2 * j, [2 * j, 2 * j + 1]) for j in range(8)]
            + [(4 * j, [4 * j, 4 * j + 2]) for j in range(4)]
            + [(0, [0, 4]), (8, [8, 12]), (0, [0, 8])],
        ),
        ([0, 1, 2], [(0, [0, 1, 2])]),
    ],
)
def test_gpu_sum_tree(devices, tree):
    model = gpu_model(devices)
    assert model._device_prefix == "gpu"
    for grad in ["fc1_w_grad", "fc1_b_grad", "fc2_w_grad", "fc2_b_grad"]:
        assert sum_tree(model, grad) == tree
    sums = ops_of(model.net, "Sum")
    assert all(
        op.name == "dpm"
        and op.device_option.device_type == caffe2_pb2.CUDA
        and list(op.output) == [op.input[0]]
        for op in sums
    )
    # Reverse parameter order.
    order = []
    for op in sums:
        name = op.output[0].split("/", 1)[1]
        if name not in order:
            order.append(name)
    assert order == ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    # Broadcast: Copy from the master under the destination GPU.
    copies = [
        (op.input[0], op.output[0], op.device_option.cuda_gpu_id, op.device_option.device_type)
        for op in ops_of(model.net, "Copy")
        if op.input[0].endswith("fc1_w_grad")
    ]
    assert copies == [
        ("gpu_0/fc1_w_grad", "gpu_{}/fc1_w_grad".format(d), d, caffe2_pb2.CUDA) for d in devices[1:]
    ]
    dpm._AnalyzeOperators(model)
    assert dpm.GetLearningRateBlobNames(model) == [
        "SgdOptimizer_{}_lr_gpu{}".format(model._optimizer._instance_num, d) for d in devices
    ]
    lrs = sorted(op.output[0] for op in ops_of(model.net, "LearningRate"))
    assert lrs == sorted(dpm.GetLearningRateBlobNames(model))
    init_copies = ops_of(model.param_init_net, "Copy")
    assert {op.device_option.cuda_gpu_id for op in init_copies} == set(devices[1:])


def test_gpu_sum_tree_copies_to_the_first_device_without_peer_access(monkeypatch):
    access = np.ones((4, 4), dtype=bool)
    access[0, 1] = access[1, 0] = False
    access[0, 2] = access[2, 0] = False
    monkeypatch.setattr(workspace, "GetCudaPeerAccessPattern", lambda: access)
    model = gpu_model([0, 1, 2, 3])
    peer_copies = [op for op in ops_of(model.net, "Copy") if op.output[0].endswith("_copy")]
    assert [
        (op.input[0], op.output[0], op.device_option.cuda_gpu_id)
        for op in peer_copies
        if "fc1_w_grad" in op.input[0]
    ] == [
        ("gpu_1/fc1_w_grad", "gpu_0/fc1_w_grad_gpu1_copy", 0),
        ("gpu_2/fc1_w_grad", "gpu_0/fc1_w_grad_gpu2_copy", 0),
    ]
    assert [
        list(op.input) for op in ops_of(model.net, "Sum") if op.output[0] == "gpu_0/fc1_w_grad"
    ] == [
        ["gpu_0/fc1_w_grad", "gpu_0/fc1_w_grad_gpu1_copy"],
        ["gpu_0/fc1_w_grad", "gpu_0/fc1_w_grad_gpu2_copy"],
    ]
    assert [
        list(op.input) for op in ops_of(model.net, "Sum") if op.output[0] == "gpu_2/fc1_w_grad"
    ] == [["gpu_2/fc1_w_grad", "gpu_3/fc1_w_grad"]]
    dpm._AnalyzeOperators(model)


def test_gpu_nccl_allreduce_is_serialized_by_control_inputs():
    model = gpu_model([0, 1, 2, 3], use_nccl=True)
    nccl = ops_of(model.net, "NCCLAllreduce")
    grads = ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    assert [list(op.input) for op in nccl] == [
        ["gpu_{}/{}".format(d, g) for d in range(4)] for g in grads
    ]
    assert all(list(op.output) == list(op.input) for op in nccl)
    assert [list(op.control_input) for op in nccl] == [
        [],
        ["gpu_0/fc2_b_grad"],
        ["gpu_0/fc2_w_grad"],
        ["gpu_0/fc1_b_grad"],
    ]
    assert not ops_of(model.net, "Sum")
    assert all(op.device_option.cuda_gpu_id == 0 for op in nccl)


def test_gpu_nccl_broadcasts_computed_params():
    model = model_helper.ModelHelper(name="dpm_gpu")
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(
            model,
            no_input,
            conv_bn_forward,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
            use_nccl=True,
        )
    bcast = ops_of(model.net, "NCCLBroadcast")
    assert [list(op.input) for op in bcast] == [
        ["gpu_0/bn_rm", "gpu_1/bn_rm"],
        ["gpu_0/bn_riv", "gpu_1/bn_riv"],
    ]
    assert all(args(op)["root"] == 0 for op in bcast)


def test_analyze_operators_rejects_cross_device_gpu_ops():
    model = gpu_model([0, 1])
    dpm._AnalyzeOperators(model)  # the built net is clean
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        model.net.Relu("gpu_1/fc1", "gpu_0/bad")
    with pytest.raises(Exception, match="should have namescope gpu_0/"):
        dpm._AnalyzeOperators(model)


def test_shift_activation_devices():
    model = gpu_model([0, 1])
    activations = dpm_utils.GetActivationBlobs(model)
    assert {"fc1", "relu", "fc2"} <= set(activations)
    assert not any(a.endswith("_w") or a.endswith("_b") for a in activations)
    dpm_utils.ShiftActivationDevices(model, ["relu"], {0: 1})
    ops = model.net.Proto().op
    relu = [op for op in ops if op.type == "Relu" and op.output[0] == "gpu_0/relu"][0]
    assert relu.device_option.cuda_gpu_id == 1
    assert list(relu.input) == ["gpu_0/fc1_cuda_1"]
    copy = [op for op in ops if op.output[0] == "gpu_0/fc1_cuda_1"][0]
    assert (copy.type, list(copy.input), copy.device_option.cuda_gpu_id) == (
        "Copy",
        ["gpu_0/fc1"],
        1,
    )
    relu_grad = [
        op for op in ops if op.type == "ReluGradient" and op.output[0] == "gpu_0/fc1_grad"
    ][0]
    assert relu_grad.device_option.cuda_gpu_id == 1
    with pytest.raises(AssertionError):
        dpm_utils.ShiftActivationDevices(model, ["fc1_w"], {0: 1})


# ----------------------------------------- multi-host nets (not run)


def test_gloo_common_worlds():
    model = gloo_model(max_concurrent_distributed_ops=2)
    init_ops = model.param_init_net.Proto().op
    create = [op for op in init_ops if op.type == "CreateCommonWorld"]
    assert len(create) == 1
    assert create[0].name == "allreduce_0_cw_op"
    assert list(create[0].input) == ["store_handler"]
    assert list(create[0].output) == ["allreduce_0_cw"]
    assert create[0].engine == "GLOO"
    assert args(create[0]) == dict(
        size=2, rank=0, timeout_ms=30000, status_blob="create_allreduce_cw_0_status"
    )
    clones = [op for op in init_ops if op.type == "CloneCommonWorld"]
    assert [(op.name, list(op.input), list(op.output), op.engine, args(op)) for op in clones] == [
        (
            "allreduce_1_cw_op",
            ["allreduce_0_cw"],
            ["allreduce_1_cw"],
            "GLOO",
            dict(status_blob="create_allreduce_cw_1_status"),
        ),
        (
            "broadcast_0_cw_op",
            ["allreduce_0_cw"],
            ["broadcast_0_cw"],
            "GLOO",
            dict(status_blob="create_broadcast_cw_0_status"),
        ),
    ]
    assert model.net.Proto().num_workers == 16


def test_gloo_allreduce_per_gradient_in_reverse_order_with_slots():
    model = gloo_model(max_concurrent_distributed_ops=2)
    allreduce = ops_of(model.net, "Allreduce")
    grads = ["fc2_b_grad", "fc2_w_grad", "fc1_b_grad", "fc1_w_grad"]
    assert [op.name for op in allreduce] == grads
    slots = ["allreduce_0_cw", "allreduce_1_cw"] * 2
    assert [list(op.input) for op in allreduce] == [
        [cw, "cpu_0/" + g, "cpu_1/" + g] for cw, g in zip(slots, grads)
    ]
    assert all(list(op.output) == list(op.input[1:]) for op in allreduce)
    assert [args(op) for op in allreduce] == [
        dict(status_blob="allreduce_{}_status".format(g), gpu_direct=0) for g in grads
    ]
    assert all(op.engine == "GLOO" for op in allreduce)
    assert [list(op.control_input) for op in allreduce] == [
        [],
        [],
        ["cpu_0/fc2_b_grad"],
        ["cpu_0/fc2_w_grad"],
    ]
    assert not ops_of(model.net, "Sum")
    # The updates come after the reduction.
    types = [op.type for op in model.net.Proto().op]
    assert max(i for i, t in enumerate(types) if t == "Allreduce") < min(
        i for i, t in enumerate(types) if t == "MomentumSGDUpdate"
    )


def test_gloo_default_slots_and_one_world_per_gradient():
    model = gloo_model()
    allreduce = ops_of(model.net, "Allreduce")
    assert [op.input[0] for op in allreduce] == ["allreduce_{}_cw".format(i) for i in range(4)]
    assert all(not op.control_input for op in allreduce)


def test_gloo_initial_broadcast_in_param_init_net():
    model = gloo_model()
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
        ["broadcast_0_cw", "cpu_0/" + n, "cpu_1/" + n] for n in names
    ]
    assert [args(op) for op in bcast] == [
        dict(status_blob="broadcast_{}_status".format(n)) for n in names
    ]
    assert [list(op.control_input) for op in bcast] == [[]] + [
        ["cpu_0/" + n, "cpu_1/" + n] for n in names[:-1]
    ]
    types = [op.type for op in model.param_init_net.Proto().op]
    fills = [i for i, t in enumerate(types) if t.endswith("Fill")]
    assert max(fills) < types.index("Broadcast")
    assert not ops_of(model.param_init_net, "Copy")


def test_gloo_transport_options():
    rendezvous = dict(
        GLOO,
        transport="ibverbs",
        interface="mlx5_0",
        mpi_rendezvous=False,
        shard_id=1,
        num_shards=3,
    )
    model = gloo_model(rendezvous=rendezvous)
    create = ops_of(model.param_init_net, "CreateCommonWorld")[0]
    assert args(create) == dict(
        size=3,
        rank=1,
        timeout_ms=30000,
        transport="ibverbs",
        interface="mlx5_0",
        mpi_rendezvous=0,
        status_blob="create_allreduce_cw_0_status",
    )
    assert all(args(op)["gpu_direct"] == 1 for op in ops_of(model.net, "Allreduce"))
    scales = {
        op.output[0]: args(op)["scale"]
        for op in ops_of(model.net, "Scale")
        if "grad" not in op.output[0]
    }
    assert scales["cpu_0/scaled_loss"] == pytest.approx(1.0 / 6)


def test_gloo_mpi_rendezvous_has_no_store_input():
    model = gloo_model(rendezvous=dict(GLOO, kv_handler=None, mpi_rendezvous=True))
    create = ops_of(model.param_init_net, "CreateCommonWorld")[0]
    assert list(create.input) == []
    assert args(create)["mpi_rendezvous"] == 1


def test_gloo_computed_params_stay_local():
    model = gloo_model(forward=conv_bn_forward)
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, "Copy")]
    assert copies == [("cpu_0/bn_rm", "cpu_1/bn_rm"), ("cpu_0/bn_riv", "cpu_1/bn_riv")]
    assert [op.name for op in ops_of(model.net, "Allreduce")][0] == "fc_b_grad"


def test_gloo_dynamic_memory_keeps_gradients():
    model = gloo_model(dynamic_memory_management=True)
    freed = {op.input[0] for op in ops_of(model.net, "Free")}
    assert freed
    assert not any(b.endswith("_w_grad") or b.endswith("_b_grad") for b in freed)


def test_gloo_add_distributed_blob_sync():
    model = gloo_model()
    with pretend_registered(*COLLECTIVES):
        dpm.AddDistributedBlobSync(model, ["cpu_0/a", "cpu_0/b"])
    clone = ops_of(model.param_init_net, "CloneCommonWorld")[-1]
    assert list(clone.output) == ["blob_sync_cw_cpu_0/a_cpu_0/b"]
    op = model.net.Proto().op[-1]
    assert op.type == "Allreduce"
    assert list(op.input) == ["blob_sync_cw_cpu_0/a_cpu_0/b", "cpu_0/a", "cpu_0/b"]
    assert args(op)["status_blob"] == "blob_sync_allred_cpu_0/a_cpu_0/b_status"


def test_gloo_add_blob_sync_reuses_the_broadcast_world():
    model = gloo_model()
    with pretend_registered(*COLLECTIVES):
        dpm.AddBlobSync(model, ["extra"])
    op = model.net.Proto().op[-1]
    assert (op.type, op.name, list(op.input)) == (
        "Broadcast",
        "extra",
        ["broadcast_0_cw", "cpu_0/extra", "cpu_1/extra"],
    )
    assert list(op.control_input) == ["cpu_0/fc2_w_momentum", "cpu_1/fc2_w_momentum"]
    assert len(ops_of(model.param_init_net, "CloneCommonWorld")) == 4


def test_create_or_clone_common_world():
    net = core.Net("cw")
    with pretend_registered(*COLLECTIVES):
        a = dpm._CreateOrCloneCommonWorld(net, "a", dict(GLOO), status_blob="sa")
        b = dpm._CreateOrCloneCommonWorld(net, "b", dict(GLOO))
        c = dpm._CreateOrCloneCommonWorld(net, "c", dict(GLOO), timeout_sec=5)
    assert [str(a), str(b), str(c)] == ["a", "b", "c"]
    ops = net.Proto().op
    assert [(op.type, op.name, list(op.input)) for op in ops] == [
        ("CreateCommonWorld", "a_op", ["store_handler"]),
        ("CloneCommonWorld", "b_op", ["a"]),
        ("CreateCommonWorld", "c_op", ["store_handler"]),
    ]
    assert args(ops[2])["timeout_ms"] == 5000
    assert "status_blob" not in args(ops[1])


def test_gpu_gloo_allreduce_runs_on_the_master_gpu():
    model = model_helper.ModelHelper(name="dpm_gpu_gloo")
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(
            model,
            no_input,
            fc_forward,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
            rendezvous=dict(GLOO),
        )
    allreduce = ops_of(model.net, "Allreduce")
    assert len(allreduce) == 4
    # A GPU model rendezvousing through a store switches to NCCL when built.
    assert all(op.engine == ("NCCL" if HAS_NCCL else "GLOO") for op in allreduce)
    assert all(
        op.device_option.device_type == caffe2_pb2.CUDA and op.device_option.cuda_gpu_id == 0
        for op in allreduce
    )
    assert [list(op.input[1:]) for op in allreduce][0] == ["gpu_0/fc2_b_grad", "gpu_1/fc2_b_grad"]
    bcast = ops_of(model.param_init_net, "Broadcast")
    assert all(op.device_option.device_type == caffe2_pb2.CUDA for op in bcast)
    dpm._AnalyzeOperators(model)


def test_gpu_gloo_bucketing_runs_on_each_gpu():
    model = model_helper.ModelHelper(name="dpm_gpu_gloo")
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(
            model,
            no_input,
            fc_forward,
            optimizer_builder_fun=sgd,
            devices=[0, 1],
            rendezvous=dict(GLOO),
            bucket_size_mb=1,
        )
    assert [op.name for op in ops_of(model.net, "Allreduce")] == ["dpm_bucket_0"]
    for op_type in ("FlattenDenseTensors", "UnflattenDenseTensors"):
        ops = ops_of(model.net, op_type)
        assert [(op.device_option.device_type, op.device_option.cuda_gpu_id) for op in ops] == [
            (caffe2_pb2.CUDA, 0),
            (caffe2_pb2.CUDA, 1),
        ]
        assert all(
            b.startswith("gpu_{}/".format(op.device_option.cuda_gpu_id))
            for op in ops
            for b in list(op.input) + list(op.output)
        )
    dpm._AnalyzeOperators(model)
