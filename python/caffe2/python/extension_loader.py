"""Loads shared libraries with RTLD_GLOBAL so their symbols are shared."""
import contextlib
import ctypes
import sys


@contextlib.contextmanager
def DlopenGuard(extra_flags=ctypes.RTLD_GLOBAL):
    """Temporarily ORs `extra_flags` into the interpreter's dlopen flags."""
    if not hasattr(sys, "getdlopenflags"):
        yield
        return
    old_flags = sys.getdlopenflags()
    sys.setdlopenflags(old_flags | extra_flags)
    try:
        yield
    finally:
        sys.setdlopenflags(old_flags)
