"""Argument names that an operator's schema does not know are refused when the op is created from
Python (beyond upstream, which accepted and ignored them, so `kernal=3` trained with the default
kernel):

    core.CreateOperator("Conv", ["X", "w"], ["Y"], kernal=3)
    ValueError: [Conv] has no argument 'kernal' (did you mean 'kernel'?) ...

Every schema declares the arguments its kernels read (scripts/check_schema_args.py keeps it so).
Besides those, every op accepts the ambient arguments below, which upstream's model helpers pass to
whole families of ops through arg_scope and which an op may ignore. Ops without a schema (Python
ops, unknown types) are not checked, nor are NetDefs read from files: model files that carry extra
arguments load as before. CAFFE2_ALLOW_UNKNOWN_ARGUMENTS=1 in the environment, or
AllowUnknownArguments(True), restores upstream's behaviour for code that relies on it.
"""
import difflib
import os
import re

from caffe2.python import _import_c_extension as C

# Passed by upstream's model helpers (cnn.CNNModelHelper's and brew's arg_scope, the trainers) to
# ops that may not read them.
AMBIENT_ARGUMENTS = frozenset(
    [
        "order",
        "use_cudnn",
        "cudnn_exhaustive_search",
        "exhaustive_search",
        "ws_nbytes_limit",
        "float16_compute",
        "enable_tensor_core",
        "deterministic",
        "is_test",
    ]
)

# Families of names an op reads by pattern (one per sub-policy), which no list can declare.
ARGUMENT_PATTERNS = {"LearningRate": re.compile(r"sub_policy_\d+_\w+$")}

_allow_unknown = os.environ.get("CAFFE2_ALLOW_UNKNOWN_ARGUMENTS", "") not in ("", "0")
_known = {}  # op type -> frozenset of its schema's argument names, or None without a schema


def AllowUnknownArguments(allow=True):
    """True: accept argument names the schema does not know, as upstream did."""
    global _allow_unknown
    _allow_unknown = bool(allow)


def _KnownArguments(op_type):
    if op_type not in _known:
        schema = C.OpSchema.get(op_type)
        _known[op_type] = None if schema is None else frozenset(a.name for a in schema.args)
    return _known[op_type]


def CheckArgumentNames(operator):
    """Raises ValueError naming the first argument of `operator` (an OperatorDef) that its schema
    does not declare, with the closest declared names."""
    if _allow_unknown or not operator.arg:
        return
    known = _KnownArguments(operator.type)
    if known is None:
        return
    for arg in operator.arg:
        if arg.name in known or arg.name in AMBIENT_ARGUMENTS:
            continue
        pattern = ARGUMENT_PATTERNS.get(operator.type)
        if pattern is not None and pattern.match(arg.name):
            continue
        close = difflib.get_close_matches(arg.name, sorted(known | AMBIENT_ARGUMENTS), n=3)
        hint = " (did you mean {}?)".format(" or ".join("'{}'".format(c) for c in close))
        raise ValueError(
            "[{}] has no argument '{}'{}. Its arguments: {}. Set CAFFE2_ALLOW_UNKNOWN_ARGUMENTS=1 "
            "to accept unknown names as upstream did.".format(
                operator.type,
                arg.name,
                hint if close else "",
                ", ".join(sorted(known)) or "none",
            )
        )
