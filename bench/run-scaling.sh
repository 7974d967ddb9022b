#!/usr/bin/env bash
# Strong and weak scaling over the GPUs of one host: each configuration on one GPU (the plain
# CUDA engine) and over K ranks (mpirun, one GPU per rank, NCCL), each run printing its summary
# lines into one log that bench/scaling_csv.py turns into the committed CSV.
#
#   bench/run-scaling.sh [MURMUR] [LOG] [K] [PART] [PIPELINES]
#
# PART: all (default: gravity and boids), gravity, boids, tree, large, frames or billion, to run
# parts separately (their logs concatenate).
# Tree: Plummer sphere, strong at 10M and 100M, weak at 25M per GPU (every rank builds the whole
# tree from every position, walks its share).
# Large: boids rows at constant density past 100M: strong at 400M, weak at 250M per GPU (250M on
# one GPU, K x 250M on K: a billion on four), 200 untimed steps then 50, --checksum off (the
# final gather of every body to one host would take minutes; the strong runs at 100M check it).
# Frames: boids rows at 100M drawn every step at 1920x1080 (--draw splat; over ranks each GPU splats
# its own boids and NCCL composites the frame); render_ms is rank 0's time per frame.
# Billion: one billion boids (dense, rows) over the K ranks only, 200 untimed steps, then 50 steps
# each drawn at 1920x1080 (composited across the GPUs) and the last frame saved beside the log (LOG
# without .log, then -billion.png). --checksum off: no final gather of 32 GB to one host.
# SCALING_TIMEOUT: seconds a run may take (default 300; a billion bodies take minutes to make).
# Gravity: all pairs (Plummer sphere, leapfrog), strong at 1M and 4M, weak at 1M per GPU.
# Boids: each of PIPELINES (default "rows coherent") at constant density (the dense scenario: ~8
# neighbours per boid), strong at 100M, weak at 50M per GPU (SCALING_WEAK=0 leaves weak out),
# timed after 300 untimed steps so the flock has settled.
set -uo pipefail
bin=${1:-build/murmur}
log=${2:-scaling.log}
k=${3:-2}
part=${4:-all}
pipelines=${5:-rows coherent}
case $part in all | gravity | boids | tree | large | frames | billion) ;;
  *) echo "PART $part: one of all, gravity, boids, tree, large, frames, billion" >&2; exit 2 ;;
esac
limit=${SCALING_TIMEOUT:-300}
: >"$log"
# --quiet: mpirun's own banners stay out of the log; a failing rank's cause is one murmur: line.
mpi=(mpirun --quiet --allow-run-as-root -np "$k" -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH)

run() {  # run NAME RANKS ARGS...
  local name=$1 ranks=$2
  shift 2
  echo "### config=$name ranks=$ranks args=$*" >>"$log"
  local t0=$SECONDS
  if [ "$ranks" = 1 ]; then
    timeout "$limit" "$bin" --headless --profile "$@" >>"$log" 2>&1
  else
    timeout "$limit" "${mpi[@]}" "$bin" --headless --profile "$@" >>"$log" 2>&1
  fi
  echo "### rc=$? wall_s=$((SECONDS - t0))" >>"$log"
}

if [ "$part" = all ] || [ "$part" = gravity ]; then
  grav=(--no-render --scenario plummer --force gravity --pipeline naive --block-size 256)
  run gravity-strong 1 "${grav[@]}" --n 1M --warmup 1 --steps 5
  run gravity-strong "$k" "${grav[@]}" --n 1M --warmup 1 --steps 5
  run gravity-weak "$k" "${grav[@]}" --n $((k * 1000000)) --warmup 1 --steps 3
  run gravity-strong 1 "${grav[@]}" --n 4M --warmup 1 --steps 2
  run gravity-strong "$k" "${grav[@]}" --n 4M --warmup 1 --steps 2
fi

# The same pipeline on one GPU and on K: the ratio compares the decomposition, not two pipelines.
if [ "$part" = all ] || [ "$part" = boids ]; then
  for pipeline in $pipelines; do
    boids=(--no-render --scenario dense --force boids --pipeline "$pipeline")
    run boids-strong 1 "${boids[@]}" --n 100M --warmup 300 --steps 100
    run boids-strong "$k" "${boids[@]}" --n 100M --warmup 300 --steps 100
    if [ "${SCALING_WEAK:-1}" != 0 ]; then
      run boids-weak 1 "${boids[@]}" --n 50M --warmup 300 --steps 100
      # On two ranks the strong run at 100M is the weak one too.
      [ "$k" -gt 2 ] && run boids-weak "$k" "${boids[@]}" --n $((k * 50))M --warmup 300 --steps 100
    fi
  done
fi
if [ "$part" = tree ]; then
  tree=(--no-render --scenario plummer --force gravity --pipeline tree)
  for n in 10M 100M; do
    run tree-strong 1 "${tree[@]}" --n $n --warmup 1 --steps 3
    run tree-strong "$k" "${tree[@]}" --n $n --warmup 1 --steps 3
  done
  run tree-weak 1 "${tree[@]}" --n 25M --warmup 1 --steps 3
  # On four ranks the strong run at 100M is the weak one too.
  [ "$k" != 4 ] && run tree-weak "$k" "${tree[@]}" --n $((k * 25))M --warmup 1 --steps 3
fi
if [ "$part" = large ]; then
  large=(--no-render --scenario dense --force boids --pipeline rows --warmup 200 --steps 50 --checksum off)
  run boids-strong 1 "${large[@]}" --n 400M
  run boids-strong "$k" "${large[@]}" --n 400M
  run boids-weak 1 "${large[@]}" --n 250M
  run boids-weak "$k" "${large[@]}" --n $((k * 250))M
fi

if [ "$part" = frames ]; then
  frames=(--scenario dense --force boids --pipeline rows --draw splat --width 1920 --height 1080 --n 100M)
  run frames-strong 1 "${frames[@]}" --warmup 300 --steps 60
  run frames-strong "$k" "${frames[@]}" --warmup 300 --steps 60
fi
if [ "$part" = billion ]; then
  run billion-strong "$k" --scenario dense --force boids --pipeline rows --n 1000M --warmup 200 --frames 50 \
    --checksum off --draw splat --width 1920 --height 1080 --screenshot "${log%.log}-billion.png"
fi
grep -E "^(###|engine=|ranks=|stages_ms_mean|startup_s|device:|murmur:)" "$log" | tail -40
