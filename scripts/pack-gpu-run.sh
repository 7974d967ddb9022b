#!/usr/bin/env bash
# Packs a build for a GPU machine that has the CUDA driver and toolkit but not this machine's
# libraries: the murmur binary, the GPU test binaries, an optional second murmur to compare
# against (bench/run-builds.sh), and the shared libraries they need that such a machine may lack
# (HDF5, Open MPI, OpenMP; not libc, libstdc++, CUDA or GL), as one xz tarball.
#   scripts/pack-gpu-run.sh BUILD_DIR OUT.tar.xz [OTHER_MURMUR]
# There: tar -C DIR -xJf OUT.tar.xz; export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:DIR/lib
set -euo pipefail
build=${1:?build folder}
out=${2:?output .tar.xz}
other=${3:-}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
bins=("$build/murmur")
for t in cuda dist; do
  [ -x "$build/tests/$t/murmur_tests_$t" ] && bins+=("$build/tests/$t/murmur_tests_$t")
done
for b in "${bins[@]}"; do cp "$b" "$stage/"; done
[ -n "$other" ] && cp "$other" "$stage/murmur-other"
for b in "$stage"/murmur*; do ldd "$b" | awk '/=>/ {print $3}'; done | sort -u |
  grep -v -E 'lib(c|m|dl|rt|pthread|stdc\+\+|gcc_s|cuda|nccl|EGL|GL|GLX|GLdispatch|OpenGL|glfw|X|xcb|stb|bsd|md)[.-]|ld-linux' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
strip "$stage"/murmur* 2>/dev/null || true
tar -C "$stage" -cf - . | xz -T2 -6 >"$out"
echo "packed $(du -h "$out" | cut -f1) into $out"
