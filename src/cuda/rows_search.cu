// The searches over the rows grid outside the force step (rows_kernels.h): the sampled step's
// nearest other boid of the boids whose nearest candidate lay beyond the search radius
// (launchRowsNearestBeyond), and the neighbour statistics (launchBoidsStatsRows). Compiled without
// FMA contraction (see CMakeLists.txt), so that d^2 decides exactly as on the CPU.
#include <algorithm>
#include <cmath>

#include "core/physics.h"
#include "core/row_search.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec4;

namespace {

// The minimum over the block, in every thread (every thread of the block must call it).
__device__ __forceinline__ float blockMinAll(float v) {
  __shared__ float partial[kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) v = fminf(v, __shfl_xor_sync(kFullWarpMask, v, off));
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x / kWarpSize);
  v = partial[0];
  for (int w = 1; w < warps; ++w) v = fminf(v, partial[w]);
  __syncthreads();  // partial may be written again by the next call
  return v;
}

// See launchRowsNearestBeyond: one block per listed boid (a loop over the list by blocks). The
// nearest other boid of boid i, whose nearest candidate lay at squared distance bound (infinity
// without one), by the whole block (every thread calls it and gets the squared distance). The
// block's threads take the rows of each search: a lone boid far from all others
// searches hundreds of rows, and a row costs two dependent loads before its first candidate, so
// walking the rows one after another (one thread, or one warp sharing each row's candidates)
// leaves the block waiting on that one boid. The radius is the bound (the nearest candidate, which
// one search then settles) or, without a candidate, 1.5 search radii, growing by 1.5 until a boid
// lies closer than the radius: most lone boids lie just beyond the search radius of their nearest
// boid, and each search is mostly latency, so small first searches win (on an H100, 1M boids of
// the default world, these were at least as fast as starting at 2 and growing threefold, and
// faster than a bound from the boids two slots either side, whose single search was often far
// too wide; measurements: docs/performance.md#the-sampled-rows-step). A boid the last sample
// listed too starts without a candidate from a little
// beyond the distance that sample found for it (`hint`, 0 without one): the boids stay where they
// were, so one search instead of a run of growing ones settles the most isolated boids. Each
// search is exact for its radius, whatever it starts from; from max(dims) + 2 cells on, every row
// and cell is reached.
__device__ __forceinline__ float nearestBeyond(const Vec4* __restrict__ pos, const GridSpec& g, const uint32_t* __restrict__ cellFirst,
                               float searchRadius, uint32_t i, float bound, float hint) {
  const float whole = float(max(g.dims.y, g.dims.z) + 2) * g.cellWidth;
  const core::Vec3 ci = core::xyz(ldg4(pos + i));
  float best = bound;
  float r = isinf(bound) ? fmaxf(fmaxf(1.5f * searchRadius, g.cellWidth), 1.05f * hint) : sqrtf(bound) * 1.0001f;
  for (;; r *= 1.5f) {
    const core::RowSphere rs = core::rowSphere(g, ci, r);
    const int rows = rs.nz * rs.ny;
    for (int k = static_cast<int>(threadIdx.x); k < rows; k += static_cast<int>(blockDim.x)) {
      uint32_t first = 0, last = 0;
      if (!rs.rowAt(g, rs.zlo + k / rs.ny, rs.ylo + k % rs.ny, first, last)) continue;
      const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
      // Four positions loaded before any is used: a row of a wide search holds a dozen or more
      // boids, and one at a time each load's latency followed the last.
      uint32_t j = s;
      for (; j + 3 < e; j += 4) {
        Vec4 p[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) p[u] = ldg4(pos + j + u);
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (j + u != i) best = fminf(best, core::distance2(core::xyz(p[u]) - ci));
      }
      for (; j < e; ++j)
        if (j != i) best = fminf(best, core::distance2(core::xyz(ldg4(pos + j)) - ci));
    }
    best = blockMinAll(best);
    if (best < r * r || r >= whole) return best;
  }
}

constexpr int kBeyondBlock = 128;

// The listed boids' nearest distances, then the sample's end: the last block to finish copies the
// totals to the host and zeroes the sums, the list's count and its own count of finished blocks
// for the next sample (the pattern of CUDA's threadFenceReduction sample), so that a sample
// queues no memset and no copy. Every block runs to the end, listed boids or not.
__global__ void __launch_bounds__(1024)
    nearestBeyondKernel(const Vec4* __restrict__ pos, const uint32_t* __restrict__ id, const GridSpec* __restrict__ grid,
                        const uint32_t* __restrict__ cellFirst, float searchRadius, BoidSampleSums sample) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // the force kernel, complete (letTheSampleStart)
#endif
  const uint32_t count = *sample.beyondCount;
  const GridSpec g = *grid;
  double settled[1] = {0};
  for (uint32_t t = blockIdx.x; t < count; t += gridDim.x) {  // the same t in every thread of the block
    const uint32_t i = sample.beyond[t], who = __ldg(id + i);
    const uint2 h = sample.hint[who];
    const float hint = h.y + 1u == sample.stamp ? __uint_as_float(h.x) : 0.0f;
    // Every thread read the hint before the search's first block minimum; thread 0 replaces it after.
    const float best = nearestBeyond(pos, g, cellFirst, searchRadius, i, sample.beyondNearest2[t], hint);
    if (threadIdx.x == 0) {
      settled[0] += sqrt(double(best));
      sample.hint[who] = make_uint2(__float_as_uint(sqrtf(best)), sample.stamp);
    }
  }
  if (count > blockIdx.x) blockAtomicAdd<1>(settled, sample.sums + kNearest);
  __shared__ bool last;
  __threadfence();  // this block's sum before its count
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(sample.blocksDone, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  if (threadIdx.x < kNumBoidSums) {
    const unsigned long long bits = atomicExch(reinterpret_cast<unsigned long long*>(sample.sums) + threadIdx.x, 0ull);
    sample.host[threadIdx.x] = __longlong_as_double(static_cast<long long>(bits));
  }
  if (threadIdx.x == 0) *sample.beyondCount = 0, *sample.blocksDone = 0;
}

// The neighbour statistics: the rows around the body itself only, without the periodic
// boundary's images, as the CPU engine's rows pipeline counts them.
__global__ void __launch_bounds__(1024)
    boidsStatsRowsKernel(const Vec4* __restrict__ pos, uint32_t n, const GridSpec* __restrict__ grid,
                         const uint32_t* __restrict__ cellFirst, const uint32_t* __restrict__ sortedIndex,
                         float searchRadius, float radius2, unsigned long long* __restrict__ counts) {
  const uint32_t t = globalThreadIndex();
  unsigned long long candidates = 0, neighbours = 0;
  if (t < n) {
    const uint32_t i = __ldg(sortedIndex + t);
    const GridSpec g = *grid;
    const Vec4 pi = ldg4(pos + i);
    core::forEachRow(g, core::xyz(pi), searchRadius, [&](uint32_t first, uint32_t last) {
      const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
      for (uint32_t q = s; q < e; ++q) {
        const uint32_t j = __ldg(sortedIndex + q);
        if (j == i) continue;
        ++candidates;
        const core::Vec3 d = core::xyz(ldg4(pos + j)) - core::xyz(pi);
        if (core::dot(d, d) < radius2) ++neighbours;
      }
    });
  }
  addBlockCounts(candidates, neighbours, counts);
}

}  // namespace

void launchRowsNearestBeyond(const Vec4* d_pos, const uint32_t* d_id, uint32_t n, const GridSpec* d_grid,
                             const uint32_t* d_cellFirst, float searchRadius, const BoidSampleSums& sample,
                             const LaunchConfig& lc) {
  // A block for each of two thousand listed boids at once, small enough that they all fit the GPU
  // in one wave; the loop strides over more. The block is the kernel's own, not the force's.
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>(n, 2048));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kBeyondBlock);
  config.stream = lc.stream;
  // Programmatic dependent launch where the device has it (sm_90 on; see letTheSampleStart).
  int device = 0, major = 0;
  MURMUR_CUDA_CHECK(cudaGetDevice(&device));
  MURMUR_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  cudaLaunchAttribute early[1] = {};
  early[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = early;
  config.numAttrs = major >= 9 ? 1 : 0;
  MURMUR_CUDA_CHECK(
      cudaLaunchKernelEx(&config, nearestBeyondKernel, d_pos, d_id, d_grid, d_cellFirst, searchRadius, sample));
}

void launchBoidsStatsRows(const Vec4* d_pos, uint32_t n, const GridSpec* d_grid, const uint32_t* d_cellFirst,
                          const uint32_t* d_sortedIndex, float searchRadius, float radius2,
                          unsigned long long* d_counts, const LaunchConfig& lc) {
  boidsStatsRowsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_cellFirst, d_sortedIndex,
                                                                    searchRadius, radius2, d_counts);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
