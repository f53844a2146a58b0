"""The NCCL ops (distributed/nccl): the single-process NCCL* ops over one tensor per GPU, and the
NCCL engine of the communication ops on a world of this one process. Worlds of several processes
are in tests/python/distributed/test_nccl_world.py.

The schema checks run anywhere; everything else needs one GPU, and the collectives across GPUs
need two (they use up to four)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from cuda_test_util import NUM_GPUS, gpu_module

# NCCL has no CPU stand-in: these checks need real GPUs whatever the harness's CPU mode says.
needs_gpu = pytest.mark.skipif(NUM_GPUS == 0, reason="NCCL needs a GPU; none on this machine")
needs_two_gpus = pytest.mark.skipif(NUM_GPUS < 2, reason="fewer than 2 GPUs")


def gpu(i=0):
    return caffe2_pb2.DeviceOption(device_type=caffe2_pb2.CUDA, cuda_gpu_id=i)


HAS_NCCL = gpu_module is not None and \
    "Allreduce_ENGINE_NCCL" in gpu_module.registered_cuda_operators()
needs_nccl = pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL")

_NCCL_OPS = ["NCCLAllreduce", "NCCLBroadcast", "NCCLReduce", "NCCLAllGather",
             "NCCLReduceScatter"]
_ENGINE_OPS = ["CreateCommonWorld_ENGINE_NCCL", "CloneCommonWorld_ENGINE_NCCL",
               "DestroyCommonWorld_ENGINE_NCCL", "Allreduce_ENGINE_NCCL",
               "Broadcast_ENGINE_NCCL", "Allgather_ENGINE_NCCL", "ReduceScatter_ENGINE_NCCL"]
# Without NCCL the NCCL* ops are stubs that say so and the engine is not registered.
COVERED_OPS = _NCCL_OPS + (_ENGINE_OPS if HAS_NCCL else [])

GROUP_SIZES = [n for n in (2, 3, 4) if n <= NUM_GPUS]


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def feed(values):
    """Feeds values[i] to blob 'x<i>' on GPU i; returns the names."""
    names = []
    for i, v in enumerate(values):
        workspace.FeedBlob("x{}".format(i), v, gpu(i))
        names.append("x{}".format(i))
    return names


def run(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(core.CreateOperator(op_type, inputs, outputs,
                                                  device_option=gpu(0), **kwargs))
    return [workspace.FetchBlob(o) for o in outputs]


def blob_gpu(name):
    """The GPU a blob's tensor lives on (from its serialized device_detail)."""
    proto = caffe2_pb2.BlobProto.FromString(workspace.SerializeBlob(name))
    assert proto.tensor.device_detail.device_type == caffe2_pb2.CUDA, name
    return proto.tensor.device_detail.cuda_gpu_id


def per_gpu(n, shape=(3, 4), dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return [(rng.randn(*shape) * 4).astype(dtype) for _ in range(n)]


# ------------------------------------------------------------------- schemas (no GPU needed)

def test_device_inference_puts_input_i_on_gpu_i():
    op = core.CreateOperator("NCCLAllreduce", ["a", "b", "c"], ["a", "b", "c"])
    ins, outs = core.InferOpBlobDevices(op)
    assert [(d.device_type, d.cuda_gpu_id) for d in ins] == [(caffe2_pb2.CUDA, i)
                                                             for i in range(3)]
    assert [d.cuda_gpu_id for d in outs] == [0, 1, 2]
    _, outs = core.InferOpBlobDevices(
        core.CreateOperator("NCCLReduce", ["a", "b", "c"], ["y"], root=2))
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


@pytest.mark.parametrize("op_type,inputs,outputs,match", [
    # NCCLBroadcast works in place only.
    ("NCCLBroadcast", ["a", "b"], ["y0", "y1"], r"must be the same blob: this op runs in place"),
    # NCCLReduce may reuse input 0 only.
    ("NCCLReduce", ["a", "b"], ["b"], r"input 1 and output 0 are both 'b', but this op cannot "
                                      r"run in place"),
    # one output per input
    ("NCCLAllreduce", ["a", "b"], ["y0"], r"2 inputs and 1 outputs is not an allowed"),
    # the gathered / scattered outputs never alias the inputs
    ("NCCLAllGather", ["a", "b"], ["a", "b"], r"cannot run in place"),
    ("NCCLReduceScatter", ["a", "b"], ["y0", "b"], r"cannot run in place"),
])
def test_schema_rules_are_checked_before_anything_runs(op_type, inputs, outputs, match):
    for name in inputs:
        workspace.FeedBlob(name, np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match=match):
        workspace.RunOperatorOnce(core.CreateOperator(op_type, inputs, outputs,
                                                      device_option=gpu(0)))


@pytest.mark.parametrize("op_type", _NCCL_OPS)
def test_no_gradient(op_type):
    outputs = {"NCCLReduce": ["y"], "NCCLBroadcast": ["a", "b"]}.get(op_type, ["y0", "y1"])
    op = core.CreateOperator(op_type, ["a", "b"], outputs)
    grad_ops, input_grads = core.GradientRegistry.GetGradientForOp(
        op, [o + "_grad" for o in op.output])
    assert list(grad_ops) == []
    assert all(g is None for g in input_grads)


# ------------------------------------------------------------ a group of one (one GPU)

@needs_gpu
@pytest.mark.parametrize("op_type", ["NCCLAllreduce", "NCCLBroadcast", "NCCLReduce"])
def test_one_input_in_place_is_a_no_op(op_type):
    x = per_gpu(1)[0]
    names = feed([x])
    out = run(op_type, names, names)
    np.testing.assert_array_equal(out[0], x)


@needs_gpu
@pytest.mark.parametrize("op_type,shape,expected_shape", [
    ("NCCLAllreduce", (3, 4), (3, 4)),
    ("NCCLReduce", (3, 4), (3, 4)),
    ("NCCLAllGather", (3, 4), (1, 3, 4)),
    ("NCCLReduceScatter", (1, 3, 4), (3, 4)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_one_input_copies(op_type, shape, expected_shape, dtype):
    x = per_gpu(1, shape, dtype)[0]
    names = feed([x])
    y = run(op_type, names, ["y"])[0]
    assert y.shape == expected_shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y.reshape(x.shape), x)
    # the input is untouched
    np.testing.assert_array_equal(workspace.FetchBlob("x0"), x)


# ------------------------------------------------------------- errors (one GPU is enough)

@needs_gpu
def test_cpu_input_is_named():
    workspace.FeedBlob("x0", np.ones(4, np.float32), gpu(0))
    workspace.FeedBlob("host", np.ones(4, np.float32))
    with pytest.raises(RuntimeError, match=r"\[NCCLAllreduce\] input 1 \('host'\) is a CPU tensor"):
        run("NCCLAllreduce", ["x0", "host"], ["x0", "host"])


@needs_gpu
def test_two_inputs_on_one_gpu_are_named():
    workspace.FeedBlob("a", np.ones(4, np.float32), gpu(0))
    workspace.FeedBlob("b", np.ones(4, np.float32), gpu(0))
    with pytest.raises(RuntimeError, match=r"\[NCCLAllreduce\] input 0 \('a'\) and input 1 "
                                           r"\('b'\) are both on GPU 0"):
        run("NCCLAllreduce", ["a", "b"], ["a", "b"])


@needs_gpu
def test_unsupported_dtype_is_named():
    names = feed([np.array([True, False])])
    with pytest.raises(RuntimeError, match=r"input 0 \('x0'\) has dtype BOOL, which NCCL cannot "
                                           r"carry; supported: FLOAT, FLOAT16, DOUBLE"):
        run("NCCLAllreduce", names, names)


@needs_gpu
@pytest.mark.parametrize("op_type", ["NCCLBroadcast", "NCCLReduce"])
def test_root_out_of_range(op_type):
    names = feed([np.ones(2, np.float32)])
    outputs = names if op_type == "NCCLBroadcast" else ["y"]
    with pytest.raises(RuntimeError, match=r"root 1 is not an input index: the op has 1 input"):
        run(op_type, names, outputs, root=1)


@needs_gpu
def test_reduce_scatter_needs_one_block_per_input():
    names = feed([np.ones((3, 2), np.float32)])
    with pytest.raises(RuntimeError, match=r"input 0 \('x0'\) has dims \(3, 2\); its first "
                                           r"dimension must be the number of inputs \(1\)"):
        run("NCCLReduceScatter", names, ["y"])


# --------------------------------------------------------------- across GPUs (two or more)

@needs_two_gpus
def test_mismatched_sizes_are_named():
    names = feed([np.ones(4, np.float32), np.ones(5, np.float32)])
    with pytest.raises(RuntimeError, match=r"same dtype and size: input 0 \('x0'\) is FLOAT "
                                           r"\(4,\) but input 1 \('x1'\) is FLOAT \(5,\)"):
        run("NCCLAllreduce", names, names)


@needs_two_gpus
def test_reduce_in_place_needs_root_zero():
    names = feed(per_gpu(2))
    with pytest.raises(RuntimeError, match=r"in place, which can hold the sum only with root 0; "
                                           r"got root 1"):
        run("NCCLReduce", names, ["x0"], root=1)


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.int64])
def test_allreduce(n, in_place, dtype):
    xs = per_gpu(n, (5, 7), dtype, seed=n)
    names = feed(xs)
    outputs = names if in_place else ["y{}".format(i) for i in range(n)]
    expected = np.sum(np.stack([x.astype(np.float64) for x in xs]), axis=0)
    # twice: the second run reuses the cached communicators
    for _ in range(2):
        feed(xs)
        for i, y in enumerate(run("NCCLAllreduce", names, outputs)):
            assert y.dtype == dtype and y.shape == (5, 7)
            assert blob_gpu(outputs[i]) == i
            np.testing.assert_allclose(y.astype(np.float64), expected,
                                       rtol=2e-3 if dtype == np.float16 else 1e-6, atol=0.1
                                       if dtype == np.float16 else 1e-5)


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_broadcast(n):
    xs = per_gpu(n, (4, 3), seed=3)
    for root in range(n):
        names = feed(xs)
        for y in run("NCCLBroadcast", names, names, root=root):
            np.testing.assert_array_equal(y, xs[root])


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_reduce(n):
    xs = per_gpu(n, (6,), seed=4)
    for root in range(n):
        names = feed(xs)
        y = run("NCCLReduce", names, ["y"], root=root)[0]
        np.testing.assert_allclose(y, np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)
        assert blob_gpu("y") == root
    names = feed(xs)
    y = run("NCCLReduce", names, ["x0"])[0]  # in place on input 0, root 0
    np.testing.assert_allclose(y, np.sum(xs, axis=0), rtol=1e-5, atol=1e-5)


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_all_gather(n):
    xs = per_gpu(n, (2, 3), np.int32, seed=5)
    names = feed(xs)
    for i, y in enumerate(run("NCCLAllGather", names, ["y{}".format(i) for i in range(n)])):
        assert y.shape == (n, 2, 3) and blob_gpu("y{}".format(i)) == i
        np.testing.assert_array_equal(y, np.stack(xs))


@needs_two_gpus
@pytest.mark.parametrize("n", GROUP_SIZES)
def test_reduce_scatter(n):
    xs = per_gpu(n, (n, 2, 3), seed=6)
    names = feed(xs)
    total = np.sum(xs, axis=0)
    outs = run("NCCLReduceScatter", names, ["y{}".format(i) for i in range(n)])
    for i, y in enumerate(outs):
        assert y.shape == (2, 3) and blob_gpu("y{}".format(i)) == i
        np.testing.assert_allclose(y, total[i], rtol=1e-5, atol=1e-5)


@needs_two_gpus
def test_in_a_net_run_repeatedly():
    xs = per_gpu(2, (8,), seed=7)
    names = feed(xs)
    net = core.Net("nccl_net")
    net.NCCLAllreduce(names, names, device_option=gpu(0))
    workspace.CreateNet(net)
    expected = xs[0] + xs[1]
    for it in range(3):
        workspace.RunNet(net.Proto().name)
        for name in names:
            np.testing.assert_allclose(workspace.FetchBlob(name), expected, rtol=1e-5)
        expected = expected * 2


# ------------------------------------------ the NCCL engine on a world of one process

def create_world(tmp_path, gpus=None, name="cw_op", blob="cw", **kwargs):
    workspace.RunOperatorOnce(core.CreateOperator(
        "FileStoreHandlerCreate", [], ["store"], path=str(tmp_path), prefix="run"))
    if gpus is not None:
        kwargs["gpus"] = gpus
    workspace.RunOperatorOnce(core.CreateOperator(
        "CreateCommonWorld", ["store"], [blob], name=name, engine="NCCL", size=1, rank=0,
        timeout_ms=20000, device_option=gpu(0), **kwargs))


def engine_op(op_type, inputs, outputs, **kwargs):
    workspace.RunOperatorOnce(core.CreateOperator(op_type, inputs, outputs, engine="NCCL",
                                                  device_option=gpu(0), **kwargs))


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
    with pytest.raises(RuntimeError, match=r"\[Allreduce\] input 1 \('host'\) is on CPU but buffer "
                                           r"0 must be on GPU 0"):
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
        workspace.RunOperatorOnce(core.CreateOperator(
            "CreateCommonWorld", [], ["w"], name="w_op", engine="NCCL", size=1, rank=0,
            mpi_rendezvous=True, device_option=gpu(0)))
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
        np.testing.assert_allclose(workspace.FetchBlob(name), np.sum(xs, axis=0), rtol=1e-5,
                                   atol=1e-5)
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
        np.testing.assert_allclose(workspace.FetchBlob(name), np.sum(xs, axis=0), rtol=1e-5,
                                   atol=1e-5)
    # buffers out of the world's GPU order are refused
    if n >= 2:
        swapped = [names[1], names[0]] + names[2:]
        with pytest.raises(RuntimeError, match=r"is on CUDA:1 but buffer 0 must be on GPU 0"):
            engine_op("Allreduce", ["cw"] + swapped, swapped)
