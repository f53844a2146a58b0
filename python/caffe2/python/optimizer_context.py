"""OptimizerContext: optimizers attached to parameters at creation time,
by parameter tag or DEFAULT (UseOptimizer)."""
from caffe2.python import context
from caffe2.python.modifier_context import ModifierContext, UseModifierBase

DEFAULT_OPTIM = "DEFAULT"


@context.define_context(allow_default=True)
class OptimizerContext(ModifierContext):
    """Holds {tag or DEFAULT: optimizer}; ModelHelper.create_param reads it."""

    def has_optimizer(self, name):
        return self._has_modifier(name)

    def get_optimizer(self, name):
        assert self.has_optimizer(name), "{} optimizer is not provided!".format(name)
        return self._get_modifier(name)


class UseOptimizer(UseModifierBase):
    """`with UseOptimizer(opt)` or `UseOptimizer({'WEIGHT': opt, ...})`."""

    def _context_class(self):
        return OptimizerContext
