#!/usr/bin/env bash
# The sanitizer and fuzzing job (docs/testing.md), run by scripts/run_tests.sh after the main suites.
#  1. Builds the library, the C++ tests, the extension and the fuzz targets with clang under
#     AddressSanitizer + UndefinedBehaviorSanitizer (any report aborts) into build-san/, CPU only.
#  2. Runs every C++ test of that build (the fuzz replays included).
#  3. Runs each fuzz target (libFuzzer) for a fixed number of inputs from its seed corpus with a fixed
#     seed (docs/testing.md says why two runs can still differ). A finding fails the job; its input is
#     left in build-san/fuzz-findings/ and belongs in tests/fuzz/regressions/<target>/ once fixed.
#  4. Runs the Python suites of the bindings, the DB readers, the operators (their references, gradients
#     and input checks) and the frontend on the sanitized extension (about a minute).
# Needs scripts/setup_env.sh first (Debian packages, .venv). C2_FUZZ_SEED (default 1) seeds the
# fuzzers; C2_FUZZ_SCALE multiplies the inputs per target (1: about 1.5 minutes in all on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
FUZZ_SCALE="${C2_FUZZ_SCALE:-1}"
SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
ASAN_RUNTIME="$(clang -print-file-name=libclang_rt.asan-x86_64.so)"

if [ ! -f build-san/build.ninja ]; then
  cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS="$SAN_FLAGS" -DCMAKE_CXX_FLAGS="$SAN_FLAGS -fsanitize=fuzzer-no-link" \
    -DCMAKE_SHARED_LINKER_FLAGS="$SAN_FLAGS -shared-libasan" \
    -DCMAKE_MODULE_LINKER_FLAGS="$SAN_FLAGS -shared-libasan" \
    -DCMAKE_EXE_LINKER_FLAGS="$SAN_FLAGS -shared-libasan" \
    -DC2_USE_CUDA=OFF -DC2_FUZZ=ON -DC2_PYTHON_PACKAGE_DIR="$PWD/build-san/python/caffe2"
fi
cmake --build build-san -j2
echo "sanitizer build: $(( $(date +%s) - start )) s"

# The sanitized binaries load clang's shared ASan runtime (-shared-libasan, so that the Python
# extension shares it with the interpreter). Leaks are reported for the C++ tests and fuzz targets;
# CPython's own allocations at exit are not ours.
export LD_LIBRARY_PATH="$(dirname "$ASAN_RUNTIME")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-san --output-on-failure -j2

# The targets run inside build-san/fuzz-work, so that a fuzzed path names nothing outside it.
root="$PWD"
findings="$root/build-san/fuzz-findings"
rm -rf "$findings" build-san/fuzz-work && mkdir -p "$findings" build-san/fuzz-work
# Inputs per target: about 50 s for fuzz_netdef, 30 s for fuzz_blob_record (image decoding) and 15 s
# for fuzz_minidb.
for spec in fuzz_netdef:100000 fuzz_blob_record:50000 fuzz_minidb:100000; do
  target="${spec%%:*}"
  runs=$(( ${spec##*:} * FUZZ_SCALE ))
  work="$root/build-san/fuzz-corpus/$target"
  log="$root/build-san/$target.log"
  rm -rf "$work" && mkdir -p "$work"
  echo "fuzzing $target: $runs inputs"
  status=0
  (cd build-san/fuzz-work && LD_PRELOAD="$ASAN_RUNTIME" "$root/build-san/tests/fuzz/$target" "$work" \
    "$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target" \
    -seed="${C2_FUZZ_SEED:-1}" -runs="$runs" \
    -timeout=20 -rss_limit_mb=4096 -max_len=4096 -artifact_prefix="$findings/$target-" \
    -print_final_stats=1) > "$log" 2>&1 || status=$?
  tail -n 8 "$log"
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    grep -m1 -A30 "ERROR\|runtime error" "$log" || true
    echo "fuzzing $target failed (exit $status); finding(s) in $findings: $(ls "$findings")"
    exit 1
  fi
done

# The Python package on the sanitized extension: the sources beside build-san's libraries.
(cd python && find caffe2 -name '*.py' ! -name '*_pb2.py' -print0 | xargs -0 cp --parents -t ../build-san/python)
ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" LD_PRELOAD="$ASAN_RUNTIME" \
  PYTHONPATH="$PWD/build-san/python" C2_TEST_PYTHON_ROOT="$PWD/build-san/python" \
  CAFFE2_HYPOTHESIS_PROFILE=ci /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  tests/python/src tests/python/io tests/python/proto tests/python/operators tests/python/python
echo "sanitizers and fuzzing: $(( $(date +%s) - start )) s"
