// Topological neighbours on the CUDA engine (cuda/topological_kernels.h). One thread a body, in
// cell order: the sphere search of core::searchSpheres over the rows of the cells' sorted slots
// (under the periodic boundary the shell search of core::searchShells), the K best kept in order
// (d^2, id) as 64-bit keys in registers, then the rule's sums over them and the integration.
#include "cuda/topological_kernels.h"

#include <type_traits>

#include "core/boundary.h"
#include "core/random.h"
#include "core/rules/local_rules.h"
#include "core/topological.h"
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/device_utils.cuh"
#include "cuda/grid_build.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec3;
using core::Vec4;

namespace {

// The cell-ordered copies of the positions, velocities and ids the search and the sums read, and
// each id's slot (inv).
__global__ void __launch_bounds__(1024) gatherKernel(const uint32_t* __restrict__ index, uint32_t n,
                                                     const Vec4* __restrict__ pos, const Vec4* __restrict__ vel,
                                                     const uint32_t* __restrict__ id, Vec4* __restrict__ spos,
                                                     Vec4* __restrict__ svel, uint32_t* __restrict__ sid,
                                                     uint32_t* __restrict__ inv) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const uint32_t i = __ldg(index + q);
  spos[q] = ldg4(pos + i);
  svel[q] = ldg4(vel + i);
  const uint32_t b = __ldg(id + i);
  sid[q] = b;
  inv[b] = q;
}

// The K nearest found so far as 64-bit keys, d^2's bits above the id, in ascending order: for
// d^2 >= 0 the keys order as (d^2, id) does (core::nearerThan), so a candidate is inserted with
// one comparison of keys an entry. The first KMax - K entries are 0 and never move; an entry not
// yet found holds kEmptyKey (d^2 = +inf).
constexpr uint64_t kEmptyKey = (uint64_t(0x7f800000u) << 32) | 0xffffffffull;
template <int KMax>
struct KeyList {
  uint64_t key[KMax];
  int pad;
  __device__ explicit KeyList(int k) : pad(KMax - k) {
#pragma unroll
    for (int m = 0; m < KMax; ++m) key[m] = m < KMax - k ? 0ull : kEmptyKey;
  }
  __device__ float bound() const { return __uint_as_float(static_cast<uint32_t>(key[KMax - 1] >> 32)); }
  __device__ void offer(float dd, uint32_t cid) {
    uint64_t c = (uint64_t(__float_as_uint(dd)) << 32) | cid;
    if (!(c < key[KMax - 1])) return;
#pragma unroll
    for (int m = 0; m < KMax; ++m) {
      const uint64_t e = key[m];
      key[m] = c < e ? c : e;
      c = c < e ? e : c;
    }
  }
  __device__ bool found(int m) const { return m >= pad && key[m] != kEmptyKey; }
  __device__ uint32_t idAt(int m) const { return static_cast<uint32_t>(key[m]); }
};

// The grid the kernels search. Periodic: core::searchShells over the cells' ranges (cellStart,
// cellEnd of core::topologicalGrid); otherwise core::searchSpheres over the rows of
// core::topologicalSphereGrid (cellFirst), its first radius the body's K-th distance of the
// previous step (hint, by id; 0: none) grown by kHintGrowth, or r0.
struct Grid {
  const GridSpec* grid;
  const uint32_t* cellStart;
  const uint32_t* cellEnd;
  const uint32_t* cellFirst;
  const Vec4* spos;
  const Vec4* svel;
  const uint32_t* sid;
  const uint32_t* inv;
  bool periodic;
  float halfSize;
  float cut2;
  float cutoff;
  float maxReach;
  float r0;
  float* hint;
};

constexpr float kHintGrowth = 1.1f;

// The K nearest of the body in slot q (slots of best: cell order).
template <typename Best>
__device__ __forceinline__ void nearestOf(const Grid& t, const GridSpec& g, uint32_t q, const Vec3& pi, Best& best) {
  if (!t.periodic) {
    float r0 = t.r0;
    if (t.hint) {
      const float h = t.hint[__ldg(t.sid + q)];
      if (h > 0.0f && h < t.maxReach) r0 = h * kHintGrowth;
    }
    core::searchSpheres(
        g, pi, r0, t.cutoff, t.maxReach, best,
        [&](uint32_t first, uint32_t last, float lo2, float hi2) {
          const uint32_t e = __ldg(t.cellFirst + last + 1);
          for (uint32_t r = __ldg(t.cellFirst + first); r < e; ++r) {
            const float d2 = core::distance2(core::xyz(ldg4(t.spos + r)) - pi);
            if (d2 < lo2 || !(d2 < hi2) || r == q) continue;
            best.offer(d2, __ldg(t.sid + r));
          }
        });
    if (t.hint) t.hint[__ldg(t.sid + q)] = best.bound() < INFINITY ? sqrtf(best.bound()) : 0.0f;
    return;
  }
  core::searchShells(g, pi, t.periodic, t.cut2, best, [&](uint32_t first, uint32_t cells) {
    // The run's cells are consecutive keys: their bodies are the sorted slots from the first
    // non-empty cell's start to the last one's end, walked in one loop.
    uint32_t a = core::kEmptyCell, e = 0;
    for (uint32_t key = first; key < first + cells; ++key) {
      const uint32_t st = __ldg(t.cellStart + key);
      if (st == core::kEmptyCell) continue;
      if (a == core::kEmptyCell) a = st;
      e = __ldg(t.cellEnd + key);
    }
    if (a == core::kEmptyCell) return;
    for (uint32_t r = a; r < e; ++r) {
      if (r == q) continue;
      const float d2 = core::distance2(core::topologicalOffset(pi, core::xyz(ldg4(t.spos + r)), t.periodic, t.halfSize));
      if (t.cut2 > 0.0f && !(d2 < t.cut2)) continue;
      best.offer(d2, __ldg(t.sid + r));
    }
  });
}

// KMax: the lists' capacity, K rounded up to 8, 16 or 64; up to 16 they stay in registers, held
// to 64 registers a thread (4 blocks an SM): at K = 7, 1M boids on an H200, the force stage took
// 0.46 ms against 0.52 ms at 80 registers and 0.59 ms at 124 (docs/models.md#topological-neighbours).
// The list of 64 keys takes every register it can.
template <typename Rule, int KMax>
__global__ void __launch_bounds__(256, KMax <= 16 ? 4 : 1)
    topologicalKernel(Grid t, const uint32_t* __restrict__ index, uint32_t n, int k, typename Rule::Params b,
                      core::DrawKeys keys, Vec4* __restrict__ velNew, Vec4* __restrict__ posOut, float dt,
                      core::Boundary boundary) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const GridSpec g = *t.grid;
  const Vec4 pi = ldg4(t.spos + q);
  KeyList<KMax> best(k);
  nearestOf(t, g, q, core::xyz(pi), best);
  const typename Rule::Setup su = Rule::setupTopological(b);
  const Vec4 vi = ldg4(t.svel + q);
  typename Rule::Sum acc = Rule::zero([&] { return vi; });
#pragma unroll
  for (int m = 0; m < KMax; ++m) {
    if (!best.found(m)) continue;
    const uint32_t r = __ldg(t.inv + best.idAt(m));
    const Vec4 pj = ldg4(t.spos + r);
    const Vec3 d = core::topologicalOffset(core::xyz(pi), core::xyz(pj), t.periodic, t.halfSize);
    // A neighbour found across a face is where it is seen from i: p_i + d.
    const Vec3 raw = core::xyz(pj) - core::xyz(pi);
    const bool image = raw.x != d.x || raw.y != d.y || raw.z != d.z;
    Rule::add(acc, image ? core::imageOf(pi, d, pj) : pj, d, core::distance2(d), [&] { return ldg4(t.svel + r); },
              su);
  }
  const uint32_t i = index ? __ldg(index + q) : q;
  Vec3 v = Rule::velocity(acc, pi, vi, b, core::drawsOf<Rule>(keys, i));
  // The integration of DeviceState::integrateBoids, from the same position.
  posOut[i] = core::boidIntegrate(pi, v, dt, t.halfSize, boundary);
  velNew[i] = core::make4(v, 0.0f);
}

// Each id's slot in a state sorted by cell.
__global__ void __launch_bounds__(1024) slotsOfIdsKernel(const uint32_t* __restrict__ id, uint32_t n,
                                                         uint32_t* __restrict__ inv) {
  const uint32_t q = globalThreadIndex();
  if (q < n) inv[__ldg(id + q)] = q;
}

// The lists of the tests: the ids of every body's K nearest into out[i * k ...], the count into
// counts[i] (i: the state's order).
__global__ void __launch_bounds__(256) listKernel(Grid t, const uint32_t* __restrict__ index, uint32_t n, int k,
                                                  uint32_t* __restrict__ out, uint32_t* __restrict__ counts) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const GridSpec g = *t.grid;
  const uint32_t i = __ldg(index + q);
  KeyList<core::kMaxTopological> best(k);
  nearestOf(t, g, q, core::xyz(ldg4(t.spos + q)), best);
  uint32_t count = 0;
  for (int m = 0; m < core::kMaxTopological; ++m)
    if (best.found(m)) out[size_t(i) * size_t(k) + count++] = best.idAt(m);
  counts[i] = count;
}

// Builds the grid of the current positions with the state's grid stages and buffers (its cells'
// ranges in the classic cellStart / cellEnd) and gathers the positions and ids in its order: the
// grid view the kernels read, and the sorted slot -> state index map.
Grid buildGrid(DeviceState& s, TopologicalBuffers& b, const uint32_t** index) {
  const LaunchConfig lc = s.launch();
  const uint32_t n = s.n;
  const bool periodic = s.params.boundary == core::Boundary::Periodic;
  float maxReach = 0.0f;
  const GridSpec g = periodic ? core::topologicalGrid(s.params, n) : core::topologicalSphereGrid(s.params, n, &maxReach);
  s.ensureGrid(g.numCells, !periodic, core::ForceMode::Boids);
  if (b.spos.size() < n) b.spos.allocate(n), b.svel.allocate(n), b.sid.allocate(n), b.inv.allocate(n);
  if (b.grid.size() == 0) b.grid.allocate(1);
  launchStoreGrid(b.grid.get(), g, lc);
  const int sel = s.labelAndSort(b.grid.get(), g.numCells, lc);
  s.timer.stage(core::Stage::Bounds, [&] {
    if (periodic)
      launchFindCellBounds(s.keys[sel].get(), n, g.numCells, s.cellStart.get(), s.cellEnd.get(), lc);
    else
      launchFindCellFirst(s.keys[sel].get(), n, g.numCells, s.cellFirst.get(), lc);
  });
  s.timer.stage(core::Stage::Reorder, [&] {
    gatherKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(s.index[sel].get(), n, s.pos[s.cur].get(),
                                                              s.vel[s.velCur].get(), s.id[s.idCur].get(),
                                                              b.spos.get(), b.svel.get(), b.sid.get(), b.inv.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  });
  *index = s.index[sel].get();
  const float r = s.params.topologicalRadius;
  const float r0 = static_cast<float>(core::topologicalMeanReach(s.params, n, s.params.topological));
  Grid t{};
  t.grid = b.grid.get();
  t.cellStart = s.cellStart.get();
  t.cellEnd = s.cellEnd.get();
  t.cellFirst = s.cellFirst.get();
  t.spos = b.spos.get();
  t.svel = b.svel.get();
  t.sid = b.sid.get();
  t.inv = b.inv.get();
  t.periodic = periodic;
  t.halfSize = s.params.halfSize;
  t.cut2 = r > 0.0f ? r * r : 0.0f;
  t.cutoff = r;
  t.maxReach = maxReach;
  t.r0 = r0;
  t.hint = nullptr;
  return t;
}

}  // namespace

void topologicalStep(DeviceState& s, TopologicalBuffers& b) {
  const LaunchConfig lc{256, s.stream};
  const bool periodic = s.params.boundary == core::Boundary::Periodic;
  const uint32_t* index = nullptr;
  Grid t{};
  if (periodic) {
    t = buildGrid(s, b, &index);
  } else {
    // The state itself sorted by the rows grid's sort (the counting sort where cells are not
    // crowded), as the rows pipeline sorts it: the kernel reads the state in place and writes the
    // other buffers.
    float maxReach = 0.0f;
    const GridSpec g = core::topologicalSphereGrid(s.params, s.n, &maxReach);
    s.ensureGrid(g.numCells, true, core::ForceMode::Boids);
    if (b.grid.size() == 0) b.grid.allocate(1);
    if (b.inv.size() < s.n) b.inv.allocate(s.n);
    launchStoreGrid(b.grid.get(), g, s.launch());
    s.rowSort.sort(s, b.grid.get(), g.numCells, s.launch());
    s.timer.stage(core::Stage::Reorder, [&] {
      const LaunchConfig wide = s.launch();
      slotsOfIdsKernel<<<wide.blocksFor(s.n), wide.block, 0, wide.stream>>>(s.id[s.idCur].get(), s.n, b.inv.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    });
    const float r = s.params.topologicalRadius;
    t.grid = b.grid.get();
    t.cellFirst = s.cellFirst.get();
    t.spos = s.pos[s.cur].get();
    t.svel = s.vel[s.velCur].get();
    t.sid = s.id[s.idCur].get();
    t.inv = b.inv.get();
    t.periodic = false;
    t.halfSize = s.params.halfSize;
    t.cut2 = r > 0.0f ? r * r : 0.0f;
    t.cutoff = r;
    t.maxReach = maxReach;
    t.r0 = static_cast<float>(core::topologicalMeanReach(s.params, s.n, s.params.topological));
    // The previous step's K-th distances by id (only the first radius of the search depends on them).
    if (b.hint.size() != s.n) {
      b.hint.allocate(s.n);
      MURMUR_CUDA_CHECK(cudaMemsetAsync(b.hint.get(), 0, size_t(s.n) * sizeof(float), s.stream));
    }
    t.hint = b.hint.get();
  }
  // Periodic: positions integrated in place (the search read the gathered copies); otherwise into
  // the other buffer, which becomes current.
  Vec4* velNew = s.vel[1 - s.velCur].get();
  Vec4* posOut = periodic ? s.pos[s.cur].get() : s.pos[1 - s.cur].get();
  const int k = s.params.topological;
  core::withLocalRule(s.params, [&](auto rule) {
    using Rule = decltype(rule);
    const auto launch = [&](auto kmax) {
      topologicalKernel<Rule, decltype(kmax)::value><<<lc.blocksFor(s.n), lc.block, 0, lc.stream>>>(
          t, index, s.n, k, Rule::params(s.params), s.drawKeys(), velNew, posOut, core::localDt(s.params),
          s.params.boundary);
      MURMUR_CUDA_LAUNCH_CHECK();
    };
    s.timer.stage(core::Stage::Force, [&] {
      if (k <= 8)
        launch(std::integral_constant<int, 8>{});
      else if (k <= 16)
        launch(std::integral_constant<int, 16>{});
      else
        launch(std::integral_constant<int, core::kMaxTopological>{});
    });
  });
  if (!periodic) s.cur = 1 - s.cur;  // the ids stay where they are: the kernel kept the order
  s.velCur = 1 - s.velCur;
}

std::vector<std::vector<uint32_t>> topologicalNeighbours(DeviceState& s, TopologicalBuffers& b) {
  if (s.n == 0) return {};
  const uint32_t* index = nullptr;
  Grid t = buildGrid(s, b, &index);
  if (!t.periodic && b.hint.size() == s.n) t.hint = b.hint.get();  // after steps: their first radii
  const int k = s.params.topological;
  DeviceBuffer<uint32_t> out, counts;
  out.allocate(size_t(s.n) * size_t(k));
  counts.allocate(s.n);
  const LaunchConfig lc{256, s.stream};
  listKernel<<<lc.blocksFor(s.n), lc.block, 0, lc.stream>>>(t, index, s.n, k, out.get(), counts.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  const std::vector<uint32_t> ids = DeviceState::download(out.get(), out.size());
  const std::vector<uint32_t> cnt = DeviceState::download(counts.get(), counts.size());
  const std::vector<uint32_t> bodyId = DeviceState::download(s.id[s.idCur].get(), s.n);
  std::vector<std::vector<uint32_t>> byId(s.n);
  for (size_t i = 0; i < s.n; ++i)
    byId.at(bodyId[i]).assign(ids.begin() + ptrdiff_t(i * size_t(k)), ids.begin() + ptrdiff_t(i * size_t(k) + cnt[i]));
  return byId;
}

}  // namespace murmur::cuda
