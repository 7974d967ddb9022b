// Kernels of the `verlet` boids pipeline. Compiled without FMA contraction (see CMakeLists.txt),
// like every boids kernel, so that d^2 < r^2 decides exactly as on the CPU.
#include "core/physics.h"
#include "core/row_search.h"
#include "core/verlet.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/verlet_kernels.h"

namespace murmur::cuda {

using core::Vec3;
using core::Vec4;
using core::VerletPlan;

namespace {

// The quad of body i that holds its entries 4q .. 4q + 3.
__device__ __forceinline__ uint4* listQuad(uint32_t* list, uint32_t i, uint32_t capacity, uint32_t q) {
  return reinterpret_cast<uint4*>(list) + (size_t(i / kWarpSize) * (capacity / kListQuad) + q) * kWarpSize +
         i % kWarpSize;
}

// One thread per body in cell order: the rows search to R around the body (and its images),
// every slot closer than R appended to its list. Entries gather in four registers (a shift
// register: no local memory) and leave as one 16-byte store per quad; one store per entry made
// the build's L2 traffic its bottleneck.
__global__ void __launch_bounds__(1024)
    verletBuildKernel(const Vec4* __restrict__ pos, uint32_t n, const core::GridSpec* __restrict__ grid,
                      const uint32_t* __restrict__ cellFirst, VerletPlan plan, float halfSize, VerletLists lists) {
  const uint32_t i = globalThreadIndex();
  uint32_t c = 0;
  if (i < n) {
    const core::GridSpec g = *grid;
    uint32_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    core::forEachListed(
        g, plan, halfSize, i, core::xyz(ldg4(pos + i)), [&](uint32_t j) { return core::xyz(ldg4(pos + j)); },
        [&](uint32_t k) { return __ldg(cellFirst + k); },
        [&](uint32_t j) {
          b0 = b1;
          b1 = b2;
          b2 = b3;
          b3 = j;
          ++c;
          if (c % kListQuad == 0 && c <= lists.capacity)
            *listQuad(lists.list, i, lists.capacity, c / kListQuad - 1) = make_uint4(b0, b1, b2, b3);
        });
    // The last, partial quad: its entries are the newest ones, oldest first.
    const uint32_t rest = c % kListQuad;
    if (rest != 0 && c <= lists.capacity) {
      const uint4 q = rest == 1 ? make_uint4(b3, 0, 0, 0) : rest == 2 ? make_uint4(b2, b3, 0, 0) : make_uint4(b1, b2, b3, 0);
      *listQuad(lists.list, i, lists.capacity, c / kListQuad) = q;
    }
    lists.count[i] = c;
    if (c > lists.capacity) lists.overflow[atomicAdd(lists.overflowCount, 1u)] = i;
  }
  uint32_t warpMax = c;
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) warpMax = max(warpMax, __shfl_xor_sync(kFullWarpMask, warpMax, off));
  const unsigned long long warpTotal = warpSum(static_cast<unsigned long long>(c));
  if (threadIdx.x % kWarpSize == 0 && warpMax > 0) {
    atomicMax(lists.maxCount, warpMax);
    atomicAdd(lists.totalCount, warpTotal);
  }
}

// One thread per body: its list, four entries per iteration (indices, then positions, then the
// tests), the sums skipped outside every radius and a velocity read only inside the alignment
// radius. PeriodicT (the periodic boundary): the lists hold the bodies near the body's images too
// (core::forEachListed), and each entry is tested against the body's centres (itself and its
// images within the rule's reach, core::forEachImage) by taking, axis by axis, the centre it lies
// nearest (rulePairAddNearest): a neighbour lies within the reach of one centre only, so that is
// the test of every centre in one, at the offset from the centre that accepts it.
template <typename Rule, bool PeriodicT>
__global__ void __launch_bounds__(1024)
    verletForceKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n, VerletLists lists,
                      typename Rule::Params b, float halfSize, core::DrawKeys keys, Vec4* __restrict__ velOut) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const uint32_t c = __ldg(lists.count + i);
  if (c > lists.capacity) return;  // the overflow kernel's
  const Vec4 pi = ldg4(pos + i);
  const typename Rule::Setup su = Rule::setup(b);
  typename Rule::Sum acc = Rule::zero([&] { return ldg4(vel + i); });
  [[maybe_unused]] const ImageAxes axes =
      PeriodicT ? imageAxes(core::xyz(pi), Rule::radius(b), halfSize) : ImageAxes{};
  const auto consider = [&](uint32_t j, const Vec4& pj) {
    if constexpr (PeriodicT)
      rulePairAddNearest<Rule>(acc, pi, axes, pj, vel, j, su);
    else
      rulePairAdd<Rule>(acc, pi, pj, vel, j, su);
  };
  const uint4* __restrict__ quads = listQuad(lists.list, i, lists.capacity, 0);
  const uint32_t full = c / kListQuad;
  for (uint32_t q = 0; q < full; ++q) {
    const uint4 jq = __ldg(quads + size_t(q) * kWarpSize);
    const uint32_t j[4] = {jq.x, jq.y, jq.z, jq.w};
    Vec4 p[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) p[u] = ldg4(pos + j[u]);
#pragma unroll
    for (int u = 0; u < 4; ++u) consider(j[u], p[u]);
  }
  const uint32_t rest = c % kListQuad;
  if (rest != 0) {
    const uint4 jq = __ldg(quads + size_t(full) * kWarpSize);
    const uint32_t j[3] = {jq.x, jq.y, jq.z};
#pragma unroll
    for (uint32_t u = 0; u < 3; ++u)
      if (u < rest) consider(j[u], ldg4(pos + j[u]));
  }
  st4(velOut + i, core::make4(Rule::velocity(acc, pi, ldg4(vel + i), b, core::drawsOf<Rule>(keys, i)), 0.0f));
}

// One thread per queued body (see launchVerletOverflow). Runs after the force kernel every step;
// with an empty queue it does nothing.
// PeriodicT (the periodic boundary): a neighbour lies within the rule's reach of one of the body's
// centres (itself and its images at that reach, core::forEachImage), as the CPU engine tests a
// list. Lists of one step (plan.steps 1, built on this step's positions) are searched as the rows
// pipeline searches: around each centre to the reach, every candidate measured from that centre;
// a cell may be reached from two centres there (the world need only be more than twice the reach
// wide), and a candidate counts at the one centre it is near. Lists of several steps hold bodies
// that crossed a face since the build, whose cells lie near another of the body's images: the
// rows of the build's search (the body and its images to R, each cell once, since such a plan
// has core::verletPeriodicFits), every candidate measured from the centre it lies nearest now, as
// the force kernel tests a list entry (rulePairAddNearest).
template <typename Rule, bool PeriodicT>
__global__ void __launch_bounds__(256)
    verletOverflowKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                         const core::GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                         VerletPlan plan, float halfSize, VerletLists lists, typename Rule::Params b,
                         core::DrawKeys keys, Vec4* __restrict__ velOut) {
  const uint32_t queued = *lists.overflowCount;
  if (queued == 0) return;
  const core::GridSpec g = *grid;
  const typename Rule::Setup su = Rule::setup(b);
  for (uint32_t q = globalThreadIndex(); q < queued; q += gridDim.x * blockDim.x) {
    const uint32_t i = lists.overflow[q];
    const Vec4 pi = ldg4(pos + i);
    typename Rule::Sum a = Rule::zero([&] { return ldg4(vel + i); });
    if constexpr (PeriodicT) {
      const float radius = Rule::radius(b);
      if (plan.steps == 1) {
        bool image = false;  // the first centre is the body itself
        core::forEachImage(core::xyz(pi), radius, halfSize, true, [&](Vec3 c) {
          core::forEachRowOneLoop(g, c, radius, [&](uint32_t first, uint32_t last) {
            const uint32_t e = __ldg(cellFirst + last + 1);
            for (uint32_t j = __ldg(cellFirst + first); j < e; ++j)
              if (j != i) {
                if (image)
                  rulePairAddImage<Rule>(a, pi, c, ldg4(pos + j), vel, j, su);
                else
                  rulePairAdd<Rule>(a, pi, ldg4(pos + j), vel, j, su);
              }
          });
          image = true;
        });
      } else {
        const ImageAxes axes = imageAxes(core::xyz(pi), radius, halfSize);
        core::forEachListRow(g, plan, halfSize, core::xyz(pi), [&](uint32_t first, uint32_t last) {
          const uint32_t e = __ldg(cellFirst + last + 1);
          for (uint32_t j = __ldg(cellFirst + first); j < e; ++j)
            if (j != i) rulePairAddNearest<Rule>(a, pi, axes, ldg4(pos + j), vel, j, su);
        });
      }
    } else {
      core::forEachListRow(g, plan, halfSize, core::xyz(pi), [&](uint32_t first, uint32_t last) {
        const uint32_t e = __ldg(cellFirst + last + 1);
        for (uint32_t j = __ldg(cellFirst + first); j < e; ++j)
          if (j != i) {
            const Vec4 pj = ldg4(pos + j);
            const Vec3 d = core::xyz(pj) - core::xyz(pi);
            Rule::add(a, pj, d, core::distance2(d), [&] { return ldg4(vel + j); }, su);
          }
      });
    }
    st4(velOut + i, core::make4(Rule::velocity(a, pi, ldg4(vel + i), b, core::drawsOf<Rule>(keys, i)), 0.0f));
  }
}

// Neighbour statistics: the entries of lists built now (under the periodic boundary with the
// bodies near the images, as the lists hold them), each tested against the body's own position
// only, without images, as the CPU engine's verlet pipeline counts them.
__global__ void __launch_bounds__(1024)
    verletStatsKernel(const Vec4* __restrict__ pos, uint32_t n, const core::GridSpec* __restrict__ grid,
                      const uint32_t* __restrict__ cellFirst, const uint32_t* __restrict__ sortedIndex,
                      VerletPlan plan, float halfSize, float radius2, unsigned long long* __restrict__ counts) {
  const uint32_t t = globalThreadIndex();
  unsigned long long entries = 0, neighbours = 0;
  if (t < n) {
    const core::GridSpec g = *grid;
    const Vec3 pi = core::xyz(ldg4(pos + __ldg(sortedIndex + t)));
    core::forEachListed(
        g, plan, halfSize, t, pi, [&](uint32_t k) { return core::xyz(ldg4(pos + __ldg(sortedIndex + k))); },
        [&](uint32_t k) { return __ldg(cellFirst + k); },
        [&](uint32_t k) {
          ++entries;
          const Vec3 d = core::xyz(ldg4(pos + __ldg(sortedIndex + k))) - pi;
          if (core::dot(d, d) < radius2) ++neighbours;
        });
  }
  addBlockCounts(entries, neighbours, counts);
}

// The overflow kernel's grid: a few blocks per SM of any current GPU; its threads stride over the
// queue.
constexpr unsigned kOverflowBlocks = 512;
constexpr int kOverflowBlockSize = 128;

}  // namespace

void launchVerletBuild(const Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, const uint32_t* d_cellFirst,
                       const VerletPlan& plan, float halfSize, const VerletLists& lists, const LaunchConfig& lc) {
  verletBuildKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_cellFirst, plan, halfSize, lists);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchVerletForce(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const VerletLists& lists,
                       const core::SimParams& p, const core::DrawKeys& keys, Vec4* d_velOut, const LaunchConfig& lc) {
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    withBoundary(p.boundary, [&](auto periodic) {
      verletForceKernel<Rule, decltype(periodic)::value><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(
          d_pos, d_vel, n, lists, Rule::params(p), p.halfSize, keys, d_velOut);
    });
  });
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchVerletOverflow(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                          const uint32_t* d_cellFirst, const VerletPlan& plan, float halfSize,
                          const VerletLists& lists, const core::SimParams& p, const core::DrawKeys& keys,
                          Vec4* d_velOut, const LaunchConfig& lc) {
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    withBoundary(p.boundary, [&](auto periodic) {
      verletOverflowKernel<Rule, decltype(periodic)::value><<<kOverflowBlocks, kOverflowBlockSize, 0, lc.stream>>>(
          d_pos, d_vel, n, d_grid, d_cellFirst, plan, halfSize, lists, Rule::params(p), keys, d_velOut);
    });
  });
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchVerletStats(const Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, const uint32_t* d_cellFirst,
                       const uint32_t* d_sortedIndex, const VerletPlan& plan, float halfSize, float radius2,
                       unsigned long long* d_counts, const LaunchConfig& lc) {
  verletStatsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_cellFirst, d_sortedIndex, plan,
                                                                  halfSize, radius2, d_counts);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
