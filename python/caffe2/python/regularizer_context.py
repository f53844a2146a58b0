"""RegularizerContext: regularizers attached to parameters at creation
time (UseRegularizer)."""
from caffe2.python import context
from caffe2.python.modifier_context import ModifierContext, UseModifierBase


@context.define_context(allow_default=True)
class RegularizerContext(ModifierContext):
    """Holds {name: regularizer}."""

    def has_regularizer(self, name):
        return self._has_modifier(name)

    def get_regularizer(self, name):
        assert self.has_regularizer(name), "{} regularizer is not provided!".format(name)
        return self._get_modifier(name)


class UseRegularizer(UseModifierBase):
    """`with UseRegularizer({'name': reg})`."""

    def _context_class(self):
        return RegularizerContext
