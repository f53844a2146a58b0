#!/usr/bin/env bash
# Prints a short hash of the C++/CUDA sources and build files, so run_checks.sh can tell whether the
# tree it runs in still matches the one make_kit.sh built (the device copy has no .git).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
find CMakeLists.txt cmake core operators distributed proto python/src tests/cpp -type f \
  \( -name '*.cc' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' -o -name '*.proto' \
     -o -name CMakeLists.txt -o -name '*.cmake' \) | LC_ALL=C sort | xargs sha1sum | sha1sum | cut -c1-12
