#!/usr/bin/env bash
# The undefined-behaviour job: builds the CPU engine, the app and their tests with clang's UBSan
# (float-cast-overflow included, every report fatal), runs the core and app tests, then builds the
# libFuzzer targets of the body-file and parameter readers and runs each for a short while.
# Skips (exit 0 with a note) when clang is not installed. MURMUR_FUZZ_SECONDS sets the fuzzing
# time per target (default 30).
# Warnings are enforced by the main (gcc) build; here they are shown but not fatal, since clang
# warns about fields that only the CUDA build uses.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MURMUR_UBSAN_BUILD_DIR:-$root/build-ubsan}
if ! command -v clang++ >/dev/null 2>&1 || ! command -v clang >/dev/null 2>&1; then
  echo "sanitize.sh: clang not installed; the UBSan and fuzzing job is skipped (apt-get install clang)"
  exit 0
fi
san="-fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
gen=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DMURMUR_ENABLE_CUDA=OFF -DMURMUR_BUILD_FUZZERS=ON -DMURMUR_WERROR=OFF \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=undefined" >/dev/null
cmake --build "$build" -j"$(nproc)" --target murmur murmur_tests_core murmur_tests_app fuzz_body_file fuzz_params

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/tests/core/murmur_tests_core"
"$build/tests/app/murmur_tests_app"

seconds=${MURMUR_FUZZ_SECONDS:-30}
for target in body_file params; do
  work=$(mktemp -d)
  # New inputs go to the scratch folder, the committed seeds stay as they are; a crashing input
  # is kept as $build/fuzz-<target>-crash-*.
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-$target-" "$work" "$root/tests/fuzz/corpus/$target" 2>&1 | tail -n 12
  rm -rf "$work"
done
echo "sanitize.sh: UBSan tests and fuzzing passed"
