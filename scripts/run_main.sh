#!/usr/bin/env bash
# Sets everything up, then runs the main job: a small real training run through the whole stack.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup_env.sh
exec .venv/bin/python examples/train_linear_regression.py "$@"
