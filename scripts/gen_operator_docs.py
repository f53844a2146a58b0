#!/usr/bin/env python3
"""Writes docs/operators.md from the registries of the built extension: every operator that has a
schema or a registration, with its doc, inputs, outputs, arguments, devices, engines and gradient,
and the upstream Caffe2 operators this project does not have yet.

Usage (with the project's interpreter, after the build):

    .venv/bin/python scripts/gen_operator_docs.py            # rewrites docs/operators.md
    .venv/bin/python scripts/gen_operator_docs.py --check    # exit 1 when it is stale
    .venv/bin/python scripts/gen_operator_docs.py --stdout   # prints it

Where each fact comes from:

- devices: `registered_cpu_operators()` and `registered_cuda_operators()`. The CUDA registry is
  in libcaffe2_cuda.so, which `caffe2_pybind11_state_gpu` loads; it is filled at load time whether
  or not the machine has a GPU, so the page is the same on both. A build without that module cannot
  write the page (exit 2).
- engines: the registry keys `<Op>_ENGINE_<ENGINE>` of each device.
- schema: `OpSchema.get(name)`. Names come from the registries, `<Op>Gradient`, the
  `OPERATOR_SCHEMA(...)` lines of the source tree and the upstream list below; a name counts when
  the built library has a schema or a registration for it. Names sharing one schema object are
  aliases (`REGISTER_OPERATOR_ALIAS`); the shortest is the target.
- gradient: `OpSchema.get_gradient_impl(name)` says whether a C++ maker is registered; the maker is
  then run (`get_gradient_defs`) on a def that passes the schema: one that refuses any output
  gradient is SHOULD_NOT_DO_GRADIENT, one that makes no op and no input gradient is NO_GRADIENT.
  Makers registered from Python (`core.GradientRegistry`) count too.
"""
import argparse
import difflib
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "operators.md")
REGENERATE = ".venv/bin/python scripts/gen_operator_docs.py"
SOURCE_DIRS = ("operators", "distributed", "core", os.path.join("python", "src"))
SCHEMA_LINE = re.compile(r"\bOPERATOR_SCHEMA\(\s*([A-Za-z][A-Za-z0-9_]*)\s*\)")
GRADIENT_SUFFIXES = ("Gradient", "Grad")
SAME_BLOB = re.compile(r"input (\d+) \('[^']*'\) and output (\d+) .*must be the same blob")
MANY = 1 << 30  # counts at least this large read "or more" (OpSchema's kInf is INT_MAX)

YES, PYTHON = "yes", "yes (Python)"
NO_GRADIENT, SHOULD_NOT = "no (NO_GRADIENT)", "no (SHOULD_NOT_DO_GRADIENT)"
NOT_IMPLEMENTED, UNREGISTERED = "not implemented", "none registered"

# Upstream Caffe2's CNN, embedding, RNN, control-flow and training operators (forward ops only),
# by [family]. The page lists those that the built library has neither a schema nor a registration
# for, so the list shrinks by itself as they arrive.
UPSTREAM_CATALOGUE = """
[Activations and elementwise math]
Swish Sign Selu Gelu HardSigmoid ThresholdedRelu ReluN Logit Cube Rsqrt Reciprocal Cbrt Erf Log1p
Sin Cos Tan Asin Acos Atan Sinh Cosh Ceil Floor Mod BitwiseAnd BitwiseOr BitwiseXor Glu
[Losses and distances]
SigmoidCrossEntropyWithLogits WeightedSigmoidCrossEntropyWithLogits MakeTwoClass L1Distance
DotProduct DotProductWithPadding CosineSimilarity MarginRankingCriterion PairWiseLoss LambdaRankNdcg
BatchBoxCox
[Normalization and reductions]
LpNorm Normalize NormalizeL1 GroupNorm BatchMoments Moments ClipTensorByScaling SumElementsInt
ColwiseMax RowwiseMax ReduceMin ReduceMax ReduceL1 ReduceL2 ReduceFrontMax ReduceBackMax
ReduceTailSum ReduceFrontWeightedSum Summarize
[Convolution and image]
Im2Col Col2Im ChannelShuffle PadImage ResizeNearest UpsampleBilinear AffineChannel MaxPoolWithIndex
RoIPool RoIAlign RoIAlignRotated GenerateProposals BBoxTransform BoxWithNMSLimit NormalizePlanarYUV
[Shape, index and tensor]
Range LengthsToShape LengthsToSegmentIds LengthsToRanges LengthsToWeights SegmentIdsToLengths
SegmentIdsToRanges LengthsTile LengthsTopK LengthsPartition Partition BatchGather LengthsGather
GatherRanges GatherRangesToDense GatherPadding ScatterAssign BatchOneHot BatchBucketOneHot
SegmentOneHot BooleanMask BooleanMaskLengths BooleanUnmask SequenceMask Expand NumpyTile PrependDim
MergeDim Unique HasElements IsEmpty Append AtomicAppend EnsureDense EnsureClipped EnforceFinite
FlexibleTopK SplitByLengths AddPadding RemovePadding PadEmptySamples PackSegments UnpackSegments
ReversePackedSegs RemoveDataBlocks Find FindDuplicateElements Bucketize BatchBucketize
PiecewiseLinearTransform Percentile StumpFunc WeightedSample WeightedMultiSampling
GivenTensorInt16Fill GivenTensorByteStringToUInt8Fill Float16ConstantFill Float16UniformFill
[Embeddings and sparse segments]
FloatToFused8BitRowwiseQuantized Fused8BitRowwiseQuantizedToFloat
HalfFloatToFused8BitRowwiseQuantized Fused8BitRowwiseQuantizedToHalfFloat
SparseLengthsSumFused8BitRowwise SparseLengthsMeanFused8BitRowwise
SparseLengthsWeightedSumFused8BitRowwise FloatToFused4BitRowwiseQuantized
Fused4BitRowwiseQuantizedToFloat SparseLengthsSumFused4BitRowwise FloatToRowwiseQuantized8Bits
Rowwise8BitQuantizedToFloat SparseLengthsSum8BitsRowwise SparseLengthsMean8BitsRowwise
SparseLengthsWeightedSum8BitsRowwise FloatToFusedRandRowwiseQuantized
FusedRandRowwiseQuantizedToFloat SparseLengthsPositionalWeightedSum LengthsMax SortedSegmentSum
SortedSegmentMean SortedSegmentWeightedSum SortedSegmentRangeSum SortedSegmentRangeMean
SortedSegmentRangeMax SortedSegmentRangeLogSumExp SparseSortedSegmentSum UnsortedSegmentSum
UnsortedSegmentMean SparseUnsortedSegmentSum SparseToDenseMask BatchSparseToDense BatchDenseToSparse
MergeIdLists HSoftmax HSoftmaxSearch HuffmanTreeHierarchy IntIndexCreate LongIndexCreate
StringIndexCreate IndexGet IndexFreeze IndexLoad IndexStore IndexSize CreateMap KeyValueToMap
MapToKeyValue
[Optimizers]
Ftrl SparseFtrl GFtrl YellowFin Adadelta SparseAdadelta Lars Wngrad SparseWngrad SparseNormalize
LearningRateAdaption AtomicFetchAdd AtomicFetchAdd64
[Recurrent networks]
RecurrentNetwork RecurrentNetworkBlobFetcher LSTMUnit GRUUnit Recurrent RecurrentParamSet
RecurrentParamGet PackRNNSequence UnpackRNNSequence VariableLengthSequencePadding
AccumulateHistogram Accumulate
[Control flow, datasets and queues]
If While Do CreateScope HasScope CreateAtomicBool ConditionalSetAtomicBool CheckAtomicBool
Conditional Assert CreateBlobsQueue EnqueueBlobs DequeueBlobs CloseBlobsQueue SafeEnqueueBlobs
SafeDequeueBlobs WeightedSampleDequeueBlobs CreateRebatchingQueue EnqueueRebatchingQueue
DequeueRebatchingQueue CloseRebatchingQueue CreateTreeCursor ResetCursor ReadNextBatch
ReadRandomBatch ComputeOffset SortAndShuffle CheckDatasetConsistency TrimDataset CreateTensorVector
TensorVectorSize ConcatTensorVector CollectTensor PackRecords UnPackRecords LastNWindowCollector
ReservoirSampling StatRegistryCreate StatRegistryExport StatRegistryUpdate TimerBegin TimerEnd
TimerGet TimerGetAndEnd CTCGreedyDecoder CTCBeamSearchDecoder
"""
UPSTREAM_FAMILIES = tuple(
    (family, tuple(names.split()))
    for family, names in re.findall(r"\[([^\]]+)\]([^\[]*)", UPSTREAM_CATALOGUE)
)
UPSTREAM_OPERATORS = tuple(name for _, names in UPSTREAM_FAMILIES for name in names)


class CannotGenerate(Exception):
    """The built extension cannot describe both devices."""


def load_extension():
    """(C, core, caffe2_pb2) of the source tree's package, with the CUDA registry loaded."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from caffe2.proto import caffe2_pb2
    from caffe2.python import core, workspace

    C = workspace.C
    if not hasattr(C, "registered_cuda_operators"):
        try:
            import caffe2.python.caffe2_pybind11_state_gpu  # noqa: F401

            reason = "it imports now, but caffe2.python.workspace did not use it"
        except ImportError as error:
            reason = str(error)
        raise CannotGenerate(
            "the CUDA backend (caffe2_pybind11_state_gpu, libcaffe2_cuda.so) did not load: {}.\n"
            "docs/operators.md lists the CUDA registry too, so it needs a build with USE_CUDA=ON "
            "(no GPU is needed).".format(reason)
        )
    return C, core, caffe2_pb2


def source_schema_names():
    names = set()
    for folder in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for file in files:
                if file.endswith((".cc", ".cu", ".h")):
                    with open(os.path.join(dirpath, file), encoding="utf-8", errors="replace") as f:
                        names.update(SCHEMA_LINE.findall(f.read()))
    return names


def relative_source(path):
    path = path.replace(os.sep, "/")
    root = ROOT.replace(os.sep, "/").rstrip("/") + "/"
    if path.startswith(root):
        return path[len(root) :]
    match = re.search(r"(?:^|/)((?:operators|distributed|core|python)/.*)$", path)
    return match.group(1) if match else os.path.basename(path)


def probe_counts(schema):
    """Input and output counts that the schema allows, as many as it takes: a maker may read any."""
    lo, hi = schema.min_input, schema.max_input
    inputs = range(hi, lo - 1, -1) if hi - lo <= 16 else range(lo, lo + 8)
    for ni in inputs:
        expected = schema.CalculateOutput(ni)
        if expected >= 0:
            outputs = [expected]
        else:
            top = schema.max_output if schema.max_output < MANY else schema.min_output + 4
            outputs = range(top, schema.min_output - 1, -1)
        for no in outputs:
            if schema.num_inputs_outputs_allowed(ni, no):
                return ni, no
    return lo, schema.min_output


def run_maker(C, caffe2_pb2, name, schema):
    """(gradient ops, input gradients) of the C++ maker of `name` on a def its schema accepts."""
    ni, no = probe_counts(schema) if schema is not None else (1, 1)
    op = caffe2_pb2.OperatorDef(
        type=name,
        input=["in{}".format(i) for i in range(ni)],
        output=["out{}".format(i) for i in range(no)],
    )
    for arg in schema.args if schema is not None else []:
        if arg.required:
            op.arg.add(name=arg.name, i=1, ints=[1])
    for _ in range(ni * no + 1):
        grads = []
        for out in op.output:
            grads.append(C.GradientWrapper())
            grads[-1].dense = out + "_grad"
        try:
            return C.get_gradient_defs(op.SerializeToString(), grads)
        except Exception as error:  # an op that runs in place: use the same blob, try again
            match = SAME_BLOB.search(str(error))
            if match is None:
                raise
            op.output[int(match.group(2))] = op.input[int(match.group(1))]
    raise RuntimeError("[{}] no def satisfies its in-place rules".format(name))


def gradient_kind(C, caffe2_pb2, python_makers, name, schema):
    if not C.OpSchema.get_gradient_impl(name):
        return PYTHON if name in python_makers else UNREGISTERED
    try:
        ops, g_input = run_maker(C, caffe2_pb2, name, schema)
    except Exception as error:
        message = str(error)
        if "should not have a gradient" in message:
            return SHOULD_NOT
        if "not implemented" in message:
            return NOT_IMPLEMENTED
        return YES  # a maker that needs more than a schema-valid def: it makes ops
    if not ops and all(g.is_empty() for g in g_input):
        return NO_GRADIENT
    return YES


def collect():
    """Everything the page says, as plain data, read from the built library."""
    C, core, caffe2_pb2 = load_extension()
    keys = {"CPU": set(C.registered_cpu_operators()), "CUDA": set(C.registered_cuda_operators())}
    kernels, engines = {}, {}
    for device, device_keys in keys.items():
        for key in device_keys:
            base, sep, engine = key.partition("_ENGINE_")
            if sep:
                engines.setdefault(base, {}).setdefault(engine, set()).add(device)
            else:
                kernels.setdefault(base, set()).add(device)
    candidates = set(kernels) | set(engines) | source_schema_names() | set(UPSTREAM_OPERATORS)
    candidates |= {name + suffix for name in set(candidates) for suffix in GRADIENT_SUFFIXES}
    schemas = {name: C.OpSchema.get(name) for name in sorted(candidates)}
    names = {name for name in candidates if schemas[name] is not None or name in kernels}
    names = sorted(names | set(engines))
    schemas = {name: schemas.get(name) for name in names}  # held, so identity marks aliases

    groups = {}
    for name in names:
        if schemas[name] is not None:
            groups.setdefault(id(schemas[name]), []).append(name)
    alias_of = {}
    for group in groups.values():
        target = min(group, key=lambda n: (len(n), n))
        alias_of.update({name: target for name in group if name != target})

    python_makers = set(core.GradientRegistry.gradient_registry_)
    ops = {}
    for name in names:
        schema = schemas[name]
        ops[name] = {
            "name": name,
            "devices": sorted(kernels.get(name, ())),
            "engines": {e: sorted(d) for e, d in sorted(engines.get(name, {}).items())},
            "alias_of": alias_of.get(name),
            "gradient": gradient_kind(C, caffe2_pb2, python_makers, name, schema),
            "gradient_ops": [],
            "forward": None,
            "schema": None if schema is None else describe_schema(schema),
        }
    for name in sorted(ops, key=lambda n: (len(n), n)):  # forward ops first: deterministic
        op = ops[name]
        for suffix in GRADIENT_SUFFIXES:
            forward = name[: -len(suffix)]
            if name.endswith(suffix) and forward in ops and ops[forward]["forward"] is None:
                op["forward"] = forward
                ops[forward]["gradient_ops"].append(name)
                break
    missing = [n for n in UPSTREAM_OPERATORS if n not in names]
    return ops, missing


def describe_schema(schema):
    return {
        "file": relative_source(schema.file),
        "private": schema.private,
        "doc": textwrap.dedent(schema.doc or "").strip(),
        "inputs": (schema.min_input, schema.max_input, list(schema.input_desc)),
        "outputs": (schema.min_output, schema.max_output, list(schema.output_desc)),
        "args": [(a.name, a.description, a.required) for a in schema.args],
    }


def sort_key(name):
    return (name.lower(), name)


def cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def count_range(lo, hi):
    if hi >= MANY:
        return "{} or more".format(lo)
    return str(lo) if lo == hi else "{} to {}".format(lo, hi)


def engines_text(engines):
    return ", ".join("{} ({})".format(e, "/".join(d)) for e, d in engines.items())


def link(name):
    return "[{}](#{})".format(name, name.lower())


HEADER = """# Operators

Generated from the schema, operator and gradient registries of the built library by
`scripts/gen_operator_docs.py`; do not edit it by hand. After adding or changing an op, rebuild and
regenerate it:

    {command}

`tests/python/tools/test_operator_docs.py` runs it with `--check` and fails when this page is stale.

{count} operators ({cuda} with a CUDA kernel); gradient ops are listed under their forward op.
Columns:

- **CPU**, **CUDA**: a default kernel is registered for that device.
- **engines**: kernels registered as `<Op>_ENGINE_<ENGINE>`, with their devices.
- **gradient**: `yes` (a gradient maker in C++; `yes (Python)`: in `core.GradientRegistry`),
  `no (NO_GRADIENT)` (no input gets a gradient), `no (SHOULD_NOT_DO_GRADIENT)` (asking for one is
  an error), `not implemented` (a maker that refuses), `none registered`.

An alias is another name of its target op.

| op | CPU | CUDA | engines | gradient |
|---|---|---|---|---|"""


def render(ops, missing):
    listed = sorted(
        (op for op in ops.values() if not op["forward"]), key=lambda op: sort_key(op["name"])
    )
    n_cuda = sum(1 for op in listed if "CUDA" in op["devices"])
    out = HEADER.format(command=REGENERATE, count=len(listed), cuda=n_cuda).splitlines()
    aliases = {}
    for op in listed:
        target = op["alias_of"]
        label = link(op["name"])
        if target:
            aliases.setdefault(target, []).append(op["name"])
            label = "[{}](#{}) (alias of {})".format(op["name"], target.lower(), target)
        devices = ["yes" if d in op["devices"] else "" for d in ("CPU", "CUDA")]
        row = [label] + devices + [engines_text(op["engines"]), op["gradient"]]
        out.append("| " + " | ".join(row) + " |")
    out += ["", "## Operators", ""]
    for op in listed:
        if not op["alias_of"]:
            out += render_op(op, ops, aliases.get(op["name"], []))
    out += render_missing(missing)
    return "\n".join(out).rstrip() + "\n"


def render_op(op, ops, aliases):
    out = ["### " + op["name"], ""]
    schema = op["schema"]
    facts = []
    if schema is None:
        facts.append("No schema.")
    else:
        facts.append(
            "Schema: `{}`{}.".format(schema["file"], " (private)" if schema["private"] else "")
        )
    if aliases:
        facts.append("Aliases: {}.".format(", ".join("`{}`".format(a) for a in aliases)))
    out += [" ".join(facts), ""]
    out.append("- Devices: {}".format(", ".join(op["devices"]) or "none (engines only)"))
    if op["engines"]:
        out.append("- Engines: {}".format(engines_text(op["engines"])))
    out.append("- Gradient: {}".format(op["gradient"]))
    for grad in sorted(op["gradient_ops"], key=sort_key):
        g = ops[grad]
        where = ", ".join(g["devices"]) or "no default kernel"
        if g["engines"]:
            where += "; engines " + engines_text(g["engines"])
        out.append("- Gradient op `{}`: {}".format(grad, where))
    out.append("")
    if schema is None:
        return out
    out += [schema["doc"] or "No description.", ""]
    for title, (lo, hi, desc) in (("Inputs", schema["inputs"]), ("Outputs", schema["outputs"])):
        out.append("**{}** ({}){}".format(title, count_range(lo, hi), ":" if desc else "."))
        if desc:
            out += ["", "| # | name | description |", "|---|---|---|"]
            for i, (name, text) in enumerate(desc):
                out.append("| {} | `{}` | {} |".format(i, cell(name), cell(text)))
        out.append("")
    if schema["args"]:
        out += ["**Arguments:**", "", "| name | required | description |", "|---|---|---|"]
        for name, text, required in schema["args"]:
            out.append(
                "| `{}` | {} | {} |".format(cell(name), "yes" if required else "", cell(text))
            )
        out.append("")
    return out


MISSING_INTRO = """## Upstream operators not yet here

Upstream Caffe2 operators (CNN, embedding, RNN, control flow, training) that the built library has
neither a schema nor a registration for; the list is `UPSTREAM_CATALOGUE` in
`scripts/gen_operator_docs.py`, and this section shrinks as they arrive."""


def render_missing(missing):
    out = MISSING_INTRO.splitlines() + [""]
    if not missing:
        return out + ["None: every listed upstream operator is here.", ""]
    for family, names in UPSTREAM_FAMILIES:
        absent = sorted((n for n in names if n in set(missing)), key=sort_key)
        if absent:
            out.append("- **{}** ({}): {}".format(family, len(absent), ", ".join(absent)))
    return out + [""]


def sections(text):
    found, name = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            name = None
        elif line.startswith("### "):
            name = line[4:]
            found[name] = []
        if name is not None:
            found[name].append(line)
    return found


def stale_report(old, new):
    old_s, new_s = sections(old), sections(new)
    added = sorted(set(new_s) - set(old_s), key=sort_key)
    removed = sorted(set(old_s) - set(new_s), key=sort_key)
    changed = sorted((n for n in set(old_s) & set(new_s) if old_s[n] != new_s[n]), key=sort_key)
    lines = ["the built library's registries say otherwise."]
    for title, names in (("new ops", added), ("ops gone", removed), ("ops changed", changed)):
        if names:
            lines.append("  {} ({}): {}".format(title, len(names), ", ".join(names)))
    diff = difflib.unified_diff(
        old.splitlines(), new.splitlines(), "page", "registries", lineterm=""
    )
    diff = list(diff)
    plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    lines.append("  {} lines added, {} removed; the diff begins:".format(plus, minus))
    lines += ["    " + d for d in diff[:40]]
    lines.append("Regenerate it: " + REGENERATE)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    mode.add_argument("--stdout", action="store_true", help="print the page, write nothing")
    parser.add_argument("--doc", default=DOC, help="the page (default docs/operators.md)")
    args = parser.parse_args(argv)
    shown = os.path.relpath(args.doc, ROOT) if args.doc == DOC else args.doc
    try:
        text = render(*collect())
    except CannotGenerate as error:
        print("gen_operator_docs: " + str(error), file=sys.stderr)
        return 2
    if args.stdout:
        sys.stdout.write(text)
        return 0
    old = None
    if os.path.exists(args.doc):
        with open(args.doc, encoding="utf-8") as f:
            old = f.read()
    if args.check:
        if old != text:
            report = (
                stale_report(old, text) if old else "it is missing.\nGenerate it: " + REGENERATE
            )
            print("{} is stale: {}".format(shown, report), file=sys.stderr)
            return 1
        print("{} is up to date".format(shown))
        return 0
    if old != text:
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(text)
    print("{} {}".format("wrote" if old != text else "up to date:", shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
