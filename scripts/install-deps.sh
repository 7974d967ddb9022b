#!/usr/bin/env bash
# Installs the Debian packages Murmuration builds with, skipping the ones already present.
# The CUDA toolkit is not installed here: with it the GPU engine is built, without it the CPU engine.
# python3-venv gives scripts/test.sh the virtual environment it installs the Python module into.
# xvfb runs the window viewer's smoke test on machines without a display. Open MPI runs one
# simulation over several ranks (mpirun) and the multi-rank tests; NCCL comes with the CUDA toolkit.
# libhdf5-dev writes and reads trajectories (--trajectory); without it the build has none.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config libomp-dev libglfw3-dev libglm-dev libimgui-dev libcli11-dev
      libstb-dev nlohmann-json3-dev libgtest-dev libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri
      python3 python3-venv python3-matplotlib xvfb xauth libopenmpi-dev openmpi-bin libhdf5-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
