"""scripts/gen_operator_docs.py: docs/operators.md is current, and says what the registries say."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from caffe2.python import workspace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "gen_operator_docs.py")
C = workspace.C

pytestmark = pytest.mark.skipif(
    dict(C.get_build_options()).get("USE_CUDA") != "ON",
    reason="docs/operators.md lists the CUDA registry: it needs a build with USE_CUDA=ON",
)


def run_script(*args):
    """Runs the script in a fresh interpreter: the registries as a newly loaded library has them."""
    return subprocess.run(
        [sys.executable, SCRIPT] + list(args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def load_script():
    spec = importlib.util.spec_from_file_location("gen_operator_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page():
    result = run_script("--stdout")
    assert result.returncode == 0, result.stderr
    return result.stdout


def summary_rows(text):
    """{op: [CPU, CUDA, engines, gradient]} from the summary table."""
    rows = {}
    for line in text.splitlines():
        match = re.match(r"\| \[(\w+)\]\(#\w+\)[^|]* \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [c.strip() for c in match.group(2).split("|")]
    return rows


def section(text, op):
    match = re.search(r"^### {}\n(.*?)(?=^##)".format(op), text, re.S | re.M)
    assert match, "no section for " + op
    return match.group(1)


def test_operator_docs_are_current():
    result = run_script("--check")
    assert result.returncode == 0, (
        "docs/operators.md does not match the built library (the registry may have grown: "
        "regenerate it with .venv/bin/python scripts/gen_operator_docs.py)\n"
        + result.stdout
        + result.stderr
    )


def test_check_reports_a_stale_page(tmp_path, page):
    stale = tmp_path / "operators.md"
    stale.write_text(page.replace("| [Conv](#conv) | yes |", "| [Conv](#conv) |  |", 1))
    result = run_script("--check", "--doc", str(stale))
    assert result.returncode == 1
    assert "is stale" in result.stderr and "gen_operator_docs.py" in result.stderr
    assert "-| [Conv](#conv) |  |" in result.stderr
    assert run_script("--check", "--doc", str(tmp_path / "none.md")).returncode == 1


def test_known_ops(page):
    rows = summary_rows(page)
    keys = set(C.registered_operators())
    cpu, cuda, engines, gradient = rows["Conv"]
    assert (cpu, cuda, gradient) == ("yes", "yes", "yes")
    for engine, device in (("CUDNN", "CUDA"), ("DNNL", "CPU"), ("EIGEN", "CPU")):
        if "Conv_ENGINE_" + engine in keys:
            assert "{} ({})".format(engine, device) in engines
    conv = section(page, "Conv")
    assert "Gradient op `ConvGradient`: CPU, CUDA" in conv
    assert "Aliases: `Conv1D`, `Conv2D`, `Conv3D`." in conv
    assert "| 1 | `filter` |" in conv
    assert "(alias of Conv)" in [line for line in page.splitlines() if "[Conv2D]" in line][0]

    assert rows["Accuracy"][3] == "no (SHOULD_NOT_DO_GRADIENT)"
    assert rows["ConstantFill"][3] == "no (NO_GRADIENT)"
    assert rows["Relu"][3] == "yes" and "CUDNN (CUDA)" in rows["Relu"][2]
    assert rows["CopyCPUToGPU"][:2] == ["", "yes"]
    assert rows["ReduceSum"][3] == "not implemented"
    assert "| `kernel` |" in conv


def test_every_registration_is_on_the_page(page):
    rows = summary_rows(page)
    gradient_ops = set(re.findall(r"^- Gradient op `(\w+)`", page, re.M))
    # the gradient ops of an alias ("Conv2DGradient") are its target's
    aliases = re.findall(r"^\| \[(\w+)\]\(#\w+\) \(alias of ", page, re.M)
    gradient_ops |= {alias + suffix for alias in aliases for suffix in ("Gradient", "Grad")}
    for key in C.registered_operators():
        base = key.partition("_ENGINE_")[0]
        assert base in rows or base in gradient_ops, base
        if base in rows and base == key:
            devices = rows[base][:2]
            assert devices[0] == ("yes" if key in C.registered_cpu_operators() else "")
            assert devices[1] == ("yes" if key in C.registered_cuda_operators() else "")


def test_upstream_list_holds_only_absent_ops(page):
    names = load_script().UPSTREAM_OPERATORS
    assert isinstance(names, tuple) and len(names) == len(set(names)) > 100
    assert {"RecurrentNetwork", "If", "While", "LSTMUnit", "Ftrl"} <= set(names)
    listed = page.split("## Upstream operators not yet here", 1)[1]
    shown = set(re.findall(r"\b\w+\b", " ".join(re.findall(r"\): (.*)$", listed, re.M))))
    registered = {key.partition("_ENGINE_")[0] for key in C.registered_operators()}
    present = {n for n in names if n in registered or C.OpSchema.get(n) is not None}
    assert shown == set(names) - present
