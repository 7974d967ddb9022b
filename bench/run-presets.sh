#!/usr/bin/env bash
# Runs the committed benchmark presets on this machine's GPU (with the CPU baseline) and the
# rendering sweep, writing CSVs and JSON sidecars to OUT_DIR:
#   bench/run-presets.sh [BUILD_DIR] [OUT_DIR]
# Then plot them:  python3 bench/plot.py OUT_DIR/cis565.csv --out images/ --prefix cis565  (etc.)
set -uo pipefail
build=${1:-build}
out=${2:-bench/results/new}
mkdir -p "$out"
m="$build/murmur"
"$m" bench --preset cis565 --cpu-baseline --max-seconds 2 --csv "$out/cis565.csv"
"$m" bench --preset constant-density --max-seconds 2 --csv "$out/constant-density.csv"
# Gravity: every block size on the all-pairs kernel, the default block for the grid pipelines.
"$m" bench --preset gravity --pipeline naive --cpu-baseline --max-seconds 1.5 --csv "$out/gravity.csv"
"$m" bench --preset gravity --pipeline scattered,coherent --block-size 256 --max-seconds 1.5 \
  --csv "$out/gravity.csv" --append
# Rendering on: steps plus an offscreen 1280x720 frame through CUDA-GL interop, per step.
"$m" bench --render --pipeline scattered,coherent --n 100k,250k,500k,1M,2M,5M,10M --max-seconds 2 \
  --csv "$out/render.csv"
"$m" bench --render --pipeline naive --n 25k,50k,100k,250k --max-seconds 2 --csv "$out/render.csv" --append
