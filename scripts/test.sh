#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite with CTest.
# GPU tests skip (not fail) without a CUDA device; render tests use EGL (Mesa without a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${MURMUR_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j"$(nproc)" "$@"
