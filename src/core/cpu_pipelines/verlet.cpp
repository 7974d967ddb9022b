// The verlet pipeline (boids): every body keeps a list of the bodies within r + skin, built by
// the rows search of core/verlet.h and served for a few steps; each step tests the listed pairs
// exactly. Gravity on verlet runs the coherent grid (core/pipeline_table.h gravityAs), so this
// file has no gravity method.
#include <vector>

#include "core/cpu_pipeline.h"
#include "core/verlet.h"

namespace murmur::core {

namespace {

class VerletPipeline final : public CpuPipeline {
 public:
  Pipeline id() const override { return Pipeline::Verlet; }

  void boidsForces(CpuState& s) override {
    if (!listValid_ || listAge_ >= listPlan_.steps) buildLists(s);
    ++listAge_;
    boidsForceLoop(s, [&](long i, const Vec4&, auto&& add) {
      for (const uint32_t j : lists_[i]) add(j);
    });
  }

  int stepsPerCycle(const SimParams& p) const override { return verletPlan(p).steps; }
  GridSpec boidsGrid(const SimParams& p, size_t n) const override { return verletGrid(p, n); }

  // Candidates: the entries of lists built now with the steady plan; neighbours: the entries
  // that the exact test accepts.
  NeighbourStats neighbourStats(const CpuState& s) override {
    const long n = s.count();
    const float radius = searchRadius(s.params);
    const float r2 = radius * radius;
    const CpuGridView v = s.rowsGridView(boidsGrid(s.params, s.pos.size()));
    const std::vector<uint32_t>& first = v.first;
    const VerletPlan plan = verletPlan(s.params);
    double cand = 0, neigh = 0;
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long t = 0; t < n; ++t) {
      const Vec3 pi = xyz(s.pos[v.sortedIndex[t]]);
      forEachListed(
          v.grid, plan, s.params.halfSize, static_cast<uint32_t>(t), pi,
          [&](uint32_t k) { return xyz(s.pos[v.sortedIndex[k]]); }, [&](uint32_t k) { return first[k]; },
          [&](uint32_t k) {
            cand += 1;
            const Vec3 d = xyz(s.pos[v.sortedIndex[k]]) - pi;
            if (dot(d, d) < r2) neigh += 1;
          });
    }
    return neighbourMeans(cand, neigh, n);
  }

  // Set by reset() and setParams(): positions may lie outside the world until the next step
  // wraps them, so the next list is built for one step, without images.
  void invalidate() override {
    listValid_ = false;
    listFresh_ = true;
  }

 private:
  // The plan of the next build.
  VerletPlan nextListPlan(const SimParams& p) const { return listFresh_ ? verletPlanFor(p, 1) : verletPlan(p); }

  // The build: grid and reorder (the rows grid of the list radius), then every body's list.
  void buildLists(CpuState& s) {
    listPlan_ = nextListPlan(s.params);
    s.buildGrid(rowGridForRadius(s.params, s.pos.size(), listPlan_.radius), true);
    double firstMs = 0;
    s.timed(firstMs, [&] { findCellFirst(s.grid, s.sortedKeys, s.cellFirst); });
    s.profile.boundsMs += firstMs;
    const long n = s.count();
    lists_.resize(s.pos.size());
    s.timed(s.profile.listMs, [&] {
#pragma omp parallel for schedule(dynamic, 256)
      for (long i = 0; i < n; ++i) {
        std::vector<uint32_t>& list = lists_[i];
        list.clear();
        forEachListed(
            s.grid, listPlan_, s.params.halfSize, static_cast<uint32_t>(i), xyz(s.pos[i]),
            [&](uint32_t j) { return xyz(s.pos[j]); }, [&](uint32_t k) { return s.cellFirst[k]; },
            [&](uint32_t j) { list.push_back(j); });
      }
    });
    listAge_ = 0;
    listValid_ = true;
    listFresh_ = false;
  }

  // Every body's list (slots of the order at the build, which the state keeps until the next
  // one), the plan it was built with, and the steps it has served.
  std::vector<std::vector<uint32_t>> lists_;
  VerletPlan listPlan_{};
  int listAge_ = 0;
  bool listValid_ = false;
  bool listFresh_ = true;
};

}  // namespace

std::unique_ptr<CpuPipeline> makeVerletPipeline() { return std::make_unique<VerletPipeline>(); }

}  // namespace murmur::core
