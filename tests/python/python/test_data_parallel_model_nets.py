"""data_parallel_model: the structure of the GPU and multi-host (Gloo) nets and of gradient
bucketing, built without running them (no GPU here; the multi-process runs are in
tests/python/distributed)."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace
from caffe2.python import data_parallel_model as dpm
from caffe2.python import data_parallel_model_utils as dpm_utils

from dpm_test_util import *  # noqa: F401,F403

@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


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


def test_analyze_operators_rejects_cross_device_gpu_ops():
    model = gpu_model([0, 1])
    dpm._AnalyzeOperators(model)  # the built net is clean
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        model.net.Relu('gpu_1/fc1', 'gpu_0/bad')
    with pytest.raises(Exception, match='should have namescope gpu_0/'):
        dpm._AnalyzeOperators(model)


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
    # A GPU model rendezvousing through a store switches to NCCL when built.
    assert all(op.engine == ('NCCL' if HAS_NCCL else 'GLOO') for op in allreduce)
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


# ------------------------------- multi-host GPU nets, NCCL engine (not run)

HAS_NCCL = core.IsOperatorWithEngine('Allreduce', 'NCCL')
NCCL_COLLECTIVES = COLLECTIVES + ('DestroyCommonWorld',)


def nccl_model(forward=fc_forward, rendezvous=None, devices=(0, 1), **kwargs):
    model = model_helper.ModelHelper(name='dpm_nccl')
    with pretend_registered(*NCCL_COLLECTIVES):
        dpm.Parallelize_GPU(model, no_input, forward, optimizer_builder_fun=sgd,
                            devices=list(devices),
                            rendezvous=rendezvous or dict(GLOO, engine='NCCL'),
                            **kwargs)
    return model


def test_nccl_one_world_reduces_every_gradient_on_the_gpus():
    model = nccl_model(max_concurrent_distributed_ops=4)
    init_ops = model.param_init_net.Proto().op
    create = ops_of(model.param_init_net, 'CreateCommonWorld')
    assert [(op.name, list(op.input), list(op.output), op.engine)
            for op in create] == [('allreduce_0_cw_op', ['store_handler'],
                                   ['allreduce_0_cw'], 'NCCL')]
    assert args(create[0]) == dict(size=2, rank=0, timeout_ms=30000, gpus=[0, 1],
                                   status_blob='create_allreduce_cw_0_status')
    assert (create[0].device_option.device_type,
            create[0].device_option.cuda_gpu_id) == (caffe2_pb2.CUDA, 0)
    clones = [op for op in init_ops if op.type == 'CloneCommonWorld']
    assert [(op.name, list(op.input), op.engine) for op in clones] == [
        ('broadcast_0_cw_op', ['allreduce_0_cw'], 'NCCL')]
    allreduce = ops_of(model.net, 'Allreduce')
    grads = ['fc2_b_grad', 'fc2_w_grad', 'fc1_b_grad', 'fc1_w_grad']
    assert [op.name for op in allreduce] == grads
    # one world whatever max_concurrent_distributed_ops says, chained into one order
    assert [list(op.input) for op in allreduce] == [
        ['allreduce_0_cw', 'gpu_0/' + g, 'gpu_1/' + g] for g in grads]
    assert [list(op.control_input) for op in allreduce] == [
        [], ['gpu_0/fc2_b_grad'], ['gpu_0/fc2_w_grad'], ['gpu_0/fc1_b_grad']]
    assert all(list(op.output) == list(op.input[1:]) for op in allreduce)
    assert all(op.engine == 'NCCL' and op.device_option.device_type == caffe2_pb2.CUDA and
               op.device_option.cuda_gpu_id == 0 for op in allreduce)
    assert [args(op) for op in allreduce] == [
        dict(status_blob='allreduce_{}_status'.format(g)) for g in grads]
    # no host copies, no local Sum tree
    assert not ops_of(model.net, 'Sum') and not ops_of(model.net, 'CopyGPUToCPU')
    dpm._AnalyzeOperators(model)


def test_nccl_initial_broadcast_of_gpu_params():
    model = nccl_model()
    bcast = ops_of(model.param_init_net, 'Broadcast')
    names = sorted(['fc1_w', 'fc1_b', 'fc2_w', 'fc2_b', 'fc1_w_momentum',
                    'fc1_b_momentum', 'fc2_w_momentum', 'fc2_b_momentum'])
    assert [op.name for op in bcast] == names
    assert [list(op.input) for op in bcast] == [
        ['broadcast_0_cw', 'gpu_0/' + n, 'gpu_1/' + n] for n in names]
    assert all(op.engine == 'NCCL' and op.device_option.device_type == caffe2_pb2.CUDA
               for op in bcast)
    assert 'root' not in args(bcast[0])  # rank 0's first GPU
    assert not ops_of(model.param_init_net, 'CopyGPUToCPU')


def conv_bn_forward_with_host_counter(model, loss_scale):
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        model.param_init_net.ConstantFill([], 'counter', shape=[1], value=0,
                                          dtype=core.DataType.INT64)
    return fc_forward(model, loss_scale)


@pytest.mark.skipif(not core.IsOperator('CopyCPUToGPU'),
                    reason="a build without CUDA (the sanitizer build) has no GPU copy ops to build the net from")
def test_nccl_stages_host_blobs_through_the_gpus():
    model = nccl_model(forward=conv_bn_forward_with_host_counter)
    ops = model.param_init_net.Proto().op
    to_gpu = [(list(op.input), list(op.output), op.device_option.cuda_gpu_id)
              for op in ops if op.type == 'CopyCPUToGPU']
    assert to_gpu == [(['gpu_0/counter'], ['gpu_0/counter_nccl_stage'], 0),
                      (['gpu_1/counter'], ['gpu_1/counter_nccl_stage'], 1)]
    bcast = [op for op in ops if op.type == 'Broadcast' and op.name == 'counter'][0]
    assert list(bcast.input) == ['broadcast_0_cw', 'gpu_0/counter_nccl_stage',
                                 'gpu_1/counter_nccl_stage']
    back = [(list(op.input), list(op.output), op.device_option.cuda_gpu_id)
            for op in ops if op.type == 'CopyGPUToCPU']
    assert back == [(['gpu_0/counter_nccl_stage'], ['gpu_0/counter'], 0),
                    (['gpu_1/counter_nccl_stage'], ['gpu_1/counter'], 1)]
    where = {op.type: i for i, op in enumerate(ops)
             if 'counter' in ''.join(op.input) + op.name}
    assert where['CopyCPUToGPU'] < where['Broadcast'] < where['CopyGPUToCPU']


def test_nccl_bucketing():
    model = nccl_model(bucket_size_mb=1)
    allreduce = ops_of(model.net, 'Allreduce')
    assert [op.name for op in allreduce] == ['dpm_bucket_0']
    assert list(allreduce[0].input) == ['allreduce_0_cw', 'gpu_0/dpm_bucket_0',
                                        'gpu_1/dpm_bucket_0']
    assert args(allreduce[0]) == dict(status_blob='allreduce_dpm_bucket_0_status')
    dpm._AnalyzeOperators(model)


@pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL engine")
def test_gpu_model_with_gloo_rendezvous_switches_to_nccl():
    model = nccl_model(rendezvous=dict(GLOO))
    assert {op.engine for op in model.param_init_net.Proto().op
            if 'CommonWorld' in op.type or op.type == 'Broadcast'} == {'NCCL'}
    assert {op.engine for op in ops_of(model.net, 'Allreduce')} == {'NCCL'}
    assert model._rendezvous['engine'] == 'GLOO'  # the CPU-side helpers keep Gloo


def test_gpu_model_with_mpi_rendezvous_keeps_gloo():
    model = nccl_model(rendezvous=dict(GLOO, kv_handler=None, mpi_rendezvous=True))
    assert {op.engine for op in ops_of(model.net, 'Allreduce')} == {'GLOO'}
    create = ops_of(model.param_init_net, 'CreateCommonWorld')[0]
    assert 'gpus' not in args(create)


def test_cpu_model_keeps_gloo_with_an_nccl_build():
    model = gloo_model()
    assert {op.engine for op in ops_of(model.net, 'Allreduce')} == {'GLOO'}


@pytest.mark.skipif(not HAS_NCCL, reason="this build has no NCCL engine")
def test_gloo_world_for_host_blobs_of_an_nccl_model():
    """AddDistributedBlobSync sums host blobs with the rendezvous' Gloo: it makes a Gloo world
    of its own instead of cloning the NCCL one."""
    model = nccl_model(rendezvous=dict(GLOO))
    with pretend_registered(*NCCL_COLLECTIVES):
        dpm.AddDistributedBlobSync(model, ['hosts_seen'])
    create = ops_of(model.param_init_net, 'CreateCommonWorld')
    assert [(op.output[0], op.engine) for op in create] == [
        ('allreduce_0_cw', 'NCCL'), ('blob_sync_cw_hosts_seen', 'GLOO')]
    assert not [op for op in ops_of(model.param_init_net, 'CloneCommonWorld')
                if op.engine == 'GLOO']


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
