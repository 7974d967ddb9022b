// Topological neighbours on the CUDA engine (cuda/topological_kernels.h). One thread a body, in
// cell order: the shell search of core::searchShells over the cells' sorted slots, the K best kept
// in order (d^2, id) in the thread's local memory, then the rule's sums over them.
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

namespace murmur::cuda {

using core::GridSpec;
using core::Vec3;
using core::Vec4;

namespace {

// The cell-ordered copies of the positions and ids the search reads.
__global__ void __launch_bounds__(1024) gatherKernel(const uint32_t* __restrict__ index, uint32_t n,
                                                     const Vec4* __restrict__ pos, const uint32_t* __restrict__ id,
                                                     Vec4* __restrict__ spos, uint32_t* __restrict__ sid) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const uint32_t i = __ldg(index + q);
  spos[q] = ldg4(pos + i);
  sid[q] = __ldg(id + i);
}

struct Grid {
  const GridSpec* grid;
  const uint32_t* cellStart;
  const uint32_t* cellEnd;
  const Vec4* spos;
  const uint32_t* sid;
  bool periodic;
  float halfSize;
  float cut2;
};

// The K nearest of the body in slot q (slots of best: cell order).
template <typename Best>
__device__ __forceinline__ void nearestOf(const Grid& t, const GridSpec& g, uint32_t q, const Vec3& pi, Best& best) {
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
      best.offer(d2, __ldg(t.sid + r), r);
    }
  });
}

// KMax: the lists' capacity, K rounded up to 8, 16 or 64; up to 16 they stay in registers.
template <typename Rule, int KMax>
__global__ void __launch_bounds__(256)
    topologicalKernel(Grid t, const uint32_t* __restrict__ index, uint32_t n, const Vec4* __restrict__ vel, int k,
                      typename Rule::Params b, core::DrawKeys keys, Vec4* __restrict__ velNew) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const GridSpec g = *t.grid;
  const uint32_t i = __ldg(index + q);
  const Vec4 pi = ldg4(t.spos + q);
  core::KNearest<KMax> best(k);
  nearestOf(t, g, q, core::xyz(pi), best);
  const typename Rule::Setup su = Rule::setupTopological(b);
  const Vec4 vi = ldg4(vel + i);
  typename Rule::Sum acc = Rule::zero([&] { return vi; });
#pragma unroll
  for (int m = 0; m < KMax; ++m) {
    if (!best.found(m)) continue;
    const uint32_t r = best.slot[m];
    const Vec4 pj = ldg4(t.spos + r);
    const Vec3 d = core::topologicalOffset(core::xyz(pi), core::xyz(pj), t.periodic, t.halfSize);
    // A neighbour found across a face is where it is seen from i: p_i + d.
    const Vec3 raw = core::xyz(pj) - core::xyz(pi);
    const bool image = raw.x != d.x || raw.y != d.y || raw.z != d.z;
    Rule::add(acc, image ? core::imageOf(pi, d, pj) : pj, d, core::distance2(d),
              [&] { return ldg4(vel + __ldg(index + r)); }, su);
  }
  velNew[i] = core::make4(Rule::velocity(acc, pi, vi, b, core::drawsOf<Rule>(keys, i)), 0.0f);
}

// The lists of the tests: the ids of every body's K nearest into out[i * k ...], the count into
// counts[i] (i: the state's order).
__global__ void __launch_bounds__(256) listKernel(Grid t, const uint32_t* __restrict__ index, uint32_t n, int k,
                                                  uint32_t* __restrict__ out, uint32_t* __restrict__ counts) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  const GridSpec g = *t.grid;
  const uint32_t i = __ldg(index + q);
  core::KNearest<core::kMaxTopological> best(k);
  nearestOf(t, g, q, core::xyz(ldg4(t.spos + q)), best);
  uint32_t count = 0;
  for (int m = 0; m < core::kMaxTopological; ++m)
    if (best.found(m)) out[size_t(i) * size_t(k) + count++] = best.id[m];
  counts[i] = count;
}

// Builds the grid of the current positions with the state's grid stages and buffers (its cells'
// ranges in the classic cellStart / cellEnd) and gathers the positions and ids in its order: the
// grid view the kernels read, and the sorted slot -> state index map.
Grid buildGrid(DeviceState& s, TopologicalBuffers& b, const uint32_t** index) {
  const LaunchConfig lc = s.launch();
  const uint32_t n = s.n;
  const GridSpec g = core::topologicalGrid(s.params, n);
  s.ensureGrid(g.numCells, false, core::ForceMode::Boids);
  if (b.spos.size() < n) b.spos.allocate(n), b.sid.allocate(n);
  if (b.grid.size() == 0) b.grid.allocate(1);
  launchStoreGrid(b.grid.get(), g, lc);
  const int sel = s.labelAndSort(b.grid.get(), g.numCells, lc);
  s.timer.stage(core::Stage::Bounds, [&] {
    launchFindCellBounds(s.keys[sel].get(), n, g.numCells, s.cellStart.get(), s.cellEnd.get(), lc);
  });
  s.timer.stage(core::Stage::Reorder, [&] {
    gatherKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(s.index[sel].get(), n, s.pos[s.cur].get(),
                                                              s.id[s.idCur].get(), b.spos.get(), b.sid.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  });
  *index = s.index[sel].get();
  const float r = s.params.topologicalRadius;
  return Grid{b.grid.get(), s.cellStart.get(), s.cellEnd.get(), b.spos.get(), b.sid.get(),
              s.params.boundary == core::Boundary::Periodic, s.params.halfSize, r > 0.0f ? r * r : 0.0f};
}

}  // namespace

void topologicalForces(DeviceState& s, TopologicalBuffers& b, Vec4* velNew) {
  const uint32_t* index = nullptr;
  const Grid t = buildGrid(s, b, &index);
  const LaunchConfig lc{256, s.stream};
  const int k = s.params.topological;
  core::withLocalRule(s.params, [&](auto rule) {
    using Rule = decltype(rule);
    const auto launch = [&](auto kmax) {
      topologicalKernel<Rule, decltype(kmax)::value><<<lc.blocksFor(s.n), lc.block, 0, lc.stream>>>(
          t, index, s.n, s.vel[s.velCur].get(), k, Rule::params(s.params), s.drawKeys(), velNew);
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
}

std::vector<std::vector<uint32_t>> topologicalNeighbours(DeviceState& s, TopologicalBuffers& b) {
  if (s.n == 0) return {};
  const uint32_t* index = nullptr;
  const Grid t = buildGrid(s, b, &index);
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
