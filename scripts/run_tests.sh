#!/usr/bin/env bash
# Sets everything up, then runs every test: C++ (ctest) and Python (pytest), then the sanitizer and
# fuzzing job (scripts/run_sanitizers.sh; C2_SKIP_SANITIZERS=1 leaves it out of a local run).
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
bash scripts/setup_env.sh
echo "setup and build: $(( $(date +%s) - start )) s"

# The layout rules (docs/layout.md): line budget, one op one stem on every device, family sizes;
# then the formatting (clang-format, black, flake8).
/usr/bin/python3 scripts/check_layout.py --counts
bash scripts/check_format.sh
# The Dockerfiles (no image can be built here): structure, and hadolint when installed.
/usr/bin/python3 scripts/check_dockerfiles.py
ctest --test-dir build --output-on-failure -j2
# Hypothesis draws the same examples on every run (profile "ci"), so a result never depends on luck.
CAFFE2_HYPOTHESIS_PROFILE="${CAFFE2_HYPOTHESIS_PROFILE:-ci}" .venv/bin/python -m pytest -q -p no:cacheprovider tests/python
echo "main suites: $(( $(date +%s) - start )) s"
if [ "${C2_SKIP_SANITIZERS:-0}" != "1" ]; then
  bash scripts/run_sanitizers.sh
fi
echo "total: $(( $(date +%s) - start )) s"
