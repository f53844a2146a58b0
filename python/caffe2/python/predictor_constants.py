"""caffe2.python.predictor_constants (the upstream import path)."""
from caffe2.python.predictor.predictor_constants import predictor_constants  # noqa: F401
