// The rows pipeline (boids): the exact search of core/row_search.h over rows of finer cells, the
// state in cell order. Gravity on rows runs the coherent grid (core/pipeline_table.h gravityAs),
// so this file has no gravity method.
#include "core/cpu_pipeline.h"
#include "core/row_search.h"

namespace murmur::core {

namespace {

class RowsPipeline final : public CpuPipeline {
 public:
  Pipeline id() const override { return Pipeline::Rows; }

  void boidsForces(CpuState& s) override {
    s.buildGrid(rowGrid(s.params, s.pos.size()), true);
    double firstMs = 0;
    s.timed(firstMs, [&] { findCellFirst(s.grid, s.sortedKeys, s.cellFirst); });
    s.profile.boundsMs += firstMs;
    const float radius = searchRadius(s.params);
    boidsForceLoop(s, [&](long i, const Vec4& pi, auto&& add) {
      rowCandidates(s.grid, s.cellFirst.data(), radius, i, pi, add);
    });
  }

  GridSpec boidsGrid(const SimParams& p, size_t n) const override { return rowGrid(p, n); }

  // Candidates: the bodies of the rows searched; neighbours: those within the largest radius.
  NeighbourStats neighbourStats(const CpuState& s) override {
    const long n = s.count();
    const float radius = searchRadius(s.params);
    const float r2 = radius * radius;
    const CpuGridView v = s.rowsGridView(boidsGrid(s.params, s.pos.size()));
    const std::vector<uint32_t>& first = v.first;
    double cand = 0, neigh = 0;
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      forEachRow(v.grid, xyz(s.pos[i]), radius, [&](uint32_t lo, uint32_t hi) {
        for (uint32_t k = first[lo]; k < first[hi + 1]; ++k) {
          const long j = static_cast<long>(v.sortedIndex[k]);
          if (j == i) continue;
          cand += 1;
          const Vec3 d = xyz(s.pos[j]) - xyz(s.pos[i]);
          if (dot(d, d) < r2) neigh += 1;
        }
      });
    }
    return neighbourMeans(cand, neigh, n);
  }
};

}  // namespace

std::unique_ptr<CpuPipeline> makeRowsPipeline() { return std::make_unique<RowsPipeline>(); }

}  // namespace murmur::core
