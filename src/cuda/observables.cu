// Observables on the GPU (cuda/observables.h). Compiled without FMA contraction (CMakeLists.txt):
// the observables' grid decides cells and search ranges with the CPU reference's roundings, so
// the neighbour counts, the nearest neighbours and the flock graph are the CPU's exactly; only
// the order of the double sums differs.
#include "cuda/observables.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/grid.h"
#include "core/physics.h"
#include "core/rule_table.h"
#include "cuda/boid_pair.cuh"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_utils.cuh"
#include "cuda/grid_build.h"
#include "cuda/launch.h"

namespace murmur::cuda {

using core::GridSpec;
using core::Obs;
using core::Vec3;
using core::Vec4;

namespace {

// The sums one sample adds up on the device (doubles) and its counters.
enum Sum {
  kMillSum = kNumBoidSums, kMillWeight,  // flocks (the boids' BoidSum first)
  kCentreX, kCentreY, kCentreZ,          // the group columns: the positions' sums,
  kRotX, kRotY, kRotZ, kAngX, kAngY, kAngZ,  // then core::addGroupSpin's about their mean
  kNumSums
};
enum Counter { kFlockCount, kLargest, kBin1, kBin2, kBin10, kBin100, kBin1000, kChanged, kNumCounters };

__global__ void gatherKernel(const uint32_t* __restrict__ index, uint32_t n, const Vec4* __restrict__ pos,
                             const Vec4* __restrict__ vel, Vec4* __restrict__ spos, Vec4* __restrict__ svel) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t i = index[k];
  st4(spos + k, ldg4(pos + i));
  st4(svel + k, ldg4(vel + i));
}

struct GridRef {
  GridSpec g;
  const uint32_t* start;
  const uint32_t* end;
};

template <typename F>
__device__ void forEachInCell(const GridRef& r, int cx, int cy, int cz, F&& f) {
  const uint32_t key = core::cellKey(r.g, cx, cy, cz);
  const uint32_t s = r.start[key];
  if (s == core::kEmptyCell) return;
  const uint32_t e = r.end[key];
  for (uint32_t q = s; q < e; ++q) f(q);
}

// As the CPU reference (core/observables.cpp): cells at Chebyshev distance k from c.
template <typename F>
__device__ void forEachInShell(const GridRef& r, core::Int3 c, int k, F&& f) {
  const core::Int3 d = r.g.dims;
  for (int cz = max(c.z - k, 0); cz <= min(c.z + k, d.z - 1); ++cz)
    for (int cy = max(c.y - k, 0); cy <= min(c.y + k, d.y - 1); ++cy) {
      const bool face = abs(cz - c.z) == k || abs(cy - c.y) == k;
      for (int cx = max(c.x - k, 0); cx <= min(c.x + k, d.x - 1); ++cx) {
        if (!face && abs(cx - c.x) != k) continue;
        forEachInCell(r, cx, cy, cz, f);
      }
    }
}

// The boundary as the kernels take it: periodic (core::Boundary::Periodic) and the world's
// half-size.
struct Faces {
  bool periodic;
  float halfSize;
};

// Calls f(q, d) for every slot q in the cells within `radius` of p and, under the periodic
// boundary, of each of its images (core::forEachImage), d the offset of q from the centre it was
// found near: as the CPU reference's forEachCandidate (core/observables.cpp).
template <typename F>
__device__ void forEachCandidate(const GridRef& r, const Vec4* __restrict__ spos, const Vec3& p, float radius,
                                 const Faces& faces, F&& f) {
  core::forEachImage(p, radius, faces.halfSize, faces.periodic, [&](const Vec3& c) {
    const core::CellRange cr = core::cellRangeForRadius(r.g, c, radius);
    for (int cz = cr.lo.z; cz <= cr.hi.z; ++cz)
      for (int cy = cr.lo.y; cy <= cr.hi.y; ++cy)
        for (int cx = cr.lo.x; cx <= cr.hi.x; ++cx)
          forEachInCell(r, cx, cy, cz, [&](uint32_t q) { f(q, core::xyz(ldg4(spos + q)) - c); });
  });
}

// Per boid (sorted slot k): unit velocity, speed, neighbours within each rule radius, the nearest
// other boid's distance (by the minimum image under the periodic boundary, the shells wrapping
// around the faces, as the CPU reference's nearestDistance2Periodic).
__global__ void boidsStatsKernel(GridRef r, const Vec4* __restrict__ spos, const Vec4* __restrict__ svel, uint32_t n,
                                 core::BoidsRule::Setup r2, float rMax, Faces faces, double* sums) {
  const uint32_t k = globalThreadIndex();
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (k < n) {
    setSpeedAndHeading(ldg4(svel + k), v);
    const Vec3 p = core::xyz(ldg4(spos + k));
    unsigned c1 = 0, c2 = 0, c3 = 0;
    forEachCandidate(r, spos, p, rMax, faces, [&](uint32_t q, const Vec3& d) {
      if (q == k) return;
      const float d2 = core::distance2(d);
      c1 += d2 < r2.r1, c2 += d2 < r2.r2, c3 += d2 < r2.r3;
    });
    v[kCount1] = c1, v[kCount2] = c2, v[kCount3] = c3;
    if (n > 1 && faces.periodic) {
      const core::Int3 c = core::cellOf(r.g, p);
      const int maxK = core::periodicShellReach(r.g.dims);
      float best = INFINITY;
      for (int sh = 0; sh <= maxK; ++sh) {
        core::forEachPeriodicShellCell(r.g.dims, c, sh, [&](int cx, int cy, int cz) {
          forEachInCell(r, cx, cy, cz, [&](uint32_t q) {
            if (q != k)
              best = fminf(best, core::distance2(core::minimumImageOffset(p, core::xyz(ldg4(spos + q)), faces.halfSize)));
          });
        });
        const float bound = core::periodicShellBound(r.g, sh, faces.halfSize);
        if (bound > 0.0f && best < bound * bound) break;
      }
      v[kNearest] = sqrt(double(best));
    } else if (n > 1) {
      const core::Int3 c = core::cellOf(r.g, p);
      const core::Int3 d = r.g.dims;
      const int maxK = max(max(max(c.x, c.y), max(c.z, d.x - 1 - c.x)), max(d.y - 1 - c.y, d.z - 1 - c.z));
      float best = INFINITY;
      for (int sh = 0; sh <= maxK; ++sh) {
        forEachInShell(r, c, sh, [&](uint32_t q) {
          if (q != k) best = fminf(best, core::distance2(core::xyz(ldg4(spos + q)) - p));
        });
        const float bound = float(sh) * r.g.cellWidth * (1.0f - 1e-4f);
        if (best < bound * bound) break;
      }
      v[kNearest] = sqrt(double(best));
    }
  }
  blockAtomicAdd<kNumBoidSums>(v, sums + kPolX);
}

__device__ __forceinline__ uint32_t findRoot(const uint32_t* parent, uint32_t a) {
  for (;;) {
    const uint32_t p = *reinterpret_cast<const volatile uint32_t*>(parent + a);
    if (p == a) return a;
    a = p;
  }
}

// Hooking: for every edge (k, q) of the flock graph, the larger root points at the smaller one.
// Parents only decrease, so the forest stays acyclic; a pass that changes nothing leaves every
// edge inside one tree. The edges are the CPU reference's (by the minimum image under the
// periodic boundary).
__global__ void hookKernel(GridRef r, const Vec4* __restrict__ spos, uint32_t n, float radius, float r1sq, Faces faces,
                           uint32_t* parent, unsigned long long* counters) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const Vec3 p = core::xyz(ldg4(spos + k));
  bool changed = false;
  forEachCandidate(r, spos, p, radius, faces, [&](uint32_t q, const Vec3& d) {
    if (q <= k || !(core::distance2(d) < r1sq)) return;
    const uint32_t a = findRoot(parent, k), b = findRoot(parent, q);
    if (a == b) return;
    const uint32_t hi = max(a, b), lo = min(a, b);
    if (atomicMin(parent + hi, lo) > lo) changed = true;
  });
  if (changed) counters[kChanged] = 1;
}

__global__ void iotaKernel(uint32_t* parent, uint32_t n) {
  const uint32_t k = globalThreadIndex();
  if (k < n) parent[k] = k;
}

__global__ void compressKernel(uint32_t* parent, uint32_t n) {
  const uint32_t k = globalThreadIndex();
  if (k < n) parent[k] = findRoot(parent, k);
}

// Where a flock's sums lie in DeviceObserver's flockAcc, `stride` doubles per root: the size at
// 0; the centre's sums at 1 to 3 (wrap) or 1 to 6 (periodic); the angular momentum about the
// centre (3) and the sum of |r - c| |v| from `spin` on.
struct FlockLayout {
  int stride, spin;
};
// Wrap: [size, sum x, sum y, sum z, L (3), den].
constexpr FlockLayout kWrapFlocks{8, 4};
// Periodic (core::circularMean): [size, the sums of the angles' cosines (3), then the circular
// mean c0 (3); the sums of their sines (3), then the sums of the offsets from c0 by the minimum
// image (3); L (3), den].
constexpr FlockLayout kPeriodicFlocks{11, 7};

// Per flock (at its root): size, then centre sums (wrap).
__global__ void flockSumsKernel(const uint32_t* __restrict__ parent, const Vec4* __restrict__ spos, uint32_t n,
                                double* acc) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t f = parent[k];
  const Vec4 p = ldg4(spos + k);
  atomicAdd(acc + 8 * size_t(f) + 0, 1.0);
  atomicAdd(acc + 8 * size_t(f) + 1, double(p.x));
  atomicAdd(acc + 8 * size_t(f) + 2, double(p.y));
  atomicAdd(acc + 8 * size_t(f) + 3, double(p.z));
}

// Periodic, per flock (kPeriodicFlocks): size, and each axis' sums of the cosines and sines of
// the boids' angles (core::periodicAngle).
__global__ void flockAnglesKernel(const uint32_t* __restrict__ parent, const Vec4* __restrict__ spos, uint32_t n,
                                  float halfSize, double* acc) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  double* a = acc + kPeriodicFlocks.stride * size_t(parent[k]);
  const Vec4 p = ldg4(spos + k);
  const double angle[3] = {core::periodicAngle(p.x, halfSize), core::periodicAngle(p.y, halfSize),
                           core::periodicAngle(p.z, halfSize)};
  atomicAdd(a, 1.0);
  for (int c = 0; c < 3; ++c) {
    atomicAdd(a + 1 + c, cos(angle[c]));
    atomicAdd(a + 4 + c, sin(angle[c]));
  }
}

// Periodic, per root: the circular mean c0 of each axis in place of the cosines' sum, and the
// sines' sums zeroed for the offsets from c0.
__global__ void flockCircularMeanKernel(const uint32_t* __restrict__ parent, uint32_t n, float halfSize, double* acc) {
  const uint32_t k = globalThreadIndex();
  if (k >= n || parent[k] != k) return;
  double* a = acc + kPeriodicFlocks.stride * size_t(k);
  for (int c = 0; c < 3; ++c) {
    a[1 + c] = core::circularMean(a[4 + c], a[1 + c], halfSize);
    a[4 + c] = 0.0;
  }
}

// Periodic, per flock: the sums of the boids' offsets from c0 by the minimum image.
__global__ void flockOffsetsKernel(const uint32_t* __restrict__ parent, const Vec4* __restrict__ spos, uint32_t n,
                                   float halfSize, double* acc) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  double* a = acc + kPeriodicFlocks.stride * size_t(parent[k]);
  const Vec4 p = ldg4(spos + k);
  atomicAdd(a + 4, core::minimumImage(p.x - a[1], halfSize));
  atomicAdd(a + 5, core::minimumImage(p.y - a[2], halfSize));
  atomicAdd(a + 6, core::minimumImage(p.z - a[3], halfSize));
}

// Per flock: the angular momentum about its centre and the sum of |r - c| |v|, r - c as the CPU
// reference forms it (the position less the mean position; periodic: the offset from c0 by the
// minimum image less the offsets' mean).
__global__ void flockSpinKernel(const uint32_t* __restrict__ parent, const Vec4* __restrict__ spos,
                                const Vec4* __restrict__ svel, uint32_t n, Faces faces, double* acc) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t f = parent[k];
  const FlockLayout layout = faces.periodic ? kPeriodicFlocks : kWrapFlocks;
  double* a = acc + layout.stride * size_t(f);
  const Vec4 p = ldg4(spos + k), v = ldg4(svel + k);
  double dx, dy, dz;
  if (!faces.periodic) {
    dx = p.x - a[1] / a[0], dy = p.y - a[2] / a[0], dz = p.z - a[3] / a[0];
  } else {
    const float h = faces.halfSize;
    dx = core::minimumImage(p.x - a[1], h) - a[4] / a[0];
    dy = core::minimumImage(p.y - a[2], h) - a[5] / a[0];
    dz = core::minimumImage(p.z - a[3], h) - a[6] / a[0];
  }
  const double vx = v.x, vy = v.y, vz = v.z;
  double* o = a + layout.spin;
  atomicAdd(o + 0, dy * vz - dz * vy);
  atomicAdd(o + 1, dz * vx - dx * vz);
  atomicAdd(o + 2, dx * vy - dy * vx);
  atomicAdd(o + 3, sqrt(dx * dx + dy * dy + dz * dz) * sqrt(vx * vx + vy * vy + vz * vz));
}

__global__ void flockTallyKernel(const uint32_t* __restrict__ parent, const double* __restrict__ acc, uint32_t n,
                                 FlockLayout layout, uint32_t minSize, double* sums, unsigned long long* counters) {
  const uint32_t k = globalThreadIndex();
  double v[2] = {0, 0};
  if (k < n && parent[k] == k) {
    const double* a = acc + layout.stride * size_t(k);
    const unsigned long long size = static_cast<unsigned long long>(a[0]);
    atomicAdd(counters + kFlockCount, 1ull);
    atomicMax(counters + kLargest, size);
    const int bin = size < 2 ? kBin1 : size < 10 ? kBin2 : size < 100 ? kBin10 : size < 1000 ? kBin100 : kBin1000;
    atomicAdd(counters + bin, 1ull);
    if (size >= minSize) {
      const double* l = a + layout.spin;
      v[1] = a[0];
      if (l[3] > 0) v[0] = a[0] * sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]) / l[3];
    }
  }
  blockAtomicAdd<2>(v, sums + kMillSum);
}

// The group columns (core::groupObservablesApply), as the CPU reference's observeGroup: the sums
// of the positions, for the centroid, then in a second pass each boid's core::addGroupSpin about
// it (the centroid from the first pass's sums on the device).
__global__ void groupCentreKernel(const Vec4* __restrict__ spos, uint32_t n, double* sums) {
  const uint32_t k = globalThreadIndex();
  double v[3] = {0, 0, 0};
  if (k < n) {
    const Vec4 p = ldg4(spos + k);
    v[0] = p.x, v[1] = p.y, v[2] = p.z;
  }
  blockAtomicAdd<3>(v, sums + kCentreX);
}

__global__ void groupSpinKernel(const Vec4* __restrict__ spos, const Vec4* __restrict__ svel, uint32_t n,
                                double* sums) {
  const uint32_t k = globalThreadIndex();
  double v[6] = {0, 0, 0, 0, 0, 0};
  if (k < n) {
    const double c[3] = {sums[kCentreX] / double(n), sums[kCentreY] / double(n), sums[kCentreZ] / double(n)};
    core::addGroupSpin(ldg4(spos + k), ldg4(svel + k), c, v, v + 3);
  }
  blockAtomicAdd<6>(v, sums + kRotX);
}

// The scalar boids columns from their sums (BoidSum) over n boids.
void setBoidScalars(const double* sums, size_t n, core::Observables& out) {
  const double inv = 1.0 / double(n);
  out[Obs::Polarization] = std::sqrt(sums[kPolX] * sums[kPolX] + sums[kPolY] * sums[kPolY] + sums[kPolZ] * sums[kPolZ]) * inv;
  out[Obs::MeanSpeed] = sums[kSpeed] * inv;
  if (n > 1) out[Obs::NearestDistance] = sums[kNearest] * inv;
  out[Obs::NeighboursCohesion] = sums[kCount1] * inv;
  out[Obs::NeighboursSeparation] = sums[kCount2] * inv;
  out[Obs::NeighboursAlignment] = sums[kCount3] * inv;
}

}  // namespace

struct DeviceObserver::Buffers {
  // Each array is allocated on the first sample that needs it and when N grows: boids 48 bytes
  // per body and 8 per cell (+ 68 per body with flocks, 92 under the periodic boundary).
  size_t gridN = 0, flocksN = 0, sampleN = 0;
  uint32_t cells = 0;
  DeviceBuffer<uint32_t> keys[2], index[2], cellStart, cellEnd, parent;
  DeviceBuffer<Vec4> spos, svel;
  DeviceBuffer<double> flockAcc, sums;
  DeviceBuffer<unsigned long long> counters;
  DeviceBuffer<GridSpec> grid;
  DeviceBuffer<unsigned char> temp;
  // A force pass's sample: its sums and, in the word after them, the count of the beyond list
  // and the count of finished blocks, zeroed once here and then by each sample's last block; the
  // totals land in sampleHost (pinned, written by the device: no copy to queue). The list, 8
  // bytes per body.
  DeviceBuffer<double> sampleSums;
  DeviceBuffer<uint32_t> beyond;
  DeviceBuffer<float> beyondNearest2;
  // The listed boids' distances by id and the stamp of the sample that settled them (zero: none;
  // stamps start at 2, so no zeroed entry matches the sample after the first).
  DeviceBuffer<uint2> hint;
  uint32_t stamp = 1;
  double* sampleHost = nullptr;
  double* sampleHostOnDevice = nullptr;

  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    if (sampleHost) cudaFreeHost(sampleHost);
  }

  void ensureBoids(size_t n, bool withFlocks, const FlockLayout& layout) {
    if (n > gridN) {
      for (auto* b : {&keys[0], &keys[1], &index[0], &index[1]}) b->allocate(n);
      spos.allocate(n), svel.allocate(n);
      gridN = n;
    }
    if (withFlocks && n > flocksN) {
      parent.allocate(n);
      flocksN = n;
    }
    if (withFlocks && size_t(layout.stride) * n > flockAcc.size()) flockAcc.allocate(size_t(layout.stride) * n);
  }
  void ensureSample(size_t n) {
    if (n <= sampleN) return;
    beyond.allocate(n), beyondNearest2.allocate(n), hint.allocate(n);
    MURMUR_CUDA_CHECK(cudaMemset(hint.get(), 0, hint.bytes()));
    MURMUR_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any stream's sample reads it
    sampleN = n;
  }
  void ensureTemp(size_t bytes) {
    if (bytes > temp.size()) temp.allocate(bytes);
  }
};

DeviceObserver::DeviceObserver() : buf_(std::make_unique<Buffers>()) {
  buf_->sums.allocate(kNumSums);
  buf_->counters.allocate(kNumCounters);
  buf_->grid.allocate(1);
  Buffers& B = *buf_;
  B.sampleSums.allocate(kNumBoidSums + 1);
  MURMUR_CUDA_CHECK(cudaMemset(B.sampleSums.get(), 0, B.sampleSums.bytes()));
  MURMUR_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any stream's first sample
  MURMUR_CUDA_CHECK(
      cudaHostAlloc(reinterpret_cast<void**>(&B.sampleHost), kNumBoidSums * sizeof(double), cudaHostAllocMapped));
  MURMUR_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&B.sampleHostOnDevice), B.sampleHost, 0));
}
DeviceObserver::~DeviceObserver() = default;

BoidSampleSums DeviceObserver::beginBoidSample(size_t n) {
  Buffers& B = *buf_;
  B.ensureSample(n);
  uint32_t* counts = reinterpret_cast<uint32_t*>(B.sampleSums.get() + kNumBoidSums);
  return BoidSampleSums{B.sampleSums.get(), B.beyond.get(), B.beyondNearest2.get(), counts, counts + 1,
                        B.sampleHostOnDevice, B.hint.get(), ++B.stamp};
}

core::Observables DeviceObserver::finishBoidSample(size_t n, cudaStream_t stream) {
  MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream));  // the pass's last block has written sampleHost
  core::Observables out;
  setBoidScalars(buf_->sampleHost, n, out);
  return out;
}

core::Observables DeviceObserver::observe(const core::DeviceAccess::Bodies& b, const core::SimParams& p,
                                          const core::ObserveRequest& req, cudaStream_t stream) {
  core::Observables out;
  const uint32_t n = static_cast<uint32_t>(b.n);
  if (n == 0) return out;
  Buffers& B = *buf_;
  const LaunchConfig lc{b.blockSize > 0 ? b.blockSize : 256, stream};
  const unsigned blocks = lc.blocksFor(n);
  MURMUR_CUDA_CHECK(cudaMemsetAsync(B.sums.get(), 0, B.sums.bytes(), stream));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(B.counters.get(), 0, B.counters.bytes(), stream));
  std::vector<double> sums(kNumSums);
  std::vector<unsigned long long> counters(kNumCounters);
  const auto download = [&] {
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(sums.data(), B.sums.get(), B.sums.bytes(), cudaMemcpyDeviceToHost, stream));
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(counters.data(), B.counters.get(), B.counters.bytes(), cudaMemcpyDeviceToHost,
                                      stream));
    MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream));
  };

  if (core::runsLocalRule(p)) {
    const Faces faces{p.boundary == core::Boundary::Periodic, p.halfSize};
    const FlockLayout layout = faces.periodic ? kPeriodicFlocks : kWrapFlocks;
    B.ensureBoids(n, req.flocks, layout);
    const GridSpec g = core::observablesGrid(p, n);
    if (g.numCells > B.cells) {
      B.cellStart.allocate(g.numCells), B.cellEnd.allocate(g.numCells);
      B.cells = g.numCells;
    }
    launchStoreGrid(B.grid.get(), g, lc);
    launchLabelCells(b.pos, n, B.grid.get(), B.keys[0].get(), B.index[0].get(), lc);
    const int bits = keyBitsFor(g.numCells);
    const size_t tempBytes = sortTempBytes(n, bits);
    B.ensureTemp(tempBytes);
    const SortBuffers sb{{B.keys[0].get(), B.keys[1].get()}, {B.index[0].get(), B.index[1].get()}, B.temp.get(),
                         tempBytes};
    const int sel = sortByCell(sb, n, bits, lc);
    launchFindCellBounds(B.keys[sel].get(), n, g.numCells, B.cellStart.get(), B.cellEnd.get(), lc);
    gatherKernel<<<blocks, lc.block, 0, stream>>>(B.index[sel].get(), n, b.pos, b.vel, B.spos.get(), B.svel.get());
    MURMUR_CUDA_LAUNCH_CHECK();
    const GridRef ref{g, B.cellStart.get(), B.cellEnd.get()};
    boidsStatsKernel<<<blocks, lc.block, 0, stream>>>(ref, B.spos.get(), B.svel.get(), n, core::BoidsRule::setup(core::observedBoidParams(p)),
                                                      core::searchRadius(p), faces, B.sums.get());
    MURMUR_CUDA_LAUNCH_CHECK();
    const bool group = core::groupObservablesApply(p.boundary);
    if (group) {
      groupCentreKernel<<<blocks, lc.block, 0, stream>>>(B.spos.get(), n, B.sums.get());
      MURMUR_CUDA_LAUNCH_CHECK();
      groupSpinKernel<<<blocks, lc.block, 0, stream>>>(B.spos.get(), B.svel.get(), n, B.sums.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    if (req.flocks) {
      iotaKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), n);
      MURMUR_CUDA_LAUNCH_CHECK();
      for (;;) {
        unsigned long long changed = 0;
        MURMUR_CUDA_CHECK(cudaMemsetAsync(B.counters.get() + kChanged, 0, sizeof(unsigned long long), stream));
        hookKernel<<<blocks, lc.block, 0, stream>>>(ref, B.spos.get(), n, core::observedBoidParams(p).cohesionRadius,
                                                    core::BoidsRule::setup(core::observedBoidParams(p)).r1, faces,
                                                    B.parent.get(),
                                                    B.counters.get());
        MURMUR_CUDA_LAUNCH_CHECK();
        compressKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), n);
        MURMUR_CUDA_LAUNCH_CHECK();
        MURMUR_CUDA_CHECK(cudaMemcpyAsync(&changed, B.counters.get() + kChanged, sizeof changed,
                                          cudaMemcpyDeviceToHost, stream));
        MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream));
        if (!changed) break;
      }
      MURMUR_CUDA_CHECK(
          cudaMemsetAsync(B.flockAcc.get(), 0, size_t(layout.stride) * n * sizeof(double), stream));
      if (!faces.periodic) {
        flockSumsKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), B.spos.get(), n, B.flockAcc.get());
        MURMUR_CUDA_LAUNCH_CHECK();
      } else {
        flockAnglesKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), B.spos.get(), n, faces.halfSize,
                                                           B.flockAcc.get());
        MURMUR_CUDA_LAUNCH_CHECK();
        flockCircularMeanKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), n, faces.halfSize, B.flockAcc.get());
        MURMUR_CUDA_LAUNCH_CHECK();
        flockOffsetsKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), B.spos.get(), n, faces.halfSize,
                                                            B.flockAcc.get());
        MURMUR_CUDA_LAUNCH_CHECK();
      }
      flockSpinKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), B.spos.get(), B.svel.get(), n, faces,
                                                       B.flockAcc.get());
      MURMUR_CUDA_LAUNCH_CHECK();
      flockTallyKernel<<<blocks, lc.block, 0, stream>>>(B.parent.get(), B.flockAcc.get(), n, layout,
                                                        req.millingMinSize, B.sums.get(), B.counters.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    download();
    const double inv = 1.0 / n;
    setBoidScalars(sums.data(), n, out);
    if (group) {
      out[Obs::GroupPolarization] = out[Obs::Polarization];
      out[Obs::GroupRotation] =
          std::sqrt(sums[kRotX] * sums[kRotX] + sums[kRotY] * sums[kRotY] + sums[kRotZ] * sums[kRotZ]) * inv;
      out[Obs::GroupAngularMomentum] =
          std::sqrt(sums[kAngX] * sums[kAngX] + sums[kAngY] * sums[kAngY] + sums[kAngZ] * sums[kAngZ]) * inv;
    }
    if (req.flocks) {
      out[Obs::Flocks] = double(counters[kFlockCount]);
      out[Obs::LargestFlockShare] = double(counters[kLargest]) * inv;
      out[Obs::Flocks1] = double(counters[kBin1]);
      out[Obs::Flocks2to9] = double(counters[kBin2]);
      out[Obs::Flocks10to99] = double(counters[kBin10]);
      out[Obs::Flocks100to999] = double(counters[kBin100]);
      out[Obs::Flocks1000Plus] = double(counters[kBin1000]);
      if (sums[kMillWeight] > 0) out[Obs::Milling] = sums[kMillSum] / sums[kMillWeight];
    }
    return out;
  }

  gravity_.observe(b, p, req, lc, out);
  return out;
}

}  // namespace murmur::cuda
