// Kernels of the `rows` boids pipeline. Compiled without FMA contraction (see CMakeLists.txt), so
// that d^2 < r^2 decides exactly as on the CPU.
#include "core/physics.h"
#include "core/row_search.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::BoidAccum;
using core::BoidParams;
using core::BoidRadii2;
using core::GridSpec;
using core::Vec4;

namespace {

// Every cell between the previous slot's key (exclusive) and this slot's key (inclusive) starts
// here; the last slot also closes every cell after it. Each entry is written exactly once.
__global__ void __launch_bounds__(1024) findCellFirstKernel(const uint32_t* __restrict__ sortedKeys, uint32_t n,
                                                            uint32_t numCells, uint32_t* __restrict__ cellFirst) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t key = __ldg(sortedKeys + k);
  const uint32_t prev = k == 0 ? 0u : __ldg(sortedKeys + k - 1) + 1u;
  for (uint32_t c = prev; c <= key; ++c) cellFirst[c] = k;
  if (k == n - 1)
    for (uint32_t c = key + 1; c <= numCells; ++c) cellFirst[c] = n;
}

// One thread per body in cell order; consecutive threads sit in neighbouring cells of one row,
// so a warp's rows overlap and their ranges hit the same cache lines. Each row is one contiguous
// loop. Short rows (BatchedT false: about 2 bodies per cell, a row holds a handful of candidates,
// mostly neighbours) take two candidates per iteration with both positions and both velocities
// loaded before either is used, so that four loads are in flight. On an H100 (1M boids, force
// stage, 200 warm-up steps, one run: CIS 565 world / FLAME GPU density at block 256 / 10M
// `dense`) that took 0.526 / 0.430 / 1.931 ms to 0.490 / 0.393 / 1.796; four per iteration was
// no faster (0.527 / 0.393 / 1.967: 64 registers and spills). Long rows (BatchedT true, see
// core::rowBatched) take the grid kernels' loop instead: four positions per iteration, the sums
// skipped outside every radius, a velocity read only inside the alignment radius, 48 registers.
// Slower in other runs (README "Performance"): register caps of 48 and 40 on the short-row loop
// (0.593 and 0.574 against 0.527 ms in the CIS 565 world); staging every lane's row ranges in
// shared memory and running one flat loop over all candidates (fewer idle lanes, 24.6 active of
// 32 against 17.9, but the table took the L1 cache the neighbour loads live on); loading the next
// row's range before the current row's loop (0.729 against 0.526 ms); one flat loop that steps to
// the next row when a row ends (1.277 ms).
template <bool BatchedT>
__device__ __forceinline__ void boidsRowsBody(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                                              const GridSpec* __restrict__ grid,
                                              const uint32_t* __restrict__ cellFirst, const BoidParams& b,
                                              float searchRadius, Vec4* __restrict__ velOut) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const GridSpec g = *grid;
  const Vec4 pi = ldg4(pos + i);
  const BoidRadii2 r2 = core::boidRadii2(b);
  const float reach2 = boidReach2(r2);
  BoidAccum acc = core::boidAccumInit();
  // The long-row test: the same d^2 as boidAccumulate's, outside every radius it adds nothing.
  const auto consider = [&](uint32_t j, const Vec4& pj) {
    if (j == i) return;
    boidPairAdd(acc, pi, pj, vel, j, r2, reach2);
  };
  core::forEachRow(g, core::xyz(pi), searchRadius, [&](uint32_t first, uint32_t last) {
    const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
    uint32_t j = s;
    if constexpr (BatchedT) {
      for (; j + 3 < e; j += 4) {
        Vec4 ps[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) ps[u] = ldg4(pos + j + u);
#pragma unroll
        for (int u = 0; u < 4; ++u) consider(j + u, ps[u]);
      }
      for (; j + 1 < e; j += 2) {
        const Vec4 pa = ldg4(pos + j), pb = ldg4(pos + j + 1);
        consider(j, pa);
        consider(j + 1, pb);
      }
      if (j < e) consider(j, ldg4(pos + j));
    } else {
      for (; j + 1 < e; j += 2) {
        const Vec4 pa = ldg4(pos + j), pb = ldg4(pos + j + 1);
        const Vec4 va = ldg4(vel + j), vb = ldg4(vel + j + 1);
        if (j != i) core::boidAccumulate(acc, pi, pa, va, r2);
        if (j + 1 != i) core::boidAccumulate(acc, pi, pb, vb, r2);
      }
      if (j < e && j != i) core::boidAccumulate(acc, pi, ldg4(pos + j), ldg4(vel + j), r2);
    }
  });
  st4(velOut + i, core::make4(core::boidVelocity(acc, pi, ldg4(vel + i), b), 0.0f));
}

__global__ void __launch_bounds__(1024)
    boidsRowsKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                    const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst, BoidParams b,
                    float searchRadius, Vec4* __restrict__ velOut) {
  boidsRowsBody<false>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut);
}

// 48 registers: 10 blocks of 128 threads per SM instead of 8 (times 1024 threads it still fits).
constexpr int kRowsBatchedMaxRegisters = 48;

__global__ void __maxnreg__(kRowsBatchedMaxRegisters)
    boidsRowsBatchedKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                           const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst, BoidParams b,
                           float searchRadius, Vec4* __restrict__ velOut) {
  boidsRowsBody<true>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut);
}

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

void launchFindCellFirst(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellFirst,
                         const LaunchConfig& lc) {
  findCellFirstKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedKeys, n, numCells, d_cellFirst);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsRows(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const BoidParams& b, float searchRadius, bool batched,
                     Vec4* d_velOut, const LaunchConfig& lc) {
  if (batched)
    boidsRowsBatchedKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, n, d_grid, d_cellFirst, b,
                                                                        searchRadius, d_velOut);
  else
    boidsRowsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, n, d_grid, d_cellFirst, b,
                                                                 searchRadius, d_velOut);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsStatsRows(const Vec4* d_pos, uint32_t n, const GridSpec* d_grid, const uint32_t* d_cellFirst,
                          const uint32_t* d_sortedIndex, float searchRadius, float radius2,
                          unsigned long long* d_counts, const LaunchConfig& lc) {
  boidsStatsRowsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_cellFirst, d_sortedIndex,
                                                                    searchRadius, radius2, d_counts);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
