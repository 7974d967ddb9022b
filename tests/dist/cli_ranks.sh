#!/usr/bin/env bash
# The command line over several ranks: rank 0 writes --out with every body once, in id order,
# equal to one rank's; bad input ends every rank with status 2 and one "murmur:" line.
#   cli_ranks.sh MPIEXEC MURMUR RANKS WORKDIR
set -uo pipefail
mpiexec=$1 murmur=$2 ranks=$3 dir=$4
mkdir -p "$dir"
fail=0
mpi() { OMP_NUM_THREADS=1 timeout 300 "$mpiexec" --oversubscribe --allow-run-as-root -np "$ranks" "$murmur" "$@"; }

args=(--headless --no-render --engine cpu --scenario dense --n 3000 --steps 25 --pipeline coherent)
"$murmur" "${args[@]}" --out "$dir/one.txt" >/dev/null 2>&1 || { echo "one rank failed"; fail=1; }
mpi "${args[@]}" --out "$dir/many.txt" >"$dir/many.log" 2>&1 || { echo "$ranks ranks failed"; cat "$dir/many.log"; fail=1; }
cmp "$dir/one.txt" "$dir/many.txt" || { echo "--out differs between 1 and $ranks ranks"; fail=1; }
[ "$(grep -c '^engine=' "$dir/many.log")" = 1 ] || { echo "expected one summary line (rank 0)"; fail=1; }

expect_usage() {  # expect_usage WHAT ARGS...: status 2 and exactly one murmur: line
  local what=$1
  shift
  mpi "$@" >"$dir/bad.log" 2>&1
  local rc=$?
  local lines
  lines=$(grep -c '^murmur:' "$dir/bad.log")
  if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
    echo "$what: status $rc (want 2), $lines murmur: lines (want 1)"
    cat "$dir/bad.log"
    fail=1
  fi
}
expect_usage "scattered boids" --headless --no-render --engine cpu --pipeline scattered --n 1000
expect_usage "bench over ranks" bench --engine cpu --n 1000
expect_usage "too many ranks for the grid" --headless --no-render --engine cpu --half-size 5 --n 100
exit $fail
