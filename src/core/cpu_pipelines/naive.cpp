// The naive pipeline: every pair, no grid. Boids test every other body; gravity sums every body,
// the self pair included.
#include "core/cpu_pipeline.h"

namespace murmur::core {

namespace {

class NaivePipeline final : public CpuPipeline {
 public:
  Pipeline id() const override { return Pipeline::Naive; }

  void boidsForces(CpuState& s) override {
    const long n = s.count();
    boidsForceLoop(s, [&](long i, const Vec4&, auto&& add) {
      for (long j = 0; j < n; ++j)
        if (j != i) add(j);
    });
  }

  void gravityForces(CpuState& s) override {
    const long n = s.count();
    const float eps2 = s.params.gravity.softening * s.params.gravity.softening;
    const float G = s.params.gravity.G;
    s.timed(s.profile.forceMs, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) {
        const Vec4 pi = s.pos[i];
        Vec3 a{0, 0, 0};
        // The self pair is included: r = 0 contributes exactly zero thanks to the softening, and
        // a branch-free loop is what the GPU's tiled kernel runs too.
        for (long j = 0; j < n; ++j) a += gravityPair(pi, s.pos[j], eps2);
        s.acc[i] = make4(a * G, 0.0f);
      }
    });
  }

  // Every other body is a candidate, whatever the force.
  NeighbourStats neighbourStats(const CpuState& s) override {
    const long n = s.count();
    const float radius = searchRadius(s.params);
    const float r2 = radius * radius;
    double neigh = 0;
#pragma omp parallel for reduction(+ : neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        const Vec3 d = xyz(s.pos[j]) - xyz(s.pos[i]);
        if (j != i && dot(d, d) < r2) neigh += 1;
      }
    NeighbourStats st;
    st.meanCandidates = double(n) * double(n - 1) / double(n);
    st.meanNeighbours = neigh / double(n);
    return st;
  }
};

}  // namespace

std::unique_ptr<CpuPipeline> makeNaivePipeline() { return std::make_unique<NaivePipeline>(); }

}  // namespace murmur::core
