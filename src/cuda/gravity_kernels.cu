// Gravity kernels. Unlike the boids and grid-build files these keep FMA contraction: forces are
// continuous in the positions, so contraction only moves results within rounding, and the pair
// loop is the hot path. Cell membership is decided in grid_build.cu, never here.
#include "cuda/gravity_kernels.h"

#include "core/grid.h"
#include "core/physics.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

#include <algorithm>
#include <stdexcept>

namespace murmur::cuda {

using core::GridSpec;
using core::Int3;
using core::Vec3;
using core::Vec4;

namespace {

// rsqrt.approx with denormals flushed. Plain rsqrtf in a build without -ftz wraps the MUFU
// instruction in a test-and-rescale for denormal inputs: about three extra issue slots in a pair
// that needs fourteen. The input here is |r|^2 + eps^2 >= eps^2, which validateParams keeps a
// normal float, so the flush never changes a result.
__device__ __forceinline__ float rsqrtFtz(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// core::gravityPair with rsqrtFtz, accumulated in place: 3 FADD + 3 FFMA (softening folded into
// the chain) + MUFU + 3 FMUL + 3 FFMA. Position only (the body's own mass is not needed).
// CommonMassT: every body has the same mass m, so the pair leaves it out (2 FMUL instead of 3, one
// issue slot in thirteen) and the launch folds m into the final G * m.
template <bool CommonMassT>
__device__ __forceinline__ void addPair(const float3& pi, const float4& pj, float eps2, float3& a) {
  const Vec3 r{pj.x - pi.x, pj.y - pi.y, pj.z - pi.z};
  const float inv = rsqrtFtz(core::softenedDist2(r, eps2));
  const float s = CommonMassT ? inv * (inv * inv) : pj.w * inv * (inv * inv);
  a.x = fmaf(r.x, s, a.x);
  a.y = fmaf(r.y, s, a.y);
  a.z = fmaf(r.z, s, a.z);
}

// The entry that pads the last tile: so far away that |r|^2 overflows to +inf, rsqrt(+inf) = +0,
// and the pair adds r * 0 = exactly zero in both modes (a zero mass alone would not do when the
// mass is left out). Positions are bounded by the world, many orders of magnitude below this.
constexpr float kFarPad = 1e30f;
__device__ __forceinline__ float4 padEntry() { return make_float4(kFarPad, kFarPad, kFarPad, 0.0f); }

// Each thread carries this many bodies, so one shared-memory load of p_j feeds that many pairs.
constexpr int kBodiesPerThread = 2;

// All pairs, tiled through shared memory as in NVIDIA's nbody sample, with two changes for the
// issue rate (perf-notes.md): two bodies per thread (one LDS per two pairs) and SlicesT threads per
// body (GPU Gems 3 §31.4). A block of `block` threads has rows = block / SlicesT lanes; lane l
// holds bodies l and l + rows of the block's 2 * rows. Every tile the whole block loads `block`
// consecutive bodies; slice s consumes entries [s * rows, (s + 1) * rows), so the slices together
// cover every j once. At small N this puts SlicesT times more warps on the SMs; the slices' sums
// meet in shared memory at the end, in a fixed order (deterministic).
// Targets may be a subset of the sources (one rank's bodies against every rank's): each target's
// sum over sources then runs in the same order as on one GPU (same tiles, same slice count, which
// depends on the source count only), so the result is the same to the bit.
// The last tile is padded with padEntry(), which adds exactly zero; so does the self pair (r = 0,
// eps2 > 0), so neither needs a test in the loop. `scale` is G, or G * m with CommonMassT.
template <int BlockT, int SlicesT, bool CommonMassT>
__global__ void __launch_bounds__(BlockT > 0 ? BlockT : 1024)
    gravityNaiveKernel(const Vec4* __restrict__ pos, uint32_t n, const Vec4* __restrict__ targets,
                       uint32_t numTargets, float eps2, float scale, Vec4* __restrict__ acc) {
  static_assert(BlockT > 0 || SlicesT == 1, "the generic block size runs one slice");
  static_assert(BlockT % (SlicesT * kWarpSize) == 0 || BlockT == 0, "a slice is whole warps");
  extern __shared__ float4 tile[];
  const uint32_t block = BlockT > 0 ? static_cast<uint32_t>(BlockT) : blockDim.x;
  const uint32_t rows = block / SlicesT;
  const uint32_t lane = threadIdx.x % rows, slice = threadIdx.x / rows;
  const uint32_t i0 = blockIdx.x * rows * kBodiesPerThread + lane, i1 = i0 + rows;
  const float4 q0 = i0 < numTargets ? __ldg(reinterpret_cast<const float4*>(targets + i0)) : make_float4(0, 0, 0, 0);
  const float4 q1 = i1 < numTargets ? __ldg(reinterpret_cast<const float4*>(targets + i1)) : make_float4(0, 0, 0, 0);
  const float3 p0{q0.x, q0.y, q0.z}, p1{q1.x, q1.y, q1.z};
  float3 a0{0, 0, 0}, a1{0, 0, 0};
  const float4* mine = tile + slice * rows;
  // The next tile's entry is loaded into a register before the current tile is consumed, so the
  // global-memory latency hides behind the pair loop instead of stalling every barrier.
  auto load = [&](uint32_t j) {
    return j < n ? __ldg(reinterpret_cast<const float4*>(pos + j)) : padEntry();
  };
  float4 next = load(threadIdx.x);
  for (uint32_t base = 0; base < n; base += block) {
    tile[threadIdx.x] = next;
    __syncthreads();
    next = load(base + block + threadIdx.x);
    if constexpr (BlockT > 0) {
#pragma unroll 16
      for (int k = 0; k < BlockT / SlicesT; ++k) {
        const float4 q = mine[k];
        addPair<CommonMassT>(p0, q, eps2, a0);
        addPair<CommonMassT>(p1, q, eps2, a1);
      }
    } else {
#pragma unroll 8
      for (uint32_t k = 0; k < rows; ++k) {
        const float4 q = mine[k];
        addPair<CommonMassT>(p0, q, eps2, a0);
        addPair<CommonMassT>(p1, q, eps2, a1);
      }
    }
    __syncthreads();  // the next tile overwrites what slower warps may still be reading
  }
  if constexpr (SlicesT > 1) {
    // Slice 0 adds the other slices' partial sums, one body of the pair at a time through the
    // (now free) tile.
    for (int b = 0; b < kBodiesPerThread; ++b) {
      const float3& mineA = b == 0 ? a0 : a1;
      tile[threadIdx.x] = make_float4(mineA.x, mineA.y, mineA.z, 0.0f);
      __syncthreads();
      if (slice == 0) {
        float3 sum = mineA;
#pragma unroll
        for (int s = 1; s < SlicesT; ++s) {
          const float4 t = tile[s * rows + lane];
          sum.x += t.x, sum.y += t.y, sum.z += t.z;
        }
        (b == 0 ? a0 : a1) = sum;
      }
      __syncthreads();
    }
    if (slice != 0) return;
  }
  if (i0 < numTargets) st4(acc + i0, Vec4{a0.x * scale, a0.y * scale, a0.z * scale, 0.0f});
  if (i1 < numTargets) st4(acc + i1, Vec4{a1.x * scale, a1.y * scale, a1.z * scale, 0.0f});
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

template <int BlockT, int SlicesT>
void launchGravityNaiveT(const NaiveGravityArgs& g, const LaunchConfig& lc) {
  const size_t smem = static_cast<size_t>(lc.block) * sizeof(float4);
  const size_t bodiesPerBlock = static_cast<size_t>(lc.block / SlicesT) * kBodiesPerThread;
  const unsigned blocks = static_cast<unsigned>((g.numTargets + bodiesPerBlock - 1) / bodiesPerBlock);
  if (g.commonMass > 0.0f)
    gravityNaiveKernel<BlockT, SlicesT, true><<<blocks, lc.block, smem, lc.stream>>>(
        g.pos, g.n, g.targets, g.numTargets, g.eps2, g.G * g.commonMass, g.acc);
  else
    gravityNaiveKernel<BlockT, SlicesT, false><<<blocks, lc.block, smem, lc.stream>>>(
        g.pos, g.n, g.targets, g.numTargets, g.eps2, g.G, g.acc);
  MURMUR_CUDA_LAUNCH_CHECK();
}

// Threads per body (slices) for the compile-time block sizes. Blocks number N / (2 rows), so
// more slices make more, smaller blocks over the same work; the count is picked in two steps:
// 1. at least kNaiveThreadsPerSm threads on every SM. Half of the 2048 an SM can hold is enough:
//    two bodies per thread give each warp independent work to hide the MUFU latency. At N = 16k
//    and block 256 this takes 8 slices (256 blocks for 132 SMs instead of 32).
// 2. from there, the count whose blocks fill the last wave best. Every block runs the whole N
//    loop, so a last wave a third full costs as much as a full one: at 1M, block 256 and six
//    resident blocks per SM, one slice makes 2.6 waves (86% of the last three used) and eight
//    make 20.7 (99%). Slices cost little: one barrier per 64 pairs per thread and a final
//    reduction.
// 3. among the counts within 2% of that fill, the one that also fills best for a half and a
//    quarter of the targets: over K ranks each rank sums its N / K bodies with the slice count of
//    all N (bit-identical sums), and at 1M one slice left a rank of two 1.5 waves, which kept two
//    H200 well short of twice one (docs/performance.md#several-gpus); eight slices fill both
//    within 2%.
constexpr uint32_t kNaiveThreadsPerSm = 1024;
constexpr int kMaxNaiveSlices = 16;

template <int BlockT, int SlicesT>
int residentBlocksPerSm() {
  if constexpr (BlockT / SlicesT >= kWarpSize) {
    int blocks = 0;
    MURMUR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, gravityNaiveKernel<BlockT, SlicesT, false>, BlockT, static_cast<size_t>(BlockT) * sizeof(float4)));
    return blocks;
  }
  return 0;
}

// Share of the SMs' block slots that do work until the last block finishes (1 = no idle tail).
double fillOfLastWave(uint64_t blocks, int sms, int perSm) {
  if (perSm <= 0) return 0;
  const uint64_t slots = uint64_t(sms) * uint64_t(perSm);
  if (blocks <= slots) {
    // One partial wave: the blocks spread over the SMs, the most loaded SM sets the time.
    const uint64_t most = (blocks + sms - 1) / sms;
    return double(blocks) / double(uint64_t(sms) * most);
  }
  const uint64_t waves = (blocks + slots - 1) / slots;
  return double(blocks) / double(waves * slots);
}

template <int BlockT>
int naiveSlices(uint32_t n) {
  int device = 0, sms = 0;
  MURMUR_CUDA_CHECK(cudaGetDevice(&device));
  MURMUR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int perSm[] = {residentBlocksPerSm<BlockT, 1>(), residentBlocksPerSm<BlockT, 2>(),
                       residentBlocksPerSm<BlockT, 4>(), residentBlocksPerSm<BlockT, 8>(),
                       residentBlocksPerSm<BlockT, 16>()};
  const uint64_t wanted = uint64_t(sms) * kNaiveThreadsPerSm;
  const uint64_t threadsPerSlice = (uint64_t(n) + kBodiesPerThread - 1) / kBodiesPerThread;
  int first = 0;  // index into perSm: slices = 1 << index
  while ((1 << first) < kMaxNaiveSlices && BlockT / (2 << first) >= kWarpSize &&
         threadsPerSlice * (1u << first) < wanted)
    ++first;
  const auto fillFor = [&](int k, uint64_t targets) {
    const uint64_t rows = uint64_t(BlockT >> k);
    return fillOfLastWave((targets + rows * kBodiesPerThread - 1) / (rows * kBodiesPerThread), sms, perSm[k]);
  };
  const auto usable = [&](int k) { return (1 << k) <= kMaxNaiveSlices && BlockT / (1 << k) >= kWarpSize; };
  int best = first;
  double bestFill = 0;
  for (int k = first; usable(k); ++k) {
    const double fill = fillFor(k, n);
    if (fill > bestFill + 0.02) {  // more slices only for a clear gain
      best = k;
      bestFill = fill;
    }
  }
  const auto shareFill = [&](int k) { return std::min(fillFor(k, (uint64_t(n) + 1) / 2), fillFor(k, (uint64_t(n) + 3) / 4)); };
  int chosen = best;
  for (int k = first; usable(k); ++k)
    if (fillFor(k, n) >= bestFill - 0.02 && shareFill(k) > shareFill(chosen) + 0.02) chosen = k;
  best = chosen;
  return 1 << best;
}

template <int BlockT, int SlicesT>
bool tryLaunchSliced(int slices, const NaiveGravityArgs& g, const LaunchConfig& lc) {
  if constexpr (BlockT / SlicesT >= kWarpSize) {
    if (slices == SlicesT) {
      launchGravityNaiveT<BlockT, SlicesT>(g, lc);
      return true;
    }
  }
  return false;
}

// The slice count depends on the source count alone (not on how many targets this launch has), so
// one rank's share of the bodies is summed exactly as the whole is on one GPU.
template <int BlockT>
void launchGravityNaiveSliced(const NaiveGravityArgs& g, const LaunchConfig& lc) {
  const int s = naiveSlices<BlockT>(g.n);
  if (tryLaunchSliced<BlockT, 1>(s, g, lc) || tryLaunchSliced<BlockT, 2>(s, g, lc) ||
      tryLaunchSliced<BlockT, 4>(s, g, lc) || tryLaunchSliced<BlockT, 8>(s, g, lc) ||
      tryLaunchSliced<BlockT, 16>(s, g, lc))
    return;
  throw std::logic_error("naiveSlices chose a slice count without a kernel");
}

}  // namespace

void launchGravityNaive(const NaiveGravityArgs& g, const LaunchConfig& lc) {
  if (g.numTargets == 0) return;
  switch (lc.block) {
    case 64: return launchGravityNaiveSliced<64>(g, lc);
    case 128: return launchGravityNaiveSliced<128>(g, lc);
    case 256: return launchGravityNaiveSliced<256>(g, lc);
    case 512: return launchGravityNaiveSliced<512>(g, lc);
    case 1024: return launchGravityNaiveSliced<1024>(g, lc);
    default: return launchGravityNaiveT<0, 1>(g, lc);
  }
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
