#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite with CTest, then the
# undefined-behaviour and fuzzing job (scripts/sanitize.sh; skipped without clang, or with
# MURMUR_SANITIZE=0). GPU tests skip (not fail) without a CUDA device; render tests use EGL (Mesa
# without a GPU); the several-rank tests run under mpirun on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
(cd "${MURMUR_BUILD_DIR:-$root/build}" && ctest --output-on-failure -j"$(nproc)" "$@")
if [ "${MURMUR_SANITIZE:-1}" != 0 ]; then
  "$root/scripts/sanitize.sh"
fi
