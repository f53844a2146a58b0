#!/usr/bin/env python3
"""Checks the layout rules of docs/layout.md that a reader relies on, and prints what breaks them:

1. Line budget: no tracked source, script or test file is over 500 lines.
2. One op, one stem: every CUDA or cuDNN registration in operators/ sits in a file whose stem is
   the stem of the op's CPU registration (or, for an op without one, of its schema):
   operators/<family>/<op>_op.cc registers the CPU kernel, <op>_op.cu, <op>_op_cuda.cc and
   <op>_op_cudnn.cc beside it the device ones.
3. Family size: no folder under operators/ holds more than 40 files.

Usage: scripts/check_layout.py [--counts]   (exit status 1 when a rule is broken; --counts prints
the numbers the rules are about even when they hold)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE_BUDGET = 500
FAMILY_BUDGET = 40
CHECKED_SUFFIXES = (".py", ".cc", ".cu", ".h", ".cuh", ".sh", ".cmake", ".proto", ".txt")
REGISTRATION = re.compile(
    r"\b(REGISTER_CPU_OPERATOR|REGISTER_CUDA_OPERATOR|REGISTER_GPU_FALLBACK|OPERATOR_SCHEMA|"
    r"C2_[A-Z_]*FILL)\s*\(\s*([A-Za-z0-9_]+)"
)


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True)
    return [path for path in out.stdout.splitlines() if os.path.isfile(os.path.join(ROOT, path))]


def over_budget(files):
    found = []
    for path in files:
        if not path.endswith(CHECKED_SUFFIXES) or path.startswith("third_party/"):
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > LINE_BUDGET:
            found.append("{} has {} lines (budget {})".format(path, lines, LINE_BUDGET))
    return found


def stem(path):
    """operators/elementwise/relu_op_cudnn.cc -> operators/elementwise/relu_op."""
    base = re.sub(r"\.(cc|cu)$", "", path)
    return re.sub(r"_(cuda|cudnn|dnnl)$", "", base)


def foreign_cuda_registrations(files):
    """(op, file) of every CUDA registration outside the op's own stem, and the number of op types
    registered for CUDA."""
    home, device = {}, []
    for path in files:
        if not path.startswith("operators/") or not path.endswith((".cc", ".cu")):
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for macro, key in REGISTRATION.findall(text):
            op = re.sub(r"_ENGINE_[A-Z0-9]+$", "", key)
            if macro in ("REGISTER_CUDA_OPERATOR", "REGISTER_GPU_FALLBACK"):
                device.append((key, op, path))
            elif macro == "OPERATOR_SCHEMA":
                home.setdefault(op, path)
            else:  # a CPU registration decides over the schema's file
                home[op] = path
    foreign = [
        (key, path) for key, op, path in device if op not in home or stem(path) != stem(home[op])
    ]
    return sorted(foreign), len({key for key, _, _ in device})


def crowded_families():
    found = []
    base = os.path.join(ROOT, "operators")
    for family in sorted(os.listdir(base)):
        folder = os.path.join(base, family)
        if os.path.isdir(folder) and len(os.listdir(folder)) > FAMILY_BUDGET:
            found.append(
                "operators/{} holds {} files (budget {})".format(
                    family, len(os.listdir(folder)), FAMILY_BUDGET
                )
            )
    return found


def main():
    files = tracked_files()
    long_files = over_budget(files)
    foreign, cuda_ops = foreign_cuda_registrations(files)
    crowded = crowded_families()
    if "--counts" in sys.argv:
        print("files over {} lines: {}".format(LINE_BUDGET, len(long_files)))
        print(
            "CUDA registrations: {} op keys, {} outside their op's stem".format(
                cuda_ops, len(foreign)
            )
        )
        print("families over {} files: {}".format(FAMILY_BUDGET, len(crowded)))
    problems = (
        long_files
        + crowded
        + [
            "{} is registered for CUDA in {}, away from its op's stem".format(key, path)
            for key, path in foreign
        ]
    )
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
