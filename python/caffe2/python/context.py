"""Thread-local context stacks: `@define_context()` turns a class into a
context manager whose innermost active instance is `Cls.current()`."""
import threading


class _ContextInfo(object):
    def __init__(self, cls, allow_default, arg_name):
        self.cls = cls
        self.allow_default = allow_default
        self.arg_name = arg_name
        self._local = threading.local()

    @property
    def _stack(self):
        if not hasattr(self._local, "obj"):
            self._local.obj = []
        return self._local.obj

    def enter(self, value):
        self._stack.append(value)

    def exit(self, value):
        assert len(self._stack) > 0, "Context %s is empty." % self.cls
        assert self._stack.pop() == value

    def get_active(self, required=True):
        if len(self._stack) == 0:
            if not required:
                return None
            assert self.allow_default, "Context %s is required but none is active." % self.cls
            self.enter(self.cls())
        return self._stack[-1]


class _ContextRegistry(object):
    def __init__(self):
        self._ctxs = {}

    def get(self, cls):
        if cls not in self._ctxs:
            assert issubclass(cls, object), "Not a class: %s" % cls
            arg_name = getattr(cls, "_ctx_arg_name", None)
            allow_default = getattr(cls, "_ctx_allow_default", False)
            self._ctxs[cls] = _ContextInfo(cls, allow_default, arg_name)
        return self._ctxs[cls]


_CONTEXT_REGISTRY = _ContextRegistry()


def _context_registry():
    return _CONTEXT_REGISTRY


def _get_managed_classes(obj):
    return [cls for cls in type(obj).__mro__ if getattr(cls, "_ctx_managed", False)]


class Managed(object):
    """Base of context classes: `with obj:` pushes obj on its stacks."""

    @classmethod
    def current(cls, value=None, required=True):
        return (
            value if value is not None else _CONTEXT_REGISTRY.get(cls).get_active(required=required)
        )

    def __enter__(self):
        for cls in _get_managed_classes(self):
            _CONTEXT_REGISTRY.get(cls).enter(self)
        return self

    def __exit__(self, *args):
        for cls in _get_managed_classes(self):
            _CONTEXT_REGISTRY.get(cls).exit(self)


def define_context(arg_name=None, allow_default=False):
    """Class decorator making `cls` a context: `cls.current()` returns the
    innermost active instance (a default one if `allow_default`)."""

    def wrapper(cls):
        if not issubclass(cls, Managed):
            cls = type(
                cls.__name__, (cls, Managed), {"__doc__": cls.__doc__, "__module__": cls.__module__}
            )
        cls._ctx_managed = True
        cls._ctx_arg_name = arg_name
        cls._ctx_allow_default = allow_default
        return cls

    return wrapper
