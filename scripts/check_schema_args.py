#!/usr/bin/env python3
"""Checks that every operator schema declares, with a real doc, each argument its kernels read.

For each OPERATOR_SCHEMA in operators/, core/ and distributed/communicator_schemas.cc it compares
the declared args (see Tree._parse_schemas) with the names the op's kernels read through the
argument accessors (Tree.read_args), and prints each undeclared read and each declared arg whose
doc is empty or only a pointer ("see conv_op.h"); exit status 1 if it printed any. EXEMPT lists
the reads that are not arguments of the op, with the reason.

Usage: .venv/bin/python scripts/check_schema_args.py [--list OP]   (--list: what OP has and reads)
"""
import argparse
import glob
import itertools
import os
import re
import sys
from collections import defaultdict, namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPS = ("core", "operators", "distributed")  # the folders read
SCHEMA_SCOPE = ("operators/", "core/", "distributed/communicator_schemas.cc")
ACCESSORS = ("GetSingleArgument", "GetRepeatedArgument", "HasArgument", "HasSingleArgumentOfType")
POOLS = ("MaxPool", "AveragePool", "MaxPoolGradient", "AveragePoolGradient")
ADJ = ("adj", "adj_h", "adj_w", "adjs")
FILLS = ("GaussianFill", "UniformFill", "UniformIntFill", "XavierFill", "MSRAFill", "RangeFill")
GIVEN = tuple("GivenTensor%sFill" % t for t in ("", "Double", "Bool", "Int", "Int64", "String"))
EXEMPT = [  # (ops, args they read that are not their args, why)
    (POOLS + ("LpPool", "LpPoolGradient"), ("group",) + ADJ, "ConvPoolArgs parses, pools ignore"),
    (("Conv", "ConvGradient", "ConvRelu", "DnnlBlockedConv"), ADJ, "only ConvTranspose uses adj"),
    (POOLS, ("p",), "PoolOp<kind> reads p for LpPool only"),
    (POOLS[1::2], ("deterministic",), "read by the cuDNN pool base; used for max pooling only"),
    (FILLS + GIVEN + ("UniqueUniformFill",), ("value",), "filler inference: for ConstantFill"),
    (FILLS, ("dtype",), "fixed output type; only the shared filler inference reads dtype"),
    (("FloatToHalf", "HalfToFloat"), ("to",), "CastInference reads it for Cast only"),
    (("FlattenToVec",), ("axis",), "the Flatten inference reads it for Flatten only"),
    (("GRUUnit", "GRUUnitGradient"), ("forget_bias",), "ReadRnnUnitArgs: used by LSTMUnit only"),
    (("MomentumSGD", "MomentumSGDUpdate"), ("weight_decay",), "read by FP16/FP32 variants only"),
]
EXEMPTED = {(op, arg) for ops, args, _ in EXEMPT for op in ops for arg in args}

STRING = r'(?P<raw>R"(?P<delim>[^(\s"]*)\((?P<body>.*?)\)(?P=delim)")|(?P<str>"(?:\\.|[^"\\\n])*")'
STRINGS = re.compile(STRING, re.S)
TOKENS = re.compile(STRING + r"|'(?:\\.|[^'\\\n])*'|(?P<comment>//[^\n]*|/\*.*?\*/)", re.S)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:.*\\\n)*.*)", re.M)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
REGISTRATION = re.compile(r"\bREGISTER_(?:(?:CPU|CUDA)_OPERATOR|GPU_FALLBACK|GRADIENT)\(\s*(\w+)")
SCHEMA = re.compile(r"\bOPERATOR_SCHEMA\s*\(\s*(\w+)\s*\)")
SCHEMA_HELPER = re.compile(r"OpSchema\s*&\s*(\w+)\s*\(\s*(?:\w*::)*OpSchema\s*&\s*\w+\s*\)\s*{")
HELPER_USE = re.compile(r"((?:\b\w+\s*\(\s*)+)c2_op_schema_(\w+)\s*\)")  # Helper(Helper(...))
ARG_CALL = re.compile(r"\.\s*Arg\s*\(")
TEMPLATE = r"\s*(?:<[^;(){}]*?>)?\s*\("
READ_CALL = re.compile(r"\b(?:%s|Find)%s" % ("|".join(ACCESSORS), TEMPLATE))
QUALIFIERS = r"\)\s*(?:(?:const|noexcept|override|final)\s*)*(?::[^;{}]*)?{"
NOT_KEYWORD = r"(?!(?:if|for|while|switch|catch|return|sizeof|decltype)\b)"
FUNCTION = re.compile(r"\b((?:\w+::)*)%s(\w+)%s([^()]*)%s" % (NOT_KEYWORD, TEMPLATE, QUALIFIERS))
CLASS = re.compile(r"\b(?:class|struct) (\w+)\s*(?:final )?(?::[^;{}()]*)?{|\busing (\w+) =[^;]*;")
RANGE_FOR = re.compile(r"\bfor\s*\([^;()]*?\b(\w+)\s*:\s*(\w+)\s*\)")
LITERAL_ARRAY = re.compile(r"\b(\w+)\s*\[\s*\]\s*=\s*{([^{}]*)}")
POINTER_DOC = re.compile(r"(?i)(\(.*?\)\s*)?(see|as for|same as)\s+(.*\.(h|cc|cuh?|md|py)\b|\S+$)")
WORD = re.compile(r"\b[A-Za-z_]\w*")
Unit = namedtuple("Unit", "kind name owner start end params")  # function, class or schema


def strip_comments(text):
    """The text with comments blanked (newlines kept, so line numbers hold)."""
    return TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m[0]) if m["comment"] else m[0], text)


def literal(expr):
    """The value of an expression made only of (adjacent) string literals, else None."""
    values = [m["body"] if m["raw"] else m["str"][1:-1] for m in STRINGS.finditer(expr)]
    return "".join(values) if values and not STRINGS.sub("", expr).strip() else None


def scan(text, start, stops):
    """Index of the first of stops (or of an unmatched closing bracket) from start, or len."""
    depth, i = 0, start
    while i < len(text) and not (depth == 0 and text[i] in stops + ")]}"):
        m = STRINGS.match(text, i)
        depth += m is None and (text[i] in "([{") - (text[i] in ")]}")
        i = m.end() if m else i + 1
    return i


def call_args(text, open_paren):
    """The top-level argument expressions of the call whose '(' is at open_paren."""
    args, i = [], open_paren
    while i < len(text) and text[i] in "(,":
        j = scan(text, i + 1, ",")
        args.append(text[i + 1 : j].strip())
        i = j
    return [a for a in args if a]


def expand_macros(text):
    """Expands the function-like macros of this file that declare schemas or register kernels."""
    for m in list(DEFINE.finditer(text)):
        name, params, body = m[1], [p.strip() for p in m[2].split(",")], m[3].replace("\\\n", " ")
        if SCHEMA.search(body) or REGISTRATION.search(body):
            text = text.replace(m[0], "\n" * m[0].count("\n"))
            for use in reversed(list(re.finditer(r"\b%s\s*\(" % name, text))):
                args, expanded = call_args(text, use.end() - 1), body
                for param, arg in zip(params, args):
                    expanded = re.sub(r"(?<!#)#\s*%s\b" % param, '"%s"' % arg, expanded)
                    expanded = re.sub(r"\b%s\b" % param, arg, expanded).replace("##", "")
                text = text[: use.start()] + expanded + text[scan(text, use.end(), ")") + 1 :]
    return text


def innermost(units, pos, kinds=("function", "class", "schema")):
    """The innermost unit of one of kinds around pos (units sorted by start), or None."""
    return next((u for u in reversed(units) if u.start <= pos < u.end and u.kind in kinds), None)


def find_units(text):
    """The classes (and `using X = ...;` types), functions and schema chains of a file."""
    end = lambda m, stops="": scan(text, m.end(), stops)
    classes = [(m[1] or m[2], m.start(), end(m) if m[1] else m.end()) for m in CLASS.finditer(text)]
    units = [Unit("class", name, None, start, stop, ()) for name, start, stop in classes]
    for m in FUNCTION.finditer(text):
        cls = innermost(units, m.start(), ("class",))
        owner = m.group(1).split("::")[-2] if m.group(1) else cls and cls.name
        params = tuple(re.search(r"(\w*)\s*(?:=.*)?$", p)[1] for p in m.group(3).split(","))
        units.append(Unit("function", m.group(2), owner, m.start(), end(m), params))
    units += [Unit("schema", m[1], None, m.start(), end(m, ";"), ()) for m in SCHEMA.finditer(text)]
    return sorted(units, key=lambda u: u.start)


def declared_args(text):
    """{name: doc} of the .Arg("name", "doc") calls in text."""
    calls = [call_args(text, m.end() - 1) + [""] for m in ARG_CALL.finditer(text)]
    return {literal(c[0]): literal(c[1]) for c in calls if literal(c[0]) is not None}


def name_parts(expr, function, loops):
    """A name as alternatives per '+' part: ("lit", text) or ("param", index); None if computed."""
    parts = []
    for piece in map(str.strip, expr.split("+")):
        if literal(piece) is not None:
            parts.append([("lit", literal(piece))])
        elif function and piece in function.params:
            parts.append([("param", function.params.index(piece))])
        elif piece in loops and None not in map(literal, loops[piece]):
            parts.append([("lit", literal(value)) for value in loops[piece]])
        else:
            return None
    return parts


class Tree:
    """The sources of a checkout: schemas, registrations, code units and the args read."""

    def __init__(self, root):
        paths = [p for top in TOPS for p in glob.glob(f"{root}/{top}/**/*.*", recursive=True)]
        self.text = {}
        for path in [p for p in paths if p.endswith((".cc", ".cu", ".h", ".cuh"))]:
            with open(path, encoding="utf-8", errors="replace") as f:
                self.text[os.path.relpath(path, root)] = expand_macros(strip_comments(f.read()))
        self.units = {path: find_units(text) for path, text in self.text.items()}
        self.schemas = {}  # op -> (file, line, {arg: doc})
        self.kernel_files = defaultdict(set)  # op -> files registering its kernels or gradient
        self.kernel_words = defaultdict(set)  # op -> identifiers in those registrations
        self.reads = defaultdict(set)  # file -> {(arg, innermost unit)}
        self._parse_schemas()
        self._parse_reads()

    def _parse_schemas(self):
        """Schemas with their .Arg calls, plus those of each helper `OpSchema& H(OpSchema& s)` that
        is applied after the chain as H(c2_op_schema_Op); the files and words of registrations."""
        helpers = {}
        for path, text in self.text.items():
            for m in SCHEMA_HELPER.finditer(text):
                helpers[m.group(1)] = declared_args(text[m.end() : scan(text, m.end(), "")])
            for m in REGISTRATION.finditer(text):
                op = m.group(1).split("_ENGINE_")[0]
                self.kernel_files[op].add(path)
                self.kernel_words[op].update(WORD.findall(text[m.end() : scan(text, m.end(), ";")]))
            for u in [u for u in self.units[path] if u.kind == "schema"]:
                line = text.count("\n", 0, u.start) + 1
                self.schemas[u.name] = (path, line, declared_args(text[u.start : u.end]))
        kernels = set().union(*self.kernel_files.values())
        self.sources = defaultdict(list)  # header -> its .cc/.cu and the sources of no op using it
        for path, text in self.text.items():
            for inc in INCLUDE.findall(text):
                mine = path not in kernels or path.rsplit(".", 1)[0] == inc.rsplit(".", 1)[0]
                self.sources[inc] += [path] * (mine and not path.endswith((".h", ".cuh")))
            uses = [(h, m[2]) for m in HELPER_USE.finditer(text) for h in WORD.findall(m[1])]
            for helper, op in uses:
                if helper in helpers and op in self.schemas:
                    self.schemas[op][2].update(helpers[helper])

    def _parse_reads(self):
        """Fills self.reads, following names passed through parameters to their call sites."""
        pending, loops = [], {}  # pending: (file, position, parts)
        # core/*.cc is the runtime: its reads are of nets, or of every op alike.
        for path in [p for p in self.text if p[:5] != "core/" or p.endswith(".h")]:
            text = self.text[path]
            arrays = {m[1]: m[2].split(",") for m in LITERAL_ARRAY.finditer(text)}
            loops[path] = {m[1]: arrays[m[2]] for m in RANGE_FOR.finditer(text) if m[2] in arrays}
            for m in READ_CALL.finditer(text):
                function = innermost(self.units[path], m.start(), ("function",))
                parts = name_parts((call_args(text, m.end() - 1) + [""])[0], function, loops[path])
                if parts is not None:
                    pending.append((path, m.start(), parts))
        followed = set()
        while pending:
            path, pos, parts = pending.pop()
            function = innermost(self.units[path], pos, ("function",))
            if all(kind == "lit" for alts in parts for kind, _ in alts):
                unit = innermost(self.units[path], pos)
                for combination in itertools.product(*parts):
                    self.reads[path].add(("".join(v for _, v in combination), unit))
            elif function and repr((function.name, parts)) not in followed:
                followed.add(repr((function.name, parts)))
                pending += self._call_sites(function.name, parts, loops)

    def _call_sites(self, name, parts, loops):
        """The name parts of function `name`, substituted at each call: [(file, pos, parts)]."""
        found, call = [], re.compile(r"(?<![\w.>])(?:\w+::)*%s%s" % (name, TEMPLATE))
        for path in loops:
            for m in call.finditer(self.text[path]):
                args = call_args(self.text[path], m.end() - 1) + [""] * len(parts)
                function = innermost(self.units[path], m.start(), ("function",))
                lit = lambda alts: [alts] if alts[0][0] == "lit" else None
                subs = [lit(a) or name_parts(args[a[0][1]], function, loops[path]) for a in parts]
                if None not in subs:
                    found.append((path, m.start(), [part for sub in subs for part in sub]))
        return found

    def closure(self, files):
        """files, the repo headers they include (transitively) and those headers' sources outside
        core/: foo.cc for foo.h, and the sources that include it but register no kernel."""
        seen, todo = set(), list(files)
        while todo:
            path = todo.pop()
            if path in self.text and path not in seen:
                seen.add(path)
                for inc in INCLUDE.findall(self.text[path]):  # the repo includes from its root
                    todo += [inc] + self.sources[inc] * (inc[:5] != "core/")
        return seen

    def read_args(self, op):
        """{arg: [files]} read in the closure of the files registering op's kernels (Op_ENGINE_X
        too) or gradient, by classes and functions reachable by name from its schema or those."""
        files = sorted(self.closure(self.kernel_files.get(op, ())))
        words, reached, size = set(self.kernel_words.get(op, ())), set(), -1
        while len(reached) > size:
            size = len(reached)
            for path in files:
                for u in self.units[path]:
                    name = u.owner or u.name
                    if u not in reached and (name == op if u.kind == "schema" else name in words):
                        reached.add(u)
                        words.update(WORD.findall(self.text[path][u.start : u.end]))
        found = defaultdict(list)
        for path in files:
            for arg, unit in self.reads[path]:
                if (unit is None or unit in reached) and path not in found[arg]:
                    found[arg].append(path)
        return found


def findings(tree):
    """One line per undeclared read or pointer-only doc, over the schemas in scope."""
    lines = []
    for op, (path, line, declared) in sorted(tree.schemas.items()):
        where = f"{path}:{line}: {op}:"
        if path.startswith(SCHEMA_SCOPE):
            for arg, files in sorted(tree.read_args(op).items()):
                if arg not in declared and (op, arg) not in EXEMPTED:
                    lines.append(f"{where} undeclared arg '{arg}' (read in {files[0]})")
            for arg, doc in sorted(declared.items()):
                if not (doc or "").strip() or POINTER_DOC.match(doc):
                    lines.append(f"{where} arg '{arg}' has no real doc: {doc!r}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", metavar="OP", help="print what was found for one op")
    op, tree = parser.parse_args(argv).list, Tree(ROOT)
    if op:
        path, line, declared = tree.schemas.get(op, ("(no schema)", 0, {}))
        print(f"{op}: schema at {path}:{line}; kernels in {sorted(tree.kernel_files[op])}")
        for arg, doc in sorted(declared.items()):
            print(f"  declared {arg}: {doc}")
        for arg, files in sorted(tree.read_args(op).items()):
            print(f"  read {arg}: {', '.join(files)}" + " (exempt)" * ((op, arg) in EXEMPTED))
        return 0
    lines = findings(tree)
    print("\n".join(lines + [f"{len(tree.schemas)} schema(s), {len(lines)} finding(s)"]))
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
