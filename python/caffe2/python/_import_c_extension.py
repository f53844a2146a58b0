"""Imports the pybind11 extension; the rest of caffe2.python uses it as `C`.

The GPU build of the module is preferred; without it the CPU module is used
and `has_gpu_support` is False.
"""
import atexit
import logging
import sys

from caffe2.python import extension_loader

with extension_loader.DlopenGuard():
    try:
        from caffe2.python.caffe2_pybind11_state_gpu import *  # noqa: F401,F403

        has_gpu_support = bool(num_cuda_devices())  # noqa: F405
    except ImportError as gpu_error:
        logging.warning(
            "This caffe2 python run does not have GPU support. " "Will run in CPU only mode."
        )
        logging.warning("Debug message: {0}".format(gpu_error))
        try:
            from caffe2.python.caffe2_pybind11_state import *  # noqa: F401,F403
        except ImportError as cpu_error:
            logging.critical("Cannot load caffe2.python. Error: {0}".format(cpu_error))
            sys.exit(1)
        has_gpu_support = False

# Drop every workspace (and the tensors they hold) before the interpreter
# tears down the modules the C++ destructors may still call into.
atexit.register(on_module_exit)  # noqa: F405


def _TensorCPU_shape(self):
    return tuple(self._shape)


def _TensorCPU_reshape(self, shape):
    return self._reshape(list(shape))


TensorCPU.shape = property(_TensorCPU_shape)  # noqa: F405
TensorCPU.reshape = _TensorCPU_reshape  # noqa: F405
