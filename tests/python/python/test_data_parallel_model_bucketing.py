"""data_parallel_model gradient bucketing: unchanged nets without it, small consecutive gradients
fused, big ones alone, control inputs, and the bucket ops round-tripping the gradients."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

from dpm_test_util import (
    args,
    built_model,
    fc_data,
    feed_shards,
    gloo_model,
    ops_of,
)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


# ------------------------------------------------------------ bucketing


def test_no_bucketing_by_default_gives_the_same_nets():
    plain = gloo_model()
    off = gloo_model(bucket_size_mb=0)
    none = gloo_model(bucket_size_mb=None)

    def strip(net):
        ops = []
        for op in net.Proto().op:
            op = caffe2_pb2.OperatorDef.FromString(op.SerializeToString())
            # The optimizer instance number differs between builds.
            op.input[:] = [b.split("_lr_")[-1] for b in op.input]
            op.output[:] = [b.split("_lr_")[-1] for b in op.output]
            ops.append(op)
        return ops

    assert strip(off.net) == strip(plain.net) == strip(none.net)
    assert strip(off.param_init_net) == strip(plain.param_init_net)


def test_bucketing_fuses_small_consecutive_gradients():
    # Gradient bytes, reverse order: fc2_b 12, fc2_w 72, fc1_b 24, fc1_w 120.
    model = gloo_model(bucket_size_mb=100.0 / (1 << 20))
    types = [op.type for op in model.net.Proto().op]
    allreduce = ops_of(model.net, "Allreduce")
    assert [op.name for op in allreduce] == ["dpm_bucket_0", "fc1_b_grad", "fc1_w_grad"]
    assert [list(op.input) for op in allreduce][0] == [
        "allreduce_0_cw",
        "cpu_0/dpm_bucket_0",
        "cpu_1/dpm_bucket_0",
    ]
    assert args(allreduce[0])["status_blob"] == "allreduce_dpm_bucket_0_status"
    flat = ops_of(model.net, "FlattenDenseTensors")
    assert [(list(op.input), list(op.output), op.device_option.cuda_gpu_id) for op in flat] == [
        (
            ["cpu_{}/fc2_b_grad".format(d), "cpu_{}/fc2_w_grad".format(d)],
            ["cpu_{}/dpm_bucket_0".format(d)],
            d,
        )
        for d in (0, 1)
    ]
    unflat = ops_of(model.net, "UnflattenDenseTensors")
    assert [(list(op.input), list(op.output)) for op in unflat] == [
        (
            [
                "cpu_{}/dpm_bucket_0".format(d),
                "cpu_{}/fc2_b_grad".format(d),
                "cpu_{}/fc2_w_grad".format(d),
            ],
            ["cpu_{}/fc2_b_grad".format(d), "cpu_{}/fc2_w_grad".format(d)],
        )
        for d in (0, 1)
    ]
    first_ar = types.index("Allreduce")
    assert types[first_ar - 2 : first_ar] == ["FlattenDenseTensors"] * 2
    assert types[first_ar + 1 : first_ar + 3] == ["UnflattenDenseTensors"] * 2
    assert [str(b) for b in model._bucket_buffers] == ["cpu_0/dpm_bucket_0", "cpu_1/dpm_bucket_0"]


def test_bucketing_larger_buckets_and_big_gradients_alone():
    model = gloo_model(bucket_size_mb=130.0 / (1 << 20))
    allreduce = ops_of(model.net, "Allreduce")
    # fc2_b + fc2_w + fc1_b = 108 bytes fit; fc1_w (120) would overflow the
    # bucket and, alone in the next one, gets a plain Allreduce.
    assert [op.name for op in allreduce] == ["dpm_bucket_0", "fc1_w_grad"]
    flat = ops_of(model.net, "FlattenDenseTensors")
    assert list(flat[0].input) == ["cpu_0/fc2_b_grad", "cpu_0/fc2_w_grad", "cpu_0/fc1_b_grad"]
    model = gloo_model(bucket_size_mb=50.0 / (1 << 20))
    assert [op.name for op in ops_of(model.net, "Allreduce")] == [
        "fc2_b_grad",
        "fc2_w_grad",
        "fc1_b_grad",
        "fc1_w_grad",
    ]
    model = gloo_model(bucket_size_mb=1)
    assert [op.name for op in ops_of(model.net, "Allreduce")] == ["dpm_bucket_0"]


def test_bucketing_control_inputs_and_dynamic_memory():
    model = gloo_model(
        bucket_size_mb=100.0 / (1 << 20),
        max_concurrent_distributed_ops=1,
        dynamic_memory_management=True,
    )
    allreduce = ops_of(model.net, "Allreduce")
    assert [list(op.control_input) for op in allreduce] == [
        [],
        ["cpu_0/dpm_bucket_0"],
        ["cpu_0/fc1_b_grad"],
    ]
    freed = {op.input[0] for op in ops_of(model.net, "Free")}
    assert not freed & {"cpu_0/dpm_bucket_0", "cpu_1/dpm_bucket_0"}


def test_bucketing_is_only_on_the_multi_host_path():
    model = built_model(bucket_size_mb=1)
    assert not ops_of(model.net, "FlattenDenseTensors")
    assert len(ops_of(model.net, "Sum")) == 4


def test_bucket_ops_round_trip_on_the_gradients():
    """Runs the bucketed reduction with each Allreduce replaced by its
    result for two identical hosts (2 * the sum of the local buffers):
    every gradient comes back as 2 * (its sum over the devices)."""
    model = gloo_model(bucket_size_mb=100.0 / (1 << 20))
    assert len(ops_of(model.net, "FlattenDenseTensors")) == 2
    assert len(ops_of(model.net, "Allreduce")) == 3
    skipped = ("MomentumSGDUpdate", "AtomicIter", "LearningRate")
    backward, reduced = core.Net("backward"), core.Net("reduced")
    for op in model.net.Proto().op:
        if op.type in skipped:
            continue
        if op.type == "Allreduce":
            buffers = list(op.input[1:])
            total = reduced.Sum(buffers, op.name + "_emulated")
            reduced.Scale(total, total, scale=2.0)
            for b in buffers:
                reduced.Copy(total, b)
            continue
        reduced.Proto().op.extend([op])
        if op.type not in ("FlattenDenseTensors", "UnflattenDenseTensors"):
            backward.Proto().op.extend([op])
    init = core.Net("init")
    init.Proto().op.extend(
        op
        for op in model.param_init_net.Proto().op
        if op.type not in ("CreateCommonWorld", "CloneCommonWorld", "Broadcast", "CreateMutex")
    )
    feed_shards(model, *fc_data())
    workspace.RunNetOnce(init)
    workspace.RunNetOnce(backward)
    local = {
        g: sum(workspace.FetchBlob("cpu_{}/{}".format(d, g)) for d in (0, 1))
        for g in model._grad_names
    }
    workspace.RunNetOnce(reduced)
    for g, summed in local.items():
        for d in (0, 1):
            got = workspace.FetchBlob("cpu_{}/{}".format(d, g))
            assert got.shape == summed.shape
            np.testing.assert_allclose(got, 2 * summed, rtol=1e-6, err_msg=g)
