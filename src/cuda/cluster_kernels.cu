// Kernels of the `clusters` pipeline. Compiled without FMA contraction (see CMakeLists.txt), like
// every boids kernel, so that d^2 < r^2 decides exactly as on the CPU; the CPU engine's version
// (core/cpu_pipelines/clusters.cpp) adds the same terms in the same order.
#include "core/cluster_search.h"
#include "core/physics.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cluster_kernels.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

#include <mutex>
#include <type_traits>

namespace murmur::cuda {

using core::kClusterPartials;
using core::kClusterSize;
using core::Vec3;
using core::Vec4;

namespace {

// Lanes per group of candidates: a tile is kLaneGroup x kClusterPartials lanes, each holding
// kPerLane bodies of the cluster.
constexpr int kLaneGroup = kWarpSize / kClusterPartials;
constexpr int kPerLane = kClusterSize / kLaneGroup;
static_assert(kPerLane * kLaneGroup == kClusterSize && kPerLane >= 1 && kPerLane <= 4, "whole bodies per lane");

// Candidates staged per warp: a full tile of 32 and room for one more load of 32, positions (w:
// the candidate's index) and then velocities.
constexpr int kStage = 2 * kWarpSize;
constexpr int kStagePerWarp = 2 * kStage;

struct BoxRow {
  int rows;             // rows of the box (RowBox ny * nz)
  uint32_t start, end;  // row r's sorted range; empty when pruned or r >= rows
};

// Row r of the box [lo, hi]'s rows on *grid (z outer, y inner, as core::forEachBoxRow). Not
// inlined: the grid and the box's bounds live only here, not across the candidate loop.
__device__ __noinline__ BoxRow boxRow(const core::GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                                      Vec3 lo, Vec3 hi, float radius, int r) {
  const core::GridSpec g = *grid;
  const core::RowBox rb = core::rowBox(g, lo, hi, radius);
  BoxRow out{rb.ny * rb.nz, 0, 0};
  if (r < out.rows) {
    const int cz = rb.zlo + r / rb.ny, cy = rb.ylo + r % rb.ny;
    uint32_t first = 0, last = 0;
    if (rb.rowAt(g, cz, cy, first, last)) {
      out.start = __ldg(cellFirst + first);
      out.end = __ldg(cellFirst + last + 1);
    }
  }
  return out;
}

// Calls f(s) for each shift s of the box [lo, hi] that core::forEachBoxImage visits after the box
// itself (periodic), in its order and bit for bit its shifts: per axis the index 0 (no shift), 1
// (+L near the low face, else -L) and 2 (-L, where the box reaches both faces), x the fastest. One
// loop over the images' number, the per-axis counts packed in one word, the shifts formed again
// per image: across the search inside, the loop keeps two words live.
template <typename F>
__device__ __forceinline__ void forEachOtherBoxImage(const Vec3& lo, const Vec3& hi, float radius, float halfSize,
                                                     F&& f) {
  const float L = 2.0f * halfSize;
  const auto count = [&](float l, float h) {
    return 1u + (l < radius - halfSize ? 1u : 0u) + (h >= halfSize - radius ? 1u : 0u);
  };
  const auto shift = [&](unsigned index, float l) {
    return index == 0 ? 0.0f : (index == 1 && l < radius - halfSize ? L : -L);
  };
  const unsigned counts = count(lo.x, hi.x) | count(lo.y, hi.y) << 2 | count(lo.z, hi.z) << 4;
  const unsigned total = (counts & 3u) * (counts >> 2 & 3u) * (counts >> 4);
  for (unsigned m = 1; m < total; ++m) {
    const unsigned nx = counts & 3u, ny = counts >> 2 & 3u;
    f(Vec3{shift(m % nx, lo.x), shift(m / nx % ny, lo.y), shift(m / (nx * ny), lo.z)});
  }
}

// At most 64 registers a thread, so that any block size fits (a few bytes spilled). On an H100
// (bench/results/h100/clusters/; measurements: docs/performance.md#the-cluster-kernel): with 8
// bodies a cluster, one a lane, 48 registers beat 64 in the CIS 565 world, at FLAME GPU density and
// at 10M `dense`; with 16, two a lane (the two sums need the registers), 64 beat 72 in all three.
constexpr int kClusterMaxRegisters = 64;

// One warp per group of kClusterSize consecutive bodies under local rule Rule; radius: the
// rule's reach (Rule::radius(b)). Force (Stats false): the new velocities of the bodies (in cell order)
// into velOut and the positions they integrate to into posOut, the other state buffers (every
// position of pos is read until the last warp ends). Stats: the pairs tested and the neighbours
// within the largest radius of the bodies read through `order`, into counts (the box itself only,
// no images: the statistics count the search without the periodic boundary's images, on both
// engines). PeriodicT (the periodic boundary, force only): the search of the box, then of each of
// its images (core::forEachBoxImage), each a stream of candidates of its own whose partial sums
// restart at the first (the staging buffer is emptied between images), every candidate measured
// from the member's image (core::shifted), as the CPU engine's clusters pipeline sums. WallsT (the
// reflect boundary): the integration mirrors at the faces and may turn the velocity, stored after
// it (a variant of its own: the branch kept at run time cost the wrap kernel spills).
template <typename Rule, bool Stats, bool PeriodicT, bool WallsT>
__global__ void __maxnreg__(kClusterMaxRegisters)
    clusterKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, const uint32_t* __restrict__ order,
                  uint32_t n, const core::GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                  typename Rule::Params b, float radius, float halfSize, core::DrawKeys keys, Vec4* __restrict__ velOut,
                  Vec4* __restrict__ posOut, unsigned long long* counts) {
  extern __shared__ float4 stageAll[];
  const int lane = threadIdx.x % kWarpSize;
  float4* stage = stageAll + (threadIdx.x / kWarpSize) * kStagePerWarp;
  float4* stageVel = stage + kStage;
  const uint32_t warp = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
  const uint32_t base = warp * kClusterSize;
  // Lane (jj, ii) holds bodies ii, ii + 8, ... of the group and tests candidates jj, jj + 4, ...
  const int ii = lane % kLaneGroup, jj = lane / kLaneGroup;
  const auto posAt = [&](uint32_t k) { return Stats ? ldg4(pos + __ldg(order + k)) : ldg4(pos + k); };
  static_assert(!(Stats && PeriodicT), "the statistics search the box itself only");
  unsigned long long tested = 0, near = 0;
  if (base < n) {  // the whole warp
    const typename Rule::Setup r2 = Rule::setup(b);
    const float reach2 = r2.reach2;  // the rule's reach, squared
    uint32_t i[kPerLane], row[kPerLane];
    Vec4 pi[kPerLane];
    // Bit u * 8 + ii: body ii + 8 u of this group, whose cluster is still to do.
    unsigned remaining = 0;
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      i[u] = base + ii + kLaneGroup * u;
      const bool has = i[u] < n;
      pi[u] = has ? posAt(i[u]) : Vec4{0, 0, 0, 0};
      row[u] = has ? core::clusterRowOf(*grid, core::xyz(pi[u])) : 0xffffffffu;
      remaining |= (__ballot_sync(kFullWarpMask, has && jj == 0) & 0xffu) << (kLaneGroup * u);
    }
    while (remaining != 0) {
      const int leader = __ffs(remaining) - 1;
      const int leaderLane = leader % kLaneGroup, leaderU = leader / kLaneGroup;
      uint32_t rowOfLeaderU = row[0];
      Vec4 posOfLeaderU = pi[0];
#pragma unroll
      for (int u = 1; u < kPerLane; ++u)
        if (u == leaderU) rowOfLeaderU = row[u], posOfLeaderU = pi[u];
      const uint32_t leaderRow = __shfl_sync(kFullWarpMask, rowOfLeaderU, leaderLane);
      const Vec4 pl = {__shfl_sync(kFullWarpMask, posOfLeaderU.x, leaderLane),
                       __shfl_sync(kFullWarpMask, posOfLeaderU.y, leaderLane),
                       __shfl_sync(kFullWarpMask, posOfLeaderU.z, leaderLane), 0.0f};
      bool inSeg[kPerLane];
      float lo[3] = {pl.x, pl.y, pl.z}, hi[3] = {pl.x, pl.y, pl.z};
      unsigned seg = 0;
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) {
        const unsigned bit = 1u << (ii + kLaneGroup * u);
        seg |= (__ballot_sync(kFullWarpMask, jj == 0 && (remaining & bit) != 0 && row[u] == leaderRow) & 0xffu)
               << (kLaneGroup * u);
        inSeg[u] = (seg & bit) != 0;
        if (inSeg[u]) {
          lo[0] = fminf(lo[0], pi[u].x), lo[1] = fminf(lo[1], pi[u].y), lo[2] = fminf(lo[2], pi[u].z);
          hi[0] = fmaxf(hi[0], pi[u].x), hi[1] = fmaxf(hi[1], pi[u].y), hi[2] = fmaxf(hi[2], pi[u].z);
        }
      }
      remaining &= ~seg;
      // The cluster's box, in every lane (the 4 groups of 8 lanes hold the same bodies).
#pragma unroll
      for (int off = 1; off < kLaneGroup; off *= 2)
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          lo[a] = fminf(lo[a], __shfl_xor_sync(kFullWarpMask, lo[a], off));
          hi[a] = fmaxf(hi[a], __shfl_xor_sync(kFullWarpMask, hi[a], off));
        }
      const Vec3 boxLo{lo[0], lo[1], lo[2]}, boxHi{hi[0], hi[1], hi[2]};
      typename Rule::RelSum acc[kPerLane];
#pragma unroll
      for (int u = 0; u < kPerLane; ++u)
        acc[u] = Rule::relZero([&] { return i[u] < n ? ldg4(vel + i[u]) : Vec4{0, 0, 0, 0}; });
      // The candidates of the box shifted by sh (the box itself: sh = 0, which PeriodicT alone
      // reads), staged and tested against the members at pi; the staging buffer is empty again at
      // the end, so that each image's candidates restart at partial sum 0.
      const auto searchBox = [&](const Vec3 sh) {
        const Vec3 sLo = PeriodicT ? core::shifted(boxLo, sh) : boxLo;
        const Vec3 sHi = PeriodicT ? core::shifted(boxHi, sh) : boxHi;
        // The pairs of the first `count` staged candidates. Full: count is a whole tile.
        const auto tile = [&](int count, auto full) {
#pragma unroll
          for (int t = 0; t < kWarpSize / kClusterPartials; ++t) {
            const int q = jj + kClusterPartials * t;
            if (decltype(full)::value || q < count) {
              const float4 e = stage[q];
#pragma unroll
              for (int u = 0; u < kPerLane; ++u) {
                if (!inSeg[u]) continue;
                const Vec3 d = Vec3{e.x, e.y, e.z} - core::xyz(pi[u]);
                const float d2 = core::distance2(d);
                if (Stats) {
                  if (__float_as_uint(e.w) != i[u]) {
                    ++tested;
                    if (d2 < reach2) ++near;
                  }
                } else {
                  // No test against the largest radius first: each sum is predicated on its own
                  // radius, without a branch around them (most tiles have a hit in some lane).
                  Rule::addRel(acc[u], d, d2, [&] { return toVec4(stageVel[q]); }, r2);
                }
              }
            }
          }
        };
        int count = 0;
        // The rows of the box, 32 at a time: lane r finds row r's range, then the warp walks the
        // rows that hold candidates in that order.
        for (int r0 = 0;; r0 += kWarpSize) {
          const BoxRow br = boxRow(grid, cellFirst, sLo, sHi, radius, r0 + lane);
          const uint32_t rowStart = br.start, rowEnd = br.end;
          unsigned live = __ballot_sync(kFullWarpMask, rowEnd > rowStart);
          while (live != 0) {
            const int src = __ffs(live) - 1;
            live &= live - 1;
            const uint32_t start = __shfl_sync(kFullWarpMask, rowStart, src);
            const uint32_t end = __shfl_sync(kFullWarpMask, rowEnd, src);
            for (uint32_t k0 = start; k0 < end; k0 += kWarpSize) {
              const uint32_t k = k0 + lane;
              bool keep = false;
              Vec4 pj{0, 0, 0, 0};
              if (k < end) {
                pj = posAt(k);
                keep = core::boxDistance2(core::xyz(pj), sLo, sHi) < reach2;
              }
              const unsigned m = __ballot_sync(kFullWarpMask, keep);
              if (keep) {
                const int slot = count + __popc(m & ((1u << lane) - 1u));
                stage[slot] = make_float4(pj.x, pj.y, pj.z, __uint_as_float(k));
                if (!Stats) stageVel[slot] = __ldg(reinterpret_cast<const float4*>(vel + k));
              }
              count += __popc(m);
              if (count >= kWarpSize) {
                __syncwarp();
                tile(kWarpSize, std::true_type{});
                __syncwarp();
                if (lane < count - kWarpSize) {
                  stage[lane] = stage[kWarpSize + lane];
                  if (!Stats) stageVel[lane] = stageVel[kWarpSize + lane];
                }
                count -= kWarpSize;
                __syncwarp();
              }
            }
          }
          if (r0 + kWarpSize >= br.rows) break;
        }
        __syncwarp();
        if (count > 0) tile(count, std::false_type{});
        __syncwarp();
      };
      searchBox(Vec3{0.0f, 0.0f, 0.0f});
      if constexpr (PeriodicT) {
        // Each image's search measures from the members' images: pi holds them meanwhile (read
        // again and shifted, rather than kept beside pi across the search), then the positions.
        forEachOtherBoxImage(boxLo, boxHi, radius, halfSize, [&](const Vec3 sh) {
#pragma unroll
          for (int u = 0; u < kPerLane; ++u)
            if (i[u] < n) {
              const Vec4 p = posAt(i[u]);
              pi[u] = core::make4(core::shifted(core::xyz(p), sh), p.w);
            }
          searchBox(sh);
        });
#pragma unroll
        for (int u = 0; u < kPerLane; ++u)
          if (i[u] < n) pi[u] = posAt(i[u]);
      }
      if (!Stats) {
#pragma unroll
        for (int u = 0; u < kPerLane; ++u) {
          // (s0 + s1) + (s2 + s3) over the four lanes of body ii + 8 u (core::addPartials).
#pragma unroll
          for (int off = kLaneGroup; off < kWarpSize; off *= 2) shuffleCombine<Rule>(acc[u], off);
          if (jj == 0 && inSeg[u]) {
            const Vec4 vi = ldg4(vel + i[u]);
            Rule::removeSelf(acc[u], vi, r2);
            Vec3 v = Rule::velocityRel(acc[u], vi, b, core::drawsOf<Rule>(keys, i[u]));
            if constexpr (WallsT) {
              const Vec4 moved = core::boidIntegrate(pi[u], v, Rule::dt(b), halfSize, core::Boundary::Reflect);
              st4(velOut + i[u], core::make4(v, 0.0f));  // turned where a wall was met
              st4(posOut + i[u], moved);
            } else {
              st4(velOut + i[u], core::make4(v, 0.0f));
              st4(posOut + i[u], core::boidIntegrate(pi[u], v, Rule::dt(b), halfSize));
            }
          }
        }
      }
    }
  }
  if (Stats) addBlockCounts(tested, near, counts);
}

unsigned clusterBlocks(uint32_t n, const LaunchConfig& lc) {
  const size_t warps = (size_t(n) + kClusterSize - 1) / kClusterSize;
  return static_cast<unsigned>((warps * kWarpSize + size_t(lc.block) - 1) / size_t(lc.block));
}

// Launches clusterKernel<Stats> with its staging buffers: 2 KB a warp, so blocks of more than 24
// warps need more dynamic shared memory than the 48 KB a kernel gets without asking.
template <typename Rule, bool Stats, bool PeriodicT, bool WallsT, typename... Args>
void launchClusterKernel(uint32_t n, const LaunchConfig& lc, Args... args) {
  const size_t bytes = size_t(lc.block / kWarpSize) * kStagePerWarp * sizeof(float4);
  static std::once_flag raised;
  std::call_once(raised, [] {
    MURMUR_CUDA_CHECK(cudaFuncSetAttribute(clusterKernel<Rule, Stats, PeriodicT, WallsT>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(kMaxWarpsPerBlock * kStagePerWarp * sizeof(float4))));
  });
  clusterKernel<Rule, Stats, PeriodicT, WallsT><<<clusterBlocks(n, lc), lc.block, bytes, lc.stream>>>(args...);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launchClusterForce(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                        const uint32_t* d_cellFirst, const core::SimParams& p, float halfSize,
                        const core::DrawKeys& keys, Vec4* d_velOut, Vec4* d_posOut, const LaunchConfig& lc) {
  if (n == 0) return;
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    const typename Rule::Params& b = Rule::params(p);
    const auto launch = [&](auto periodic, auto walls) {
      launchClusterKernel<Rule, false, decltype(periodic)::value, decltype(walls)::value>(
          n, lc, d_pos, d_vel, static_cast<const uint32_t*>(nullptr), n, d_grid, d_cellFirst, b, Rule::radius(b),
          halfSize, keys, d_velOut, d_posOut, static_cast<unsigned long long*>(nullptr));
    };
    if (p.boundary == core::Boundary::Reflect)
      launch(std::false_type{}, std::true_type{});
    else
      withBoundary(p.boundary, [&](auto periodic) { launch(periodic, std::false_type{}); });
  });
}

void launchClusterStats(const Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, const uint32_t* d_cellFirst,
                        const uint32_t* d_sortedIndex, const core::SimParams& p, unsigned long long* d_counts,
                        const LaunchConfig& lc) {
  if (n == 0) return;
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    const typename Rule::Params& b = Rule::params(p);
    launchClusterKernel<Rule, true, false, false>(n, lc, d_pos, static_cast<const Vec4*>(nullptr), d_sortedIndex, n,
                                                  d_grid, d_cellFirst, b, Rule::radius(b), 0.0f, core::DrawKeys{},
                                                  static_cast<Vec4*>(nullptr), static_cast<Vec4*>(nullptr), d_counts);
  });
}

}  // namespace murmur::cuda
