"""Moving nets into and out of the per-device namespaces of a data-parallel
model: ConvertNetForDevice (a copy of a plain net with every blob under
'<prefix>_<id>/' and every op on one device, e.g. to AppendNet another
model's net inside a forward builder) and ExtractPredictorNet (the
predict net of the master device, with the device prefix renamed away
from its inputs and outputs).

Re-exported by data_parallel_model under the upstream names; see that
module for the overall picture.
"""
import copy

from caffe2.proto import caffe2_pb2
from caffe2.python import model_helper, scope


def ConvertNetForDevice(net, device=None):
    """A deep copy of `net` with every blob name prefixed '<prefix>_<id>/'
    and every op on `device` (default: the current DeviceScope), e.g. to
    AppendNet another model's net inside a forward builder."""
    mnet = copy.deepcopy(net)
    if device is None:
        device = scope.CurrentDeviceScope()
    assert device is not None, "ConvertNetForDevice needs a device or a DeviceScope"
    device_prefix = "gpu" if device.device_type == caffe2_pb2.CUDA else "cpu"
    namescope = "{}_{}/".format(device_prefix, device.cuda_gpu_id)
    for op in mnet.Proto().op:
        if "RecurrentNetwork" in op.type:
            raise NotImplementedError("RecurrentNetwork conversion not yet supported")
        for i, inputb in enumerate(op.input):
            op.input[i] = namescope + inputb
        for i, outputb in enumerate(op.output):
            op.output[i] = namescope + outputb
        for i, blob in enumerate(op.control_input):
            op.control_input[i] = namescope + blob
        op.device_option.CopyFrom(device)
    for i, einp in enumerate(mnet.Proto().external_input):
        mnet.Proto().external_input[i] = namescope + einp
    for i, eoutp in enumerate(mnet.Proto().external_output):
        mnet.Proto().external_output[i] = namescope + eoutp
    return mnet


def ExtractPredictorNet(model, inputs, outputs, device):
    """(predict net, params it reads) from the master device's ops, with
    the device prefix renamed away from inputs and outputs."""
    master_device = model._devices[0]
    prefix = "{}_{}/".format(model._device_prefix, master_device)
    prefix_inputs = [prefix + str(b) for b in inputs]
    prefix_outputs = [prefix + str(b) for b in outputs]
    return model_helper.ExtractPredictorNet(
        net_proto=model.net.Proto(),
        input_blobs=prefix_inputs,
        output_blobs=prefix_outputs,
        device=device,
        renames={
            a: b for (a, b) in zip(prefix_inputs + prefix_outputs, list(inputs) + list(outputs))
        },
    )
