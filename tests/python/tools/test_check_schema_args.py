"""scripts/check_schema_args.py: every schema of the tree declares the args its kernels read, and
the parser finds undeclared reads, pointer-only docs and reads in included headers."""
import importlib.util
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "check_schema_args.py")


def load_checker():
    spec = importlib.util.spec_from_file_location("check_schema_args", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_tree(root, files):
    """Writes {relative path: C++ text} under root."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings_of(root, files):
    write_tree(root, files)
    checker = load_checker()
    return checker.findings(checker.Tree(str(root)))


FOO_SCHEMA = """
    OPERATOR_SCHEMA(Foo)
        .NumInputs(1)
        .Arg("alpha", "(float, default 1.0) the scale")
        .SetDoc("Foo.");
"""


def test_the_tree_passes():
    result = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("0 finding(s)"), result.stdout


def test_list_shows_declared_and_read_args():
    result = subprocess.run(
        [sys.executable, SCRIPT, "--list", "Conv"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "declared kernel_h: " in result.stdout, result.stdout
    assert "read kernel_h: operators/conv/conv_pool_op_base.cc" in result.stdout, result.stdout


def test_an_undeclared_read_is_reported(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/foo/foo_op.cc": """
                class FooOp final : public Operator<CPUContext> {
                 public:
                  FooOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws),
                        alpha_(GetSingleArgument<float>("alpha", 1.f)),
                        beta_(GetSingleArgument<float>("beta", 0.f)) {}
                };
                REGISTER_CPU_OPERATOR(Foo, FooOp);
                """
            + FOO_SCHEMA,
        },
    )
    assert lines == [
        "operators/foo/foo_op.cc:11: Foo: undeclared arg 'beta' (read in "
        "operators/foo/foo_op.cc)"
    ], lines


def test_a_pointer_doc_is_reported(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/foo/foo_op.cc": """
                REGISTER_CPU_OPERATOR(Foo, FooOp);
                OPERATOR_SCHEMA(Foo)
                    .Arg("kernel", "see foo.h")
                    .Arg("pad", "(int) as for Conv")
                    .Arg("empty", "")
                    .Arg("stride", "(int, default 1) see the table in foo.h for the other forms")
                    .Arg("order", "(string, default \\"NCHW\\") see below: NCHW or NHWC");
                """,
        },
    )
    assert len(lines) == 4, lines
    assert any("Foo: arg 'kernel' has no real doc: 'see foo.h'" in line for line in lines), lines
    assert any("arg 'pad' has no real doc" in line for line in lines), lines
    assert any("arg 'empty' has no real doc" in line for line in lines), lines
    assert any("arg 'stride' has no real doc" in line for line in lines), lines
    assert not any("'order'" in line for line in lines), lines


def test_a_read_in_an_included_header_and_its_source_counts(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/common/base.h": """
                #pragma once
                class BaseArgs {
                 public:
                  explicit BaseArgs(const ArgumentHelper& args);
                  int gamma_ = 0;
                };
                inline int ReadDelta(const OperatorBase& op) {
                  return op.GetSingleArgument<int>("delta", 0);
                }
                """,
            "operators/common/base.cc": """
                #include "operators/common/base.h"
                BaseArgs::BaseArgs(const ArgumentHelper& args)
                    : gamma_(args.GetSingleArgument<int>("gamma", 0)) {}
                """,
            "operators/foo/foo_op.h": """
                #pragma once
                #include "operators/common/base.h"
                class FooOp final : public Operator<CPUContext> {
                 public:
                  FooOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws), args_(ArgumentHelper(def)),
                        delta_(ReadDelta(*this)) {}
                  BaseArgs args_;
                  int delta_;
                };
                """,
            "operators/foo/foo_op.cc": '#include "operators/foo/foo_op.h"\n'
            "REGISTER_CPU_OPERATOR(Foo, FooOp);\n" + FOO_SCHEMA,
        },
    )
    assert any("'delta' (read in operators/common/base.h)" in line for line in lines), lines
    assert any("'gamma' (read in operators/common/base.cc)" in line for line in lines), lines
    assert len(lines) == 2, lines


def test_engines_helpers_parameters_and_loops(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/foo/foo_schema.h": """
                #pragma once
                OpSchema& AddWindowArgs(OpSchema& schema);
                """,
            "operators/foo/foo_schema.cc": """
                #include "operators/foo/foo_schema.h"
                OpSchema& AddWindowArgs(OpSchema& schema) {
                  return schema.Arg("kernel", "(int) window size")
                      .Arg("kernels", "(list of int) window size per dim");
                }
                """,
            "operators/foo/foo_op.cc": """
                #include "operators/foo/foo_schema.h"
                namespace {
                std::vector<int> Parse(const ArgumentHelper& args, const std::string& scalar,
                                       const std::string& list) {
                  if (args.HasArgument(list)) return args.GetRepeatedArgument<int>(list);
                  return {args.GetSingleArgument<int>(scalar, 0)};
                }
                class FooOp final : public Operator<CPUContext> {
                 public:
                  FooOp(const OperatorDef& def, Workspace* ws) : Operator<CPUContext>(def, ws) {
                    kernel_ = Parse(ArgumentHelper(def), "kernel", "kernels");
                    const char* sides[] = {"pad_t", "pad_b"};
                    for (const char* s : sides) pads_.push_back(GetSingleArgument<int>(s, 0));
                    name_ = GetSingleArgument<std::string>(prefix_ + "name", "");
                  }
                };
                }  // namespace
                REGISTER_CPU_OPERATOR(Foo, FooOp);
                OPERATOR_SCHEMA(Foo).Arg("pad_t", "(int) padding above");
                static OpSchema& c2_foo_args [[maybe_unused]] = AddWindowArgs(c2_op_schema_Foo);
                """,
            "operators/foo/foo_op_engine.cc": """
                class FastFooOp final : public Operator<CPUContext> {
                 public:
                  FastFooOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws), fast_(GetSingleArgument<bool>("fast", 0)) {}
                };
                REGISTER_CPU_OPERATOR(Foo_ENGINE_FAST, FastFooOp);
                """,
        },
    )
    undeclared = sorted(line.split("'")[1] for line in lines)
    assert undeclared == ["fast", "pad_b"], lines


def test_ops_sharing_a_file_keep_their_own_reads(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/foo/foo_op.cc": """
                class FooOp final : public Operator<CPUContext> {
                 public:
                  FooOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws), a_(GetSingleArgument<float>("alpha", 1)) {}
                };
                class BarOp final : public Operator<CPUContext> {
                 public:
                  BarOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws), b_(GetSingleArgument<float>("beta", 1)) {}
                };
                REGISTER_CPU_OPERATOR(Foo, FooOp);
                REGISTER_CPU_OPERATOR(Bar, BarOp);
                """
            + FOO_SCHEMA
            + """
                OPERATOR_SCHEMA(Bar).Arg("beta", "(float, default 1) the offset");
                """,
        },
    )
    assert lines == [], lines


def test_local_macros_are_expanded(tmp_path):
    lines = findings_of(
        tmp_path,
        {
            "operators/foo/foo_op.cc": """
                class FooOp final : public Operator<CPUContext> {
                 public:
                  FooOp(const OperatorDef& def, Workspace* ws)
                      : Operator<CPUContext>(def, ws), a_(GetSingleArgument<float>("alpha", 1)) {}
                };
                #define C2_FOO(Name)                            \\
                  REGISTER_CPU_OPERATOR(Name, FooOp);           \\
                  OPERATOR_SCHEMA(Name).SetDoc(#Name " op.");
                C2_FOO(FooA);
                C2_FOO(FooB);
                #undef C2_FOO
                """,
        },
    )
    # Each schema is reported at the line of the macro use that declares it.
    where = "undeclared arg 'alpha' (read in operators/foo/foo_op.cc)"
    assert sorted(lines) == [
        "operators/foo/foo_op.cc:10: FooA: " + where,
        "operators/foo/foo_op.cc:11: FooB: " + where,
    ], lines


def test_every_exemption_is_still_needed():
    checker = load_checker()
    tree = checker.Tree(checker.ROOT)
    for op, arg in sorted(checker.EXEMPTED):
        assert op in tree.schemas, f"EXEMPT names {op}, which has no schema"
        assert arg in tree.read_args(op), f"{op} no longer reads {arg}: drop it from EXEMPT"
        assert arg not in tree.schemas[op][2], f"{op} declares {arg}: drop it from EXEMPT"
