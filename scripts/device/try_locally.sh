#!/usr/bin/env bash
# Rehearses a device run HERE (no GPU): copies what the `run` tool would send (tracked and
# untracked-not-ignored files, plus .devkit) to a fresh folder and runs run_checks.sh there with a
# plain CPython 3.12 venv (numpy, pytest, hypothesis, protobuf, pytest-timeout and
# opencv-python-headless from pip), as the device has. GPU checks skip; extra arguments go to
# run_checks.sh, e.g.
#   scripts/device/try_locally.sh --pytest tests/python/operators/nn/test_fc.py
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIM=${SIM:-/tmp/devkit-sim}
PY312=${PY312:-/root/.pyenv/versions/3.12.1/bin/python3}
[ -d "$ROOT/.devkit" ] || { echo "no .devkit: run scripts/device/make_kit.sh first" >&2; exit 2; }
if [ ! -x "$SIM/venv/bin/python" ]; then
  "$PY312" -m venv "$SIM/venv"
  "$SIM/venv/bin/python" -m pip install -q "numpy>=2,<3" pytest hypothesis protobuf pytest-timeout \
    opencv-python-headless
fi
rm -rf "$SIM/repo" "$SIM/out" && mkdir -p "$SIM/repo"
(cd "$ROOT" && git ls-files -z -co --exclude-standard |
   while IFS= read -r -d "" f; do if [ -e "$f" ]; then cp --parents -P "$f" "$SIM/repo"; fi; done)
cp -r "$ROOT/.devkit" "$SIM/repo/.devkit"
echo "sent: $(du -sb "$SIM/repo" | cut -f1) bytes (the limit is 64 MiB = 67108864)"
cd "$SIM/repo" && OUT=$SIM/out scripts/device/run_checks.sh --python "$SIM/venv/bin/python" "$@"
