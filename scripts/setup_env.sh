#!/usr/bin/env bash
# Sets up a fresh clone: Debian packages, a .venv made from Debian's Python (with its system
# packages), and the caffe2 package installed in it (editable; the build runs through CMake).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install_deps.sh

if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi

# The package build drives CMake + Ninja into ./build (incremental on later runs).
.venv/bin/python -m pip install --no-build-isolation --no-deps --no-index -q -e .
