#!/usr/bin/env bash
# Installs the Jupyter kernelspec "caffe2": the repository's .venv/bin/python running ipykernel
# (argv: .venv/bin/python -m ipykernel_launcher -f {connection_file}), with CAFFE2_REPO set to this
# checkout, so that the notebooks (notebooks/) import its caffe2. Idempotent: installing again
# replaces the kernelspec.
#
#   scripts/install_kernel.sh               for the current user (~/.local/share/jupyter/kernels)
#   scripts/install_kernel.sh --sys-prefix  into .venv (seen by a Jupyter run from .venv only)
#   scripts/install_kernel.sh --prefix DIR  into DIR/share/jupyter/kernels
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="$ROOT/.venv/bin/python"

usage() {
  echo "usage: $0 [--user | --sys-prefix | --prefix DIR]" >&2
  exit 2
}

case "${1:-}" in
  "" | --user) where=(--user) ;;
  --sys-prefix) where=(--sys-prefix) ;;
  --prefix)
    [ -n "${2:-}" ] || usage
    where=(--prefix "$2")
    ;;
  *) usage ;;
esac

if [ ! -x "$PY" ]; then
  echo "install_kernel: $PY not found: make the virtual environment first (scripts/setup_env.sh)" >&2
  exit 1
fi
if ! "$PY" -c "import ipykernel" 2>/dev/null; then
  echo "install_kernel: ipykernel is missing (scripts/install_deps.sh installs python3-ipykernel)" >&2
  exit 1
fi

# PYDEVD_DISABLE_FILE_VALIDATION: no debugger warning about frozen modules at each kernel start.
PYDEVD_DISABLE_FILE_VALIDATION=1 "$PY" -m ipykernel install "${where[@]}" --name caffe2 --display-name "Python 3 (caffe2)" \
  --env CAFFE2_REPO "$ROOT" --env PYDEVD_DISABLE_FILE_VALIDATION 1
