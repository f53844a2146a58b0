"""ParameterSharing: map name scopes onto other scopes so that parameters
created under them are shared."""
import contextlib
import logging

from caffe2.python import scope

logger = logging.getLogger(__name__)


class ParameterSharingContext(object):
    """A stack of {scope: shared scope} overrides."""

    def __init__(self):
        self._scope_overrides = {}
        self._contexts = []

    def _resolve_scope_overrides(self, candidate_scope):
        """The scope `candidate_scope` maps to: the longest overridden
        prefix is replaced, recursively."""
        best_scope = candidate_scope
        best_scope_idx = 0
        sub_scopes = candidate_scope.split(scope._NAMESCOPE_SEPARATOR)
        cur_scope = ""
        for idx, sub_scope in enumerate(sub_scopes):
            cur_scope = cur_scope + sub_scope + scope._NAMESCOPE_SEPARATOR
            if cur_scope in self._scope_overrides:
                best_scope = self._scope_overrides[cur_scope]
                best_scope_idx = idx
        if best_scope == candidate_scope:
            return candidate_scope
        return self._resolve_scope_overrides(best_scope) + scope._NAMESCOPE_SEPARATOR.join(
            sub_scopes[best_scope_idx + 1 :]
        )

    def get_parameter_name(self, name):
        """The scoped name of parameter `name` after scope overrides."""
        current_scope = scope.CurrentNameScope()
        result = self._resolve_scope_overrides(current_scope)
        if result != current_scope:
            logger.info(
                "Parameter %s is shared: %s is used instead of %s",
                name,
                result + name,
                current_scope + name,
            )
        return result + name

    def add_scope_overrides(self, shared_scopes):
        self._contexts.append(shared_scopes)
        self._scope_overrides.update(shared_scopes)

    def pop(self):
        assert len(self._contexts) > 0
        self._contexts.pop()
        self._scope_overrides = {}
        for x in self._contexts:
            self._scope_overrides.update(x)


parameter_sharing_context = ParameterSharingContext()


def _normalize_namescope(namescope):
    if namescope and namescope[-1] != scope._NAMESCOPE_SEPARATOR:
        return namescope + scope._NAMESCOPE_SEPARATOR
    return namescope


@contextlib.contextmanager
def ParameterSharing(shared_scopes):
    """`with ParameterSharing({'b': 'a'})`: parameters created under scope
    `b/` are the ones of scope `a/` ('' shares with the top level)."""
    assert isinstance(shared_scopes, dict)
    shared_scope_overrides = {}
    current_scope = scope.CurrentNameScope()
    for k, v in shared_scopes.items():
        assert not v.startswith(
            k
        ), "Illegal override for parameter sharing. {} is prefix of {}".format(k, v)
        k = current_scope + k
        v = current_scope + v
        k = _normalize_namescope(k)
        v = _normalize_namescope(v)
        shared_scope_overrides[k] = v
    try:
        parameter_sharing_context.add_scope_overrides(shared_scope_overrides)
        yield
    finally:
        parameter_sharing_context.pop()
