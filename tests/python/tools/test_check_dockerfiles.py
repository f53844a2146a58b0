"""scripts/check_dockerfiles.py: the project's Dockerfiles pass; broken ones are flagged, each
finding with its file and line."""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "check_dockerfiles.py")


def load_checker():
    spec = importlib.util.spec_from_file_location("check_dockerfiles", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_project_dockerfiles_pass():
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = "/usr/bin:/bin"  # structural check only, whether or not hadolint is installed
    result = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 file(s), 0 finding(s)" in result.stdout


def test_broken_dockerfile_findings(tmp_path):
    bad = tmp_path / "bad.Dockerfile"
    bad.write_text(
        "# docker build --target runtime\n"
        "FROM debian:12 AS build\n"
        "RUN apt-get update \\\n"
        " && true\n"
        "COPYY . /src\n"
        "COPY scripts/no_such_file.sh /x\n"
        "COPY --from=builder /wheels /wheels\n"
    )
    problems = load_checker().check_structure(str(bad))
    text = "\n".join(problems)
    assert "bad.Dockerfile:5: unknown instruction 'COPYY'" in text, text
    assert "COPY source scripts/no_such_file.sh is not in the checkout" in text, text
    assert "COPY --from=builder names no earlier stage" in text, text
    assert "--target runtime, not a stage" in text, text
    assert len(problems) == 4, problems


def test_a_dockerfile_must_start_with_from_or_arg(tmp_path):
    bad = tmp_path / "late.Dockerfile"
    bad.write_text("RUN true\nFROM debian:12\n")
    assert any("starts with RUN" in p for p in load_checker().check_structure(str(bad)))
