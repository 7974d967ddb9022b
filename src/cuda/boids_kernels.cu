// Boids kernels. Compiled with FMA contraction on: the discontinuous decisions (d^2 < r^2, the
// cell range, the wrap) spell out their roundings in core (mulRn, distance2), so both engines find
// exactly the same neighbour sets while the rest of the arithmetic fuses. The rules themselves
// come from core/physics.h.
#include "cuda/boids_kernels.h"

#include "core/grid.h"
#include "core/physics.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec3;
using core::Vec4;

namespace {

// All pairs, one thread per boid. Each block stages a tile of positions and velocities in shared
// memory (dynamic: 2 * block float4), syncs, and every thread consumes the whole tile; the tile
// loop runs the same number of times for every thread of the block, so the barriers are uniform.
// BlockT > 0 fixes the block size at compile time so that full tiles unroll; 0 is the generic path.
// PeriodicT (the periodic boundary): each candidate is measured from the centre of the boid's
// search (itself or one of its images) it lies nearest (nearestImageOffset), which is the offset
// and the sum the CPU engine's search around every centre gives, in one pass over the tiles.
template <typename Rule, int BlockT, bool PeriodicT>
__global__ void __launch_bounds__(BlockT > 0 ? BlockT : 1024)
    boidsNaiveKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                     typename Rule::Params b, float halfSize, core::DrawKeys keys, Vec4* __restrict__ velOut) {
  extern __shared__ float4 tile[];
  const uint32_t block = BlockT > 0 ? static_cast<uint32_t>(BlockT) : blockDim.x;
  float4* tilePos = tile;
  float4* tileVel = tile + block;
  const uint32_t i = blockIdx.x * block + threadIdx.x;
  const bool active = i < n;
  const Vec4 pi = active ? ldg4(pos + i) : Vec4{0, 0, 0, 0};
  const Vec4 vi = active ? ldg4(vel + i) : Vec4{0, 0, 0, 0};
  const typename Rule::Setup su = Rule::setup(b);
  typename Rule::Sum acc = Rule::zero([&] { return vi; });
  [[maybe_unused]] const ImageAxes axes =
      PeriodicT ? imageAxes(core::xyz(pi), Rule::radius(b), halfSize) : ImageAxes{};
  // Candidate k of the tile: every rule term from shared memory.
  const auto add = [&](uint32_t k) {
    const Vec4 pj = toVec4(tilePos[k]);
    if constexpr (PeriodicT) {
      bool image = false;
      const core::Vec3 d = nearestImageOffset(core::xyz(pj), axes, image);
      Rule::add(acc, image ? core::imageOf(pi, d, pj) : pj, d, core::distance2(d), [&] { return toVec4(tileVel[k]); },
                su);
    } else {
      const core::Vec3 d = core::xyz(pj) - core::xyz(pi);
      Rule::add(acc, pj, d, core::distance2(d), [&] { return toVec4(tileVel[k]); }, su);
    }
  };

  for (uint32_t base = 0; base < n; base += block) {
    const uint32_t j = base + threadIdx.x;
    if (j < n) {
      tilePos[threadIdx.x] = __ldg(reinterpret_cast<const float4*>(pos + j));
      tileVel[threadIdx.x] = __ldg(reinterpret_cast<const float4*>(vel + j));
    }
    __syncthreads();
    if (active) {
      const uint32_t count = min(block, n - base);
      bool done = false;
      if constexpr (BlockT > 0) {
        if (count == static_cast<uint32_t>(BlockT)) {
#pragma unroll 4
          for (uint32_t k = 0; k < static_cast<uint32_t>(BlockT); ++k)
            if (base + k != i) add(k);
          done = true;
        }
      }
      if (!done) {
        for (uint32_t k = 0; k < count; ++k)
          if (base + k != i) add(k);
      }
    }
    __syncthreads();  // the next tile overwrites what slower warps may still be reading
  }
  if (active) st4(velOut + i, core::make4(Rule::velocity(acc, pi, vi, b, core::drawsOf<Rule>(keys, i)), 0.0f));
}

// The sorted slots [begin, end) of the cells key .. key + count - 1 of one row: cells adjacent
// along x are adjacent in key order, so their bodies form one run. Empty cells hold kEmptyCell
// in both buffers and are skipped; begin == end when the whole row is empty. Slots fit an int:
// the engine holds at most INT_MAX bodies.
struct SlotRun {
  int begin, end;
};

__device__ __forceinline__ SlotRun rowSlots(const DeviceGrid& dg, uint32_t key, int count) {
  SlotRun run{0, 0};
  bool found = false;
  for (int k = 0; k < count; ++k) {
    const uint32_t s = __ldg(dg.cellStart + key + k);
    if (s == core::kEmptyCell) continue;
    if (!found) run.begin = static_cast<int>(s);
    found = true;
    run.end = static_cast<int>(__ldg(dg.cellEnd + key + k));
  }
  return run;
}

// Candidates per iteration of the grid kernels' row loop, loaded together before any is used;
// the rest of a row runs in pairs, then singly. And a register cap for those kernels: at the 59
// registers the compiler picks, 8 blocks of 128 threads fit an SM; at 48 (a few bytes of spill
// outside the loop), 10. Both measured together on an H100 (see boidsGridKernel).
constexpr int kGridBatch = 4;
constexpr int kGridMaxRegisters = 48;  // times 1024 threads still fits an SM's 64k registers

// Grid neighbour search, one thread per sorted slot so that neighbouring threads visit the same
// cells. Scattered: the slot names the body through the sorted index (random reads of pos/vel);
// coherent: the data is in cell order and slot == body. Same-body test by index, never by distance.
// Candidates come in the CPU engine's order (z, y, x, slot), so the sums agree with it.
//
// Why it is built this way (Nsight Compute and `murmur bench` on an H100, 1M boids; measurements:
// docs/performance.md#the-grid-kernels-boidsgridkernel): at cell width 2x the loop was bound by
// L1/TEX throughput (near its peak while every velocity was read), at 1x by load latency (L1/TEX
// under half busy, occupancy held down by the registers). Most candidates are not neighbours (a
// small share at 1x, fewer still at 2x), so:
// - a candidate's sums are skipped when it is outside every rule radius: at 2x the 32 boids of a
//   warp mostly sit in one cell and walk the same candidates, so often no lane needs them and the
//   warp jumps over the sums;
// - a neighbour's velocity is read only inside the alignment radius (the velocity reads were half
//   the L1 traffic);
// - four candidates per iteration, their positions loaded before any is tested, so that four loads
//   are in flight;
// - the register cap above, for occupancy.
// From two candidates per iteration, no skip and the compiler's registers, four candidates at 48
// registers shortened the force stage in the CIS 565 world and at FLAME GPU density at both cell
// widths, and the skip shortened it again in all four, to below the textbook kernel's. Tried and
// slower: reading every velocity (without the cap), one candidate per iteration, pairs with the
// skip capped at 40 registers (spills; ahead only at 2x in the CIS 565 world). The scattered
// kernel gained from the same change in all four.
// Also: contraction on (distance2 keeps the test exact), one loop per row of x-adjacent cells
// instead of one per cell; the read-only path (__ldg) beat plain L1 loads (ld.global.ca).
//
// PeriodicT (the periodic boundary): the same search around each of the boid's images
// (forEachOtherImage) after its own, every candidate measured from the image it was found near
// (rulePairAddImage), as the CPU engine's grid pipelines search.
template <typename Rule, bool CoherentT, bool PeriodicT>
__global__ void __maxnreg__(kGridMaxRegisters)
    boidsGridKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n, DeviceGrid dg,
                    typename Rule::Params b, float searchRadius, float halfSize, core::DrawKeys keys,
                    Vec4* __restrict__ velOut) {
  const uint32_t t = globalThreadIndex();
  if (t >= n) return;
  const int self = static_cast<int>(CoherentT ? t : __ldg(dg.sortedIndex + t));
  const GridSpec g = *dg.grid;
  const Vec4 pi = ldg4(pos + self);
  const typename Rule::Setup su = Rule::setup(b);
  typename Rule::Sum acc = Rule::zero([&] { return ldg4(vel + self); });
  const auto body = [&](int q) { return CoherentT ? q : static_cast<int>(__ldg(dg.sortedIndex + q)); };
  // The cells around centre c (the boid, or with ImageT one of its images).
  const auto search = [&](const core::Vec3 c, auto imageT) {
    constexpr bool ImageT = decltype(imageT)::value;
    const core::CellRange cr = core::cellRangeForRadius(g, c, searchRadius);
    const auto consider = [&](int j, const Vec4& pj) {
      if (j == self) return;
      if constexpr (ImageT)
        rulePairAddImage<Rule>(acc, pi, c, pj, vel, j, su);
      else
        rulePairAdd<Rule>(acc, pi, pj, vel, j, su);
    };
    for (int cz = cr.lo.z; cz <= cr.hi.z; ++cz)
      for (int cy = cr.lo.y; cy <= cr.hi.y; ++cy) {
        const SlotRun run = rowSlots(dg, core::cellKey(g, cr.lo.x, cy, cz), cr.hi.x - cr.lo.x + 1);
        int q = run.begin;
        for (; q + kGridBatch - 1 < run.end; q += kGridBatch) {
          int js[kGridBatch];
          Vec4 ps[kGridBatch];
#pragma unroll
          for (int u = 0; u < kGridBatch; ++u) {
            js[u] = body(q + u);
            ps[u] = ldg4(pos + js[u]);
          }
#pragma unroll
          for (int u = 0; u < kGridBatch; ++u) consider(js[u], ps[u]);
        }
        for (; q + 1 < run.end; q += 2) {
          const int ja = body(q), jb = body(q + 1);
          const Vec4 pa = ldg4(pos + ja), pb = ldg4(pos + jb);
          consider(ja, pa);
          consider(jb, pb);
        }
        if (q < run.end) {
          const int j = body(q);
          consider(j, ldg4(pos + j));
        }
      }
  };
  search(core::xyz(pi), std::false_type{});
  if constexpr (PeriodicT)
    forEachOtherImage(core::xyz(pi), searchRadius, halfSize, [&](core::Vec3 c) { search(c, std::true_type{}); });
  // The own velocity is read after the loop: it is not needed there, and holding it would cost
  // four registers across it.
  st4(velOut + self,
      core::make4(Rule::velocity(acc, pi, ldg4(vel + self), b, core::drawsOf<Rule>(keys, static_cast<uint32_t>(self))),
                  0.0f));
}

// A kernel of its own, after the force kernel: every boid's new velocity is computed from the old
// positions, so no position may move until all velocities are done (a grid-wide barrier).
__global__ void __launch_bounds__(1024)
    boidsIntegrateKernel(Vec4* __restrict__ pos, Vec4* __restrict__ velNew, uint32_t n, float dt, float halfSize,
                         core::Boundary boundary) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const Vec4 vNew = ld4(velNew + i);
  core::Vec3 v = core::xyz(vNew);
  st4(pos + i, core::boidIntegrate(ld4(pos + i), v, dt, halfSize, boundary));
  if (boundary == core::Boundary::Reflect) st4(velNew + i, core::make4(v, vNew.w));  // turned at a wall
}

__device__ __forceinline__ bool withinRadius(const Vec4& pi, const Vec4& pj, float radius2) {
  return core::distance2(core::xyz(pj) - core::xyz(pi)) < radius2;
}

// Statistics are diagnostics, not the hot path: plain loops, one atomic per block. They search
// around the body itself only, without the periodic boundary's images, as the CPU engine's
// statistics do: under that boundary they count the search of the wrap boundary.
__global__ void __launch_bounds__(1024)
    boidsStatsNaiveKernel(const Vec4* __restrict__ pos, uint32_t n, float radius2,
                          unsigned long long* __restrict__ counts) {
  const uint32_t i = globalThreadIndex();
  unsigned long long neighbours = 0;
  if (i < n) {
    const Vec4 pi = ldg4(pos + i);
    for (uint32_t j = 0; j < n; ++j)
      if (j != i && withinRadius(pi, ldg4(pos + j), radius2)) ++neighbours;
  }
  neighbours = blockSum(neighbours);
  if (threadIdx.x == 0) atomicAdd(counts + 1, neighbours);
}

__global__ void __launch_bounds__(1024)
    boidsStatsGridKernel(const Vec4* __restrict__ pos, uint32_t n, DeviceGrid dg, float searchRadius,
                         float radius2, unsigned long long* __restrict__ counts) {
  const uint32_t t = globalThreadIndex();
  unsigned long long candidates = 0, neighbours = 0;
  if (t < n) {
    const uint32_t i = __ldg(dg.sortedIndex + t);
    const GridSpec g = *dg.grid;
    const Vec4 pi = ldg4(pos + i);
    const core::CellRange cr = core::cellRangeForRadius(g, core::xyz(pi), searchRadius);
    core::forEachInCells<false>(g, cr, dg.cellStart, dg.cellEnd, dg.sortedIndex, [&](uint32_t j) {
      if (j == i) return;
      ++candidates;
      if (withinRadius(pi, ldg4(pos + j), radius2)) ++neighbours;
    });
  }
  addBlockCounts(candidates, neighbours, counts);
}

}  // namespace

void launchBoidsNaive(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const core::SimParams& p,
                      const core::DrawKeys& keys, Vec4* d_velOut, const LaunchConfig& lc) {
  // One tile of positions and one of velocities per block.
  const size_t smem = 2 * static_cast<size_t>(lc.block) * sizeof(float4);
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    withBoundary(p.boundary, [&](auto periodic) {
      withStaticBlockSize(lc.block, [&](auto blockT) {
        boidsNaiveKernel<Rule, decltype(blockT)::value, decltype(periodic)::value>
            <<<lc.blocksFor(n), lc.block, smem, lc.stream>>>(d_pos, d_vel, n, Rule::params(p), p.halfSize, keys,
                                                             d_velOut);
      });
    });
  });
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsGrid(bool coherent, const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const DeviceGrid& grid,
                     const core::SimParams& p, float searchRadius, const core::DrawKeys& keys, Vec4* d_velOut,
                     const LaunchConfig& lc) {
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    withBoundary(p.boundary, [&](auto periodic) {
      constexpr bool P = decltype(periodic)::value;
      if (coherent)
        boidsGridKernel<Rule, true, P><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(
            d_pos, d_vel, n, grid, Rule::params(p), searchRadius, p.halfSize, keys, d_velOut);
      else
        boidsGridKernel<Rule, false, P><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(
            d_pos, d_vel, n, grid, Rule::params(p), searchRadius, p.halfSize, keys, d_velOut);
    });
  });
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsIntegrate(Vec4* d_pos, Vec4* d_velNew, uint32_t n, float dt, float halfSize, core::Boundary boundary,
                          const LaunchConfig& lc) {
  boidsIntegrateKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_velNew, n, dt, halfSize, boundary);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsStatsNaive(const Vec4* d_pos, uint32_t n, float radius2, unsigned long long* d_counts,
                           const LaunchConfig& lc) {
  boidsStatsNaiveKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, radius2, d_counts);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchBoidsStatsGrid(const Vec4* d_pos, uint32_t n, const DeviceGrid& grid, float searchRadius, float radius2,
                          unsigned long long* d_counts, const LaunchConfig& lc) {
  boidsStatsGridKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, grid, searchRadius, radius2,
                                                                     d_counts);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
