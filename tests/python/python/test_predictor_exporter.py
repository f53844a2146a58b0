"""predictor_exporter: MetaNetDef layout, save_to_db / load_from_db round
trips, and init_net.pb / predict_net.pb files through workspace.Predictor."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2, metanet_pb2
from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.predictor import predictor_exporter as pe
from caffe2.python.predictor import predictor_py_utils as pred_utils
from caffe2.python.predictor import serde
from caffe2.python.predictor_constants import predictor_constants as pc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(autouse=True)
def fresh_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def build_mlp():
    rng = np.random.RandomState(1)
    model = model_helper.ModelHelper(name="mlp")
    h = brew.fc(
        model,
        "data",
        "h",
        4,
        6,
        weight_init=("GivenTensorFill", {"values": rng.randn(6, 4).astype(np.float32)}),
    )
    out = brew.fc(
        model,
        h,
        "y",
        6,
        2,
        weight_init=("GivenTensorFill", {"values": rng.randn(2, 6).astype(np.float32)}),
        bias_init=("ConstantFill", {"value": 0.5}),
    )
    data = rng.randn(3, 4).astype(np.float32)
    workspace.FeedBlob("data", data)
    workspace.RunNetOnce(model.param_init_net)
    workspace.RunNetOnce(model.net)
    return model, data, workspace.FetchBlob(str(out))


def test_constants():
    assert pc.META_NET_DEF == "!!META_NET_DEF"
    assert pc.PREDICTOR_DBREADER == "!!PREDICTOR_DBREADER"
    assert pc.PREDICT_NET_TYPE == "PREDICT_NET_TYPE"


def test_meta_checks_and_names():
    net = core.Net("n")
    with pytest.raises(AssertionError, match="unique"):
        pe.PredictorExportMeta(net, [], ["a", "a"], ["b"])
    with pytest.raises(AssertionError, match="disjoint"):
        pe.PredictorExportMeta(net, ["a"], ["a"], ["b"])
    with pytest.raises(AssertionError, match="disjoint"):
        pe.PredictorExportMeta(net, ["b"], ["a"], ["b"])
    meta = pe.PredictorExportMeta(net, [], ["a"], ["b"], name="sub")
    assert meta.predict_net_name() == "PREDICT_NET_TYPE_sub"
    assert meta.inputs_name() == "INPUTS_BLOB_TYPE_sub"
    assert meta.train_plan_name() == "TRAIN_PLAN_TYPE_sub"
    assert (
        pe.PredictorExportMeta(net, [], ["a"], ["b"]).global_init_name() == "GLOBAL_INIT_NET_TYPE"
    )
    assert isinstance(meta.predict_net, caffe2_pb2.NetDef)


def test_meta_net_def_layout():
    # core.Net makes names unique per process: an export earlier in this process (another test
    # file's) would have taken "predict-init", and this export would be "predict-init_1".
    core.Net._net_names_used.discard("predict-init")
    model, _, _ = build_mlp()
    model.net.Proto().arg.extend([core.utils.MakeArgument("model_id", 7)])
    meta = pe.PredictorExportMeta(
        model.net, model.GetParams(), ["data"], ["y"], shapes={"y": [3, 2]}
    )
    meta_net_def = pe.get_meta_net_def(meta)
    init = pred_utils.GetNet(meta_net_def, pc.PREDICT_INIT_NET_TYPE)
    assert init.name == "predict-init"
    fills = {op.output[0]: op for op in init.op}
    assert set(fills) == {"data", "y"}
    shape = [a for a in fills["y"].arg if a.name == "shape"][0]
    assert list(shape.ints) == [3, 2]  # from meta.shapes
    shape = [a for a in fills["data"].arg if a.name == "shape"][0]
    assert list(shape.ints) == [3, 4]  # from the workspace
    assert not fills["data"].HasField("device_option")
    glob = pred_utils.GetNet(meta_net_def, pc.GLOBAL_INIT_NET_TYPE)
    assert glob.op[0].type == "Load"
    assert list(glob.external_input) == ["!!PREDICTOR_DBREADER"]
    assert pred_utils.GetArgumentByName(glob, "model_id").i == 7
    pred = pred_utils.GetNet(meta_net_def, pc.PREDICT_NET_TYPE)
    assert list(pred.external_input) == ["data", "h_w", "h_b", "y_w", "y_b"]
    assert list(pred.external_output) == ["y"]
    assert list(pred_utils.GetBlobs(meta_net_def, pc.OUTPUTS_BLOB_TYPE)) == ["y"]
    assert pred_utils.GetBlobs(meta_net_def, "missing") == []
    pe.set_model_info(meta_net_def, "proj", "cls", "v1")
    blob = serde.serialize_protobuf_struct(meta_net_def)
    again = serde.deserialize_protobuf_struct(blob, metanet_pb2.MetaNetDef)
    assert again.modelInfo.project == "proj"


def test_save_and_load_round_trip(tmp_path):
    model, data, expected = build_mlp()
    meta = pe.PredictorExportMeta(model.net, model.GetParams(), ["data"], ["y"])
    path = str(tmp_path / "model.minidb")
    pe.save_to_db("minidb", path, meta)

    workspace.ResetWorkspace()
    net = pe.prepare_prediction_net(path, "minidb")
    assert sorted(set(workspace.Blobs()) - {"data", "h", "y"}) == sorted(
        ["!!META_NET_DEF", "!!PREDICTOR_DBREADER", "h_b", "h_w", "y_b", "y_w"]
    )
    workspace.FeedBlob("data", data)
    workspace.RunNet(net)
    assert np.array_equal(workspace.FetchBlob("y"), expected)


def test_load_from_db_applies_device_option(tmp_path):
    model, _, _ = build_mlp()
    meta = pe.PredictorExportMeta(model.net, model.GetParams(), ["data"], ["y"])
    path = str(tmp_path / "model.minidb")
    pe.save_to_db("minidb", path, meta)
    workspace.ResetWorkspace()
    option = core.DeviceOption(caffe2_pb2.CPU, 0, random_seed=3)
    meta_net_def = pe.load_from_db(path, "minidb", device_option=option)
    for kv in meta_net_def.nets:
        for op in kv.value.op:
            assert op.device_option.random_seed == 3


def test_round_trip_in_a_fresh_process(tmp_path):
    model, data, expected = build_mlp()
    meta = pe.PredictorExportMeta(model.net, model.GetParams(), ["data"], ["y"])
    path = str(tmp_path / "model.minidb")
    pe.save_to_db("minidb", path, meta)
    np.save(str(tmp_path / "data.npy"), data)
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from caffe2.python import workspace
        from caffe2.python.predictor import predictor_exporter as pe
        net = pe.prepare_prediction_net(sys.argv[1], "minidb")
        workspace.FeedBlob("data", np.load(sys.argv[2]))
        workspace.RunNet(net)
        np.save(sys.argv[3], workspace.FetchBlob("y"))
    """
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run(
        [sys.executable, "-c", script, path, str(tmp_path / "data.npy"), str(tmp_path / "out.npy")],
        check=True,
        env=env,
        timeout=120,
    )
    assert np.array_equal(np.load(str(tmp_path / "out.npy")), expected)


def test_init_and_predict_net_files_with_predictor(tmp_path):
    model, data, expected = build_mlp()
    predict_net = core.Net("predict")
    predict_net.Proto().op.extend(model.net.Proto().op)
    predict_net.Proto().external_input.extend(["data"] + [str(p) for p in model.params])
    predict_net.Proto().external_output.extend(["y"])
    init_net = caffe2_pb2.NetDef()
    init_net.name = "init"
    for p in model.params:
        init_net.op.extend(
            [
                core.CreateOperator(
                    "GivenTensorFill",
                    [],
                    [str(p)],
                    shape=list(workspace.FetchBlob(str(p)).shape),
                    values=workspace.FetchBlob(str(p)),
                )
            ]
        )
    (tmp_path / "init_net.pb").write_bytes(init_net.SerializeToString())
    (tmp_path / "predict_net.pb").write_bytes(predict_net.Proto().SerializeToString())

    workspace.ResetWorkspace()
    predictor = workspace.Predictor(
        (tmp_path / "init_net.pb").read_bytes(), (tmp_path / "predict_net.pb").read_bytes()
    )
    out = predictor.run([data])
    assert np.array_equal(out[0], expected)
    out = predictor.run({"data": data})
    assert np.array_equal(out[0], expected)


def test_load_from_missing_db_is_an_error(tmp_path):
    with pytest.raises(RuntimeError):
        pe.load_from_db(str(tmp_path / "nothing_here"), "minidb")
