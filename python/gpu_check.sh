#!/usr/bin/env bash
# On a machine with a CUDA device: builds the Python module with CMake directly (no pip, no package
# index) and runs the pytest suite (GPU tests included, with their output) and the zero-copy demo.
#
#   python/gpu_check.sh
#
# Needs python3 with its headers, numpy and pytest (cupy and torch are used when importable), and
# nanobind importable by that python3. Without a package index, from wheels fetched elsewhere:
#
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#     -d wheels nanobind scikit-build-core                  # where the index is reachable
#   python3 -m pip install --no-index --find-links wheels --target build-nb nanobind   # ignored by git
#   PYTHONPATH=$PWD/build-nb python/gpu_check.sh
#
# PYTHON picks the interpreter, MURMUR_PY_BUILD_DIR the build folder (default build-py), CUDA_ARCH
# the architecture (90-real).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MURMUR_PY_BUILD_DIR:-$root/build-py}
py=$(command -v "${PYTHON:-python3}")
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1; then
  for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    if [ -x "$c" ]; then export CUDACXX=$c; break; fi
  done
fi
nb_dir=$("$py" -m nanobind --cmake_dir)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMURMUR_BUILD_PYTHON=ON -DMURMUR_BUILD_TESTS=OFF \
  -DMURMUR_ENABLE_MPI=OFF -Dnanobind_DIR="$nb_dir" -DPython_EXECUTABLE="$py" \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90-real}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target _murmuration murmur
export PYTHONPATH="$root/python:$build/python${PYTHONPATH:+:$PYTHONPATH}"
export MURMUR_EXE="$build/murmur"
"$py" -c 'import murmuration as mm; print("murmuration from", mm.__file__, "cuda:", mm._native.cuda_available())'
"$py" -m pytest -v -rs -s -p no:cacheprovider "$root/python/tests"
"$py" "$root/python/zero_copy_demo.py"
