#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite with CTest, then the
# Python module's install and pytest suite (python/tests), then the undefined-behaviour and fuzzing
# job (scripts/sanitize.sh; skipped without clang, or with MURMUR_SANITIZE=0). GPU tests skip (not
# fail) without a CUDA device; render tests use EGL (Mesa without a GPU); the several-rank tests
# run under mpirun on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${MURMUR_BUILD_DIR:-$root/build}
(cd "$build" && ctest --output-on-failure -j"$(nproc)" "$@")
# The Python module: a fresh virtual environment from Debian's python3 (/usr/bin/python3 with
# python3-venv, from install-deps.sh), `pip install .[test,examples,docs]` into it every time (the
# install test; the build reuses build/python-<tag>), then the pytest suite there, with the
# murmur just built for the tests that compare with the command line, then the API reference.
venv=$build/python-venv
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
# One CUDA architecture for the install test (the project's build above carries them all).
CUDAARCHS=${CUDAARCHS:-90-real} "$venv/bin/python" -m pip install -q --disable-pip-version-check "$root[test,examples,docs]"
(cd "$root" && MURMUR_EXE="$build/murmur" "$venv/bin/python" -m pytest -p no:cacheprovider -rs python/tests)
# The API reference from the docstrings (docs/python.md#api-reference), warnings as errors.
rm -rf "$build/python-api"
(cd "$root" && "$venv/bin/python" -W error -m pdoc -o "$build/python-api" murmuration)
if [ "${MURMUR_SANITIZE:-1}" != 0 ]; then
  "$root/scripts/sanitize.sh"
fi
