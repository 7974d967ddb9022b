// Device-side helpers shared by the kernel files: 16-byte loads and stores of core::Vec4 and warp
// reductions. Included only by .cu files.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "core/bodies.h"
#include "core/grid.h"
#include "core/hd.h"

namespace murmur::cuda {

constexpr unsigned kFullWarpMask = 0xffffffffu;
constexpr int kWarpSize = 32;
// Block sizes are validated to at most 1024 threads, so a block has at most 32 warps.
constexpr int kMaxWarpsPerBlock = 32;

__device__ __forceinline__ core::Vec4 toVec4(const float4& f) { return core::Vec4{f.x, f.y, f.z, f.w}; }
__device__ __forceinline__ float4 toFloat4(const core::Vec4& v) { return make_float4(v.x, v.y, v.z, v.w); }

// core::Vec4 is 16-byte aligned and layout-compatible with float4, so one 128-bit access moves it.
// ldg: read-only path, only for buffers that the kernel does not write.
__device__ __forceinline__ core::Vec4 ldg4(const core::Vec4* p) {
  return toVec4(__ldg(reinterpret_cast<const float4*>(p)));
}
__device__ __forceinline__ core::Vec4 ld4(const core::Vec4* p) {
  return toVec4(*reinterpret_cast<const float4*>(p));
}
__device__ __forceinline__ void st4(core::Vec4* p, const core::Vec4& v) {
  *reinterpret_cast<float4*>(p) = toFloat4(v);
}

// One attribute value from a buffer the kernel does not write: 128 bits for a Vec4, else __ldg.
__device__ __forceinline__ core::Vec4 loadValue(const core::Vec4* p) { return ldg4(p); }
template <typename T>
__device__ __forceinline__ T loadValue(const T* p) {
  return __ldg(p);
}
__device__ __forceinline__ void storeValue(core::Vec4* p, const core::Vec4& v) { st4(p, v); }
template <typename T>
__device__ __forceinline__ void storeValue(T* p, const T& v) {
  *p = v;
}

// Body k of `out` becomes body j of `in`, every attribute of core/bodies.h (a reorder's gather).
// An attribute whose input or output pointer is null is skipped (a copy of some arrays only).
__device__ __forceinline__ void moveBody(const core::BodyPointers& out, uint32_t k, const core::ConstBodyPointers& in,
                                         uint32_t j) {
  out.forEachWith(in, [&](const char*, auto* o, const auto* i) {
    if (o && i) storeValue(o + k, loadValue(i + j));
  });
}

// A body of the plane (dims 2: z = 0 and vz = 0, as the engine's input checks hold it) packed for
// the rows force kernels' candidates (RowsStepOut::plane): (x, y, vx, vy) of body j of `in`, one
// load where a candidate took two; plane[k] of a reorder's output order. With `headings` (a rule
// whose sums read a neighbour's unit velocity only, Rule::kHeadingRecords) the record holds the
// unit velocity (core::unitOrZero) instead, formed once a step rather than once per pair.
__device__ __forceinline__ void storePlaneRecord(core::Vec4* plane, uint32_t k, const core::ConstBodyPointers& in,
                                                 uint32_t j, bool headings) {
  const core::Vec4 p = ldg4(in.pos + j), v = ldg4(in.vel + j);
  const core::Vec3 u = headings ? core::unitOrZero(core::xyz(v)) : core::xyz(v);
  st4(plane + k, core::Vec4{p.x, p.y, u.x, u.y});
}

__device__ __forceinline__ uint32_t globalThreadIndex() { return blockIdx.x * blockDim.x + threadIdx.x; }

// The first index in [0, n) of the ascending array a whose value is at least `value` (n if none),
// by one thread.
__device__ __forceinline__ uint32_t lowerBound(const uint32_t* __restrict__ a, uint32_t n, uint32_t value) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Per-axis minimum and maximum over the warp, in every lane (all 32 lanes must call it).
__device__ __forceinline__ void warpMinMax(float (&lo)[3], float (&hi)[3]) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      lo[a] = fminf(lo[a], __shfl_xor_sync(kFullWarpMask, lo[a], off));
      hi[a] = fmaxf(hi[a], __shfl_xor_sync(kFullWarpMask, hi[a], off));
    }
  }
}

template <typename T>
__device__ __forceinline__ T warpSum(T v) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) v += __shfl_xor_sync(kFullWarpMask, v, off);
  return v;
}

// Sum over the block; the result is valid in thread 0. Every thread of the block must call it;
// the closing barrier lets a kernel call it again (the partials array is shared between calls).
template <typename T>
__device__ __forceinline__ T blockSum(T v) {
  __shared__ T partial[kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  v = warpSum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T total = T(0);
  if (warp == 0) {
    total = lane < static_cast<int>(blockDim.x / kWarpSize) ? partial[lane] : T(0);
    total = warpSum(total);
  }
  __syncthreads();
  return total;
}

// The neighbour statistics kernels' totals: candidates into counts[0] and neighbours into
// counts[1], one atomic each per block. Every thread of the block must call it.
__device__ __forceinline__ void addBlockCounts(unsigned long long candidates, unsigned long long neighbours,
                                               unsigned long long* counts) {
  candidates = blockSum(candidates);
  neighbours = blockSum(neighbours);
  if (threadIdx.x == 0) {
    atomicAdd(counts, candidates);
    atomicAdd(counts + 1, neighbours);
  }
}

// Adds K per-thread values over the block and then atomically into out[0..K) (thread 0, one
// double atomic per value and block). Every thread of the block must call it, once per kernel.
template <int K>
__device__ __forceinline__ void blockAtomicAdd(double (&v)[K], double* out) {
  __shared__ double partial[K][kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int k = 0; k < K; ++k)
    for (int o = kWarpSize / 2; o > 0; o /= 2) v[k] += __shfl_down_sync(kFullWarpMask, v[k], o);
  if (lane == 0)
    for (int k = 0; k < K; ++k) partial[k][warp] = v[k];
  __syncthreads();
  // Lane k of the first warp adds value k over the warps: K short sums side by side rather than
  // one thread adding them all (the block stays resident until its last thread is done).
  static_assert(K <= kWarpSize, "one lane per value");
  if (threadIdx.x < K) {
    const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
    double s = 0;
    for (int w = 0; w < warps; ++w) s += partial[threadIdx.x][w];
    atomicAdd(out + threadIdx.x, s);
  }
}

}  // namespace murmur::cuda
