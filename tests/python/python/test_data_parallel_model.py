"""data_parallel_model: single-process multi-device CPU training checked
against one device on the whole batch, the helpers, and the structure of
the GPU and multi-host (Gloo) nets, built without running them.

The Gloo and NCCL operators are not part of a CPU build without the
distributed ops, so the structural tests declare those op types to the
Python frontend only (pretend_registered); a build that has them makes
that a no-op. Multi-process Gloo runs live with the Gloo op tests."""
import contextlib

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, optimizer, workspace
from caffe2.python import data_parallel_model as dpm
from caffe2.python import data_parallel_model_utils as dpm_utils

COLLECTIVES = ('CreateCommonWorld', 'CloneCommonWorld', 'Allreduce',
               'Broadcast', 'Barrier', 'NCCLAllreduce', 'NCCLBroadcast')
GLOO = dict(kv_handler='store_handler', shard_id=0, num_shards=2,
            engine='GLOO')
BATCH, DIM_IN, HIDDEN, CLASSES = 8, 5, 6, 3


@contextlib.contextmanager
def pretend_registered(*op_types):
    keys = {workspace.C.op_registry_key(t, 'DEFAULT') for t in op_types}
    added = keys - core._REGISTERED_OPERATORS
    core._REGISTERED_OPERATORS.update(added)
    try:
        yield
    finally:
        core._REGISTERED_OPERATORS.difference_update(added)


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def args(op):
    out = {}
    for a in op.arg:
        if a.HasField('f'):
            out[a.name] = a.f
        elif a.HasField('i'):
            out[a.name] = a.i
        elif a.HasField('s'):
            out[a.name] = a.s.decode()
        else:
            out[a.name] = list(a.ints) or list(a.floats)
    return out


def ops_of(net, op_type):
    return [op for op in net.Proto().op if op.type == op_type]


# ---------------------------------------------------------------- models

def no_input(model):
    pass


def fc_forward(model, loss_scale):
    fc1 = brew.fc(model, 'data', 'fc1', DIM_IN, HIDDEN)
    relu = brew.relu(model, fc1, 'relu')
    fc2 = brew.fc(model, relu, 'fc2', HIDDEN, CLASSES)
    _, loss = model.SoftmaxWithLoss([fc2, 'label'], ['softmax', 'loss'])
    return [model.Scale(loss, 'scaled_loss', scale=loss_scale)]


def conv_bn_forward(model, loss_scale):
    conv = brew.conv(model, 'data', 'conv', 2, 4, kernel=3, pad=1)
    bn = brew.spatial_bn(model, conv, 'bn', 4, epsilon=1e-3, momentum=0.9,
                         is_test=False)
    relu = brew.relu(model, bn, 'relu')
    fc = brew.fc(model, relu, 'fc', 4 * 4 * 4, CLASSES)
    _, loss = model.SoftmaxWithLoss([fc, 'label'], ['softmax', 'loss'])
    return [model.Scale(loss, 'scaled_loss', scale=loss_scale)]


def sgd(model):
    return optimizer.build_sgd(model, 0.1, momentum=0.9)


def fc_data(seed=0):
    rng = np.random.RandomState(seed)
    return (rng.randn(BATCH, DIM_IN).astype(np.float32),
            rng.randint(0, CLASSES, BATCH).astype(np.int32))


def conv_data(seed=0):
    rng = np.random.RandomState(seed)
    return (rng.randn(BATCH, 2, 4, 4).astype(np.float32),
            rng.randint(0, CLASSES, BATCH).astype(np.int32))


def feed_shards(model, x, y):
    devices = model._devices
    n = len(x) // len(devices)
    for i, d in enumerate(devices):
        workspace.FeedBlob('cpu_{}/data'.format(d), x[i * n:(i + 1) * n])
        workspace.FeedBlob('cpu_{}/label'.format(d), y[i * n:(i + 1) * n])


def params_of(model, device):
    prefix = 'cpu_{}/'.format(device)
    return {str(p)[len(prefix):]: workspace.FetchBlob(str(p))
            for p in model.GetParams(prefix)}


def train(forward, data, devices, iters=3, after=None, **kwargs):
    """Trains a Parallelize_CPU model on `data` split over `devices`, from
    fixed initial parameters; returns (model, per-iteration global losses,
    final parameters of every device). after(model) runs after
    Parallelize."""
    model = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model, no_input, forward, optimizer_builder_fun=sgd,
                        devices=devices, **kwargs)
    if after is not None:
        after(model)
    x, y = data
    feed_shards(model, x, y)
    dpm.RunInitNet(model)
    rng = np.random.RandomState(42)
    for name in sorted(params_of(model, devices[0])):
        value = workspace.FetchBlob('cpu_{}/{}'.format(devices[0], name))
        fixed = rng.uniform(-0.5, 0.5, value.shape).astype(np.float32)
        for d in devices:
            if not (kwargs.get('shared_model') and d != devices[0]):
                workspace.FeedBlob('cpu_{}/{}'.format(d, name), fixed)
    losses = []
    for _ in range(iters):
        dpm.RunNet(model, 1)
        losses.append(sum(float(workspace.FetchBlob(
            'cpu_{}/scaled_loss'.format(d))) for d in devices))
    finals = {d: params_of(model, d) for d in devices
              if not (kwargs.get('shared_model') and d != devices[0])}
    return model, losses, finals


def assert_same_training(ref, got):
    _, ref_losses, ref_params = ref
    _, losses, params = got
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    for d in params:
        assert sorted(params[d]) == sorted(ref_params[0])
        for name, value in params[d].items():
            np.testing.assert_allclose(value, ref_params[0][name],
                                       rtol=1e-5, atol=1e-6, err_msg=name)


# ------------------------------------------------- CPU numerical checks

@pytest.mark.parametrize('devices', [[0, 1], [0, 1, 2, 3]])
def test_cpu_devices_match_one_device_on_the_whole_batch(devices):
    ref = train(fc_forward, fc_data(), [0])
    got = train(fc_forward, fc_data(), devices)
    assert_same_training(ref, got)
    assert ref[1][0] != ref[1][-1]  # the parameters do move


@pytest.mark.parametrize('devices', [[0, 1], [0, 1, 2, 3]])
def test_combine_spatial_bn_matches_one_device_bn(devices):
    ref = train(conv_bn_forward, conv_data(), [0])
    model, _, _ = got = train(conv_bn_forward, conv_data(), devices,
                              combine_spatial_bn=True)
    assert_same_training(ref, got)
    types = [op.type for op in model.net.Proto().op]
    assert types.count('ChannelStats') == len(devices)
    assert types.count('ChannelBackpropStats') == len(devices)
    bn = ops_of(model.net, 'SpatialBN')
    assert [op.input[5:] for op in bn] == [
        ['cpu_0/conv_sums_combined', 'cpu_0/conv_sumsq_combined']] * len(
            devices)
    assert all(args(op)['num_batches'] == len(devices) for op in bn)
    bn_grad = ops_of(model.net, 'SpatialBNGradient')
    assert all(len(op.input) == 7 and
               args(op)['num_batches'] == len(devices) for op in bn_grad)
    sums = [op for op in ops_of(model.net, 'Sum')
            if op.output[0].endswith('_combined')]
    assert sorted(op.output[0] for op in sums) == [
        'cpu_0/bn_b_grad_combined', 'cpu_0/bn_s_grad_combined',
        'cpu_0/conv_sums_combined', 'cpu_0/conv_sumsq_combined']


def test_combine_spatial_bn_running_stats_match_one_device():
    train(conv_bn_forward, conv_data(), [0], iters=2)
    ref = {s: workspace.FetchBlob('cpu_0/' + s) for s in ('bn_rm', 'bn_riv')}
    workspace.ResetWorkspace()
    train(conv_bn_forward, conv_data(), [0, 1], iters=2,
          combine_spatial_bn=True)
    for d in (0, 1):
        for s, value in ref.items():
            np.testing.assert_allclose(
                workspace.FetchBlob('cpu_{}/{}'.format(d, s)), value,
                rtol=1e-5, atol=1e-7)


def test_spatial_bn_without_combining_normalizes_per_device():
    ref = train(conv_bn_forward, conv_data(), [0])
    got = train(conv_bn_forward, conv_data(), [0, 1])
    assert not np.allclose(got[1], ref[1], rtol=1e-5)


def test_shared_model_keeps_one_copy_and_matches_one_device():
    ref = train(fc_forward, fc_data(), [0])
    model, losses, finals = got = train(fc_forward, fc_data(), [0, 1],
                                        shared_model=True)
    assert_same_training(ref, got)
    assert not workspace.HasBlob('cpu_1/fc1_w')
    assert [str(p) for p in model.params] == [
        'cpu_0/fc1_w', 'cpu_0/fc1_b', 'cpu_0/fc2_w', 'cpu_0/fc2_b']
    assert len(ops_of(model.net, 'MomentumSGDUpdate')) == 4
    replicas = {'cpu_1/fc1_w', 'cpu_1/fc1_b', 'cpu_1/fc2_w', 'cpu_1/fc2_b'}
    for net in (model.net, model.param_init_net):
        assert not any(replicas & set(list(op.input) + list(op.output))
                       for op in net.Proto().op)
    fc = [op for op in ops_of(model.net, 'FC') if op.output[0] == 'cpu_1/fc1']
    assert list(fc[0].input) == ['cpu_1/data', 'cpu_0/fc1_w', 'cpu_0/fc1_b']
    # Gradients are summed into the master copy, never copied back.
    assert len(ops_of(model.net, 'Copy')) == 0


@pytest.mark.parametrize('input_shapes', [None, {'data': [BATCH // 2,
                                                          DIM_IN]}])
def test_optimize_gradient_memory_keeps_the_results(input_shapes):
    ref = train(fc_forward, fc_data(), [0])
    before = []

    def optimize(model):
        before.extend(op.type for op in model.net.Proto().op)
        dpm.OptimizeGradientMemory(model, input_shapes, {'relu_grad'}, False)

    model, _, _ = got = train(fc_forward, fc_data(), [0, 1], after=optimize)
    assert [op.type for op in model.net.Proto().op] == before
    outputs = {b for op in model.net.Proto().op for b in op.output}
    assert any('__m' in b and 'shared' in b for b in outputs)
    assert {'cpu_0/relu_grad', 'cpu_1/relu_grad'} <= outputs
    assert_same_training(ref, got)


@pytest.mark.parametrize('kwargs', [dict(dynamic_memory_management=True,
                                         blobs_to_keep=['scaled_loss']),
                                    dict(optimize_gradient_memory=True)])
def test_memory_options_keep_the_trajectory(kwargs):
    ref = train(fc_forward, fc_data(), [0])
    got = train(fc_forward, fc_data(), [0, 1], **kwargs)
    assert_same_training(ref, got)
    if 'dynamic_memory_management' in kwargs:
        assert ops_of(got[0].net, 'Free')


def test_memory_options_are_exclusive():
    with pytest.raises(AssertionError):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=[0, 1],
                            optimize_gradient_memory=True,
                            dynamic_memory_management=True)


# --------------------------------------------------------------- helpers

def built_model(devices=(0, 1), forward=fc_forward, **kwargs):
    model = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model, no_input, forward, optimizer_builder_fun=sgd,
                        devices=list(devices), **kwargs)
    return model


def test_model_attributes_and_net_settings():
    model = built_model()
    assert model._device_type == caffe2_pb2.CPU
    assert model._device_prefix == 'cpu'
    assert model._devices == [0, 1]
    assert model._shared_model is False
    assert model._rendezvous is None
    assert model._grad_names == ['fc1_w_grad', 'fc1_b_grad', 'fc2_w_grad',
                                 'fc2_b_grad']
    assert model._param_names == ['fc1_w', 'fc1_b', 'fc2_w', 'fc2_b']
    assert model.net.Proto().type == 'dag'
    assert model.net.Proto().num_workers == 8
    assert args(model.net.Proto())['first_iter_only_one_worker'] == 1
    assert model._data_parallel_model_nets == [model.net]
    assert model._data_parallel_model_init_nets == [model.param_init_net]
    seeds = [op for op in ops_of(model.net, 'ConstantFill')
             if op.output[0].endswith('scaled_loss_grad')]
    assert [(op.input[0], op.device_option.cuda_gpu_id) for op in seeds] == [
        ('cpu_0/scaled_loss', 0), ('cpu_1/scaled_loss', 1)]
    scales = {op.output[0]: args(op)['scale']
              for op in ops_of(model.net, 'Scale')
              if 'grad' not in op.output[0]}
    assert scales == {'cpu_0/scaled_loss': 0.5, 'cpu_1/scaled_loss': 0.5}


def test_single_host_cpu_reduction_is_sum_then_copy_in_reverse_order():
    model = built_model()
    sums = [op for op in ops_of(model.net, 'Sum')]
    assert [list(op.input) for op in sums] == [
        ['cpu_0/{}'.format(g), 'cpu_1/{}'.format(g)]
        for g in ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']]
    assert all(list(op.output) == [op.input[0]] for op in sums)
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, 'Copy')]
    assert copies == [('cpu_0/{}'.format(g), 'cpu_1/{}'.format(g))
                      for g in ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad',
                                'fc1_w_grad']]
    init_copies = [(op.input[0], op.output[0])
                   for op in ops_of(model.param_init_net, 'Copy')]
    assert init_copies == [
        ('cpu_0/' + b, 'cpu_1/' + b) for b in sorted(
            ['fc1_w', 'fc1_b', 'fc2_w', 'fc2_b', 'fc1_w_momentum',
             'fc1_b_momentum', 'fc2_w_momentum', 'fc2_b_momentum'])]


def run_init(model):
    feed_shards(model, *fc_data())
    dpm.RunInitNet(model)


def test_initial_sync_makes_replicas_equal():
    model = built_model()
    run_init(model)
    for name, value in params_of(model, 0).items():
        np.testing.assert_array_equal(
            workspace.FetchBlob('cpu_1/' + name), value)


def test_computed_params_are_broadcast_every_iteration():
    model = built_model(forward=conv_bn_forward)
    assert model._computed_param_names == ['bn_rm', 'bn_riv']
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, 'Copy')]
    assert copies[:2] == [('cpu_0/bn_rm', 'cpu_1/bn_rm'),
                          ('cpu_0/bn_riv', 'cpu_1/bn_riv')]
    model2 = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model2, no_input, conv_bn_forward,
                        optimizer_builder_fun=sgd, devices=[0, 1],
                        broadcast_computed_params=False)
    assert not any(op.input[0].startswith('cpu_0/bn_r')
                   for op in ops_of(model2.net, 'Copy'))


def test_get_checkpoint_params():
    model = built_model()
    names = sorted(str(b) for b in dpm.GetCheckpointParams(model))
    expected = sorted(
        ['cpu_0/' + p for p in ['fc1_w', 'fc1_b', 'fc2_w', 'fc2_b']] +
        ['cpu_0/' + p + '_momentum' for p in ['fc1_w', 'fc1_b', 'fc2_w',
                                               'fc2_b']] +
        ['optimizer_iteration'])
    assert names == expected


def test_finalize_after_checkpoint_copies_master_to_replicas():
    model = built_model()
    run_init(model)
    loaded = {}
    for b in dpm.GetCheckpointParams(model):
        name = str(b)
        if name.startswith('cpu_0/'):
            value = workspace.FetchBlob(name)
            loaded[name] = np.full_like(value, 0.25)
            workspace.FeedBlob(name, loaded[name])
    dpm.FinalizeAfterCheckpoint(model)
    for name, value in loaded.items():
        np.testing.assert_array_equal(
            workspace.FetchBlob(name.replace('cpu_0/', 'cpu_1/')), value)
    # Later calls rerun the same net.
    workspace.FeedBlob('cpu_0/fc1_b', np.full(HIDDEN, 3.0, np.float32))
    dpm.FinalizeAfterCheckpoint(model)
    np.testing.assert_array_equal(workspace.FetchBlob('cpu_1/fc1_b'),
                                  np.full(HIDDEN, 3.0, np.float32))
    assert model._checkpoint_net.Proto().name == 'checkpoint_sync_net'


def test_finalize_after_checkpoint_with_given_blobs():
    model = built_model()
    run_init(model)
    workspace.FeedBlob('cpu_0/extra', np.arange(3, dtype=np.float32))
    workspace.FeedBlob('cpu_1/extra', np.zeros(3, np.float32))
    dpm.FinalizeAfterCheckpoint(model, blobs=['cpu_0/extra', 'cpu_0/fc1_w'])
    np.testing.assert_array_equal(workspace.FetchBlob('cpu_1/extra'),
                                  np.arange(3, dtype=np.float32))
    assert model._device_grouped_blobs['extra'] == {
        0: 'cpu_0/extra', 1: 'cpu_1/extra'}


def test_learning_rate_blob_names():
    model = built_model()
    assert dpm.GetLearningRateBlobNames(model) == [
        'SgdOptimizer_{}_lr_cpu'.format(model._optimizer._instance_num)]
    assert [op.output[0] for op in ops_of(model.net, 'LearningRate')] == \
        dpm.GetLearningRateBlobNames(model)


def test_learning_rate_blob_names_without_optimizer_builder():
    def update(model):
        lr = model.param_init_net.ConstantFill([], 'lr', shape=[1],
                                               value=-0.1)
        one = model.param_init_net.ConstantFill([], 'one', shape=[1],
                                                value=1.0)
        model.net.LearningRate(['iter_in'], 'lr_out', base_lr=-0.1,
                               policy='fixed')
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model, no_input, fc_forward,
                        param_update_builder_fun=update, devices=[0, 1])
    assert dpm.GetLearningRateBlobNames(model) == ['cpu_0/lr_out',
                                                   'cpu_1/lr_out']


def test_param_update_builder_runs_per_device_scope():
    seen = []

    def update(model):
        seen.append((core.scope.CurrentNameScope(),
                     core.scope.CurrentDeviceScope().cuda_gpu_id))
        lr = model.param_init_net.ConstantFill([], 'lr', shape=[1],
                                               value=-0.1)
        one = model.param_init_net.ConstantFill([], 'one', shape=[1],
                                                value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model, no_input, fc_forward,
                        param_update_builder_fun=update, devices=[0, 1])
    assert seen == [('cpu_0/', 0), ('cpu_1/', 1)]
    assert not hasattr(model, '_optimizer')
    # lr and one are per-device blobs, so they are synced too.
    assert {'lr', 'one'} <= dpm._ComputeBlobsToSync(model)[1]
    updates = ops_of(model.net, 'WeightedSum')
    assert [(op.output[0], op.device_option.cuda_gpu_id)
            for op in updates] == [
        ('cpu_{}/{}'.format(d, p), d) for d in (0, 1)
        for p in ('fc1_w', 'fc1_b', 'fc2_w', 'fc2_b')]
    run_init(model)
    dpm.RunNet(model, 2)
    for name, value in params_of(model, 0).items():
        np.testing.assert_array_equal(workspace.FetchBlob('cpu_1/' + name),
                                      value)


def test_post_sync_builder_runs_after_the_sync():
    calls = []

    def post(model):
        calls.append(core.scope.CurrentNameScope())
        model.param_init_net.Copy('fc1_w', 'fc1_w_snapshot')

    model = built_model(post_sync_builder_fun=post)
    assert calls == ['cpu_0/', 'cpu_1/']
    types = [op.type for op in model.param_init_net.Proto().op]
    assert types.index('Copy') < len(types) - 2
    assert model.param_init_net.Proto().op[-1].output[0] == \
        'cpu_1/fc1_w_snapshot'


def test_add_blob_sync():
    model = built_model()
    run_init(model)
    workspace.FeedBlob('cpu_0/counter', np.array([7.0], np.float32))
    workspace.FeedBlob('cpu_1/counter', np.array([0.0], np.float32))
    net = core.Net('blob_sync')
    dpm.AddBlobSync(model, ['counter'], net=net)
    assert [(op.type, op.input[0], op.output[0]) for op in net.Proto().op] \
        == [('Copy', 'cpu_0/counter', 'cpu_1/counter')]
    workspace.RunNetOnce(net)
    np.testing.assert_array_equal(workspace.FetchBlob('cpu_1/counter'), [7.0])
    with pytest.raises(AssertionError):
        dpm.AddBlobSync(model, ['cpu_0/counter'])
    n_ops = len(model.net.Proto().op)
    dpm.AddBlobSync(model, ['counter'])
    assert len(model.net.Proto().op) == n_ops + 1


def test_add_distributed_blob_sync_is_a_noop_on_one_host():
    model = built_model()
    n_ops = len(model.net.Proto().op)
    dpm.AddDistributedBlobSync(model, ['cpu_0/fc1_w'])
    assert len(model.net.Proto().op) == n_ops


def test_synchronize_is_a_noop_on_one_host():
    model = built_model()
    before = dpm.barrier_instance
    dpm.Synchronize(model)
    assert dpm.barrier_instance == before


def test_convert_net_for_device():
    net = core.Net('other')
    net.AddExternalInput('x')
    y = net.Relu('x', 'y')
    op = core.CreateOperator('Relu', [y], ['z'], control_input=['x'])
    net.Proto().op.extend([op])
    net.AddExternalOutput(core.BlobReference('z'))
    cpu = dpm.ConvertNetForDevice(net, core.DeviceOption(caffe2_pb2.CPU, 3))
    assert [list(o.input) for o in cpu.Proto().op] == [['cpu_3/x'],
                                                       ['cpu_3/y']]
    assert [list(o.output) for o in cpu.Proto().op] == [['cpu_3/y'],
                                                        ['cpu_3/z']]
    assert list(cpu.Proto().op[1].control_input) == ['cpu_3/x']
    assert list(cpu.Proto().external_input) == ['cpu_3/x']
    assert list(cpu.Proto().external_output) == ['cpu_3/z']
    assert all(o.device_option.cuda_gpu_id == 3 for o in cpu.Proto().op)
    assert [o.input[0] for o in net.Proto().op] == ['x', 'y']  # a copy
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
        gpu = dpm.ConvertNetForDevice(net)
    assert gpu.Proto().op[0].input[0] == 'gpu_1/x'
    assert gpu.Proto().op[0].device_option.device_type == caffe2_pb2.CUDA
    rnn = core.Net('rnn')
    rnn.Proto().op.extend([core.CreateOperator('RecurrentNetwork', [], [])])
    with pytest.raises(NotImplementedError):
        dpm.ConvertNetForDevice(rnn, core.DeviceOption(caffe2_pb2.CPU, 0))


def test_extract_predictor_net_matches_the_test_model():
    def forward(model, loss_scale):
        fc1 = brew.fc(model, 'data', 'fc1', DIM_IN, HIDDEN)
        relu = brew.relu(model, fc1, 'relu')
        fc2 = brew.fc(model, relu, 'fc2', HIDDEN, CLASSES)
        model.Softmax(fc2, 'softmax')

    model = model_helper.ModelHelper(name='dpm_test')
    dpm.Parallelize_CPU(model, no_input, forward, devices=[0, 1])
    x, y = fc_data()
    feed_shards(model, x, y)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    predict_net, export = dpm.ExtractPredictorNet(
        model, ['data'], ['softmax'], core.DeviceOption(caffe2_pb2.CPU))
    assert sorted(export) == ['cpu_0/fc1_b', 'cpu_0/fc1_w', 'cpu_0/fc2_b',
                              'cpu_0/fc2_w']
    assert predict_net.Proto().op[0].input[0] == 'data'
    assert predict_net.Proto().op[-1].output[0] == 'softmax'
    assert all(not b.startswith('cpu_1/') for op in predict_net.Proto().op
               for b in list(op.input) + list(op.output))
    workspace.FeedBlob('data', x[:BATCH // 2])
    workspace.RunNetOnce(predict_net)
    np.testing.assert_allclose(workspace.FetchBlob('softmax'),
                               workspace.FetchBlob('cpu_0/softmax'),
                               rtol=1e-6)


def test_forward_only_model_gets_no_gradients_or_sync():
    def forward(model, loss_scale):
        brew.fc(model, 'data', 'fc1', DIM_IN, HIDDEN)

    model = model_helper.ModelHelper(name='test_model', init_params=False)
    dpm.Parallelize_CPU(model, no_input, forward, devices=[0, 1])
    assert not model.gradient_ops_added
    assert model._grad_names == []
    assert model._blob_to_device['cpu_1/fc1'].cuda_gpu_id == 1
    assert not ops_of(model.param_init_net, 'Copy')


def test_strip_blob_name():
    assert dpm.stripBlobName('gpu_0/conv1_w') == 'conv1_w'
    assert dpm.stripBlobName(core.BlobReference('cpu_1/a/b')) == 'a/b'
    assert dpm.stripBlobName(core.GradientSlice('gpu_0/i', 'gpu_0/v')) == \
        'i:v'


def test_interleave_ops_groups_op_j_of_every_device():
    model2 = model_helper.ModelHelper(name='interleave')
    model2._devices = [2, 5]
    for d in (2, 5):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, d)):
            model2.net.Relu('a{}'.format(d), 'b{}'.format(d))
            model2.net.Sigmoid('b{}'.format(d), 'c{}'.format(d))
    dpm._InterleaveOps(model2)
    assert [(op.type, op.device_option.cuda_gpu_id)
            for op in model2.net.Proto().op] == [
                ('Relu', 2), ('Relu', 5), ('Sigmoid', 2), ('Sigmoid', 5)]
    del model2.net.Proto().op[-1]
    with pytest.raises(AssertionError):
        dpm._InterleaveOps(model2)


# ---------------------------------------------------------- error cases

def test_non_cpu_device_scope_is_rejected():
    model = model_helper.ModelHelper()
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        with pytest.raises(AssertionError, match='device-scope'):
            dpm.Parallelize_CPU(model, no_input, fc_forward,
                                optimizer_builder_fun=sgd, devices=[0])


def test_cpu_device_scope_is_accepted():
    model = model_helper.ModelHelper()
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        dpm.Parallelize_CPU(model, no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=[0])
    assert model._grad_names


def test_forward_builder_must_return_a_list_of_losses():
    def forward(model, loss_scale):
        return fc_forward(model, loss_scale)[0]

    with pytest.raises(AssertionError, match='list of loss blobs'):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), no_input, forward,
                            optimizer_builder_fun=sgd, devices=[0, 1])

    def forward_strings(model, loss_scale):
        return [str(fc_forward(model, loss_scale)[0])]

    with pytest.raises(AssertionError, match='list of loss blobs'):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), no_input,
                            forward_strings, optimizer_builder_fun=sgd,
                            devices=[0, 1])


def test_param_update_and_optimizer_are_exclusive():
    with pytest.raises(AssertionError, match='only specify one'):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), no_input, fc_forward,
                            param_update_builder_fun=lambda m: None,
                            optimizer_builder_fun=sgd, devices=[0, 1])


def test_shared_model_is_cpu_only():
    with pytest.raises(AssertionError, match='Shared model'):
        dpm.Parallelize_GPU(model_helper.ModelHelper(), no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=[0, 1],
                            shared_model=True)


def test_analyze_operators_rejects_cross_device_gpu_ops():
    model = gpu_model([0, 1])
    dpm._AnalyzeOperators(model)  # the built net is clean
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        model.net.Relu('gpu_1/fc1', 'gpu_0/bad')
    with pytest.raises(Exception, match='should have namescope gpu_0/'):
        dpm._AnalyzeOperators(model)


# ------------------------------------------------ GPU nets (not run)

def gpu_model(devices, **kwargs):
    model = model_helper.ModelHelper(name='dpm_gpu')
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(model, no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=devices,
                            **kwargs)
    return model


def sum_tree(model, grad):
    return [(op.device_option.cuda_gpu_id,
             [int(b.split('/')[0][4:]) for b in op.input])
            for op in ops_of(model.net, 'Sum')
            if op.output[0].endswith('/' + grad)]


@pytest.mark.parametrize('devices,tree', [
    ([0, 1], [(0, [0, 1])]),
    ([0, 1, 2, 3], [(0, [0, 1]), (2, [2, 3]), (0, [0, 2])]),
    ([0, 1, 2, 3, 4, 5, 6, 7],
     [(0, [0, 1]), (2, [2, 3]), (4, [4, 5]), (6, [6, 7]),
      (0, [0, 2]), (4, [4, 6]), (0, [0, 4])]),
    (list(range(16)),
     [(2 * j, [2 * j, 2 * j + 1]) for j in range(8)] +
     [(4 * j, [4 * j, 4 * j + 2]) for j in range(4)] +
     [(0, [0, 4]), (8, [8, 12]), (0, [0, 8])]),
    ([0, 1, 2], [(0, [0, 1, 2])]),
])
def test_gpu_sum_tree(devices, tree):
    model = gpu_model(devices)
    assert model._device_prefix == 'gpu'
    for grad in ['fc1_w_grad', 'fc1_b_grad', 'fc2_w_grad', 'fc2_b_grad']:
        assert sum_tree(model, grad) == tree
    sums = ops_of(model.net, 'Sum')
    assert all(op.name == 'dpm' and
               op.device_option.device_type == caffe2_pb2.CUDA and
               list(op.output) == [op.input[0]] for op in sums)
    # Reverse parameter order.
    order = []
    for op in sums:
        name = op.output[0].split('/', 1)[1]
        if name not in order:
            order.append(name)
    assert order == ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']
    # Broadcast: Copy from the master under the destination GPU.
    copies = [(op.input[0], op.output[0], op.device_option.cuda_gpu_id,
               op.device_option.device_type)
              for op in ops_of(model.net, 'Copy')
              if op.input[0].endswith('fc1_w_grad')]
    assert copies == [('gpu_0/fc1_w_grad', 'gpu_{}/fc1_w_grad'.format(d), d,
                       caffe2_pb2.CUDA) for d in devices[1:]]
    dpm._AnalyzeOperators(model)
    assert dpm.GetLearningRateBlobNames(model) == [
        'SgdOptimizer_{}_lr_gpu{}'.format(model._optimizer._instance_num, d)
        for d in devices]
    lrs = sorted(op.output[0] for op in ops_of(model.net, 'LearningRate'))
    assert lrs == sorted(dpm.GetLearningRateBlobNames(model))
    init_copies = ops_of(model.param_init_net, 'Copy')
    assert {op.device_option.cuda_gpu_id for op in init_copies} == \
        set(devices[1:])


def test_gpu_sum_tree_copies_to_the_first_device_without_peer_access(
        monkeypatch):
    access = np.ones((4, 4), dtype=bool)
    access[0, 1] = access[1, 0] = False
    access[0, 2] = access[2, 0] = False
    monkeypatch.setattr(workspace, 'GetCudaPeerAccessPattern',
                        lambda: access)
    model = gpu_model([0, 1, 2, 3])
    peer_copies = [op for op in ops_of(model.net, 'Copy')
                   if op.output[0].endswith('_copy')]
    assert [(op.input[0], op.output[0], op.device_option.cuda_gpu_id)
            for op in peer_copies
            if 'fc1_w_grad' in op.input[0]] == [
                ('gpu_1/fc1_w_grad', 'gpu_0/fc1_w_grad_gpu1_copy', 0),
                ('gpu_2/fc1_w_grad', 'gpu_0/fc1_w_grad_gpu2_copy', 0)]
    assert [list(op.input) for op in ops_of(model.net, 'Sum')
            if op.output[0] == 'gpu_0/fc1_w_grad'] == [
                ['gpu_0/fc1_w_grad', 'gpu_0/fc1_w_grad_gpu1_copy'],
                ['gpu_0/fc1_w_grad', 'gpu_0/fc1_w_grad_gpu2_copy']]
    assert [list(op.input) for op in ops_of(model.net, 'Sum')
            if op.output[0] == 'gpu_2/fc1_w_grad'] == [
                ['gpu_2/fc1_w_grad', 'gpu_3/fc1_w_grad']]
    dpm._AnalyzeOperators(model)


def test_gpu_nccl_allreduce_is_serialized_by_control_inputs():
    model = gpu_model([0, 1, 2, 3], use_nccl=True)
    nccl = ops_of(model.net, 'NCCLAllreduce')
    grads = ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']
    assert [list(op.input) for op in nccl] == [
        ['gpu_{}/{}'.format(d, g) for d in range(4)] for g in grads]
    assert all(list(op.output) == list(op.input) for op in nccl)
    assert [list(op.control_input) for op in nccl] == [
        [], ['gpu_0/fc2_b_grad'], ['gpu_0/fc2_w_grad'], ['gpu_0/fc1_b_grad']]
    assert not ops_of(model.net, 'Sum')
    assert all(op.device_option.cuda_gpu_id == 0 for op in nccl)


def test_gpu_nccl_broadcasts_computed_params():
    model = model_helper.ModelHelper(name='dpm_gpu')
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(model, no_input, conv_bn_forward,
                            optimizer_builder_fun=sgd, devices=[0, 1],
                            use_nccl=True)
    bcast = ops_of(model.net, 'NCCLBroadcast')
    assert [list(op.input) for op in bcast] == [
        ['gpu_0/bn_rm', 'gpu_1/bn_rm'], ['gpu_0/bn_riv', 'gpu_1/bn_riv']]
    assert all(args(op)['root'] == 0 for op in bcast)


def test_shift_activation_devices():
    model = gpu_model([0, 1])
    activations = dpm_utils.GetActivationBlobs(model)
    assert {'fc1', 'relu', 'fc2'} <= set(activations)
    assert not any(a.endswith('_w') or a.endswith('_b') for a in activations)
    dpm_utils.ShiftActivationDevices(model, ['relu'], {0: 1})
    ops = model.net.Proto().op
    relu = [op for op in ops
            if op.type == 'Relu' and op.output[0] == 'gpu_0/relu'][0]
    assert relu.device_option.cuda_gpu_id == 1
    assert list(relu.input) == ['gpu_0/fc1_cuda_1']
    copy = [op for op in ops if op.output[0] == 'gpu_0/fc1_cuda_1'][0]
    assert (copy.type, list(copy.input), copy.device_option.cuda_gpu_id) == \
        ('Copy', ['gpu_0/fc1'], 1)
    relu_grad = [op for op in ops if op.type == 'ReluGradient' and
                 op.output[0] == 'gpu_0/fc1_grad'][0]
    assert relu_grad.device_option.cuda_gpu_id == 1
    with pytest.raises(AssertionError):
        dpm_utils.ShiftActivationDevices(model, ['fc1_w'], {0: 1})


# ----------------------------------------- multi-host nets (not run)

def gloo_model(devices=(0, 1), forward=fc_forward, rendezvous=None,
               **kwargs):
    model = model_helper.ModelHelper(name='dpm_gloo')
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_CPU(model, no_input, forward,
                            optimizer_builder_fun=sgd, devices=list(devices),
                            rendezvous=rendezvous or dict(GLOO), **kwargs)
    return model


def test_gloo_common_worlds():
    model = gloo_model(max_concurrent_distributed_ops=2)
    init_ops = model.param_init_net.Proto().op
    create = [op for op in init_ops if op.type == 'CreateCommonWorld']
    assert len(create) == 1
    assert create[0].name == 'allreduce_0_cw_op'
    assert list(create[0].input) == ['store_handler']
    assert list(create[0].output) == ['allreduce_0_cw']
    assert create[0].engine == 'GLOO'
    assert args(create[0]) == dict(
        size=2, rank=0, timeout_ms=30000,
        status_blob='create_allreduce_cw_0_status')
    clones = [op for op in init_ops if op.type == 'CloneCommonWorld']
    assert [(op.name, list(op.input), list(op.output), op.engine,
             args(op)) for op in clones] == [
        ('allreduce_1_cw_op', ['allreduce_0_cw'], ['allreduce_1_cw'], 'GLOO',
         dict(status_blob='create_allreduce_cw_1_status')),
        ('broadcast_0_cw_op', ['allreduce_0_cw'], ['broadcast_0_cw'], 'GLOO',
         dict(status_blob='create_broadcast_cw_0_status'))]
    assert model.net.Proto().num_workers == 16


def test_gloo_allreduce_per_gradient_in_reverse_order_with_slots():
    model = gloo_model(max_concurrent_distributed_ops=2)
    allreduce = ops_of(model.net, 'Allreduce')
    grads = ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']
    assert [op.name for op in allreduce] == grads
    slots = ['allreduce_0_cw', 'allreduce_1_cw'] * 2
    assert [list(op.input) for op in allreduce] == [
        [cw, 'cpu_0/' + g, 'cpu_1/' + g] for cw, g in zip(slots, grads)]
    assert all(list(op.output) == list(op.input[1:]) for op in allreduce)
    assert [args(op) for op in allreduce] == [
        dict(status_blob='allreduce_{}_status'.format(g), gpu_direct=0)
        for g in grads]
    assert all(op.engine == 'GLOO' for op in allreduce)
    assert [list(op.control_input) for op in allreduce] == [
        [], [], ['cpu_0/fc2_b_grad'], ['cpu_0/fc2_w_grad']]
    assert not ops_of(model.net, 'Sum')
    # The updates come after the reduction.
    types = [op.type for op in model.net.Proto().op]
    assert max(i for i, t in enumerate(types) if t == 'Allreduce') < \
        min(i for i, t in enumerate(types) if t == 'MomentumSGDUpdate')


def test_gloo_default_slots_and_one_world_per_gradient():
    model = gloo_model()
    allreduce = ops_of(model.net, 'Allreduce')
    assert [op.input[0] for op in allreduce] == [
        'allreduce_{}_cw'.format(i) for i in range(4)]
    assert all(not op.control_input for op in allreduce)


def test_gloo_initial_broadcast_in_param_init_net():
    model = gloo_model()
    bcast = ops_of(model.param_init_net, 'Broadcast')
    names = sorted(['fc1_w', 'fc1_b', 'fc2_w', 'fc2_b', 'fc1_w_momentum',
                    'fc1_b_momentum', 'fc2_w_momentum', 'fc2_b_momentum'])
    assert [op.name for op in bcast] == names
    assert [list(op.input) for op in bcast] == [
        ['broadcast_0_cw', 'cpu_0/' + n, 'cpu_1/' + n] for n in names]
    assert [args(op) for op in bcast] == [
        dict(status_blob='broadcast_{}_status'.format(n)) for n in names]
    assert [list(op.control_input) for op in bcast] == [[]] + [
        ['cpu_0/' + n, 'cpu_1/' + n] for n in names[:-1]]
    types = [op.type for op in model.param_init_net.Proto().op]
    fills = [i for i, t in enumerate(types) if t.endswith('Fill')]
    assert max(fills) < types.index('Broadcast')
    assert not ops_of(model.param_init_net, 'Copy')


def test_gloo_transport_options():
    rendezvous = dict(GLOO, transport='ibverbs', interface='mlx5_0',
                      mpi_rendezvous=False, shard_id=1, num_shards=3)
    model = gloo_model(rendezvous=rendezvous)
    create = ops_of(model.param_init_net, 'CreateCommonWorld')[0]
    assert args(create) == dict(
        size=3, rank=1, timeout_ms=30000, transport='ibverbs',
        interface='mlx5_0', mpi_rendezvous=0,
        status_blob='create_allreduce_cw_0_status')
    assert all(args(op)['gpu_direct'] == 1
               for op in ops_of(model.net, 'Allreduce'))
    scales = {op.output[0]: args(op)['scale']
              for op in ops_of(model.net, 'Scale')
              if 'grad' not in op.output[0]}
    assert scales['cpu_0/scaled_loss'] == pytest.approx(1.0 / 6)


def test_gloo_mpi_rendezvous_has_no_store_input():
    model = gloo_model(rendezvous=dict(GLOO, kv_handler=None,
                                       mpi_rendezvous=True))
    create = ops_of(model.param_init_net, 'CreateCommonWorld')[0]
    assert list(create.input) == []
    assert args(create)['mpi_rendezvous'] == 1


def test_gloo_computed_params_stay_local():
    model = gloo_model(forward=conv_bn_forward)
    copies = [(op.input[0], op.output[0]) for op in ops_of(model.net, 'Copy')]
    assert copies == [('cpu_0/bn_rm', 'cpu_1/bn_rm'),
                      ('cpu_0/bn_riv', 'cpu_1/bn_riv')]
    assert [op.name for op in ops_of(model.net, 'Allreduce')][0] == 'fc_b_grad'


def test_gloo_dynamic_memory_keeps_gradients():
    model = gloo_model(dynamic_memory_management=True)
    freed = {op.input[0] for op in ops_of(model.net, 'Free')}
    assert freed
    assert not any(b.endswith('_w_grad') or b.endswith('_b_grad')
                   for b in freed)


def test_gloo_add_distributed_blob_sync():
    model = gloo_model()
    with pretend_registered(*COLLECTIVES):
        dpm.AddDistributedBlobSync(model, ['cpu_0/a', 'cpu_0/b'])
    clone = ops_of(model.param_init_net, 'CloneCommonWorld')[-1]
    assert list(clone.output) == ['blob_sync_cw_cpu_0/a_cpu_0/b']
    op = model.net.Proto().op[-1]
    assert op.type == 'Allreduce'
    assert list(op.input) == ['blob_sync_cw_cpu_0/a_cpu_0/b', 'cpu_0/a',
                              'cpu_0/b']
    assert args(op)['status_blob'] == 'blob_sync_allred_cpu_0/a_cpu_0/b_status'


def test_gloo_add_blob_sync_reuses_the_broadcast_world():
    model = gloo_model()
    with pretend_registered(*COLLECTIVES):
        dpm.AddBlobSync(model, ['extra'])
    op = model.net.Proto().op[-1]
    assert (op.type, op.name, list(op.input)) == (
        'Broadcast', 'extra', ['broadcast_0_cw', 'cpu_0/extra',
                               'cpu_1/extra'])
    assert list(op.control_input) == ['cpu_0/fc2_w_momentum',
                                      'cpu_1/fc2_w_momentum']
    assert len(ops_of(model.param_init_net, 'CloneCommonWorld')) == 4


def test_create_or_clone_common_world():
    net = core.Net('cw')
    with pretend_registered(*COLLECTIVES):
        a = dpm._CreateOrCloneCommonWorld(net, 'a', dict(GLOO),
                                          status_blob='sa')
        b = dpm._CreateOrCloneCommonWorld(net, 'b', dict(GLOO))
        c = dpm._CreateOrCloneCommonWorld(net, 'c', dict(GLOO),
                                          timeout_sec=5)
    assert [str(a), str(b), str(c)] == ['a', 'b', 'c']
    ops = net.Proto().op
    assert [(op.type, op.name, list(op.input)) for op in ops] == [
        ('CreateCommonWorld', 'a_op', ['store_handler']),
        ('CloneCommonWorld', 'b_op', ['a']),
        ('CreateCommonWorld', 'c_op', ['store_handler'])]
    assert args(ops[2])['timeout_ms'] == 5000
    assert 'status_blob' not in args(ops[1])


def test_gpu_gloo_allreduce_runs_on_the_master_gpu():
    model = model_helper.ModelHelper(name='dpm_gpu_gloo')
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(model, no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=[0, 1],
                            rendezvous=dict(GLOO))
    allreduce = ops_of(model.net, 'Allreduce')
    assert len(allreduce) == 4
    assert all(op.device_option.device_type == caffe2_pb2.CUDA and
               op.device_option.cuda_gpu_id == 0 for op in allreduce)
    assert [list(op.input[1:]) for op in allreduce][0] == [
        'gpu_0/fc2_b_grad', 'gpu_1/fc2_b_grad']
    bcast = ops_of(model.param_init_net, 'Broadcast')
    assert all(op.device_option.device_type == caffe2_pb2.CUDA
               for op in bcast)
    dpm._AnalyzeOperators(model)


def test_gpu_gloo_bucketing_runs_on_each_gpu():
    model = model_helper.ModelHelper(name='dpm_gpu_gloo')
    with pretend_registered(*COLLECTIVES):
        dpm.Parallelize_GPU(model, no_input, fc_forward,
                            optimizer_builder_fun=sgd, devices=[0, 1],
                            rendezvous=dict(GLOO), bucket_size_mb=1)
    assert [op.name for op in ops_of(model.net, 'Allreduce')] == [
        'dpm_bucket_0']
    for op_type in ('FlattenDenseTensors', 'UnflattenDenseTensors'):
        ops = ops_of(model.net, op_type)
        assert [(op.device_option.device_type, op.device_option.cuda_gpu_id)
                for op in ops] == [(caffe2_pb2.CUDA, 0), (caffe2_pb2.CUDA, 1)]
        assert all(b.startswith('gpu_{}/'.format(op.device_option.cuda_gpu_id))
                   for op in ops for b in list(op.input) + list(op.output))
    dpm._AnalyzeOperators(model)


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
            op.input[:] = [b.split('_lr_')[-1] for b in op.input]
            op.output[:] = [b.split('_lr_')[-1] for b in op.output]
            ops.append(op)
        return ops

    assert strip(off.net) == strip(plain.net) == strip(none.net)
    assert strip(off.param_init_net) == strip(plain.param_init_net)


def test_bucketing_fuses_small_consecutive_gradients():
    # Gradient bytes, reverse order: fc2_b 12, fc2_w 72, fc1_b 24, fc1_w 120.
    model = gloo_model(bucket_size_mb=100.0 / (1 << 20))
    types = [op.type for op in model.net.Proto().op]
    allreduce = ops_of(model.net, 'Allreduce')
    assert [op.name for op in allreduce] == [
        'dpm_bucket_0', 'fc1_b_grad', 'fc1_w_grad']
    assert [list(op.input) for op in allreduce][0] == [
        'allreduce_0_cw', 'cpu_0/dpm_bucket_0', 'cpu_1/dpm_bucket_0']
    assert args(allreduce[0])['status_blob'] == \
        'allreduce_dpm_bucket_0_status'
    flat = ops_of(model.net, 'FlattenDenseTensors')
    assert [(list(op.input), list(op.output), op.device_option.cuda_gpu_id)
            for op in flat] == [
        (['cpu_{}/fc2_b_grad'.format(d), 'cpu_{}/fc2_w_grad'.format(d)],
         ['cpu_{}/dpm_bucket_0'.format(d)], d) for d in (0, 1)]
    unflat = ops_of(model.net, 'UnflattenDenseTensors')
    assert [(list(op.input), list(op.output)) for op in unflat] == [
        (['cpu_{}/dpm_bucket_0'.format(d), 'cpu_{}/fc2_b_grad'.format(d),
          'cpu_{}/fc2_w_grad'.format(d)],
         ['cpu_{}/fc2_b_grad'.format(d), 'cpu_{}/fc2_w_grad'.format(d)])
        for d in (0, 1)]
    first_ar = types.index('Allreduce')
    assert types[first_ar - 2:first_ar] == ['FlattenDenseTensors'] * 2
    assert types[first_ar + 1:first_ar + 3] == ['UnflattenDenseTensors'] * 2
    assert [str(b) for b in model._bucket_buffers] == [
        'cpu_0/dpm_bucket_0', 'cpu_1/dpm_bucket_0']


def test_bucketing_larger_buckets_and_big_gradients_alone():
    model = gloo_model(bucket_size_mb=130.0 / (1 << 20))
    allreduce = ops_of(model.net, 'Allreduce')
    # fc2_b + fc2_w + fc1_b = 108 bytes fit; fc1_w (120) would overflow the
    # bucket and, alone in the next one, gets a plain Allreduce.
    assert [op.name for op in allreduce] == ['dpm_bucket_0', 'fc1_w_grad']
    flat = ops_of(model.net, 'FlattenDenseTensors')
    assert list(flat[0].input) == ['cpu_0/fc2_b_grad', 'cpu_0/fc2_w_grad',
                                   'cpu_0/fc1_b_grad']
    model = gloo_model(bucket_size_mb=50.0 / (1 << 20))
    assert [op.name for op in ops_of(model.net, 'Allreduce')] == [
        'fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']
    model = gloo_model(bucket_size_mb=1)
    assert [op.name for op in ops_of(model.net, 'Allreduce')] == [
        'dpm_bucket_0']


def test_bucketing_control_inputs_and_dynamic_memory():
    model = gloo_model(bucket_size_mb=100.0 / (1 << 20),
                       max_concurrent_distributed_ops=1,
                       dynamic_memory_management=True)
    allreduce = ops_of(model.net, 'Allreduce')
    assert [list(op.control_input) for op in allreduce] == [
        [], ['cpu_0/dpm_bucket_0'], ['cpu_0/fc1_b_grad']]
    freed = {op.input[0] for op in ops_of(model.net, 'Free')}
    assert not freed & {'cpu_0/dpm_bucket_0', 'cpu_1/dpm_bucket_0'}


def test_bucketing_is_only_on_the_multi_host_path():
    model = built_model(bucket_size_mb=1)
    assert not ops_of(model.net, 'FlattenDenseTensors')
    assert len(ops_of(model.net, 'Sum')) == 4


def test_bucket_ops_round_trip_on_the_gradients():
    """Runs the bucketed reduction with each Allreduce replaced by its
    result for two identical hosts (2 * the sum of the local buffers):
    every gradient comes back as 2 * (its sum over the devices)."""
    model = gloo_model(bucket_size_mb=100.0 / (1 << 20))
    assert len(ops_of(model.net, 'FlattenDenseTensors')) == 2
    assert len(ops_of(model.net, 'Allreduce')) == 3
    skipped = ('MomentumSGDUpdate', 'AtomicIter', 'LearningRate')
    backward, reduced = core.Net('backward'), core.Net('reduced')
    for op in model.net.Proto().op:
        if op.type in skipped:
            continue
        if op.type == 'Allreduce':
            buffers = list(op.input[1:])
            total = reduced.Sum(buffers, op.name + '_emulated')
            reduced.Scale(total, total, scale=2.0)
            for b in buffers:
                reduced.Copy(total, b)
            continue
        reduced.Proto().op.extend([op])
        if op.type not in ('FlattenDenseTensors', 'UnflattenDenseTensors'):
            backward.Proto().op.extend([op])
    init = core.Net('init')
    init.Proto().op.extend(
        op for op in model.param_init_net.Proto().op
        if op.type not in ('CreateCommonWorld', 'CloneCommonWorld',
                           'Broadcast', 'CreateMutex'))
    feed_shards(model, *fc_data())
    workspace.RunNetOnce(init)
    workspace.RunNetOnce(backward)
    local = {g: sum(workspace.FetchBlob('cpu_{}/{}'.format(d, g))
                    for d in (0, 1)) for g in model._grad_names}
    workspace.RunNetOnce(reduced)
    for g, summed in local.items():
        for d in (0, 1):
            got = workspace.FetchBlob('cpu_{}/{}'.format(d, g))
            assert got.shape == summed.shape
            np.testing.assert_allclose(got, 2 * summed, rtol=1e-6,
                                       err_msg=g)


# ----------------------------------------------------------------- BMUF

def test_bmuf_cpu_block_update_averages_the_replicas():
    def update(model):
        lr = model.param_init_net.ConstantFill([], 'lr', shape=[1],
                                               value=-0.1)
        one = model.param_init_net.ConstantFill([], 'one', shape=[1],
                                                value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name='bmuf')
    dpm.Parallelize_CPU_BMUF(model, no_input, fc_forward, update,
                             devices=[0, 1], block_learning_rate=1.0,
                             block_momentum=0.0)
    nets = model._data_parallel_model_nets
    assert nets[0] is model.net and nets[1][1] == 1
    assert nets[1][0].Proto().name == 'global_model'
    assert [n.Proto().name for n in model._data_parallel_model_init_nets] \
        == [model.param_init_net.Proto().name, 'global_model_init']
    x, y = fc_data()
    feed_shards(model, x, y)
    dpm.RunInitNet(model)
    start = params_of(model, 0)
    workspace.RunNet(model.net)
    local = [params_of(model, d) for d in (0, 1)]
    for name in start:
        assert not np.allclose(local[0][name], local[1][name]) or \
            name.endswith('_b')
    workspace.RunNet('global_model')
    for name in start:
        avg = (local[0][name] + local[1][name]) / 2
        for d in (0, 1):
            np.testing.assert_allclose(
                workspace.FetchBlob('cpu_{}/{}'.format(d, name)), avg,
                rtol=1e-5, atol=1e-7, err_msg=name)


def test_bmuf_momentum_and_nesterov_structure():
    def update(model):
        lr = model.param_init_net.ConstantFill([], 'lr', shape=[1],
                                               value=-0.1)
        one = model.param_init_net.ConstantFill([], 'one', shape=[1],
                                                value=1.0)
        for p in model.GetParams():
            model.WeightedSum([p, one, model.param_to_grad[p], lr], p)

    model = model_helper.ModelHelper(name='bmuf')
    dpm.Parallelize_CPU_BMUF(model, no_input, fc_forward, update,
                             devices=[0, 1, 2, 3], nesterov=True)
    init_out = [op.output[0] for op in
                model._global_model_init_net.Proto().op]
    assert 'cpu_0/fc1_w_v' in init_out and 'cpu_0/fc1_w_g' in init_out
    assert 'cpu_0/fc1_w_prev' in init_out
    scales = [args(op)['scale'] for op in
              model._global_model_param_updates_net.Proto().op
              if op.type == 'Scale' and op.output[0] == 'cpu_0/fc1_w_v']
    assert scales == [pytest.approx(0.75)]  # 1 - 1/#devices


def test_forward_only_shared_model_reads_master_params():
    """Beyond upstream: a test model parallelized with shared_model reads cpu_0's params on every
    device (upstream left cpu_1/... inputs that a shared training model never creates)."""
    from caffe2.python import brew, data_parallel_model as dpm, model_helper, workspace
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="fwd_shared", init_params=False)

    def forward(m, loss_scale):
        brew.fc(m, "data", "fc", 4, 2)
        return []

    dpm.Parallelize(model, input_builder_fun=lambda m: None, forward_pass_builder_fun=forward,
                    devices=[0, 1], cpu_device=True, shared_model=True)
    inputs = [i for op in model.net.Proto().op for i in op.input]
    assert "cpu_0/fc_w" in inputs and "cpu_1/data" in inputs
    assert not any(i.startswith("cpu_1/fc_") for i in inputs)
