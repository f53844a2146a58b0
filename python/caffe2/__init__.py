"""caffe2: a Caffe2-compatible deep-learning runtime. The Python API lives in caffe2.python
(`from caffe2.python import core, workspace, brew, model_helper, data_parallel_model`), the wire
formats in caffe2.proto, the launcher and simulated hosts in caffe2.distributed."""
from caffe2.version import __version__  # noqa: F401
