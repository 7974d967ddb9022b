// Kernels of the `rows` boids pipeline. Compiled without FMA contraction (see CMakeLists.txt), so
// that d^2 < r^2 decides exactly as on the CPU.
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>

#include "core/physics.h"
#include "core/row_search.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec4;

namespace {

// Every cell between the previous slot's key (exclusive) and this slot's key (inclusive) starts
// here. The cells before the first key start at 0 and those after the last key at n; those two
// runs are filled by every thread of the grid in strides, since they can be long (a rank's local
// set covers only its slab's planes of the whole grid: a serial fill by one thread cost many times
// the rest of the step at 10M bodies over two ranks; measurements:
// docs/performance.md#four-gpus-rows-and-coherent-over-ranks). Each entry is written exactly once.
__global__ void __launch_bounds__(1024) findCellFirstKernel(const uint32_t* __restrict__ sortedKeys, uint32_t n,
                                                            uint32_t fromCell, uint32_t toCell,
                                                            uint32_t* __restrict__ cellFirst) {
  const uint32_t k = globalThreadIndex();
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t firstKey = __ldg(sortedKeys), lastKey = __ldg(sortedKeys + n - 1);
  for (uint32_t c = fromCell + k; c < firstKey; c += stride) cellFirst[c] = 0;
  for (uint64_t c = uint64_t(lastKey) + 1 + k; c <= toCell; c += stride) cellFirst[c] = n;
  if (k >= n) return;
  const uint32_t key = __ldg(sortedKeys + k);
  const uint32_t prev = k == 0 ? key : __ldg(sortedKeys + k - 1) + 1u;
  for (uint32_t c = prev; c <= key; ++c) cellFirst[c] = k;
}

// Body q at p takes the next free rank of its cell (launchCountCells).
__device__ __forceinline__ void countCell(const GridSpec& g, const Vec4& p, uint32_t q, uint32_t* __restrict__ keys,
                                          uint32_t* __restrict__ rank, uint32_t* __restrict__ counts,
                                          uint32_t* __restrict__ crowded) {
  const uint32_t key = core::cellKeyOf(g, core::xyz(p));
  const uint32_t r = atomicAdd(counts + key, 1u);
  keys[q] = key;
  rank[q] = r;
  if (r == kStableCellMax) *crowded = 1u;  // the cell holds more than kStableCellMax bodies
}

// One boid's part of a sampled step (RowsStepOut::sample) beside the force's sums, which it does
// not change: the candidates within the separation radius (the boid itself included, as in the
// force's counts n1 and n3 until the rule's removeSelf) and the nearest other candidate, squared.
struct BoidSampleAcc {
  float nearest2 = INFINITY;
  float n2 = 0;  // exact: a count below 2^24
};

// What a sampled kernel's thread holds once its boid is done: the boid's sums, the counts apart
// (blockSampleAdd adds them as integers).
struct BoidSampleOut {
  double v[kNumBoidSums] = {};
  int counts[3] = {};  // the neighbours within the cohesion, separation and alignment radii
};

// Candidate d2 of a sampled boid. Only the boid's own row holds the boid itself (d2 = 0 exactly,
// sums relative to the boid), so only that row tests for it (OwnRowT); in every other row the
// nearest distance is one minimum per candidate.
template <bool SampleT, bool OwnRowT, typename SetupT>
__device__ __forceinline__ void sampleCandidate(BoidSampleAcc& s, float d2, bool self, const SetupT& r2) {
  if constexpr (SampleT) {
    if (d2 < r2.r2) s.n2 += 1.0f;  // under the force's own predicate: one add (an integer took a select too)
    if constexpr (OwnRowT)
      s.nearest2 = fminf(s.nearest2, self ? INFINITY : d2);
    else
      s.nearest2 = fminf(s.nearest2, d2);
  }
}

// A sampled boid's sums (cuda/observables.h BoidSum), as DeviceObserver's boids kernel forms
// them. acc has had the rule's removeSelf. A nearest candidate at or beyond the search radius (reach2)
// settles nothing: a boid closer than the radius would have been a candidate, but one farther
// may be nearer than every candidate, so the boid is listed for launchRowsNearestBeyond, with
// its nearest candidate's squared distance as an upper bound.
template <typename RelSumT, typename SetupT>
__device__ __forceinline__ void sampleBoid(const RelSumT& acc, const BoidSampleAcc& sa, uint32_t i,
                                           uint32_t n, const Vec4& vi, const SetupT& r2, float reach2,
                                           const BoidSampleSums& sample, BoidSampleOut& so) {
  setSpeedAndHeading(vi, so.v);
  so.counts[0] = acc.n1;
  so.counts[1] = static_cast<int>(sa.n2) - (0.0f < r2.r2 ? 1 : 0);
  so.counts[2] = acc.n3;
  if (n < 2) return;
  if (sa.nearest2 < reach2) {
    so.v[kNearest] = sqrt(double(sa.nearest2));
  } else {
    const uint32_t t = atomicAdd(sample.beyondCount, 1u);
    sample.beyond[t] = i;
    sample.beyondNearest2[t] = sa.nearest2;
  }
}

// What a rows kernel does once boid i's relative sums are complete: takes i out of them, the new
// velocity, the integration into posOut and, with counts, the next step's count of its cell; a
// sampled step (SampleT) also forms the boid's sums of the sample in v.
template <typename Rule, bool SampleT>
__device__ __forceinline__ void finishRowsBoid(typename Rule::RelSum& acc, const BoidSampleAcc& sa, uint32_t i,
                                               uint32_t n, const Vec4& pi, const Vec4* __restrict__ vel,
                                               const GridSpec& g, const typename Rule::Params& b,
                                               const typename Rule::Setup& r2,
                                               Vec4* __restrict__ velOut, const RowsStepOut& out,
                                               BoidSampleOut& sampled) {
  const Vec4 vi = ldg4(vel + i);
  Rule::removeSelf(acc, vi, r2);
  if constexpr (SampleT) sampleBoid(acc, sa, i, n, vi, r2, r2.reach2, out.sample, sampled);
  const core::Vec3 v = Rule::velocityRel(acc, vi, b);
  st4(velOut + i, core::make4(v, 0.0f));
  const Vec4 p = core::boidIntegrate(pi, v, out.dt, out.halfSize);
  st4(out.posOut + i, p);
  if (out.counts) countCell(g, p, i, out.keys, out.rank, out.counts, out.crowded);
}

// The per-row loops. One thread per body in cell order; consecutive threads sit in neighbouring
// cells of one row, so a warp's rows overlap and their ranges hit the same cache lines. Each row
// is one contiguous loop. Short rows (core::RowLoop::Short, about 2 bodies per cell: a row holds
// a handful of candidates, mostly neighbours) take two candidates per iteration with both
// positions and both velocities loaded before either is used, so that four loads are in flight.
// On an H100 that shortened the force stage in the CIS 565 world, at FLAME GPU density and at 10M
// `dense`; four per iteration was no faster (64 registers and spills).
// Crowded rows (RowLoop::Batched) take the grid kernels' loop instead: four positions per
// iteration, the sums skipped outside every radius, a velocity read only inside the alignment
// radius, 48 registers. The sums are relative to the boid, which is its own candidate once
// (the rule's RelSum): no j != i test per candidate (a shorter step in the CIS 565 world and at
// 10M `dense`; bench/results/h100/flat-explore/).
// Slower in other runs (docs/performance.md#the-rows-pipeline, the numbers of these comments in
// docs/performance.md#the-rows-kernels): register caps of 48 and 40 on the short-row loop; loading
// the next row's range before the current row's loop; one flat loop that steps to the next row
// when a row ends; the flat loop below.
// A sampled step (SampleT) adds, per candidate, the separation count and the nearest distance
// (sampleCandidate) beside the force's sums; the plain step's code is the same without them.
template <typename Rule, bool BatchedT, bool SampleT>
__device__ __forceinline__ void boidsRowsBody(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                                              const GridSpec* __restrict__ grid,
                                              const uint32_t* __restrict__ cellFirst, const typename Rule::Params& b,
                                              float searchRadius, Vec4* __restrict__ velOut,
                                              const RowsStepOut& out, BoidSampleOut& sampled) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const GridSpec g = *grid;
  const Vec4 pi = ldg4(pos + i);
  const core::Vec3 ci = core::xyz(pi);
  const typename Rule::Setup r2 = Rule::setup(b);
  typename Rule::RelSum acc = Rule::relZero();
  BoidSampleAcc sa;
  // One row [s, e); OwnRow says whether it holds the boid itself (sampleCandidate).
  const auto walkRow = [&](auto ownRow, uint32_t s, uint32_t e) {
    constexpr bool OwnRowT = decltype(ownRow)::value;
    uint32_t j = s;
    if constexpr (BatchedT) {
      const auto add = [&](const Vec4& pj, uint32_t q) {
        const core::Vec3 d = core::xyz(pj) - ci;
        const float d2 = core::distance2(d);
        rulePairAddRel<Rule>(acc, d, d2, vel, q, r2);
        sampleCandidate<SampleT, OwnRowT>(sa, d2, q == i, r2);
      };
      for (; j + 3 < e; j += 4) {
        Vec4 ps[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) ps[u] = ldg4(pos + j + u);
#pragma unroll
        for (int u = 0; u < 4; ++u) add(ps[u], j + u);
      }
      for (; j + 1 < e; j += 2) {
        const Vec4 pa = ldg4(pos + j), pb = ldg4(pos + j + 1);
        add(pa, j);
        add(pb, j + 1);
      }
      if (j < e) add(ldg4(pos + j), j);
    } else {
      const auto add = [&](const Vec4& pj, const Vec4& vj, uint32_t q) {
        const core::Vec3 d = core::xyz(pj) - ci;
        const float d2 = core::distance2(d);
        Rule::addRel(acc, d, d2, [&] { return vj; }, r2);
        sampleCandidate<SampleT, OwnRowT>(sa, d2, q == i, r2);
      };
      for (; j + 1 < e; j += 2) {
        const Vec4 pa = ldg4(pos + j), pb = ldg4(pos + j + 1);
        const Vec4 va = ldg4(vel + j), vb = ldg4(vel + j + 1);
        add(pa, va, j);
        add(pb, vb, j + 1);
      }
      if (j < e) add(ldg4(pos + j), ldg4(vel + j), j);
    }
  };
  core::forEachRow(g, ci, searchRadius, [&](uint32_t first, uint32_t last) {
    const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
    if constexpr (SampleT) {
      if (s <= i && i < e) {
        walkRow(std::true_type{}, s, e);
        return;
      }
    }
    walkRow(std::false_type{}, s, e);
  });
  finishRowsBoid<Rule, SampleT>(acc, sa, i, n, pi, vel, g, b, r2, velOut, out, sampled);
}

// The sum of v over the warp, in lane 0.
__device__ __forceinline__ int warpSum(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullWarpMask, v);
#else
  for (int o = kWarpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(kFullWarpMask, v, o);
  return v;
#endif
}

// The block's sums added into sums[0, kNumBoidSums): the doubles over shuffles, the counts as
// integers (one instruction a warp on sm_80 and later) and in double only per block.
__device__ __forceinline__ void blockSampleAdd(BoidSampleOut& so, double* __restrict__ sums) {
  static_assert(kNearest == 4 && kCount1 == 5 && kCount3 == 7 && kNumBoidSums == 8, "the doubles, then the counts");
  constexpr int kDoubles = kCount1;
  __shared__ double partial[kDoubles][kMaxWarpsPerBlock];
  __shared__ int partialCount[3][kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int k = 0; k < kDoubles; ++k)
    for (int o = kWarpSize / 2; o > 0; o /= 2) so.v[k] += __shfl_down_sync(kFullWarpMask, so.v[k], o);
  int counts[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) counts[c] = warpSum(so.counts[c]);
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < kDoubles; ++k) partial[k][warp] = so.v[k];
#pragma unroll
    for (int c = 0; c < 3; ++c) partialCount[c][warp] = counts[c];
  }
  __syncthreads();
  if (threadIdx.x < kNumBoidSums) {  // lane k adds value k over the warps
    const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
    double total = 0;
    if (threadIdx.x < kDoubles) {
      for (int w = 0; w < warps; ++w) total += partial[threadIdx.x][w];
    } else {
      long long c = 0;
      for (int w = 0; w < warps; ++w) c += partialCount[threadIdx.x - kDoubles][w];
      total = double(c);
    }
    atomicAdd(sums + threadIdx.x, total);
  }
}

// A sampled kernel lets launchRowsNearestBeyond's kernel start as soon as every block of it has
// started (programmatic dependent launch, sm_90): that kernel's blocks take the SMs the force
// kernel's last blocks leave, then wait for the whole force kernel (griddepcontrol.wait), so its
// launch overlaps the force kernel's tail instead of following it.
template <bool SampleT>
__device__ __forceinline__ void letTheSampleStart() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (SampleT) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A sampled kernel's block total of its boids' sums (every thread of the block calls it).
template <bool SampleT>
__device__ __forceinline__ void addSample(BoidSampleOut& sampled, const RowsStepOut& out) {
  if constexpr (SampleT) blockSampleAdd(sampled, out.sample.sums);
}

template <typename Rule, bool SampleT>
__global__ void __launch_bounds__(1024)
    boidsRowsKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                    const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst, typename Rule::Params b,
                    float searchRadius, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsBody<Rule, false, SampleT>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut, out, sampled);
  addSample<SampleT>(sampled, out);
}

// 48 registers: 10 blocks of 128 threads per SM instead of 8 (times 1024 threads it still fits).
constexpr int kRowsBatchedMaxRegisters = 48;

template <typename Rule, bool SampleT>
__global__ void __maxnreg__(kRowsBatchedMaxRegisters)
    boidsRowsBatchedKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                           const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                           typename Rule::Params b,
                           float searchRadius, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsBody<Rule, true, SampleT>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut, out, sampled);
  addSample<SampleT>(sampled, out);
}

// Crowded rows (core::RowLoop::Flat, 4 to 12 bodies per cell) take one flat loop per lane. A
// loop per row runs for the longest lane of the warp, and rows of a few dozen candidates differ a
// lot from lane to lane; a lane's whole stream of candidates differs less. So each lane first
// lists its rows in shared memory (one 32-bit entry each: the row's start relative to the lane's
// own slot and its length), then walks all its candidates in one loop that switches rows with one
// shared-memory read. A neighbour's velocity is read only inside the alignment radius. On an
// H100 at FLAME GPU density (1M boids) the step was shorter than with the batched loop at cell
// width 1 and 2. Where cells are more crowded it loses to the batched loop, whose warps jump
// together over candidates outside every radius (CIS 565 world at cell width 2, 15.6 bodies per
// cell). Where rows are short it loses too (CIS 565 world, 10M `dense`): with every lane at its
// own place in its own stream, a warp's loads spread over many rows, and in the CIS 565 world the
// L1 hit rate fell and the L1 and L2 throughputs rose close to their peaks (Nsight Compute,
// bench/results/h100/flat-explore/). Loading the next candidate's position and velocity a step
// ahead was slower still, in the CIS 565 world, at FLAME GPU density and at 10M `dense`
// (measurements: docs/performance.md#the-rows-kernels).
constexpr int kRowLenBits = 10;  // a row of at most 1023 candidates fits an entry
constexpr int kRowOffsetBits = 32 - kRowLenBits;

// Packs row [s, e) of the lane at slot i into an entry; false when it does not fit (the caller
// walks that row at once).
__device__ __forceinline__ bool packRowEntry(uint32_t s, uint32_t e, uint32_t i, uint32_t& entry) {
  const long long off = static_cast<long long>(s) - static_cast<long long>(i);
  const uint32_t len = e - s;
  if (len >= (1u << kRowLenBits) || off < -(1ll << (kRowOffsetBits - 1)) || off >= (1ll << (kRowOffsetBits - 1)))
    return false;
  entry = (static_cast<uint32_t>(static_cast<int32_t>(off)) << kRowLenBits) | len;
  return true;
}
__device__ __forceinline__ uint32_t rowEntryStart(uint32_t entry, uint32_t i) {
  return i + static_cast<uint32_t>(static_cast<int32_t>(entry) >> kRowLenBits);
}
__device__ __forceinline__ uint32_t rowEntryLength(uint32_t entry) { return entry & ((1u << kRowLenBits) - 1u); }

template <typename Rule, bool SampleT>
__device__ __forceinline__ void boidsRowsFlatBody(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel,
                                                  uint32_t n, const GridSpec* __restrict__ grid,
                                                  const uint32_t* __restrict__ cellFirst,
                                                  const typename Rule::Params& b,
                                                  float searchRadius, int tableRows, Vec4* __restrict__ velOut,
                                                  const RowsStepOut& out, BoidSampleOut& sampled) {
  extern __shared__ uint32_t rowTable[];  // [tableRows][blockDim.x]
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;  // no barrier in the walk (a sampled kernel's block sum comes after it)
  const GridSpec g = *grid;
  const Vec4 pi = ldg4(pos + i);
  const core::Vec3 ci = core::xyz(pi);
  const typename Rule::Setup r2 = Rule::setup(b);
  typename Rule::RelSum acc = Rule::relZero();
  BoidSampleAcc sa;
  // Every candidate of a row in the rule's sums (no reach test: these rows are crowded with
  // neighbours), the velocity loaded only if the rule asks for it.
  const auto add = [&](uint32_t j) {
    const core::Vec3 d = core::xyz(ldg4(pos + j)) - ci;
    const float d2 = core::distance2(d);
    Rule::addRel(acc, d, d2, [&] { return ldg4(vel + j); }, r2);
    sampleCandidate<SampleT, true>(sa, d2, j == i, r2);
  };
  uint32_t* mine = rowTable + threadIdx.x;
  const uint32_t stride = blockDim.x;
  int rows = 0;
  uint32_t total = 0;
  core::forEachRow(g, ci, searchRadius, [&](uint32_t first, uint32_t last) {
    const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
    if (s == e) return;
    uint32_t entry = 0;
    if (rows < tableRows && packRowEntry(s, e, i, entry)) {
      mine[rows * stride] = entry;
      ++rows;
      total += e - s;
    } else {
      for (uint32_t j = s; j < e; ++j) add(j);
    }
  });
  uint32_t j = 0, e = 0;
  int t = 0;
  for (uint32_t left = total; left > 0; --left) {
    if (j == e) {
      const uint32_t entry = mine[t * stride];
      ++t;
      j = rowEntryStart(entry, i);
      e = j + rowEntryLength(entry);
    }
    add(j);
    ++j;
  }
  finishRowsBoid<Rule, SampleT>(acc, sa, i, n, pi, vel, g, b, r2, velOut, out, sampled);
}

template <typename Rule, bool SampleT>
__global__ void __launch_bounds__(1024)
    boidsRowsFlatKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                        const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                        typename Rule::Params b,
                        float searchRadius, int tableRows, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsFlatBody<Rule, SampleT>(pos, vel, n, grid, cellFirst, b, searchRadius, tableRows, velOut, out, sampled);
  addSample<SampleT>(sampled, out);
}

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

// The counting sort (see rows_kernels.h). Each body takes the next free rank of its cell with one
// atomic; which body gets which rank depends on the order the atomics land in, so placeKernel's
// order inside a cell is arbitrary, and reorderPlacedKernel puts every body of a cell back in the
// order of its current slot: the permutation of a stable sort, the one the radix sort gives.
__global__ void __launch_bounds__(1024)
    countCellsKernel(const Vec4* __restrict__ pos, uint32_t n, const GridSpec* __restrict__ grid,
                     uint32_t* __restrict__ keys, uint32_t* __restrict__ rank, uint32_t* __restrict__ counts,
                     uint32_t* __restrict__ crowded) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  countCell(*grid, ldg4(pos + q), q, keys, rank, counts, crowded);
}

__global__ void __launch_bounds__(1024)
    placeKernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ rank, uint32_t n,
                const uint32_t* __restrict__ cellFirst, uint32_t* __restrict__ placed) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  placed[__ldg(cellFirst + __ldg(keys + q)) + __ldg(rank + q)] = q;
}

// A body's place in its cell is the number of the cell's bodies with a lower current slot; the
// body is gathered there (reads through the placement, writes within the cell). Cells of more
// than kStableCellMax bodies keep the order of the atomics (countCellsKernel flagged them, and
// the engine then sorts with the radix sort).
__global__ void __launch_bounds__(1024)
    reorderPlacedKernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ placed, uint32_t n,
                        const uint32_t* __restrict__ cellFirst, const Vec4* __restrict__ posIn,
                        const Vec4* __restrict__ velIn, const uint32_t* __restrict__ idIn,
                        Vec4* __restrict__ posOut, Vec4* __restrict__ velOut, uint32_t* __restrict__ idOut) {
  const uint32_t p = globalThreadIndex();
  if (p >= n) return;
  const uint32_t q = __ldg(placed + p);
  const uint32_t key = __ldg(keys + q);
  const uint32_t s = __ldg(cellFirst + key), e = __ldg(cellFirst + key + 1);
  uint32_t dst = p;
  if (e - s <= kStableCellMax) {
    uint32_t r = 0;
    for (uint32_t t = s; t < e; ++t) r += __ldg(placed + t) < q ? 1u : 0u;
    dst = s + r;
  }
  st4(posOut + dst, ldg4(posIn + q));
  st4(velOut + dst, ldg4(velIn + q));
  idOut[dst] = __ldg(idIn + q);
}

}  // namespace

void launchFindCellFirst(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellFirst,
                         const LaunchConfig& lc) {
  launchFindCellFirstIn(d_sortedKeys, n, 0, numCells, d_cellFirst, lc);
}

void launchFindCellFirstIn(const uint32_t* d_sortedKeys, uint32_t n, uint32_t fromCell, uint32_t toCell,
                           uint32_t* d_cellFirst, const LaunchConfig& lc) {
  findCellFirstKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedKeys, n, fromCell, toCell, d_cellFirst);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchCountCells(const Vec4* d_pos, uint32_t n, const GridSpec* d_grid, uint32_t* d_keys, uint32_t* d_rank,
                      uint32_t* d_counts, uint32_t* d_crowded, const LaunchConfig& lc) {
  countCellsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_keys, d_rank, d_counts,
                                                                 d_crowded);
  MURMUR_CUDA_LAUNCH_CHECK();
}

bool countingSortFits(uint32_t numCells) { return size_t(numCells) + 1 <= size_t(INT_MAX); }

size_t cellScanTempBytes(uint32_t numCells) {
  size_t bytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint32_t*>(nullptr),
                                                  static_cast<uint32_t*>(nullptr), static_cast<int>(numCells) + 1));
  return bytes;
}

void launchScanCellCounts(const uint32_t* d_counts, uint32_t numCells, uint32_t* d_cellFirst, void* d_temp,
                          size_t tempBytes, const LaunchConfig& lc) {
  size_t bytes = tempBytes;
  MURMUR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, bytes, d_counts, d_cellFirst,
                                                  static_cast<int>(numCells) + 1, lc.stream));
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchPlaceByCell(const uint32_t* d_keys, const uint32_t* d_rank, uint32_t n, const uint32_t* d_cellFirst,
                       uint32_t* d_placed, const LaunchConfig& lc) {
  placeKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_keys, d_rank, n, d_cellFirst, d_placed);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchReorderPlaced(const uint32_t* d_keys, const uint32_t* d_placed, uint32_t n, const uint32_t* d_cellFirst,
                         const Vec4* d_posIn, const Vec4* d_velIn, const uint32_t* d_idIn, Vec4* d_posOut,
                         Vec4* d_velOut, uint32_t* d_idOut, const LaunchConfig& lc) {
  reorderPlacedKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_keys, d_placed, n, d_cellFirst, d_posIn,
                                                                   d_velIn, d_idIn, d_posOut, d_velOut, d_idOut);
  MURMUR_CUDA_LAUNCH_CHECK();
}

// Dynamic shared memory a kernel may take without opting in.
constexpr size_t kDefaultSharedBytes = 48 * 1024;

int rowsFlatTableRows(const GridSpec& g, float searchRadius) {
  // rowSphere's (y, z) box spans floor(t + reach) - floor(t - reach) + 1 <= floor(2 reach) + 2
  // cells per axis, fewer where the grid is smaller.
  const float reach = searchRadius * g.invCellWidth + core::rowMargin(g);
  const int span = static_cast<int>(std::floor(2.0f * reach)) + 2;
  const int rows = (span < g.dims.y ? span : g.dims.y) * (span < g.dims.z ? span : g.dims.z);
  return rows < kRowsFlatMaxTableRows ? rows : kRowsFlatMaxTableRows;
}

namespace {

template <typename Rule, bool SampleT>
void launchRowsLoops(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const typename Rule::Params& b, float searchRadius,
                     core::RowLoop loop, int flatTableRows, Vec4* d_velOut, const RowsStepOut& out,
                     const LaunchConfig& lc) {
  if (loop == core::RowLoop::Flat) {
    const size_t bytes = size_t(flatTableRows) * size_t(lc.block) * sizeof(uint32_t);
    if (bytes > kDefaultSharedBytes)  // at most kRowsFlatMaxTableRows * 1024 * 4 bytes: fits every sm_90 SM
      MURMUR_CUDA_CHECK(cudaFuncSetAttribute(boidsRowsFlatKernel<Rule, SampleT>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    boidsRowsFlatKernel<Rule, SampleT><<<lc.blocksFor(n), lc.block, bytes, lc.stream>>>(
        d_pos, d_vel, n, d_grid, d_cellFirst, b, searchRadius, flatTableRows, d_velOut, out);
  } else if (loop == core::RowLoop::Batched) {
    boidsRowsBatchedKernel<Rule, SampleT><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(
        d_pos, d_vel, n, d_grid, d_cellFirst, b, searchRadius, d_velOut, out);
  } else {
    boidsRowsKernel<Rule, SampleT><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, n, d_grid, d_cellFirst,
                                                                                b, searchRadius, d_velOut, out);
  }
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launchBoidsRows(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const core::SimParams& p, float searchRadius, core::RowLoop loop,
                     int flatTableRows, Vec4* d_velOut, const RowsStepOut& out, const LaunchConfig& lc) {
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    if (out.sample.sums)
      launchRowsLoops<Rule, true>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p), searchRadius, loop,
                                  flatTableRows, d_velOut, out, lc);
    else
      launchRowsLoops<Rule, false>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p), searchRadius, loop,
                                   flatTableRows, d_velOut, out, lc);
  });
}

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
