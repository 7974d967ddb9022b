// The GPU observables (cuda/observables.h) against the CPU reference (core/observables.h).
// Tolerances (docs/observables.md): counts (neighbours, flocks, size bins) equal exactly; the
// boids means and gravity's sums within 1e-9 relative (the same float terms summed in double in
// another order); the potential within 1e-5 (each pair in float on the GPU, in double on the
// CPU); Lagrangian radii within 1e-5 (distances in float).
#include <gtest/gtest.h>

#include <cmath>

#include "core/cpu_engine.h"
#include "core/observables.h"
#include "core/scenarios.h"
#include "cuda_test_helpers.h"

namespace murmur::test {
namespace {

using core::Obs;

bool isCount(Obs o) {
  switch (o) {
    case Obs::NeighboursCohesion: case Obs::NeighboursSeparation: case Obs::NeighboursAlignment: case Obs::Flocks:
    case Obs::LargestFlockShare: case Obs::Flocks1: case Obs::Flocks2to9: case Obs::Flocks10to99:
    case Obs::Flocks100to999: case Obs::Flocks1000Plus:
      return true;
    default:
      return false;
  }
}

double toleranceOf(Obs o) {
  switch (o) {
    case Obs::Potential: case Obs::TotalEnergy: case Obs::VirialRatio: case Obs::Lagrange10: case Obs::Lagrange50:
    case Obs::Lagrange90:
      return 1e-5;
    default:
      return 1e-9;
  }
}

void expectAgree(const core::Observables& gpu, const core::Observables& cpu, core::ForceMode f, bool flocks,
                 const std::string& what) {
  for (Obs o : core::observedColumns(f, flocks)) {
    if (core::observableDesc(o).derived) continue;
    const char* name = core::observableDesc(o).column;
    if (std::isnan(cpu[o])) {
      EXPECT_TRUE(std::isnan(gpu[o])) << what << " " << name;
    } else if (isCount(o)) {
      EXPECT_EQ(gpu[o], cpu[o]) << what << " " << name;
    } else {
      EXPECT_NEAR(gpu[o], cpu[o], toleranceOf(o) * std::max(1.0, std::fabs(cpu[o]))) << what << " " << name;
    }
  }
}

core::Bodies uniformBoids(size_t n, float h, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    b.pos[i] = core::Vec4{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), 1};
    b.vel[i] = core::Vec4{float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), 0};
    b.id[i] = uint32_t(i);
  }
  return b;
}

class CudaObservables : public CudaTest {};

TEST_F(CudaObservables, BoidsAgreeWithTheCpuOnRandomStates) {
  for (size_t n : {size_t(1), size_t(2), size_t(33), size_t(1000), size_t(20000), size_t((1 << 17) + 3)}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Boids;
    // About 6 neighbours per boid: a giant flock and many small ones.
    p.halfSize = std::max(10.0f, float(std::cbrt(double(n) * 523.6 / 6.0) / 2));
    const core::Bodies b = uniformBoids(n, p.halfSize, n);
    core::ObserveRequest r;
    r.flocks = true;
    r.millingMinSize = 5;
    const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, r);
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(b);
    expectAgree(gpu->observe(r), cpu, p.force, true, "n=" + std::to_string(n));
  }
}

TEST_F(CudaObservables, FlockedStatesAgreeOnEveryPipeline) {
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  core::ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 30000;
  spec.denseNeighbours = 4;
  const core::Scenario sc = core::makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  core::ObserveRequest r;
  r.flocks = true;
  for (core::Pipeline pipe : core::pipelinesFor(core::ForceMode::Boids)) {
    p.pipeline = pipe;
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(sc.bodies);
    gpu->step(200);  // flocks form; the state is in the pipeline's own order
    const core::Bodies state = gpu->readBodies();
    expectAgree(gpu->observe(r), core::observeBodies(state.pos, state.vel, p, r), p.force, true,
                core::toString(pipe));
  }
}

TEST_F(CudaObservables, GravityAgreesWithTheCpu) {
  for (const char* scenario : {"plummer", "galaxies"}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Gravity;
    core::ScenarioSpec spec;
    spec.name = scenario;
    spec.n = 20000;
    const core::Bodies b = core::makeScenario(spec, p).bodies;
    const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, core::ObserveRequest{});
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(b);
    expectAgree(gpu->observe(core::ObserveRequest{}), cpu, p.force, false, scenario);
    core::ObserveRequest small;
    small.potentialMaxN = 1000;
    const core::Observables s = gpu->observe(small);
    EXPECT_TRUE(std::isnan(s[Obs::Potential]));
    EXPECT_NEAR(s[Obs::Kinetic], cpu[Obs::Kinetic], 1e-9 * cpu[Obs::Kinetic]);
  }
}

TEST_F(CudaObservables, UniformSphereHasTheKnownPotential) {
  const size_t n = 100000;
  const double R = 2.0, M = 1.0;
  core::Rng rng(3);
  core::Bodies b;
  while (b.size() < n) {
    const double x = rng.uniform(-1, 1), y = rng.uniform(-1, 1), z = rng.uniform(-1, 1);
    if (x * x + y * y + z * z >= 1) continue;
    const size_t i = b.size();
    b.resize(i + 1);
    b.pos[i] = core::Vec4{float(R * x), float(R * y), float(R * z), float(M / n)};
    b.vel[i] = core::Vec4{0, 0, 0, 0};
    b.id[i] = uint32_t(i);
  }
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Gravity;
  p.gravity.G = 1;
  p.gravity.softening = 1e-5f;
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(b);
  const double want = -3.0 * M * M / (5 * R);
  EXPECT_NEAR(gpu->observe(core::ObserveRequest{})[Obs::Potential], want, 0.003 * std::fabs(want));
}

}  // namespace
}  // namespace murmur::test
