// Gravity kernels. Unlike the boids and grid-build files these keep FMA contraction: forces are
// continuous in the positions, so contraction only moves results within rounding, and the pair
// loop is the hot path. Cell membership is decided in grid_build.cu, never here.
#include "cuda/gravity_kernels.h"

#include "core/grid.h"
#include "core/physics.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::GridSpec;
using core::Int3;
using core::Vec3;
using core::Vec4;

namespace {

// All pairs, one thread per body; each block stages a tile of positions (dynamic shared memory,
// block float4) and every thread consumes it. The last tile is padded with zero-mass bodies,
// which add exactly zero, so every tile runs the full (unrolled, for BlockT > 0) inner loop.
// The self pair also adds exactly zero (r = 0, eps2 > 0), so it needs no test.
template <int BlockT>
__global__ void __launch_bounds__(BlockT > 0 ? BlockT : 1024)
    gravityNaiveKernel(const Vec4* __restrict__ pos, uint32_t n, float eps2, float G, Vec4* __restrict__ acc) {
  extern __shared__ float4 tile[];
  const uint32_t block = BlockT > 0 ? static_cast<uint32_t>(BlockT) : blockDim.x;
  const uint32_t i = blockIdx.x * block + threadIdx.x;
  const Vec4 pi = i < n ? ldg4(pos + i) : Vec4{0, 0, 0, 0};
  Vec3 a{0, 0, 0};
  for (uint32_t base = 0; base < n; base += block) {
    const uint32_t j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? __ldg(reinterpret_cast<const float4*>(pos + j)) : make_float4(0, 0, 0, 0);
    __syncthreads();
    if constexpr (BlockT > 0) {
#pragma unroll 8
      for (int k = 0; k < BlockT; ++k) a += core::gravityPair(pi, toVec4(tile[k]), eps2);
    } else {
      for (uint32_t k = 0; k < block; ++k) a += core::gravityPair(pi, toVec4(tile[k]), eps2);
    }
    __syncthreads();  // the next tile overwrites what slower warps may still be reading
  }
  if (i < n) st4(acc + i, core::make4(a * G, 0.0f));
}

// Cell coordinates of a far-field tile entry, packed 10 bits per axis (gridDim <= 128).
static_assert(core::kMaxGravityGridDim <= 1024, "cell coordinates are packed in 10 bits per axis");
__device__ __forceinline__ int packCell(const Int3& c) { return c.x | (c.y << 10) | (c.z << 20); }
__device__ __forceinline__ Int3 unpackCell(int v) { return Int3{v & 1023, (v >> 10) & 1023, (v >> 20) & 1023}; }

// Particle-cell gravity, one thread per sorted slot. Near field: exact pairs with every body in
// the own cell and its neighbours (self included: it adds zero). Far field: the monopoles of all
// cells, staged through shared memory (block float4 + block int of packed coordinates) and skipped
// when empty or near. Threads past n still take part in staging and barriers.
template <bool CoherentT>
__global__ void __launch_bounds__(1024)
    gravityGridKernel(const Vec4* __restrict__ pos, uint32_t n, DeviceGrid dg, const Vec4* __restrict__ monopole,
                      float eps2, float G, Vec4* __restrict__ acc) {
  extern __shared__ float4 tile[];
  float4* tileMono = tile;
  int* tileCell = reinterpret_cast<int*>(tile + blockDim.x);
  const GridSpec g = *dg.grid;
  const uint32_t t = globalThreadIndex();
  const bool active = t < n;
  uint32_t self = 0;
  Vec4 pi{0, 0, 0, 0};
  Int3 own{0, 0, 0};
  Vec3 a{0, 0, 0};
  if (active) {
    self = CoherentT ? t : __ldg(dg.sortedIndex + t);
    pi = ldg4(pos + self);
    own = core::cellFromKey(g, __ldg(dg.sortedKeys + t));
    core::forEachInCells<CoherentT>(g, core::nearCells(g, own), dg.cellStart, dg.cellEnd, dg.sortedIndex,
                              [&](uint32_t j) { a += core::gravityPair(pi, ldg4(pos + j), eps2); });
  }
  for (uint32_t base = 0; base < dg.numCells; base += blockDim.x) {
    const uint32_t k = base + threadIdx.x;
    if (k < dg.numCells) {
      tileMono[threadIdx.x] = __ldg(reinterpret_cast<const float4*>(monopole + k));
      tileCell[threadIdx.x] = packCell(core::cellFromKey(g, k));
    }
    __syncthreads();
    if (active) {
      const uint32_t count = min(blockDim.x, dg.numCells - base);
      for (uint32_t k = 0; k < count; ++k) {
        const float4 m = tileMono[k];
        if (m.w > 0.0f && !core::isNearCell(own, unpackCell(tileCell[k])))
          a += core::gravityPair(pi, toVec4(m), eps2);
      }
    }
    __syncthreads();
  }
  if (active) st4(acc + self, core::make4(a * G, 0.0f));
}

__global__ void __launch_bounds__(1024) leapfrogKickDriftKernel(Vec4* __restrict__ pos, Vec4* __restrict__ vel,
                                                                const Vec4* __restrict__ acc, uint32_t n, float dt) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  Vec4 p = ld4(pos + i), v = ld4(vel + i);
  core::leapfrogKickDrift(p, v, ldg4(acc + i), dt);
  st4(pos + i, p);
  st4(vel + i, v);
}

__global__ void __launch_bounds__(1024)
    leapfrogKickKernel(Vec4* __restrict__ vel, const Vec4* __restrict__ acc, uint32_t n, float dt) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  Vec4 v = ld4(vel + i);
  core::leapfrogKick(v, ldg4(acc + i), dt);
  st4(vel + i, v);
}

__global__ void __launch_bounds__(1024) dampedEulerKernel(Vec4* __restrict__ pos, Vec4* __restrict__ vel,
                                                          const Vec4* __restrict__ acc, uint32_t n, float dt,
                                                          float damping) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  Vec4 p = ld4(pos + i), v = ld4(vel + i);
  core::dampedEuler(p, v, ldg4(acc + i), dt, damping);
  st4(pos + i, p);
  st4(vel + i, v);
}

}  // namespace

void launchGravityNaive(const Vec4* d_pos, uint32_t n, float eps2, float G, Vec4* d_acc, const LaunchConfig& lc) {
  // One tile of positions per block.
  const size_t smem = static_cast<size_t>(lc.block) * sizeof(float4);
  withStaticBlockSize(lc.block, [&](auto blockT) {
    gravityNaiveKernel<decltype(blockT)::value><<<lc.blocksFor(n), lc.block, smem, lc.stream>>>(d_pos, n, eps2, G,
                                                                                                d_acc);
  });
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchGravityGrid(bool coherent, const Vec4* d_pos, uint32_t n, const DeviceGrid& grid, const Vec4* d_monopole,
                       float eps2, float G, Vec4* d_acc, const LaunchConfig& lc) {
  const size_t smem = static_cast<size_t>(lc.block) * (sizeof(float4) + sizeof(int));
  if (coherent)
    gravityGridKernel<true><<<lc.blocksFor(n), lc.block, smem, lc.stream>>>(d_pos, n, grid, d_monopole, eps2, G,
                                                                             d_acc);
  else
    gravityGridKernel<false><<<lc.blocksFor(n), lc.block, smem, lc.stream>>>(d_pos, n, grid, d_monopole, eps2, G,
                                                                              d_acc);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchLeapfrogKickDrift(Vec4* d_pos, Vec4* d_vel, const Vec4* d_acc, uint32_t n, float dt,
                             const LaunchConfig& lc) {
  leapfrogKickDriftKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, d_acc, n, dt);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchLeapfrogKick(Vec4* d_vel, const Vec4* d_acc, uint32_t n, float dt, const LaunchConfig& lc) {
  leapfrogKickKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_vel, d_acc, n, dt);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchDampedEuler(Vec4* d_pos, Vec4* d_vel, const Vec4* d_acc, uint32_t n, float dt, float damping,
                       const LaunchConfig& lc) {
  dampedEulerKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, d_acc, n, dt, damping);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
