#!/usr/bin/env bash
# The command line over several ranks: rank 0 writes --out with every body once, in id order,
# equal to one rank's; bad input ends every rank with status 2 and one "murmur:" line; a rank
# killed mid-run ends the job with one line from rank 0 naming it.
#   cli_ranks.sh MPIEXEC MURMUR RANKS WORKDIR
set -uo pipefail
mpiexec=$1 murmur=$2 ranks=$3 dir=$4
mkdir -p "$dir"
fail=0
mpi() { OMP_NUM_THREADS=1 timeout 300 "$mpiexec" --oversubscribe --allow-run-as-root -np "$ranks" "$murmur" "$@"; }

# Every boids pipeline the ranks run, and the run without --pipeline (rows, as on one rank).
for pipeline in coherent rows default; do
  args=(--headless --no-render --engine cpu --scenario dense --n 3000 --steps 25)
  [ "$pipeline" = default ] || args+=(--pipeline "$pipeline")
  "$murmur" "${args[@]}" --out "$dir/one.txt" >"$dir/one.log" 2>&1 || { echo "$pipeline: one rank failed"; fail=1; }
  mpi "${args[@]}" --out "$dir/many.txt" >"$dir/many.log" 2>&1 ||
    { echo "$pipeline: $ranks ranks failed"; cat "$dir/many.log"; fail=1; }
  cmp "$dir/one.txt" "$dir/many.txt" || { echo "$pipeline: --out differs between 1 and $ranks ranks"; fail=1; }
  [ "$(grep -c '^engine=' "$dir/many.log")" = 1 ] || { echo "$pipeline: expected one summary line (rank 0)"; fail=1; }
  want=$pipeline
  [ "$pipeline" = default ] && want=rows
  for log in one many; do
    grep -q "^engine=cpu force=boids pipeline=$want " "$dir/$log.log" ||
      { echo "$pipeline: the $log-rank run did not run $want"; cat "$dir/$log.log"; fail=1; }
  done
done

# --checksum off over ranks: the same run without the final gather; its summary says so.
mpi "${args[@]}" --checksum off >"$dir/nosum.log" 2>&1 || { echo "--checksum off: $ranks ranks failed"; cat "$dir/nosum.log"; fail=1; }
grep -q "^engine=cpu force=boids pipeline=rows .* n=3000 steps=25 .*checksum=off" "$dir/nosum.log" ||
  { echo "--checksum off: no summary with checksum=off"; cat "$dir/nosum.log"; fail=1; }

# Observables and trajectories over ranks (docs/observables.md): every sample gathers on rank 0.
# The flock counts equal one rank's exactly; the trajectory's last frame, read back through
# file:, is one rank's --out to the bit.
col() {  # col FILE NAME: the named column of a CSV
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next } { print $c }' "$1"
}
obs=(--observe-every 5 --observables-flocks)
"$murmur" "${args[@]}" "${obs[@]}" --observables "$dir/one.csv" >/dev/null 2>&1 || { echo "one rank observables failed"; fail=1; }
traj=()  # a build without HDF5 has no trajectories
if "$murmur" --headless --no-render --engine cpu --n 10 --steps 0 --trajectory "$dir/probe.h5" >/dev/null 2>&1; then
  traj=(--trajectory "$dir/many.h5" --trajectory-every 25)
fi
mpi "${args[@]}" "${obs[@]}" --observables "$dir/many.csv" "${traj[@]}" \
  >"$dir/many_obs.log" 2>&1 || { echo "$ranks ranks observables failed"; cat "$dir/many_obs.log"; fail=1; }
[ "$(wc -l <"$dir/many.csv")" = 7 ] || { echo "expected 6 samples over $ranks ranks"; fail=1; }
for c in flocks largest_flock_share neighbours_cohesion; do
  [ "$(col "$dir/one.csv" $c)" = "$(col "$dir/many.csv" $c)" ] || { echo "$c differs between 1 and $ranks ranks"; fail=1; }
done
if ((${#traj[@]})); then
  "$murmur" --headless --no-render --engine cpu --scenario "file:$dir/many.h5@last" --steps 0 --out "$dir/from_h5.txt" \
    >/dev/null 2>&1 || { echo "restart from the trajectory failed"; fail=1; }
  cmp "$dir/one.txt" "$dir/from_h5.txt" || { echo "the trajectory's last frame differs from one rank's --out"; fail=1; }
fi

# Every frame over ranks: splats composited from every rank's own bodies (a per-pixel minimum)
# are one rank's frames, pixel for pixel (compared as PNG files from the same encoder).
if "$murmur" --headless --engine cpu --n 10 --steps 1 --width 32 --height 32 --screenshot "$dir/probe.png" \
  >/dev/null 2>&1; then
  frames=(--headless --engine cpu --scenario dense --n 3000 --steps 6 --draw splat --width 160 --height 120)
  "$murmur" "${frames[@]}" --record "$dir/one_%02d.png" >"$dir/one_frames.log" 2>&1 ||
    { echo "one rank frames failed"; cat "$dir/one_frames.log"; fail=1; }
  mpi "${frames[@]}" --record "$dir/many_%02d.png" --screenshot "$dir/many_last.png" >"$dir/many_frames.log" 2>&1 ||
    { echo "$ranks ranks frames failed"; cat "$dir/many_frames.log"; fail=1; }
  for k in 00 01 02 03 04 05; do
    cmp -s "$dir/one_$k.png" "$dir/many_$k.png" || { echo "frame $k differs between 1 and $ranks ranks"; fail=1; }
  done
  cmp -s "$dir/one_05.png" "$dir/many_last.png" || { echo "the screenshot over $ranks ranks is not the last frame"; fail=1; }
  grep -q "frames_written=7" "$dir/many_frames.log" || { echo "expected 6 frames and a screenshot written"; cat "$dir/many_frames.log"; fail=1; }
fi

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
expect_usage "points recorded over ranks" --headless --engine cpu --n 1000 --steps 2 --draw points \
  --record "$dir/points_%02d.png"
expect_usage "too many ranks for the grid" --headless --no-render --engine cpu --half-size 5 --n 100
# Over several ranks gravity runs all pairs: a grid option would be ignored.
expect_usage "grid option over ranks" --headless --no-render --engine cpu --force gravity --scenario plummer \
  --n 1000 --grid-dim 8
# Past one engine's 2^30 bodies: boids made in shares over ranks pass the count (and the grid,
# at 32 neighbours), and are then refused for the memory this host's shares need while they are
# exchanged, before any body is made; gravity gathers every position on every rank and keeps
# one engine's bound.
past=(--headless --no-render --engine cpu --steps 0 --n 4000M)
expect_usage "4000M boids in shares" "${past[@]}" --scenario dense --neighbours 32
grep -q "^murmur: --n 4000000000: the shares of the $ranks ranks on this host need" "$dir/bad.log" ||
  { echo "4000M boids in shares: not refused for this host's memory"; cat "$dir/bad.log"; fail=1; }
expect_usage "4000M gravity bodies" "${past[@]}" --scenario uniform --force gravity
grep -q "^murmur: --n 4000000000 is out of range: allowed is 1 to 1073741824 " "$dir/bad.log" ||
  { echo "4000M gravity bodies: not refused for the count"; cat "$dir/bad.log"; fail=1; }
# A rank killed mid-run: the job ends within seconds, with a non-zero status and one line from
# rank 0 naming the rank (mpirun --quiet keeps mpirun's own banners out).
mark=cli-ranks-$$
rank_pid() {  # rank_pid RANK: the process id of that rank of the marked job, once it runs
  local d env
  for _ in $(seq 300); do
    for d in /proc/[0-9]*; do
      env=$(tr '\0' '\n' <"$d/environ" 2>/dev/null) || continue
      if grep -qx "MURMUR_CLI_MARK=$mark" <<<"$env" && grep -qx "OMPI_COMM_WORLD_RANK=$1" <<<"$env"; then
        echo "${d#/proc/}"
        return 0
      fi
    done
    sleep 0.2
  done
  return 1
}
MURMUR_CLI_MARK=$mark OMP_NUM_THREADS=1 timeout 120 "$mpiexec" --quiet -x MURMUR_CLI_MARK --oversubscribe \
  --allow-run-as-root -np "$ranks" "$murmur" --headless --no-render --engine cpu --n 20000 --steps 1000000 \
  >"$dir/killed.out" 2>"$dir/killed.log" &
launcher=$!
if victim=$(rank_pid 1); then
  sleep 2  # into the steps
  kill -9 "$victim"
  wait "$launcher"
  rc=$?
  lines=$(grep -c '^murmur:' "$dir/killed.log")
  if [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$lines" != 1 ] ||
     ! grep -q '^murmur: rank 1 ended unexpectedly' "$dir/killed.log"; then
    echo "killed rank 1: status $rc (want non-zero, no timeout), $lines murmur: lines (want 1, naming rank 1)"
    cat "$dir/killed.log"
    fail=1
  fi
else
  echo "killed rank: rank 1 never started"
  kill "$launcher" 2>/dev/null
  fail=1
fi
exit $fail
