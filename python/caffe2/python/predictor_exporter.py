"""caffe2.python.predictor_exporter: alias of
caffe2.python.predictor.predictor_exporter."""
from caffe2.python.predictor.predictor_exporter import (  # noqa: F401
    PredictorExportMeta,
    get_meta_net_def,
    get_predictor_exporter_helper,
    load_from_db,
    prepare_prediction_net,
    save_to_db,
    set_model_info,
)
