// The clusters pipeline (boids): the cluster-pair search of core/cluster_search.h, the state in
// the cluster grid's cell order, the sums in the GPU kernel's order. Gravity on clusters runs the
// coherent grid (core/pipeline_table.h gravityAs), so this file has no gravity method.
#include "core/cluster_search.h"
#include "core/cpu_pipeline.h"

namespace murmur::core {

namespace {

// The clusters of the slots [base, end) of the sorted order (one group of kClusterSize): runs of
// slots in one row, in order. visit(members, count, lo, hi) gets each with its bounding box.
template <typename PosAt, typename Visit>
void groupClusters(const GridSpec& g, long base, long end, PosAt posAt, Visit&& visit) {
  long a = base;
  while (a < end) {
    const uint32_t row = clusterRowOf(g, posAt(a));
    long members[kClusterSize];
    int m = 0;
    Vec3 lo = posAt(a), hi = lo;
    for (; a < end && clusterRowOf(g, posAt(a)) == row; ++a) {
      const Vec3 p = posAt(a);
      lo = Vec3{std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
      hi = Vec3{std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
      members[m++] = a;
    }
    visit(members, m, lo, hi);
  }
}

// The candidates of the cluster [lo, hi], in the kernel's order: f(slot j, p_j, partial).
template <typename PosAt, typename F>
void clusterCandidates(const GridSpec& g, const std::vector<uint32_t>& first, const Vec3& lo, const Vec3& hi,
                       float radius, float reach2, PosAt posAt, F&& f) {
  int k = 0;
  forEachBoxRow(g, lo, hi, radius, [&](uint32_t a, uint32_t b) {
    for (uint32_t j = first[a]; j < first[b + 1]; ++j) {
      const Vec3 pj = posAt(j);
      if (boxDistance2(pj, lo, hi) < reach2) f(j, pj, k++ % kClusterPartials);
    }
  });
}

class ClustersPipeline final : public CpuPipeline {
 public:
  Pipeline id() const override { return Pipeline::Clusters; }

  void boidsForces(CpuState& s) override {
    const GridSpec g = clusterGrid(s.params, s.pos.size());
    s.buildGrid(g, true);
    double firstMs = 0;
    s.timed(firstMs, [&] { findCellFirst(s.grid, s.sortedKeys, s.cellFirst); });
    s.profile.boundsMs += firstMs;
    withLocalRule(s.params, [&](auto rule) { forces<decltype(rule)>(s); });
  }

  GridSpec boidsGrid(const SimParams& p, size_t n) const override { return clusterGrid(p, n); }

  // Candidates: the bodies other than itself that a body's cluster tests; neighbours: those
  // within the largest radius. Over a sorted view: the state stays untouched.
  NeighbourStats neighbourStats(const CpuState& s) override {
    const long n = s.count();
    const float radius = searchRadius(s.params);
    const float r2 = radius * radius;
    const CpuGridView v = s.rowsGridView(boidsGrid(s.params, s.pos.size()));
    const std::vector<uint32_t>& first = v.first;
    const auto posAt = [&](long k) { return xyz(s.pos[v.sortedIndex[k]]); };
    double cand = 0, neigh = 0;
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 64)
    for (long c = 0; c < (n + kClusterSize - 1) / kClusterSize; ++c) {
      const long base = c * kClusterSize, end = std::min(base + kClusterSize, n);
      groupClusters(v.grid, base, end, posAt, [&](const long* members, int m, const Vec3& lo, const Vec3& hi) {
        clusterCandidates(v.grid, first, lo, hi, radius, r2, posAt, [&](uint32_t j, const Vec3& pj, int) {
          for (int u = 0; u < m; ++u) {
            if (static_cast<long>(j) == members[u]) continue;
            cand += 1;
            if (distance2(pj - posAt(members[u])) < r2) neigh += 1;
          }
        });
      });
    }
    return neighbourMeans(cand, neigh, n);
  }
 private:
  // The force loop of local rule Rule: each cluster's candidates summed relative to each member,
  // in kClusterPartials partial sums in the kernel's order, then combined.
  template <typename Rule>
  static void forces(CpuState& s) {
    const typename Rule::Params& rp = Rule::params(s.params);
    const typename Rule::Setup su = Rule::setup(rp);
    const float radius = Rule::radius(rp);
    const float reach2 = su.reach2;
    const DrawKeys keys = s.drawKeys();
    const bool periodic = s.params.boundary == Boundary::Periodic;
    const long n = s.count();
    const auto posAt = [&](long k) { return xyz(s.pos[k]); };
    s.timed(s.profile.forceMs, [&] {
#pragma omp parallel for schedule(dynamic, 64)
      for (long c = 0; c < (n + kClusterSize - 1) / kClusterSize; ++c) {
        const long base = c * kClusterSize, end = std::min(base + kClusterSize, n);
        groupClusters(s.grid, base, end, posAt, [&](const long* members, int m, const Vec3& lo, const Vec3& hi) {
          typename Rule::RelSum acc[kClusterSize][kClusterPartials];
          for (int u = 0; u < kClusterSize; ++u)
            for (auto& a : acc[u]) a = Rule::relZero([&] { return u < m ? s.vel[members[u]] : Vec4{0, 0, 0, 0}; });
          // The box, and under the periodic boundary its images (each candidate measured from the
          // member's image, the partial sums restarting per image).
          forEachBoxImage(lo, hi, radius, s.params.halfSize, periodic, [&](const Vec3& sh) {
            clusterCandidates(s.grid, s.cellFirst, shifted(lo, sh), shifted(hi, sh), radius, reach2, posAt,
                              [&](uint32_t j, const Vec3& pj, int part) {
                                for (int u = 0; u < m; ++u) {
                                  const Vec3 d = pj - shifted(xyz(s.pos[members[u]]), sh);
                                  const float d2 = distance2(d);
                                  if (d2 < reach2) Rule::addRel(acc[u][part], d, d2, [&] { return s.vel[j]; }, su);
                                }
                              });
          });
          for (int u = 0; u < m; ++u) {
            const long i = members[u];
            typename Rule::RelSum a = addPartials<Rule>(acc[u]);
            Rule::removeSelf(a, s.vel[i], su);
            s.velAlt[i] = make4(Rule::velocityRel(a, s.vel[i], rp, drawsOf<Rule>(keys, static_cast<uint32_t>(i))), 0.0f);
          }
        });
      }
    });
  }
};

}  // namespace

std::unique_ptr<CpuPipeline> makeClustersPipeline() { return std::make_unique<ClustersPipeline>(); }

}  // namespace murmur::core
