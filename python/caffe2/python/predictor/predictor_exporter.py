"""Export a predictor (its nets and parameters) to a DB and load it back.

    meta = PredictorExportMeta(predict_net, parameters=params,
                               inputs=['data'], outputs=['softmax'])
    save_to_db('minidb', '/tmp/model.mdl', meta)
    meta_net_def = load_from_db('/tmp/model.mdl', 'minidb')

The DB holds `!!META_NET_DEF` (a serialized MetaNetDef with the
predict-init, global-init and predict nets) first, then the parameters.
"""
import collections

from caffe2.proto import caffe2_pb2, metanet_pb2
from caffe2.python import workspace, core, scope
from caffe2.python.predictor_constants import predictor_constants
import caffe2.python.predictor.serde as serde
import caffe2.python.predictor.predictor_py_utils as utils


def get_predictor_exporter_helper(submodelNetName):
    """A PredictorExportMeta whose name helpers are suffixed with
    `submodelNetName` (the other fields are empty)."""
    pred_meta = PredictorExportMeta(
        predict_net=core.Net(submodelNetName),
        parameters=[],
        inputs=[],
        outputs=[],
        shapes=None,
        name=submodelNetName,
        extra_init_net=None,
    )
    return pred_meta


class PredictorExportMeta(
    collections.namedtuple(
        "PredictorExportMeta",
        "predict_net, parameters, inputs, outputs, shapes, name, "
        "extra_init_net, net_type, num_workers",
    )
):
    """What to export: the predict net, its parameter, input and output
    blob names, optional {blob: shape} of inputs and outputs."""

    def __new__(
        cls,
        predict_net,
        parameters,
        inputs,
        outputs,
        shapes=None,
        name="",
        extra_init_net=None,
        net_type=None,
        num_workers=None,
    ):
        inputs = [str(i) for i in inputs]
        outputs = [str(o) for o in outputs]
        assert len(set(inputs)) == len(inputs), "All inputs to the predictor should be unique"
        parameters = [str(p) for p in parameters]
        assert set(parameters).isdisjoint(
            inputs
        ), "Parameters and inputs are required to be disjoint. " "Cannot have {} in both".format(
            set(parameters).intersection(inputs)
        )
        assert set(parameters).isdisjoint(
            outputs
        ), "Parameters and outputs are required to be disjoint. " "Cannot have {} in both".format(
            set(parameters).intersection(outputs)
        )
        shapes = shapes or {}

        if isinstance(predict_net, (core.Net, core.Plan)):
            predict_net = predict_net.Proto()

        assert isinstance(predict_net, (caffe2_pb2.NetDef, caffe2_pb2.PlanDef))
        return super(PredictorExportMeta, cls).__new__(
            cls,
            predict_net,
            parameters,
            inputs,
            outputs,
            shapes,
            name,
            extra_init_net,
            net_type,
            num_workers,
        )

    def inputs_name(self):
        return utils.get_comp_name(predictor_constants.INPUTS_BLOB_TYPE, self.name)

    def outputs_name(self):
        return utils.get_comp_name(predictor_constants.OUTPUTS_BLOB_TYPE, self.name)

    def parameters_name(self):
        return utils.get_comp_name(predictor_constants.PARAMETERS_BLOB_TYPE, self.name)

    def global_init_name(self):
        return utils.get_comp_name(predictor_constants.GLOBAL_INIT_NET_TYPE, self.name)

    def predict_init_name(self):
        return utils.get_comp_name(predictor_constants.PREDICT_INIT_NET_TYPE, self.name)

    def predict_net_name(self):
        return utils.get_comp_name(predictor_constants.PREDICT_NET_TYPE, self.name)

    def train_init_plan_name(self):
        return utils.get_comp_name(predictor_constants.TRAIN_INIT_PLAN_TYPE, self.name)

    def train_plan_name(self):
        return utils.get_comp_name(predictor_constants.TRAIN_PLAN_TYPE, self.name)


def prepare_prediction_net(filename, db_type, device_option=None):
    """Loads the exported predictor into the current workspace (runs its
    global-init and predict-init nets) and returns the predict NetDef,
    created in the workspace."""
    metanet_def = load_from_db(filename, db_type, device_option)

    global_init_net = utils.GetNet(metanet_def, predictor_constants.GLOBAL_INIT_NET_TYPE)
    workspace.RunNetOnce(global_init_net)

    predict_init_net = utils.GetNet(metanet_def, predictor_constants.PREDICT_INIT_NET_TYPE)
    workspace.RunNetOnce(predict_init_net)

    predict_net = core.Net(utils.GetNet(metanet_def, predictor_constants.PREDICT_NET_TYPE))
    workspace.CreateNet(predict_net)

    return predict_net


def _global_init_net(predictor_export_meta):
    net = core.Net("global-init")
    net.Load([predictor_constants.PREDICTOR_DBREADER], predictor_export_meta.parameters)
    # Net.Load already declared the reader as an external input.
    if predictor_constants.PREDICTOR_DBREADER not in net.Proto().external_input:
        net.Proto().external_input.extend([predictor_constants.PREDICTOR_DBREADER])
    net.Proto().external_output.extend(predictor_export_meta.parameters)

    utils.AddModelIdArg(predictor_export_meta, net.Proto())
    return net.Proto()


def get_meta_net_def(predictor_export_meta, ws=None):
    """The MetaNetDef of an export: nets PREDICT_INIT_NET_TYPE,
    GLOBAL_INIT_NET_TYPE, PREDICT_NET_TYPE (name-suffixed) and the blob
    lists of parameters, inputs and outputs."""
    ws = ws or workspace.C.Workspace.current
    meta_net_def = metanet_pb2.MetaNetDef()

    utils.AddNet(
        meta_net_def,
        predictor_export_meta.predict_init_name(),
        utils.create_predict_init_net(ws, predictor_export_meta),
    )
    utils.AddNet(
        meta_net_def,
        predictor_export_meta.global_init_name(),
        _global_init_net(predictor_export_meta),
    )
    utils.AddNet(
        meta_net_def,
        predictor_export_meta.predict_net_name(),
        utils.create_predict_net(predictor_export_meta),
    )
    utils.AddBlobs(
        meta_net_def, predictor_export_meta.parameters_name(), predictor_export_meta.parameters
    )
    utils.AddBlobs(meta_net_def, predictor_export_meta.inputs_name(), predictor_export_meta.inputs)
    utils.AddBlobs(
        meta_net_def, predictor_export_meta.outputs_name(), predictor_export_meta.outputs
    )
    return meta_net_def


def set_model_info(meta_net_def, project_str, model_class_str, version):
    assert isinstance(meta_net_def, metanet_pb2.MetaNetDef)
    meta_net_def.modelInfo.project = project_str
    meta_net_def.modelInfo.modelClass = model_class_str
    meta_net_def.modelInfo.version = version


def save_to_db(db_type, db_destination, predictor_export_meta):
    """Writes `!!META_NET_DEF` then the parameters (from the current
    workspace) to the DB."""
    meta_net_def = get_meta_net_def(predictor_export_meta)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        workspace.FeedBlob(
            predictor_constants.META_NET_DEF, serde.serialize_protobuf_struct(meta_net_def)
        )

    blobs_to_save = [predictor_constants.META_NET_DEF] + predictor_export_meta.parameters
    op = core.CreateOperator(
        "Save", blobs_to_save, [], absolute_path=True, db=db_destination, db_type=db_type
    )

    workspace.RunOperatorOnce(op)


def load_from_db(filename, db_type, device_option=None):
    """Reads the MetaNetDef of an export (parameters are loaded by its
    global-init net, which reads `!!PREDICTOR_DBREADER` created here). A
    device option (or the active DeviceScope) is copied into every op."""
    create_db = core.CreateOperator(
        "CreateDB",
        [],
        [core.BlobReference(predictor_constants.PREDICTOR_DBREADER)],
        db=filename,
        db_type=db_type,
    )
    assert workspace.RunOperatorOnce(create_db), "Failed to create db {}".format(filename)

    # save_to_db writes the MetaNetDef as the first record.
    load_meta_net_def = core.CreateOperator(
        "Load",
        [core.BlobReference(predictor_constants.PREDICTOR_DBREADER)],
        [core.BlobReference(predictor_constants.META_NET_DEF)],
    )
    assert workspace.RunOperatorOnce(load_meta_net_def)

    blob = workspace.FetchBlob(predictor_constants.META_NET_DEF)
    meta_net_def = serde.deserialize_protobuf_struct(
        blob if isinstance(blob, bytes) else str(blob).encode("utf-8"), metanet_pb2.MetaNetDef
    )

    if device_option is None:
        device_option = scope.CurrentDeviceScope()

    if device_option is not None:
        for kv in meta_net_def.nets:
            net = kv.value
            for op in net.op:
                op.device_option.CopyFrom(device_option)

    return meta_net_def
