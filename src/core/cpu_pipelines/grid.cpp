// The scattered and coherent pipelines: a uniform grid of the boids cell width (boids) or of the
// gravity grid (gravity). Scattered leaves the bodies in place and reads them through the sorted
// index; coherent moves the state into cell order and reads cells as runs. Gravity on a grid: the
// bodies of the 27 near cells exactly, every other occupied cell as its monopole. The defaults of
// CpuPipeline live here too: the refusals of a force a pipeline does not serve itself, and the
// neighbour statistics over grid cells.
#include <stdexcept>
#include <string>

#include "core/cpu_pipeline.h"

namespace murmur::core {

// The default of CpuPipeline: a pipeline that does not serve boids says so.
void CpuPipeline::boidsForces(CpuState&) {
  throw std::logic_error(std::string("the CPU pipeline ") + toString(id()) + " does not serve boids");
}

void CpuPipeline::gravityForces(CpuState&) {
  throw std::logic_error(std::string("the CPU pipeline ") + toString(id()) +
                         " has no gravity method of its own (core::effectivePipeline names the one it runs)");
}

NeighbourStats CpuPipeline::neighbourStats(const CpuState& s) {
  const long n = s.count();
  const float radius = searchRadius(s.params);
  const float r2 = radius * radius;
  const CpuGridView v =
      s.gridView(s.params.force == ForceMode::Gravity ? s.gravityGrid() : boidsGrid(s.params, s.pos.size()));
  double cand = 0, neigh = 0;
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
  for (long i = 0; i < n; ++i) {
    const CellRange cr = cellRangeForRadius(v.grid, xyz(s.pos[i]), radius);
    forEachInCells<false>(v.grid, cr, v.cellStart.data(), v.cellEnd.data(), v.sortedIndex.data(), [&](uint32_t j) {
      if (static_cast<long>(j) == i) return;
      cand += 1;
      const Vec3 d = xyz(s.pos[j]) - xyz(s.pos[i]);
      if (dot(d, d) < r2) neigh += 1;
    });
  }
  return neighbourMeans(cand, neigh, n);
}

namespace {

// core::forEachInCells with the pipeline chosen at run time: scattered reads through the sorted
// index, coherent data is already in cell order.
template <typename F>
inline void forEachInCellsOf(bool coherent, const GridSpec& g, const CellRange& r, const uint32_t* cellStart,
                             const uint32_t* cellEnd, const uint32_t* sortedIndex, F&& f) {
  if (coherent)
    forEachInCells<true>(g, r, cellStart, cellEnd, sortedIndex, f);
  else
    forEachInCells<false>(g, r, cellStart, cellEnd, sortedIndex, f);
}

class GridPipeline final : public CpuPipeline {
 public:
  explicit GridPipeline(bool coherent) : coherent_(coherent) {}

  Pipeline id() const override { return coherent_ ? Pipeline::Coherent : Pipeline::Scattered; }

  void boidsForces(CpuState& s) override {
    s.buildGrid(boidGrid(s.params, s.pos.size()), coherent_);
    const float radius = searchRadius(s.params);
    boidsForceLoop(s, [&](long i, const Vec4& pi, auto&& add) {
      if (coherent_)
        gridCandidates<true>(s.grid, s.cellStart.data(), s.cellEnd.data(), s.sortedIndex.data(), radius, i, pi, add);
      else
        gridCandidates<false>(s.grid, s.cellStart.data(), s.cellEnd.data(), s.sortedIndex.data(), radius, i, pi, add);
    });
  }

  void gravityForces(CpuState& s) override {
    GridSpec g{};
    double bboxMs = 0;
    s.timed(bboxMs, [&] { g = s.gravityGrid(); });
    s.buildGrid(g, coherent_);
    double monoMs = 0;
    s.timed(monoMs, [&] { monopoles(s, g); });
    s.profile.boundsMs += bboxMs + monoMs;
    s.timed(s.profile.forceMs, [&] { forces(s, g); });
  }

 private:
  // Monopoles of the occupied cells, summed in double from the sorted order: a cell of a Plummer
  // core can hold a large share of all the mass, where float sums would lose the centre.
  void monopoles(CpuState& s, const GridSpec& g) const {
    s.monopole.assign(g.numCells, Vec4{0, 0, 0, 0});
    s.occupiedCells.clear();
    const uint32_t* indirect = coherent_ ? nullptr : s.sortedIndex.data();
    for (uint32_t c = 0; c < g.numCells; ++c) {
      const uint32_t st = s.cellStart[c];
      if (st == kEmptyCell) continue;
      double m = 0, x = 0, y = 0, z = 0;
      for (uint32_t k = st; k < s.cellEnd[c]; ++k) {
        const Vec4& p = s.pos[indirect ? indirect[k] : k];
        m += p.w;
        x += double(p.w) * p.x;
        y += double(p.w) * p.y;
        z += double(p.w) * p.z;
      }
      if (m > 0) {
        s.monopole[c] = Vec4{float(x / m), float(y / m), float(z / m), float(m)};
        s.occupiedCells.push_back(c);
      }
    }
  }

  void forces(CpuState& s, const GridSpec& g) const {
    const long n = s.count();
    const float eps2 = s.params.gravity.softening * s.params.gravity.softening;
    const float G = s.params.gravity.G;
    const long numOcc = static_cast<long>(s.occupiedCells.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < n; ++i) {
      const Vec4 pi = s.pos[i];
      const Int3 own = cellOf(g, xyz(pi));
      Vec3 a{0, 0, 0};
      forEachInCellsOf(coherent_, g, nearCells(g, own), s.cellStart.data(), s.cellEnd.data(), s.sortedIndex.data(),
                       [&](uint32_t j) { a += gravityPair(pi, s.pos[j], eps2); });
      // The far field walks the occupied cells only: most cells of a centrally concentrated
      // cluster's grid are empty.
      for (long k = 0; k < numOcc; ++k) {
        const uint32_t c = s.occupiedCells[k];
        if (isNearCell(own, cellFromKey(g, c))) continue;
        a += gravityPair(pi, s.monopole[c], eps2);
      }
      s.acc[i] = make4(a * G, 0.0f);
    }
  }

  bool coherent_;
};

}  // namespace

std::unique_ptr<CpuPipeline> makeScatteredPipeline() { return std::make_unique<GridPipeline>(false); }
std::unique_ptr<CpuPipeline> makeCoherentPipeline() { return std::make_unique<GridPipeline>(true); }

}  // namespace murmur::core
