"""caffe2.python.predictor_py_utils: alias of
caffe2.python.predictor.predictor_py_utils."""
from caffe2.python.predictor.predictor_py_utils import *  # noqa: F401,F403
