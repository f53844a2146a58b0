"""caffe2.python.predictor_py_utils: alias of
caffe2.python.predictor.predictor_py_utils."""
from caffe2.python.predictor.predictor_py_utils import (  # noqa: F401
    AddBlobs,
    AddModelIdArg,
    AddNet,
    AddPlan,
    GetApplicationSpecificInfo,
    GetArgumentByName,
    GetBlobs,
    GetNet,
    GetNetOriginal,
    GetPlan,
    GetPlanOriginal,
    create_predict_init_net,
    create_predict_net,
    get_comp_name,
)
