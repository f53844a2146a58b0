"""The descriptors of caffe2.proto and its companions against upstream's field tables: every
message's fields in order, with their numbers, types, labels, packing and deprecation; the files'
names, package and syntax."""
import pytest
from google.protobuf.descriptor import FieldDescriptor as FD

from caffe2.proto import (
    caffe2_legacy_pb2,
    caffe2_pb2,
    metanet_pb2,
    predictor_consts_pb2,
    prof_dag_pb2,
)

# name number type label, from upstream's field tables; a capitalised type names a
# caffe2 message or enum.
SCHEMA = {
    caffe2_pb2.TensorProto: """dims 1 int64 repeated, data_type 2
        TensorProto.DataType optional, float_data 3 float repeated, int32_data 4
        int32 repeated, byte_data 5 bytes optional, string_data 6 bytes repeated,
        name 7 string optional, device_detail 8 DeviceOption optional,
        double_data 9 double repeated, int64_data 10 int64 repeated,
        segment 11 TensorProto.Segment optional""",
    caffe2_pb2.TensorProto.Segment: "begin 1 int64 required, end 2 int64 required",
    caffe2_pb2.QTensorProto: """dims 1 int64 repeated, precision 2 int32
        required, scale 3 double required, bias 4 double required, is_signed 5
        bool required, data 6 int32 repeated, name 7 string optional""",
    caffe2_pb2.TensorProtos: "protos 1 TensorProto repeated",
    caffe2_pb2.TensorShape: """dims 1 int64 repeated, data_type 2
        TensorProto.DataType optional, unknown_dims 3 int32 repeated,
        unknown_shape 4 bool optional, name 5 string optional""",
    caffe2_pb2.TensorShapes: "shapes 1 TensorShape repeated",
    caffe2_pb2.Argument: """name 1 string optional, f 2 float optional, i 3
        int64 optional, s 4 bytes optional, n 8 NetDef optional, floats 5 float
        repeated, ints 6 int64 repeated, strings 7 bytes repeated, nets 9 NetDef
        repeated""",
    caffe2_pb2.DeviceOption: """device_type 1 int32 optional, cuda_gpu_id 2
        int32 optional, random_seed 3 uint32 optional, node_name 4 string
        optional, numa_node_id 5 int32 optional""",
    caffe2_pb2.OperatorDef: """input 1 string repeated, output 2 string
        repeated, name 3 string optional, type 4 string optional, arg 5 Argument
        repeated, device_option 6 DeviceOption optional, engine 7 string
        optional, control_input 8 string repeated, is_gradient_op 9 bool
        optional, debug_info 10 string optional""",
    caffe2_pb2.NetDef: """name 1 string optional, op 2 OperatorDef repeated,
        type 3 string optional, num_workers 4 int32 optional, device_option 5
        DeviceOption optional, arg 6 Argument repeated, external_input 7 string
        repeated, external_output 8 string repeated""",
    caffe2_pb2.ExecutionStep: """name 1 string optional, substep 2
        ExecutionStep repeated, network 3 string repeated, num_iter 4 int64
        optional, criteria_network 5 string optional, concurrent_substeps 6 bool
        optional, report_net 7 string optional, report_interval 8 int32
        optional, should_stop_blob 9 string optional, only_once 10 bool
        optional, run_every_ms 11 int64 optional, create_workspace 12 bool
        optional, num_concurrent_instances 13 int32 optional""",
    caffe2_pb2.PlanDef: """name 1 string optional, network 2 NetDef repeated,
        execution_step 3 ExecutionStep repeated""",
    caffe2_pb2.BlobProto: """name 1 string optional, type 2 string optional,
        tensor 3 TensorProto optional, content 4 bytes optional, qtensor 5
        QTensorProto optional, content_num_chunks 6 int32 optional,
        content_chunk_id 7 int32 optional""",
    caffe2_pb2.DBReaderProto: """name 1 string optional, source 2 string
        optional, db_type 3 string optional, key 4 string optional""",
    metanet_pb2.ModelInfo: """project 1 string optional, modelClass 2 string
        optional, version 3 string optional, predictorType 4 string optional,
        modelId 5 string optional""",
    metanet_pb2.BlobsMap: "key 1 string required, value 2 string repeated",
    metanet_pb2.NetsMap: "key 1 string required, value 2 NetDef required",
    metanet_pb2.PlansMap: "key 1 string required, value 2 PlanDef required",
    metanet_pb2.StringMap: "key 1 string required, value 2 string required",
    metanet_pb2.MetaNetDef: """blobs 1 BlobsMap repeated, nets 2 NetsMap
        repeated, modelInfo 3 ModelInfo optional, plans 4 PlansMap repeated,
        applicationSpecificInfo 5 StringMap repeated""",
    prof_dag_pb2.ProfDAGProto: """name 1 string required, mean 2 float
        required, stddev 3 float required""",
    prof_dag_pb2.ProfDAGProtos: "stats 1 ProfDAGProto repeated",
}
SCALARS = {
    n: getattr(FD, "TYPE_" + n.upper())
    for n in ["int32", "int64", "uint32", "bool", "float", "double", "string", "bytes"]
}
LABELS = {
    "optional": FD.LABEL_OPTIONAL,
    "required": FD.LABEL_REQUIRED,
    "repeated": FD.LABEL_REPEATED,
}
PACKED = {
    "TensorProto": {"float_data", "int32_data", "double_data", "int64_data"},
    "QTensorProto": {"data"},
}
DEPRECATED = {"NetDef": {"num_workers"}, "ExecutionStep": {"criteria_network"}}


@pytest.mark.parametrize("cls", list(SCHEMA), ids=lambda c: c.DESCRIPTOR.name)
def test_descriptor_matches_upstream_fields(cls):
    desc = cls.DESCRIPTOR
    rows = [row.split() for row in SCHEMA[cls].split(",")]
    assert [f.name for f in desc.fields] == [r[0] for r in rows]
    for field, (_, number, type_name, label) in zip(desc.fields, rows):
        assert field.number == int(number) and field.label == LABELS[label]
        if type_name in SCALARS:
            assert field.type == SCALARS[type_name], field.name
        else:
            sub = field.message_type or field.enum_type
            assert sub.full_name == "caffe2." + type_name, field.name
        options = field.GetOptions()
        assert options.packed == (field.name in PACKED.get(desc.name, ())), field.name
        assert options.deprecated == (field.name in DEPRECATED.get(desc.name, ())), field.name


def test_files_and_package():
    for module, name in [
        (caffe2_pb2, "caffe2"),
        (caffe2_legacy_pb2, "caffe2_legacy"),
        (metanet_pb2, "metanet"),
        (predictor_consts_pb2, "predictor_consts"),
        (prof_dag_pb2, "prof_dag"),
    ]:
        assert module.DESCRIPTOR.name == "caffe2/proto/%s.proto" % name
        assert module.DESCRIPTOR.package == "caffe2"
        assert module.DESCRIPTOR.syntax == "proto2"
    assert [d.name for d in metanet_pb2.DESCRIPTOR.dependencies] == ["caffe2/proto/caffe2.proto"]
