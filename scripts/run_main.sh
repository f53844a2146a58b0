#!/usr/bin/env bash
# Sets everything up, then runs the main job: synchronous data-parallel training of a ResNet on
# Fashion-MNIST with two shards (two processes on loopback, Gloo collectives, file-store rendezvous
# in a temporary directory), reading Datum LMDBs through ImageInput. Arguments are passed on to
# examples/distributed_fashion_mnist.py (e.g. --num_shards 3 --epochs 3).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup_env.sh
exec .venv/bin/python examples/distributed_fashion_mnist.py "$@"
