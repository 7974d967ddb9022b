#!/usr/bin/env bash
# Installs what is missing, builds, and runs murmur with its embedded default scenario
# (or with the arguments given, e.g. scripts/run.sh --headless --no-render --n 1M).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" murmur
exec "${MURMUR_BUILD_DIR:-$root/build}/murmur" "$@"
