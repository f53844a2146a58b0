#!/usr/bin/env bash
# Sets everything up, then runs the main job: LeNet trained on Fashion-MNIST through the whole
# stack (brew, optimizer, C++ operators), exported and reloaded in a fresh process.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup_env.sh
exec .venv/bin/python examples/lenet_fashion_mnist.py "$@"
