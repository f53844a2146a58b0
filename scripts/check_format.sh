#!/usr/bin/env bash
# Checks that the tracked sources are formatted (docs/layout.md): C++ and CUDA with clang-format
# (.clang-format), Python with black at 100 columns and flake8 (.flake8). With --fix, rewrites them
# instead. The tools are Debian's (scripts/install_deps.sh): clang-format-14, black, flake8.
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG_FORMAT=$(command -v clang-format-14 || command -v clang-format)
BLACK=(black --quiet --line-length 100)

mapfile -t cpp < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh' ':!third_party' ':!*.pb.h')
mapfile -t py < <(git ls-files '*.py' ':!third_party')

if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i "${cpp[@]}"
  "${BLACK[@]}" "${py[@]}"
  echo "check_format: rewrote ${#cpp[@]} C++ and ${#py[@]} Python files"
  exit 0
fi

status=0
if ! "$CLANG_FORMAT" --dry-run --Werror "${cpp[@]}" 2> /tmp/check_format_clang.$$; then
  head -40 /tmp/check_format_clang.$$
  echo "check_format: C++ files differ from .clang-format (scripts/check_format.sh --fix)"
  status=1
fi
rm -f /tmp/check_format_clang.$$
if ! "${BLACK[@]}" --check "${py[@]}"; then
  echo "check_format: Python files differ from black (scripts/check_format.sh --fix)"
  status=1
fi
if ! flake8 "${py[@]}"; then
  echo "check_format: flake8 findings above"
  status=1
fi
[ "$status" = 0 ] && echo "check_format: ${#cpp[@]} C++ and ${#py[@]} Python files formatted and clean"
exit "$status"
