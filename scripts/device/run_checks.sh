#!/usr/bin/env bash
# Runs the CUDA checks ON a lent GPU machine from the kit that scripts/device/make_kit.sh built here.
# From the repo root there, with .devkit carried:
#
#   run(command="scripts/device/run_checks.sh", carry=[".devkit"], timeout_s=560)
#   run(command="scripts/device/run_checks.sh --bench 'benchmarks/bench_x.py --iters 5'",
#       carry=[".devkit"], timeout_s=560)
#
# Steps, each under `timeout` and all under one deadline (TOTAL_S, default 480 s):
#   env     nvidia-smi, versions, where the CUDA libraries resolve        -> $OUT/env.txt
#   smoke   import caffe2.python.workspace: has_gpu_support, NumCudaDevices, and the GPU module
#           itself (its import error, if any), CUDA/cuDNN runtime versions  -> $OUT/smoke.log
#   cpp     the C++ CUDA test binaries in the kit (GoogleTest)            -> $OUT/cpp.log, cpp.xml
#   pytest  tests/python/src/test_gpu_module.py, the CPU-suite files with GPU-dependent cases (see
#           `tests=` below), then the device checks (`-m device_check`) of
#           tests/python/operators and tests/python/distributed/nccl   -> $OUT/pytest.log, pytest.xml
#   bench   each --bench 'SCRIPT ARGS', run as `python3 SCRIPT ARGS`      -> $OUT/bench.log
# and a one-line-per-step summary, also in $OUT/summary.txt: 8 files at most, all that come back.
# Exit status 0 when every step passed (a GPU test that skips is a pass: read the -rs lines).
#
# Options: --python PY (default python3), --kit DIR (default .devkit), --pytest 'MORE ARGS/PATHS',
# --bench 'SCRIPT ARGS' (repeatable). OUT defaults to /tmp/devkit-out where it is unset.
# The kit's compiled modules and *_pb2.py are copied into this tree's python/caffe2 (tests put
# ROOT/python first on sys.path); the tree's own .py files are the ones used.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
PY=python3 KIT=.devkit EXTRA_PYTEST="" BENCHES=()
while [ $# -gt 0 ]; do
  case $1 in
    --python) PY=$2; shift 2;;
    --kit) KIT=$2; shift 2;;
    --pytest) EXTRA_PYTEST=$2; shift 2;;
    --bench) BENCHES+=("$2"); shift 2;;
    *) echo "usage: $0 [--python PY] [--kit DIR] [--pytest 'ARGS'] [--bench 'SCRIPT ARGS']..." >&2; exit 2;;
  esac
done
KIT=$(cd "$KIT" && pwd) || { echo "no kit at $KIT: run scripts/device/make_kit.sh and carry .devkit" >&2; exit 2; }
OUT=${OUT:-/tmp/devkit-out}; mkdir -p "$OUT"
deadline=$(( $(date +%s) + ${TOTAL_S:-480} ))
export PYTHONUNBUFFERED=1 PYTHONPATH=$ROOT/python OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
SUMMARY=()

# run_step NAME LIMIT_S LOG CMD...: CMD under timeout (capped by the deadline), output teed to LOG.
run_step() {
  local name=$1 limit=$2 log=$3; shift 3
  local left=$(( deadline - $(date +%s) )) t0 rc cmd="$*"
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 5 ]; then SUMMARY+=("$name: SKIPPED (out of time)"); return; fi
  echo "==== $name (limit ${limit}s): ${cmd:0:300}" | tee -a "$log"
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$log"; rc=${PIPESTATUS[0]}
  case $rc in 0) r=ok;; 124|137) r="TIMEOUT";; 5) r="no tests collected";; *) r="FAILED rc=$rc";; esac
  SUMMARY+=("$name: $r in $(( $(date +%s) - t0 ))s")
}

# ---- the kit: unpack, compare with this tree, copy the built modules and libraries into it ----
# The kit's libraries go next to libcaffe2.so: each has RUNPATH $ORIGIN, so they resolve among
# themselves without LD_LIBRARY_PATH (which would push them on every other program, torch included).
[ -d "$KIT/lib" ] || tar -C "$KIT" -xJf "$KIT/lib.tar.xz"
{
  echo "## $(date -u +%FT%TZ) $(uname -srm)"
  command -v nvidia-smi >/dev/null && nvidia-smi || echo "nvidia-smi: not found"
  "$PY" -c 'import sys, numpy, google.protobuf as pb, pytest; print("python", sys.version.split()[0], "numpy", numpy.__version__, "protobuf", pb.__version__, "pytest", pytest.__version__)'
  echo "## kit"; cat "$KIT/KIT_INFO.txt"
  diff -rq -x '*.so' -x '*.so.*' -x '*_pb2.py' -x __pycache__ "$KIT/python/caffe2" python/caffe2 &&
    echo "python/caffe2: same .py files as the kit" || echo "NOTE: python/caffe2 differs from the kit's copy (the tree's .py files are used)"
  [ "sources: $(bash scripts/device/source_hash.sh)" = "$(grep '^sources:' "$KIT/KIT_INFO.txt")" ] &&
    echo "C++ sources: same as the kit's build" || echo "NOTE: C++ sources differ from the kit's build (rebuild it with make_kit.sh)"
} 2>&1 | tee "$OUT/env.txt"
cp "$KIT"/python/caffe2/python/*.so "$KIT"/lib/* python/caffe2/python/
cp "$KIT"/python/caffe2/proto/*_pb2.py python/caffe2/proto/

# CUDA, cuDNN and cuBLAS come from the machine: torch's pip wheels (site-packages/nvidia/*/lib), then
# the toolkit.
cuda_dirs=""
for sp in $("$PY" -c 'import site; print(" ".join(site.getsitepackages()))'); do
  for d in "$sp"/nvidia/*/lib; do [ -d "$d" ] && cuda_dirs+=":$d"; done
done
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && cuda_dirs+=":$d"
done
cuda_dirs+=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=${cuda_dirs#:}
{
  echo "## LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldd python/caffe2/python/*.so "$KIT"/bin/* | grep -E "=> .*(cuda|cudnn|cublas|curand|nccl)|not found" |
    sed 's/ (0x.*//' | sort -u
  echo "## resolved outside the kit and the machine's basics:"
  ldd python/caffe2/python/*.so | awk '/=> \//{print $3}' | sort -u |
    grep -v -E "^$ROOT/|/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so|cuda|cudnn|cublas|curand|nccl" || echo "  (none)"
} 2>&1 | tee -a "$OUT/env.txt"
ldd python/caffe2/python/*.so | grep -q "not found" && SUMMARY+=("env: WARNING a library is not found (see env.txt)")

# ---- the checks ----
run_step smoke 60 "$OUT/smoke.log" "$PY" -c '
from caffe2.python import workspace, _import_c_extension as C
print("has_gpu_support", C.has_gpu_support, "NumCudaDevices", workspace.NumCudaDevices())
import caffe2.python.caffe2_pybind11_state_gpu as G  # raises the loader error if the GPU module failed
print("cuda runtime", G.get_cuda_version(), "cudnn", G.get_cudnn_version())
for i in range(G.num_cuda_devices()):
    print(G.get_device_properties(i))'

for t in "$KIT"/bin/*; do
  [ -x "$t" ] && run_step "cpp $(basename "$t")" 120 "$OUT/cpp.log" "$t" --gtest_output="xml:$OUT/cpp.xml"
done

# The GPU module's tests and the CPU-suite files whose outcome depends on a GPU
# being present (GPU-only ImageInput cases; feed/fetch and workspace fallbacks that skip with one).
# Then the end-to-end GPU tests: NCCL worlds across processes (1 GPU: one rank, the refusals) and
# the trainer on one GPU (float, float16, fp16 compute with dynamic loss scaling).
tests=(tests/python/src/test_gpu_module.py tests/python/src/test_feed_fetch.py
       tests/python/python/test_workspace.py tests/python/operators/io/test_image_input.py)
[ -f tests/python/distributed/nccl/test_nccl_world.py ] && tests+=(tests/python/distributed/nccl/test_nccl_world.py)
[ -f tests/python/examples/test_resnet50_trainer.py ] &&
  tests+=("tests/python/examples/test_resnet50_trainer.py::test_trains_on_a_gpu")
timeout_arg=$("$PY" -c 'import pytest_timeout' 2>/dev/null && echo --timeout=120)
# shellcheck disable=SC2086  # EXTRA_PYTEST is split into arguments on purpose
run_step pytest 300 "$OUT/pytest.log" "$PY" -m pytest -q -rs --durations=5 -p no:cacheprovider $timeout_arg \
  --junitxml="$OUT/pytest.xml" "${tests[@]}" $EXTRA_PYTEST
# The device checks: beside each op's CPU tests, selected by their marker (docs/testing.md).
run_step "pytest device checks" 300 "$OUT/pytest.log" "$PY" -m pytest -q -rs --durations=5 \
  -p no:cacheprovider $timeout_arg -m device_check tests/python/operators tests/python/distributed/nccl

for b in "${BENCHES[@]}"; do
  # shellcheck disable=SC2086
  run_step "bench $b" 240 "$OUT/bench.log" "$PY" $b
done

printf '%s\n' "==== summary" "${SUMMARY[@]}" | tee "$OUT/summary.txt"
! grep -qE "FAILED|TIMEOUT|WARNING" "$OUT/summary.txt"
