#!/usr/bin/env bash
# Runs the committed benchmark sweeps on this machine's GPU, writing CSVs and JSON sidecars to
# OUT_DIR (default: all sweeps; name some to run only those):
#   bench/run-presets.sh [BUILD_DIR] [OUT_DIR] [cis565 constant-density gravity gravity-pipelines render blocks textbook]
# Then plot them:  python3 bench/plot.py OUT_DIR/cis565.csv --out images/ --prefix cis565  (etc.)
set -uo pipefail
build=${1:-build}
out=${2:-bench/results/new}
shift 2 2>/dev/null || shift $#
sweeps=${*:-cis565 constant-density gravity gravity-pipelines render blocks textbook}
mkdir -p "$out"
m="$build/murmur"
for s in $sweeps; do
  case $s in
    cis565) "$m" bench --preset cis565 --cpu-baseline --max-seconds 2 --csv "$out/cis565.csv" ;;
    constant-density) "$m" bench --preset constant-density --max-seconds 2 --csv "$out/constant-density.csv" ;;
    gravity)
      # Every block size on the all-pairs kernel, the default block for the grid pipelines.
      "$m" bench --preset gravity --pipeline naive --cpu-baseline --max-seconds 1.5 --csv "$out/gravity.csv"
      "$m" bench --preset gravity --pipeline scattered,coherent --block-size 256 --max-seconds 1.5 \
        --csv "$out/gravity.csv" --append ;;
    gravity-pipelines)
      # Every gravity pipeline and NVIDIA's nbody kernel against N (one repeat: a 10M grid step
      # takes seconds); then all-pairs and the reference at the other block sizes.
      "$m" bench --preset gravity-pipelines --repeats 1 --max-seconds 2 --csv "$out/gravity-pipelines.csv"
      "$m" bench --force gravity --pipeline naive --reference --n 16384,65536,262144,1048576 --block-size 128,512 \
        --max-seconds 1.5 --csv "$out/gravity-naive-blocks.csv" ;;
    render)
      # Rendering on: a step plus an offscreen 1280x720 frame through CUDA-GL interop.
      "$m" bench --render --pipeline scattered,coherent,rows --n 100k,250k,500k,1M,2M,5M,10M --max-seconds 2 \
        --csv "$out/render.csv"
      "$m" bench --render --pipeline naive --n 25k,50k,100k,250k --max-seconds 2 --csv "$out/render.csv" --append ;;
    blocks)
      # Block size and cell width: the grid pipelines at 1M, all-pairs at 100k (CIS 565 world).
      "$m" bench --pipeline scattered,coherent,rows --n 1M --block-size 32,64,128,256,512,1024 --cell-width 1,2 \
        --max-seconds 1.5 --csv "$out/blocks.csv"
      "$m" bench --pipeline naive --n 100k --block-size 32,64,128,256,512,1024 --max-seconds 1.5 \
        --csv "$out/blocks.csv" --append ;;
    textbook)
      # The classic grid pipelines beside the textbook coherent grid at 1M, settled flock: the CIS 565
      # world at both cell widths, then FLAME GPU 2's Circles density.
      "$m" bench --preset cis565 --n 1M --pipeline scattered,coherent,textbook-coherent --cell-width 1,2 \
        --warmup 500 --steps 100 --max-seconds 8 --csv "$out/textbook.csv"
      "$m" bench --preset flame --warmup 500 --steps 100 --max-seconds 8 --csv "$out/textbook.csv" --append ;;
    *) echo "run-presets: unknown sweep '$s' (cis565 constant-density gravity gravity-pipelines render blocks textbook)" >&2; exit 2 ;;
  esac
done
