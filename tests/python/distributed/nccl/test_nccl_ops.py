"""The NCCL ops (distributed/nccl) together: the schemas of the single-process NCCL* ops (device
inference, shape inference, in-place rules, no gradient), a group of one GPU, the root argument,
and the NCCL engine of the communication ops on a world of this one process. Each NCCL* op's own
checks are in its test_nccl_<op>.py; worlds of several processes are in
tests/python/distributed/nccl/test_nccl_world.py.

The schema checks run anywhere; everything else needs one GPU, and the collectives across GPUs
need two (they use up to four)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from nccl_test_util import (
    GROUP_SIZES,
    blob_gpu,
    feed,
    gpu,
    needs_gpu,
    needs_nccl,
    needs_two_gpus,
    per_gpu,
    run,
)

COVERED_CUDA_OPS = [
    "NCCLAllreduce",
    "NCCLBroadcast",
    "NCCLReduce",
    "NCCLAllGather",
    "NCCLReduceScatter",
    "CreateCommonWorld_ENGINE_NCCL",
    "CloneCommonWorld_ENGINE_NCCL",
    "DestroyCommonWorld_ENGINE_NCCL",
    "Allreduce_ENGINE_NCCL",
    "Broadcast_ENGINE_NCCL",
    "Allgather_ENGINE_NCCL",
    "ReduceScatter_ENGINE_NCCL",
]

pytestmark = pytest.mark.device_check

_NCCL_OPS = ["NCCLAllreduce", "NCCLBroadcast", "NCCLReduce", "NCCLAllGather", "NCCLReduceScatter"]


def test_device_inference_puts_input_i_on_gpu_i():
    op = core.CreateOperator("NCCLAllreduce", ["a", "b", "c"], ["a", "b", "c"])
    ins, outs = core.InferOpBlobDevices(op)
    assert [(d.device_type, d.cuda_gpu_id) for d in ins] == [(caffe2_pb2.CUDA, i) for i in range(3)]
    assert [d.cuda_gpu_id for d in outs] == [0, 1, 2]
    _, outs = core.InferOpBlobDevices(
        core.CreateOperator("NCCLReduce", ["a", "b", "c"], ["y"], root=2)
    )
    assert [(d.device_type, d.cuda_gpu_id) for d in outs] == [(caffe2_pb2.CUDA, 2)]


def test_shape_inference():
    workspace.FeedBlob("a", np.zeros((2, 3), np.float32))
    workspace.FeedBlob("b", np.zeros((2, 3), np.float32))
    net = core.Net("shapes")
    net.NCCLAllGather(["a", "b"], ["ga", "gb"])
    net.NCCLReduceScatter(["a", "b"], ["sa", "sb"])
    net.NCCLAllreduce(["a", "b"], ["ra", "rb"])
    shapes, _ = workspace.InferShapesAndTypes([net], {"a": [2, 3], "b": [2, 3]})
    assert shapes["ga"] == [2, 2, 3] and shapes["gb"] == [2, 2, 3]
    assert shapes["sa"] == [3] and shapes["sb"] == [3]
    assert shapes["ra"] == [2, 3]


@pytest.mark.parametrize(
    "op_type,inputs,outputs,match",
    [
        # NCCLBroadcast works in place only.
        (
            "NCCLBroadcast",
            ["a", "b"],
            ["y0", "y1"],
            r"must be the same blob: this op runs in place",
        ),
        # NCCLReduce may reuse input 0 only.
        (
            "NCCLReduce",
            ["a", "b"],
            ["b"],
            r"input 1 and output 0 are both 'b', but this op cannot " r"run in place",
        ),
        # one output per input
        ("NCCLAllreduce", ["a", "b"], ["y0"], r"2 inputs and 1 outputs is not an allowed"),
        # the gathered / scattered outputs never alias the inputs
        ("NCCLAllGather", ["a", "b"], ["a", "b"], r"cannot run in place"),
        ("NCCLReduceScatter", ["a", "b"], ["y0", "b"], r"cannot run in place"),
    ],
)
def test_schema_rules_are_checked_before_anything_runs(op_type, inputs, outputs, match):
    for name in inputs:
        workspace.FeedBlob(name, np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match=match):
        workspace.RunOperatorOnce(
            core.CreateOperator(op_type, inputs, outputs, device_option=gpu(0))
        )


@pytest.mark.parametrize("op_type", _NCCL_OPS)
def test_no_gradient(op_type):
    outputs = {"NCCLReduce": ["y"], "NCCLBroadcast": ["a", "b"]}.get(op_type, ["y0", "y1"])
    op = core.CreateOperator(op_type, ["a", "b"], outputs)
    grad_ops, input_grads = core.GradientRegistry.GetGradientForOp(
        op, [o + "_grad" for o in op.output]
    )
    assert list(grad_ops) == []
    assert all(g is None for g in input_grads)


@needs_gpu
@pytest.mark.parametrize("op_type", ["NCCLAllreduce", "NCCLBroadcast", "NCCLReduce"])
def test_one_input_in_place_is_a_no_op(op_type):
    x = per_gpu(1)[0]
    names = feed([x])
    out = run(op_type, names, names)
    np.testing.assert_array_equal(out[0], x)


@needs_gpu
@pytest.mark.parametrize(
    "op_type,shape,expected_shape",
    [
        ("NCCLAllreduce", (3, 4), (3, 4)),
        ("NCCLReduce", (3, 4), (3, 4)),
        ("NCCLAllGather", (3, 4), (1, 3, 4)),
        ("NCCLReduceScatter", (1, 3, 4), (3, 4)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_one_input_copies(op_type, shape, expected_shape, dtype):
    x = per_gpu(1, shape, dtype)[0]
    names = feed([x])
    y = run(op_type, names, ["y"])[0]
    assert y.shape == expected_shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y.reshape(x.shape), x)
    # the input is untouched
    np.testing.assert_array_equal(workspace.FetchBlob("x0"), x)


@needs_gpu
@pytest.mark.parametrize("op_type", ["NCCLBroadcast", "NCCLReduce"])
def test_root_out_of_range(op_type):
    names = feed([np.ones(2, np.float32)])
    outputs = names if op_type == "NCCLBroadcast" else ["y"]
    with pytest.raises(RuntimeError, match=r"root 1 is not an input index: the op has 1 input"):
        run(op_type, names, outputs, root=1)


def create_world(tmp_path, gpus=None, name="cw_op", blob="cw", **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "FileStoreHandlerCreate", [], ["store"], path=str(tmp_path), prefix="run"
        )
    )
    if gpus is not None:
        kwargs["gpus"] = gpus
    workspace.RunOperatorOnce(
        core.CreateOperator(
            "CreateCommonWorld",
            ["store"],
            [blob],
            name=name,
            engine="NCCL",
            size=1,
            rank=0,
            timeout_ms=20000,
            device_option=gpu(0),
            **kwargs,
        )
    )


def engine_op(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(
        core.CreateOperator(op_type, inputs, outputs, engine="NCCL", device_option=gpu(0), **kwargs)
    )


@needs_nccl
@needs_gpu
def test_one_rank_world(tmp_path):
    create_world(tmp_path, status_blob="cw_status")
    x = np.arange(6, dtype=np.float32)
    workspace.FeedBlob("x", x, gpu(0))
    engine_op("Allreduce", ["cw", "x"], ["x"], status_blob="ar_status")
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x)
    engine_op("Broadcast", ["cw", "x"], ["x"], root=0)
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x)
    engine_op("Allgather", ["cw", "x"], ["gathered"])
    np.testing.assert_array_equal(workspace.FetchBlob("gathered"), x)
    workspace.FeedBlob("counts", np.array([6], np.int32))
    engine_op("ReduceScatter", ["cw", "x", "counts"], ["x", "counts"])
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x)
    # success never writes the status blobs
    assert workspace.HasBlob("cw_status") and workspace.HasBlob("ar_status")
    engine_op("CloneCommonWorld", ["cw"], ["cw2"], name="cw2_op")
    engine_op("Allreduce", ["cw2", "x"], ["x"])
    np.testing.assert_array_equal(workspace.FetchBlob("x"), x)
    engine_op("DestroyCommonWorld", ["cw2"], ["cw2"])
    with pytest.raises(RuntimeError, match="NCCL common world"):
        engine_op("Allreduce", ["cw2", "x"], ["x"])


@needs_nccl
@needs_gpu
def test_world_errors(tmp_path):
    create_world(tmp_path)
    workspace.FeedBlob("host", np.ones(3, np.float32))
    with pytest.raises(
        RuntimeError,
        match=r"\[Allreduce\] input 1 \('host'\) is on CPU but buffer " r"0 must be on GPU 0",
    ):
        engine_op("Allreduce", ["cw", "host"], ["host"])
    workspace.FeedBlob("x", np.ones(3, np.float32), gpu(0))
    workspace.FeedBlob("x2", np.ones(3, np.float32), gpu(0))
    with pytest.raises(RuntimeError, match=r"takes the common world and 1 buffer\(s\)"):
        engine_op("Allreduce", ["cw", "x", "x2"], ["x", "x2"])
    with pytest.raises(RuntimeError, match="root 1 is not a rank of the 1-process"):
        engine_op("Broadcast", ["cw", "x"], ["x"], root=1)
    workspace.FeedBlob("counts", np.array([2], np.int32))
    with pytest.raises(RuntimeError, match="recv_counts sum to 2 but the buffers hold 3"):
        engine_op("ReduceScatter", ["cw", "x", "counts"], ["x", "counts"])
    workspace.FeedBlob("not_a_world", np.ones(1, np.float32))
    with pytest.raises(RuntimeError, match="must be an NCCL common world"):
        engine_op("Allreduce", ["not_a_world", "x"], ["x"])
    with pytest.raises(RuntimeError, match="mpi_rendezvous is not supported"):
        workspace.RunOperatorOnce(
            core.CreateOperator(
                "CreateCommonWorld",
                [],
                ["w"],
                name="w_op",
                engine="NCCL",
                size=1,
                rank=0,
                mpi_rendezvous=True,
                device_option=gpu(0),
            )
        )
    with pytest.raises(RuntimeError, match="this process already joined it as rank 0"):
        create_world(tmp_path, blob="again")


@needs_nccl
@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_one_process_world_over_several_gpus(tmp_path, n):
    """size 1, n local GPUs: n NCCL ranks in one process, made in one group."""
    create_world(tmp_path, gpus=list(range(n)))
    xs = per_gpu(n, (4,), seed=8)
    names = feed(xs)
    engine_op("Allreduce", ["cw"] + names, names)
    for name in names:
        np.testing.assert_allclose(
            workspace.FetchBlob(name), np.sum(xs, axis=0), rtol=1e-5, atol=1e-5
        )
    names = feed(xs)
    engine_op("Broadcast", ["cw"] + names, names, root=0)
    for name in names:  # the root process's FIRST buffer goes everywhere
        np.testing.assert_array_equal(workspace.FetchBlob(name), xs[0])
    names = feed(xs)
    engine_op("Allgather", ["cw"] + names, ["gathered"])
    np.testing.assert_array_equal(workspace.FetchBlob("gathered"), np.concatenate(xs))
    assert blob_gpu("gathered") == 0
    # ReduceScatter with several GPUs per process: every buffer gets this process's chunk.
    names = feed(xs)
    workspace.FeedBlob("counts", np.array([4], np.int32))
    engine_op("ReduceScatter", ["cw"] + names + ["counts"], names + ["counts"])
    for name in names:
        np.testing.assert_allclose(
            workspace.FetchBlob(name), np.sum(xs, axis=0), rtol=1e-5, atol=1e-5
        )
    # buffers out of the world's GPU order are refused
    if n >= 2:
        swapped = [names[1], names[0]] + names[2:]
        with pytest.raises(RuntimeError, match=r"is on CUDA:1 but buffer 0 must be on GPU 0"):
            engine_op("Allreduce", ["cw"] + swapped, swapped)
