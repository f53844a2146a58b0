#!/usr/bin/env bash
# Sets up a fresh clone: Debian packages, a .venv made from Debian's Python (with its system
# packages), and the caffe2 package installed in it (editable; the build runs through CMake).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install_deps.sh

if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi

# The package build drives CMake + Ninja into ./build (incremental on later runs), with the C++
# tests; -v shows its progress (Ninja's [done/total] counter) as it goes.
echo "setup_env: building the caffe2 package (CMake + Ninja into ./build)"
C2_BUILD_TESTS=ON .venv/bin/python -m pip install --no-build-isolation --no-deps --no-index -v -e . 2>&1 \
  | grep -E --line-buffered '^ *\[[0-9]+/[0-9]+\]|^ *-- (Configuring|Generating|Build files)|[Ee]rror|Successfully installed' \
  || { echo "setup_env: the package build failed; rerun with: .venv/bin/python -m pip install --no-build-isolation -v -e ." >&2; exit 1; }
