// The CPU engine's force stage over topological neighbours (core/topological.h): the grid of
// core::topologicalGrid, each body's K nearest by the shell search, then the active rule's sums
// over them with its topological setup. The same search and offsets as the CUDA kernel.
#include "core/cpu_pipeline.h"
#include "core/topological.h"

namespace murmur::core {

namespace {

// A built grid: its spec, and per cell the range of sorted slots and the body in each slot.
struct GridRef {
  const GridSpec& grid;
  const uint32_t* cellStart;
  const uint32_t* cellEnd;
  const uint32_t* sortedIndex;
};

// The K nearest of body i by the shell search over grid v.
KNearest<kMaxTopological> nearestOf(const CpuState& s, const GridRef& v, long i, bool periodic, float cut2) {
  const SimParams& p = s.params;
  const Vec4 pi = s.pos[static_cast<size_t>(i)];
  KNearest<kMaxTopological> best(p.topological);
  searchShells(v.grid, xyz(pi), periodic, cut2, best, [&](uint32_t first, uint32_t cells) {
    for (uint32_t key = first; key < first + cells; ++key) {
      const uint32_t a = v.cellStart[key];
      if (a == kEmptyCell) continue;
      for (uint32_t q = a; q < v.cellEnd[key]; ++q) {
        const uint32_t j = v.sortedIndex[q];
        if (static_cast<long>(j) == i) continue;
        const float d2 = distance2(topologicalOffset(xyz(pi), xyz(s.pos[j]), periodic, p.halfSize));
        if (cut2 > 0.0f && !(d2 < cut2)) continue;
        best.offer(d2, s.id[j], j);
      }
    }
  });
  return best;
}

float cutoff2(const SimParams& p) {
  return p.topologicalRadius > 0.0f ? p.topologicalRadius * p.topologicalRadius : 0.0f;
}

}  // namespace

void topologicalForces(CpuState& s) {
  const SimParams& p = s.params;
  const long n = s.count();
  // The state's own grid buffers, the state left in its order (its stages timed as a grid's).
  s.buildGrid(topologicalGrid(p, static_cast<size_t>(n)), false);
  const GridRef v{s.grid, s.cellStart.data(), s.cellEnd.data(), s.sortedIndex.data()};
  const bool periodic = p.boundary == Boundary::Periodic;
  const float cut2 = cutoff2(p);
  const DrawKeys keys = s.drawKeys();
  withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    const auto rp = Rule::params(p);
    const typename Rule::Setup su = Rule::setupTopological(rp);
    s.timed(s.profile.forceMs, [&] {
#pragma omp parallel for schedule(dynamic, 256)
      for (long i = 0; i < n; ++i) {
        const Vec4 pi = s.pos[i];
        const KNearest<kMaxTopological> best = nearestOf(s, v, i, periodic, cut2);
        typename Rule::Sum acc = Rule::zero([&] { return s.vel[i]; });
        for (int k = 0; k < kMaxTopological; ++k) {
          if (!best.found(k)) continue;
          const uint32_t j = best.slot[k];
          const Vec3 d = topologicalOffset(xyz(pi), xyz(s.pos[j]), periodic, p.halfSize);
          // A neighbour found across a face is where it is seen from i: p_i + d.
          const Vec3 raw = xyz(s.pos[j]) - xyz(pi);
          const bool image = raw.x != d.x || raw.y != d.y || raw.z != d.z;
          Rule::add(acc, image ? imageOf(pi, d, s.pos[j]) : s.pos[j], d, distance2(d), [&] { return s.vel[j]; }, su);
        }
        s.velAlt[i] = make4(Rule::velocity(acc, pi, s.vel[i], rp, drawsOf<Rule>(keys, static_cast<uint32_t>(i))), 0.0f);
      }
    });
  });
}

std::vector<std::vector<uint32_t>> topologicalNeighbourIds(const CpuState& s) {
  const long n = s.count();
  const CpuGridView view = s.gridView(topologicalGrid(s.params, static_cast<size_t>(n)));
  const GridRef v{view.grid, view.cellStart.data(), view.cellEnd.data(), view.sortedIndex.data()};
  std::vector<std::vector<uint32_t>> out(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 256)
  for (long i = 0; i < n; ++i) {
    const KNearest<kMaxTopological> best = nearestOf(s, v, i, s.params.boundary == Boundary::Periodic, cutoff2(s.params));
    for (int k = 0; k < kMaxTopological; ++k)
      if (best.found(k)) out[static_cast<size_t>(i)].push_back(best.id[k]);
  }
  return out;
}

}  // namespace murmur::core
