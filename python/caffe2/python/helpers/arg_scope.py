"""brew.arg_scope: default keyword arguments for chosen helpers inside a
`with` block."""
import contextlib
import copy
import threading

_threadlocal_scope = threading.local()


def get_current_scope():
    if not hasattr(_threadlocal_scope, "current_scope"):
        _threadlocal_scope.current_scope = {}
    return _threadlocal_scope.current_scope


@contextlib.contextmanager
def arg_scope(single_helper_or_list, **kwargs):
    """`with brew.arg_scope([brew.conv, brew.fc], order='NHWC'):` merges the
    kwargs into the scope of each helper (by its name)."""
    helpers = single_helper_or_list
    if not isinstance(helpers, list):
        assert callable(
            helpers
        ), "arg_scope is only supporting single or a list of helper functions."
        helpers = [helpers]
    old_scope = copy.deepcopy(get_current_scope())
    for helper in helpers:
        assert callable(helper), "arg_scope is only supporting a list of callable helper functions."
        helper_key = helper.__name__
        if helper_key not in old_scope:
            _threadlocal_scope.current_scope[helper_key] = {}
        _threadlocal_scope.current_scope[helper_key].update(kwargs)
    try:
        yield
    finally:
        _threadlocal_scope.current_scope = old_scope
