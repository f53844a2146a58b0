"""pretend_registered: lets tests build (not run) nets of operators this build does not have."""
import contextlib

from caffe2.python import core, workspace


@contextlib.contextmanager
def pretend_registered(*op_types):
    """Makes core.IsOperator accept `op_types` so nets can be built (not run) before the operators
    exist; a no-op for the ones that do."""
    keys = {workspace.C.op_registry_key(t, "DEFAULT") for t in op_types}
    added = keys - core._REGISTERED_OPERATORS
    core._REGISTERED_OPERATORS.update(added)
    try:
        yield
    finally:
        core._REGISTERED_OPERATORS.difference_update(added)
