#!/usr/bin/env bash
# Configures and builds Murmuration into ./build (or $MURMUR_BUILD_DIR). Used by run.sh and test.sh.
# Extra arguments are passed to the build tool's target list (e.g. "murmur").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MURMUR_BUILD_DIR:-$root/build}
# The CUDA toolkit installs nvcc outside PATH; find it there so the GPU engine is built.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
  for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    if [ -x "$c" ]; then export CUDACXX=$c; break; fi
  done
fi
gen=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${MURMUR_CMAKE_ARGS:-} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
