"""Model-parallel helpers for data_parallel_model models: list the
activations of a model and move the ops that handle some of them to
another GPU (cross-device copies are injected)."""
import logging

from caffe2.python import core
from caffe2.python.data_parallel_model import stripBlobName

log = logging.getLogger("data_parallel_model_utils")
log.setLevel(logging.INFO)


def GetActivationBlobs(model):
    """Unprefixed names of the first device's activations: op outputs that
    are read again, have a gradient and are not parameters."""
    activations = []
    first_gpu_prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    all_inputs = set()
    for op in model.net.Proto().op:
        all_inputs.update(op.input)
    params = set(str(p) for p in model.GetParams(""))

    for op in model.net.Proto().op:
        for b in op.output:
            if b.startswith(first_gpu_prefix) and not b.endswith("_grad"):
                if b in all_inputs and b not in params and b + "_grad" in all_inputs:
                    activations.append(stripBlobName(b))
    return activations


def _ShiftActivationDevices(model, activations, from_device, to_device):
    prefix = "{}_{}/".format(model._device_prefix, from_device)
    activations = set([prefix + a for a in activations])
    all_activations = set([prefix + a for a in GetActivationBlobs(model)])
    ops = list(op for op in model.net.Proto().op if op.device_option.cuda_gpu_id == from_device)
    device_mapping = {a: to_device for a in activations}
    device_mapping.update({b: from_device for b in all_activations if b not in activations})

    # Label propagation: an op goes where its activations are (the output
    # activation decides when there are several); other blobs follow.
    for op in ops:
        op_device = None
        for b in list(op.input) + list(op.output):
            if b in device_mapping:
                if b in all_activations or op_device is None:
                    op_device = device_mapping[b]
        if op_device is None:
            op_device = op.device_option.cuda_gpu_id
        for b in list(op.input) + list(op.output):
            if b not in device_mapping and b.startswith(prefix):
                device_mapping[b] = op_device
        op.device_option.cuda_gpu_id = op_device

    for op in model.param_init_net.Proto().op:
        if op.output[0] in device_mapping:
            op.device_option.cuda_gpu_id = device_mapping[op.output[0]]


def ShiftActivationDevices(model, activations, shifts):
    """Simple model parallelism: `shifts` maps from_gpu -> to_gpu, and the
    ops handling `activations` (unprefixed, see GetActivationBlobs) on
    from_gpu, with their gradient ops, move to to_gpu; copy ops are
    injected where blobs cross devices."""
    assert set(activations).issubset(set(GetActivationBlobs(model)))
    for d, to_d in shifts.items():
        log.info("Shifting {} activations from {} --> {}".format(len(activations), d, to_d))
        _ShiftActivationDevices(model, activations, d, to_d)

    param_init_net, blob_to_device = core.InjectCrossDeviceCopies(model.param_init_net)
    net, _ = core.InjectCrossDeviceCopies(model.net, blob_to_device)
    model.param_init_net = param_init_net
    model.net = net
