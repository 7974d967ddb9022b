// The force kernels of the `rows` boids pipeline (one per core::RowLoop, each with a sampled
// variant) and their launch. The cell offsets and the counting sort are in rows_cells.cu, the
// sampled step's search for the nearest boid beyond the radius and the statistics in
// rows_search.cu. Compiled without FMA contraction (see CMakeLists.txt), so that d^2 < r^2 decides
// exactly as on the CPU.
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "core/physics.h"
#include "core/row_search.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/rows_cells.cuh"
#include "cuda/rows_kernels.h"
#include "cuda/rows_sample.cuh"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec4;

namespace {

// How a rows kernel meets the periodic boundary's images (docs/design.md#the-boundary-rule).
// None: the wrap boundary. Whole: after its own rows, each boid walks the rows around its images
// (forEachOtherImage), every candidate measured from its image, in the same kernel. Defer: the
// kernel sums each boid's own rows as under the wrap boundary; a boid whose search crosses a face
// (nearFaces) is then listed in RowsStepOut::imaged with its partial sums instead of finished, and
// the image kernel (boidsRowsImagesKernel) adds the candidates around its images and finishes it.
// The image walk costs Whole registers: where that lowers the kernel's occupancy (Vicsek's flat
// loop took 59 registers against 32 and ran 328 us against 248 us on an H200), the step takes
// Defer and the image kernel; where it does not, Whole (periodicRowsSplit). Walls: the reflect
// boundary, no images as under wrap, and an integration that mirrors at the faces: a variant of
// its own, since the branch kept at run time cost the wrap kernels registers and spills.
enum class Images { None, Whole, Defer, Walls };

// Defer: if boid i (at ci) has images, its partial sums are listed for the image kernel (one
// atomic per converged group of the warp) and true is returned: the caller does not finish it.
template <typename Rule, Images I>
__device__ __forceinline__ bool listedForImages(uint32_t i, const core::Vec3& ci, const typename Rule::RelSum& acc,
                                                float searchRadius, const RowsStepOut& out) {
  if constexpr (I != Images::Defer) {
    return false;
  } else {
    const bool imaged = nearFaces(ci, searchRadius, out.halfSize) != 0u;
    const unsigned mask = __ballot_sync(__activemask(), imaged);
    if (!imaged) return false;
    const unsigned lane = threadIdx.x % kWarpSize, leader = __ffs(mask) - 1;
    uint32_t base = 0;
    if (lane == leader) base = atomicAdd(out.imagedCount, static_cast<uint32_t>(__popc(mask)));
    base = __shfl_sync(mask, base, leader);
    const uint32_t k = base + __popc(mask & ((1u << lane) - 1u));
    out.imaged[k] = i;
    static_cast<typename Rule::RelSum*>(out.imagedSums)[k] = acc;
    return true;
  }
}

// Candidate j's position and velocity: from the plane records (PlaneT, RowsStepOut::plane: one
// load, z and vz 0 as in the plane's bodies) or from the two arrays.
template <bool PlaneT>
__device__ __forceinline__ void loadCandidate(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel,
                                              const Vec4* __restrict__ plane, uint32_t j, Vec4& p, Vec4& v) {
  if constexpr (PlaneT) {
    const Vec4 r = ldg4(plane + j);
    p = Vec4{r.x, r.y, 0.0f, 0.0f};
    v = Vec4{r.z, r.w, 0.0f, 0.0f};
  } else {
    p = ldg4(pos + j);
    v = ldg4(vel + j);
  }
}

// A loaded candidate at offset d added to a boid's relative sums, vj its velocity as loadCandidate
// gave it: from the plane records, for a rule with kHeadingRecords, the unit velocity the reorder
// formed (storePlaneRecord), which the sums take as it is.
template <typename Rule, bool PlaneT>
__device__ __forceinline__ void addLoaded(typename Rule::RelSum& acc, const core::Vec3& d, float d2, const Vec4& vj,
                                          const typename Rule::Setup& su) {
  if constexpr (PlaneT && Rule::kHeadingRecords)
    Rule::addHeadingRel(acc, d2, core::xyz(vj), su);
  else
    Rule::addRel(acc, d, d2, [&] { return vj; }, su);
}

// What a rows kernel does once boid i's relative sums are complete: takes i out of them, the new
// velocity, the integration into posOut and, with counts, the next step's count of its cell; a
// sampled step (SampleT) also forms the boid's sums of the sample in v. WallsT: the reflect
// boundary's integration, which may turn the velocity, stored after it.
template <typename Rule, bool SampleT, bool WallsT = false>
__device__ __forceinline__ void finishRowsBoid(typename Rule::RelSum& acc, const BoidSampleAcc& sa, uint32_t i,
                                               uint32_t n, const Vec4& pi, const Vec4* __restrict__ vel,
                                               const GridSpec& g, const typename Rule::Params& b,
                                               const typename Rule::Setup& r2,
                                               Vec4* __restrict__ velOut, const RowsStepOut& out,
                                               BoidSampleOut& sampled) {
  const Vec4 vi = ldg4(vel + i);
  Rule::removeSelf(acc, vi, r2);
  if constexpr (SampleT) sampleBoid(acc, sa, i, n, vi, r2, r2.reach2, out.sample, sampled);
  core::Vec3 v = Rule::velocityRel(acc, vi, b, core::drawsOf<Rule>(out.draws, i));
  Vec4 p;
  if constexpr (WallsT) {
    p = core::boidIntegrate(pi, v, out.dt, out.halfSize, core::Boundary::Reflect);  // a wall turns v
    st4(velOut + i, core::make4(v, 0.0f));
  } else {
    st4(velOut + i, core::make4(v, 0.0f));
    p = core::boidIntegrate(pi, v, out.dt, out.halfSize);
  }
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
// I: the periodic boundary's images (Images; never with SampleT, see launchBoidsRows).
template <typename Rule, bool BatchedT, bool SampleT, Images I, bool PlaneT>
__device__ __forceinline__ void boidsRowsBody(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                                              const GridSpec* __restrict__ grid,
                                              const uint32_t* __restrict__ cellFirst, const typename Rule::Params& b,
                                              float searchRadius, Vec4* __restrict__ velOut,
                                              const RowsStepOut& out, BoidSampleOut& sampled) {
  static_assert(!(SampleT && I != Images::None), "a sampled step runs under the wrap boundary only");
  static_assert(!(SampleT && PlaneT), "a sampled step reads its candidates from the positions");
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const GridSpec g = *grid;
  const Vec4 pi = ldg4(pos + i);
  const core::Vec3 ci = core::xyz(pi);
  const typename Rule::Setup r2 = Rule::setup(b);
  typename Rule::RelSum acc = Rule::relZero([&] { return ldg4(vel + i); });
  BoidSampleAcc sa;
  // One row [s, e) searched from centre c (the boid, or one of its images); OwnRow says whether
  // it holds the boid itself (sampleCandidate).
  const auto walkRow = [&](auto ownRow, uint32_t s, uint32_t e, const core::Vec3 c) {
    [[maybe_unused]] constexpr bool OwnRowT = decltype(ownRow)::value;  // unused by the plane's batched loop
    uint32_t j = s;
    if constexpr (BatchedT && PlaneT) {
      // Four records per iteration; a record's velocity (or heading) is added inside the reach only.
      // In the plane every centre's z is 0: the offset's z is 0 and d^2 the plane's (distance2Plane).
      const auto add = [&](const Vec4& rj) {
        const core::Vec3 d = core::Vec3{rj.x - c.x, rj.y - c.y, 0.0f};
        const float d2 = core::distance2Plane(d.x, d.y);
        if (d2 < r2.reach2) addLoaded<Rule, true>(acc, d, d2, Vec4{rj.z, rj.w, 0.0f, 0.0f}, r2);
      };
      for (; j + 3 < e; j += 4) {
        Vec4 rs[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) rs[u] = ldg4(out.plane + j + u);
#pragma unroll
        for (int u = 0; u < 4; ++u) add(rs[u]);
      }
      for (; j < e; ++j) add(ldg4(out.plane + j));
    } else if constexpr (BatchedT) {
      const auto add = [&](const Vec4& pj, uint32_t q) {
        const core::Vec3 d = core::xyz(pj) - c;
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
        const core::Vec3 d = core::xyz(pj) - c;
        const float d2 = core::distance2(d);
        addLoaded<Rule, PlaneT>(acc, d, d2, vj, r2);
        sampleCandidate<SampleT, OwnRowT>(sa, d2, q == i, r2);
      };
      for (; j + 1 < e; j += 2) {
        Vec4 pa, pb, va, vb;
        loadCandidate<PlaneT>(pos, vel, out.plane, j, pa, va);
        loadCandidate<PlaneT>(pos, vel, out.plane, j + 1, pb, vb);
        add(pa, va, j);
        add(pb, vb, j + 1);
      }
      if (j < e) {
        Vec4 pa, va;
        loadCandidate<PlaneT>(pos, vel, out.plane, j, pa, va);
        add(pa, va, j);
      }
    }
  };
  core::forEachRow(g, ci, searchRadius, [&](uint32_t first, uint32_t last) {
    const uint32_t s = __ldg(cellFirst + first), e = __ldg(cellFirst + last + 1);
    if constexpr (SampleT) {
      if (s <= i && i < e) {
        walkRow(std::true_type{}, s, e, ci);
        return;
      }
    }
    walkRow(std::false_type{}, s, e, ci);
  });
  if constexpr (I == Images::Whole)
    forEachOtherImage(ci, searchRadius, out.halfSize, [&](core::Vec3 c) {
      core::forEachRowOneLoop(g, c, searchRadius, [&](uint32_t first, uint32_t last) {
        walkRow(std::false_type{}, __ldg(cellFirst + first), __ldg(cellFirst + last + 1), c);
      });
    });
  if (listedForImages<Rule, I>(i, ci, acc, searchRadius, out)) return;
  finishRowsBoid<Rule, SampleT, I == Images::Walls>(acc, sa, i, n, pi, vel, g, b, r2, velOut, out, sampled);
}

template <typename Rule, bool SampleT, Images I, bool PlaneT>
__global__ void __launch_bounds__(1024)
    boidsRowsKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                    const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst, typename Rule::Params b,
                    float searchRadius, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsBody<Rule, false, SampleT, I, PlaneT>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut, out, sampled);
  addSample<SampleT>(sampled, out);
}

// 48 registers: 10 blocks of 128 threads per SM instead of 8 (times 1024 threads it still fits).
constexpr int kRowsBatchedMaxRegisters = 48;

template <typename Rule, bool SampleT, Images I, bool PlaneT>
__global__ void __maxnreg__(kRowsBatchedMaxRegisters)
    boidsRowsBatchedKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                           const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                           typename Rule::Params b,
                           float searchRadius, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsBody<Rule, true, SampleT, I, PlaneT>(pos, vel, n, grid, cellFirst, b, searchRadius, velOut, out, sampled);
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

// I: as boidsRowsBody's; Whole walks the rows around the images at once after the table. The
// plane never takes this loop (core::rowLoop), so it reads the position and velocity arrays.
template <typename Rule, bool SampleT, Images I>
__device__ __forceinline__ void boidsRowsFlatBody(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel,
                                                  uint32_t n, const GridSpec* __restrict__ grid,
                                                  const uint32_t* __restrict__ cellFirst,
                                                  const typename Rule::Params& b,
                                                  float searchRadius, int tableRows, Vec4* __restrict__ velOut,
                                                  const RowsStepOut& out, BoidSampleOut& sampled) {
  static_assert(!(SampleT && I != Images::None), "a sampled step runs under the wrap boundary only");
  extern __shared__ uint32_t rowTable[];  // [tableRows][blockDim.x]
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;  // no barrier in the walk (a sampled kernel's block sum comes after it)
  const GridSpec g = *grid;
  const Vec4 pi = ldg4(pos + i);
  const core::Vec3 ci = core::xyz(pi);
  const typename Rule::Setup r2 = Rule::setup(b);
  typename Rule::RelSum acc = Rule::relZero([&] { return ldg4(vel + i); });
  BoidSampleAcc sa;
  // Every candidate of a row in the rule's sums (no reach test: these rows are crowded with
  // neighbours), the velocity loaded only if the rule asks for it. c: the centre the row was
  // found around (the boid, or one of its images).
  const auto addFrom = [&](uint32_t j, const core::Vec3& c) {
    const core::Vec3 d = core::xyz(ldg4(pos + j)) - c;
    const float d2 = core::distance2(d);
    Rule::addRel(acc, d, d2, [&] { return ldg4(vel + j); }, r2);
    sampleCandidate<SampleT, true>(sa, d2, j == i, r2);
  };
  const auto add = [&](uint32_t j) { addFrom(j, ci); };
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
  if constexpr (I == Images::Whole)
    forEachOtherImage(ci, searchRadius, out.halfSize, [&](core::Vec3 c) {
      core::forEachRow(g, c, searchRadius, [&](uint32_t first, uint32_t last) {
        const uint32_t e = __ldg(cellFirst + last + 1);
        for (uint32_t j = __ldg(cellFirst + first); j < e; ++j) addFrom(j, c);
      });
    });
  if (listedForImages<Rule, I>(i, ci, acc, searchRadius, out)) return;
  finishRowsBoid<Rule, SampleT, I == Images::Walls>(acc, sa, i, n, pi, vel, g, b, r2, velOut, out, sampled);
}

template <typename Rule, bool SampleT, Images I>
__global__ void __launch_bounds__(1024)
    boidsRowsFlatKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                        const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                        typename Rule::Params b,
                        float searchRadius, int tableRows, Vec4* __restrict__ velOut, RowsStepOut out) {
  letTheSampleStart<SampleT>();
  BoidSampleOut sampled;
  boidsRowsFlatBody<Rule, SampleT, I>(pos, vel, n, grid, cellFirst, b, searchRadius, tableRows, velOut, out,
                                           sampled);
  addSample<SampleT>(sampled, out);
}

// A group of kImagesLanes lanes serves one listed boid of the image kernel: half a warp, since
// the searches around images are a few rows of a few candidates each.
constexpr uint32_t kImagesLanes = 16;
static_assert(kWarpSize % kImagesLanes == 0, "whole groups in a warp");

// The candidates of every row of a search of `radius` around centre c, spread over the lanes of
// a group (every lane of the group calls it with the same c; `mask`: the group's lanes): lane r
// takes row r of the rowSphere (a group's width of rows at a time), a scan of the rows' lengths
// across the group lines the candidates up, and lane t takes the t-th candidate of every group's
// width, finding its row in the scan by a binary search of shuffles. A whole search then costs a
// few dependent loads, not one per row or candidate.
template <typename F>
__device__ __forceinline__ void forEachRowCandidateOfGroup(const GridSpec& g, const uint32_t* __restrict__ cellFirst,
                                                           const core::Vec3& c, float radius, unsigned mask, F&& f) {
  constexpr int kLanes = static_cast<int>(kImagesLanes);
  const uint32_t lane = threadIdx.x % kImagesLanes;
  const core::RowSphere rs = core::rowSphere(g, c, radius);
  const int rows = rs.ny * rs.nz;
  for (int base = 0; base < rows; base += kLanes) {
    const int r = base + static_cast<int>(lane);
    uint32_t s = 0, len = 0;
    if (r < rows) {
      uint32_t first = 0, last = 0;
      if (rs.rowAt(g, rs.zlo + r / rs.ny, rs.ylo + r % rs.ny, first, last)) {
        s = __ldg(cellFirst + first);
        len = __ldg(cellFirst + last + 1) - s;
      }
    }
    uint32_t end = len;  // inclusive scan: the candidates of rows base .. r
#pragma unroll
    for (int off = 1; off < kLanes; off *= 2) {
      const uint32_t up = __shfl_up_sync(mask, end, off, kLanes);
      if (static_cast<int>(lane) >= off) end += up;
    }
    const uint32_t total = __shfl_sync(mask, end, kLanes - 1, kLanes);
    for (uint32_t t0 = 0; t0 < total; t0 += kImagesLanes) {
      const uint32_t t = t0 + lane;
      // The first lane q whose scan passes t holds t's row.
      int q = 0;
#pragma unroll
      for (int step = kLanes / 2; step > 0; step /= 2)
        if (__shfl_sync(mask, end, q + step - 1, kLanes) <= t) q += step;
      const uint32_t rowStart = __shfl_sync(mask, s, q, kLanes);
      const uint32_t rowEnd = __shfl_sync(mask, end, q, kLanes), rowLen = __shfl_sync(mask, len, q, kLanes);
      if (t < total) f(rowStart + (t - (rowEnd - rowLen)));
    }
  }
}

// The image kernel of the periodic boundary: for each boid the Defer kernel listed, the
// candidates of the rows around its images (forEachOtherImage), each measured from its image, and
// then the boid's finish. A group of lanes per listed boid (forEachRowCandidateOfGroup); the
// lanes' partial sums meet in a fixed tree of shuffles (shuffleCombine) and join the boid's sums
// of its own rows. A grid-stride loop over the list, whose length only the device knows. The boid
// itself lies a world's width from its images, never a candidate of theirs.
template <typename Rule>
__global__ void __launch_bounds__(1024)
    boidsRowsImagesKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n,
                          const GridSpec* __restrict__ grid, const uint32_t* __restrict__ cellFirst,
                          typename Rule::Params b, float searchRadius, Vec4* __restrict__ velOut, RowsStepOut out) {
  const uint32_t count = *out.imagedCount;
  const GridSpec g = *grid;
  const typename Rule::Setup r2 = Rule::setup(b);
  const uint32_t lane = threadIdx.x % kImagesLanes, groups = gridDim.x * (blockDim.x / kImagesLanes);
  const unsigned mask = static_cast<unsigned>((1ull << kImagesLanes) - 1ull)
                        << (threadIdx.x % kWarpSize / kImagesLanes * kImagesLanes);
  for (uint32_t k = globalThreadIndex() / kImagesLanes; k < count; k += groups) {  // the same k in the group
    const uint32_t i = __ldg(out.imaged + k);
    const Vec4 pi = ldg4(pos + i);
    typename Rule::RelSum part = Rule::relZero([&] { return ldg4(vel + i); });
    forEachOtherImage(core::xyz(pi), searchRadius, out.halfSize, [&](core::Vec3 c) {
      forEachRowCandidateOfGroup(g, cellFirst, c, searchRadius, mask, [&](uint32_t j) {
        const core::Vec3 d = core::xyz(ldg4(pos + j)) - c;
        rulePairAddRel<Rule>(part, d, core::distance2(d), vel, j, r2);
      });
    });
#pragma unroll
    for (int off = static_cast<int>(kImagesLanes) / 2; off > 0; off /= 2) shuffleCombine<Rule>(part, off, mask);
    if (lane == 0) {
      typename Rule::RelSum acc = Rule::combine(static_cast<const typename Rule::RelSum*>(out.imagedSums)[k], part);
      BoidSampleAcc sa;
      BoidSampleOut sampled;
      finishRowsBoid<Rule, false>(acc, sa, i, n, pi, vel, g, b, r2, velOut, out, sampled);
    }
  }
}

}  // namespace

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

template <typename Rule, bool SampleT, Images I, bool PlaneT>
void launchRowsLoops(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const typename Rule::Params& b, float searchRadius,
                     core::RowLoop loop, int flatTableRows, Vec4* d_velOut, const RowsStepOut& out,
                     const LaunchConfig& lc) {
  const unsigned blocks = lc.blocksFor(n);
  if (loop == core::RowLoop::Flat) {
    const size_t bytes = size_t(flatTableRows) * size_t(lc.block) * sizeof(uint32_t);
    if (bytes > kDefaultSharedBytes)  // at most kRowsFlatMaxTableRows * 1024 * 4 bytes: fits every sm_90 SM
      MURMUR_CUDA_CHECK(cudaFuncSetAttribute(boidsRowsFlatKernel<Rule, SampleT, I>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    boidsRowsFlatKernel<Rule, SampleT, I><<<blocks, lc.block, bytes, lc.stream>>>(
        d_pos, d_vel, n, d_grid, d_cellFirst, b, searchRadius, flatTableRows, d_velOut, out);
  } else if (loop == core::RowLoop::Batched) {
    boidsRowsBatchedKernel<Rule, SampleT, I, PlaneT><<<blocks, lc.block, 0, lc.stream>>>(
        d_pos, d_vel, n, d_grid, d_cellFirst, b, searchRadius, d_velOut, out);
  } else {
    boidsRowsKernel<Rule, SampleT, I, PlaneT><<<blocks, lc.block, 0, lc.stream>>>(d_pos, d_vel, n, d_grid, d_cellFirst, b,
                                                                         searchRadius, d_velOut, out);
  }
  MURMUR_CUDA_LAUNCH_CHECK();
}

// The kernel of `loop` for rule Rule with images I, as launchRowsLoops launches it.
template <typename Rule, Images I, bool PlaneT>
const void* rowsKernelOf(core::RowLoop loop) {
  if (loop == core::RowLoop::Flat) return reinterpret_cast<const void*>(boidsRowsFlatKernel<Rule, false, I>);
  if (loop == core::RowLoop::Batched) return reinterpret_cast<const void*>(boidsRowsBatchedKernel<Rule, false, I, PlaneT>);
  return reinterpret_cast<const void*>(boidsRowsKernel<Rule, false, I, PlaneT>);
}

// Resident blocks per SM of a kernel at this block size and dynamic shared memory.
int residentBlocks(const void* kernel, int block, size_t sharedBytes) {
  int blocks = 0;
  MURMUR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, sharedBytes));
  return blocks;
}

// The image kernel's grid: a group of lanes for every boid where that is few, else enough blocks
// to fill every SM (its loop strides over the list; a few percent of the boids lie near a face).
unsigned imagesBlocks(uint32_t n, const LaunchConfig& lc) {
  constexpr unsigned kImagesBlocksPerSm = 8;
  int device = 0, sms = 0;
  MURMUR_CUDA_CHECK(cudaGetDevice(&device));
  MURMUR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned all = lc.blocksFor(size_t(n) * kImagesLanes);
  return all < kImagesBlocksPerSm * unsigned(sms) ? all : kImagesBlocksPerSm * unsigned(sms);
}

}  // namespace

bool periodicRowsSplit(const core::SimParams& p, core::RowLoop loop, int flatTableRows, int block) {
  const size_t bytes = loop == core::RowLoop::Flat ? size_t(flatTableRows) * size_t(block) * sizeof(uint32_t) : 0;
  bool split = false;
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    withBool(p.dims == 2, [&](auto plane) {
      constexpr bool PlaneT = decltype(plane)::value;
      const void* whole = rowsKernelOf<Rule, Images::Whole, PlaneT>(loop);
      const void* defer = rowsKernelOf<Rule, Images::Defer, PlaneT>(loop);
      if (bytes > kDefaultSharedBytes)
        for (const void* k : {whole, defer})
          MURMUR_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
      split = residentBlocks(whole, block, bytes) < residentBlocks(defer, block, bytes);
    });
  });
  return split;
}

size_t rowsImagedSumBytes(const core::SimParams& p) {
  size_t bytes = 0;
  core::withLocalRule(p, [&](auto rule) { bytes = sizeof(typename decltype(rule)::RelSum); });
  return bytes;
}

void launchBoidsRows(const Vec4* d_pos, const Vec4* d_vel, uint32_t n, const GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const core::SimParams& p, float searchRadius, core::RowLoop loop,
                     int flatTableRows, Vec4* d_velOut, const RowsStepOut& out, const LaunchConfig& lc) {
  // A sampled step's observables come from the candidates of the boid's own search; under the
  // periodic boundary the engine samples with its observer instead (RowsPipeline::samplesInStep),
  // so the sampled kernels are instantiated for the wrap boundary only.
  if (n == 0) return;
  if (out.sample.sums && p.boundary != core::Boundary::Wrap)
    throw std::logic_error("launchBoidsRows: a sampled rows step runs under the wrap boundary only");
  core::withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    if (out.sample.sums) {
      // The sample reads the boids' neighbour counts from the sums (rows_sample.cuh): only the
      // rules that keep them sample (core::samplesBoidCounts).
      if constexpr (Rule::kBoidCounts)
        launchRowsLoops<Rule, true, Images::None, false>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p),
                                                         searchRadius, loop, flatTableRows, d_velOut, out, lc);
      else
        throw std::logic_error("launchBoidsRows: the active rule keeps no boids counts to sample");
    } else {
      withBool(out.plane != nullptr, [&](auto plane) {
        constexpr bool PlaneT = decltype(plane)::value;
        if (p.boundary == core::Boundary::Periodic && !out.imagedSplit) {
          launchRowsLoops<Rule, false, Images::Whole, PlaneT>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p),
                                                               searchRadius, loop, flatTableRows, d_velOut, out, lc);
        } else if (p.boundary == core::Boundary::Periodic) {
          if (!out.imaged || !out.imagedCount || !out.imagedSums)
            throw std::logic_error("launchBoidsRows: the periodic boundary's split needs RowsStepOut's imaged lists");
          MURMUR_CUDA_CHECK(cudaMemsetAsync(out.imagedCount, 0, sizeof(uint32_t), lc.stream));
          launchRowsLoops<Rule, false, Images::Defer, PlaneT>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p),
                                                               searchRadius, loop, flatTableRows, d_velOut, out, lc);
          boidsRowsImagesKernel<Rule><<<imagesBlocks(n, lc), lc.block, 0, lc.stream>>>(
              d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p), searchRadius, d_velOut, out);
          MURMUR_CUDA_LAUNCH_CHECK();
        } else if (p.boundary == core::Boundary::Reflect) {
          launchRowsLoops<Rule, false, Images::Walls, PlaneT>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p),
                                                               searchRadius, loop, flatTableRows, d_velOut, out, lc);
        } else {
          launchRowsLoops<Rule, false, Images::None, PlaneT>(d_pos, d_vel, n, d_grid, d_cellFirst, Rule::params(p),
                                                              searchRadius, loop, flatTableRows, d_velOut, out, lc);
        }
      });
    }
  });
}

}  // namespace murmur::cuda
