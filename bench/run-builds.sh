#!/usr/bin/env bash
# Two builds in one run on this machine's GPU, alternating (A, B, A, B, ...), so that a change
# that must not slow anything down is measured against the build before it under the same clocks:
#   bench/run-builds.sh MURMUR_A MURMUR_B OUT_DIR [ROUNDS]
# Each round runs, per build: rows, verlet and coherent at 1M in the CIS 565 world (block 128) and
# at 10M `dense`, after 300 warm-up steps; the all-pairs gravity kernel at 256k and the tree at 1M
# (Plummer). CSVs: OUT_DIR/<world>-<a|b>-<round>.csv. Then a table of the medians per build
# (bench/builds_table.py).
set -uo pipefail
a=${1:?murmur binary A}
b=${2:?murmur binary B}
out=${3:?output folder}
rounds=${4:-2}
mkdir -p "$out"
sweep() {
  local m=$1 tag=$2
  "$m" bench --preset cis565 --n 1M --pipeline rows,verlet,coherent --block-size 128 --warmup 300 --steps 100 \
    --repeats 3 --csv "$out/cis565-$tag.csv" >/dev/null
  "$m" bench --scenario dense --n 10M --pipeline rows,verlet,coherent --warmup 300 --steps 50 --repeats 3 \
    --csv "$out/dense10m-$tag.csv" >/dev/null
  "$m" bench --force gravity --scenario plummer --n 256k --pipeline naive --warmup 10 --steps 20 --repeats 3 \
    --csv "$out/allpairs-$tag.csv" >/dev/null
  "$m" bench --force gravity --scenario plummer --n 1M --pipeline tree --warmup 50 --steps 30 --repeats 3 \
    --csv "$out/tree-$tag.csv" >/dev/null
}
for r in $(seq 1 "$rounds"); do
  echo "round $r: A"
  sweep "$a" "a-$r"
  echo "round $r: B"
  sweep "$b" "b-$r"
done
python3 "$(dirname "$0")/builds_table.py" "$out"
