#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: runs the GPU test suites, times every pipeline headless (with
# and without rendering), and renders the screenshots README shows. Usage:
#   scripts/gpu-report.sh [BUILD_DIR] [OUT_DIR]
# Writes logs and PNGs to OUT_DIR and prints a summary at the end.
set -uo pipefail
build=${1:-build}
out=${2:-gpu-report}
mkdir -p "$out"
m="$build/murmur"
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
for t in cuda interop render; do
  bin="$build/tests/$t/murmur_tests_$t"
  [ -x "$bin" ] || continue
  "$bin" >"$out/tests_$t.log" 2>&1
  note "tests $t: exit $? | $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$out/tests_$t.log" | tr '\n' ' ')"
done

note "--- simulation only (no rendering)"
for p in naive scattered coherent; do
  steps=200; [ $p = naive ] && steps=5
  note "$("$m" --headless --no-render --n 1M --pipeline $p --steps $steps --profile 2>/dev/null | tr '\n' ' ')"
done
for p in naive scattered coherent; do
  steps=20; [ $p != naive ] && steps=5
  note "$("$m" --headless --no-render --force gravity --scenario plummer --n 262144 --pipeline $p --steps $steps --profile 2>/dev/null | tr '\n' ' ')"
done

note "--- gravity force error of the grid pipelines against a direct sum (Plummer, 262,144 bodies)"
"$m" accuracy --n 262144 2>/dev/null | tee -a "$summary"

note "--- with rendering (1920x1080, oriented boids, one frame per step)"
for n in 100k 1M; do
  for p in naive scattered coherent; do
    steps=300; [ $p = naive ] && [ $n = 1M ] && steps=4
    note "$("$m" --headless --n $n --pipeline $p --steps $steps --width 1920 --height 1080 2>/dev/null)"
  done
done

note "--- screenshots"
"$m" --headless --n 1M --steps 4000 --width 1920 --height 1080 --screenshot "$out/flock_1m.png" >>"$summary" 2>&1
# The collision as 50 frames, 72 steps apart (README shows frame 27 and a GIF of all of them).
"$m" --headless --scenario galaxies --n 131072 --pipeline naive --dt 0.01 --frames 50 --steps-per-frame 72 \
  --width 960 --height 540 --zoom 1.5 --record "$out/galaxies/" >>"$summary" 2>&1
cat "$summary"
