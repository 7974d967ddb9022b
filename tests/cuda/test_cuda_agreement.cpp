// The CUDA engine against the CPU reference: one step from the same state, per id, for every
// force x pipeline x grid width at edge sizes (1, 31, 32, 33, 1000) and a large one (2^17 + 3),
// every block size, the rule sets, the world's faces, the neighbour statistics and parameter
// switches mid-run.
#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "core/params.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::ForceMode;
using core::Integrator;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

using namespace test;

std::vector<Case> smallCases() {
  std::vector<Case> cases;
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : bothForcesPipelines())
      for (int width : {1, 2})
        for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(33), size_t(1000)}) {
          if (f == ForceMode::Boids) {
            cases.push_back(Case{f, pipe, width, n, Integrator::Leapfrog});
          } else {
            for (Integrator in : {Integrator::Leapfrog, Integrator::DampedEuler})
              cases.push_back(Case{f, pipe, width, n, in});
          }
        }
  return cases;
}

class GpuMatchesCpu : public test::CudaParamTest<Case> {};

TEST_P(GpuMatchesCpu, OneStep) {
  const Case c = GetParam();
  const SimParams p = paramsFor(c);
  const Bodies start = bodiesFor(c, p);
  expectOneStepMatches(p, start, nameOf(c));
  if (c.force == ForceMode::Gravity) expectAccelerationsMatch(p, start, "accelerations");
}

INSTANTIATE_TEST_SUITE_P(EdgeSizes, GpuMatchesCpu, ::testing::ValuesIn(smallCases()), caseName);

// 2^17 + 3 bodies: the grid pipelines against the CPU (whose grid pipelines are fast enough);
// naive boids against the GPU's own coherent pipeline, which finds the same neighbours.
TEST_F(CudaEngineTest, LargeBoidsGridMatchesCpu) {
  // Naive is left out: the CPU's all pairs is too slow at this size (the next test covers it).
  for (Pipeline pipe : without(boidsPipelines(), {Pipeline::Naive}))
    for (int width : {1, 2}) {
      const Case c{ForceMode::Boids, pipe, width, kLargeN, Integrator::Leapfrog};
      const SimParams p = paramsFor(c);
      expectOneStepMatches(p, bodiesFor(c, p), nameOf(c));
    }
}

TEST_F(CudaEngineTest, LargeBoidsNaiveMatchesCoherent) {
  const Case c{ForceMode::Boids, Pipeline::Naive, 1, kLargeN, Integrator::Leapfrog};
  SimParams p = paramsFor(c);
  const Bodies start = bodiesFor(c, p);
  auto naive = cuda::createCudaEngine(p);
  p.pipeline = Pipeline::Coherent;
  auto coherent = cuda::createCudaEngine(p);
  naive->reset(start);
  coherent->reset(start);
  naive->step(1);
  coherent->step(1);
  std::string report;
  const size_t bad = test::countStateMismatches(naive->readBodies(), coherent->readBodies(), kRel, kAbsFloor,
                                                kAbsFloor, &report);
  EXPECT_EQ(bad, 0u) << report;
}

TEST_F(CudaEngineTest, LargeGravityGridMatchesCpu) {
  // The grid methods: naive's all pairs is too slow on the CPU at this size, and rows and verlet
  // run coherent's grid for gravity.
  for (Pipeline pipe : classicGridPipelines()) {
    const Case c{ForceMode::Gravity, pipe, 1, kLargeN, Integrator::Leapfrog};
    const SimParams p = paramsFor(c);
    const Bodies start = bodiesFor(c, p);
    const std::string name = nameOf(c);
    expectAccelerationsMatch(p, start, name);
    expectOneStepMatches(p, start, name);
  }
}

TEST_F(CudaEngineTest, EveryBlockSizeMatchesCpu) {
  constexpr size_t n = 2003;  // several full tiles and a partial one for every block size
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : bothForcesPipelines()) {
      const Case c{f, pipe, 1, n, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      const Bodies start = bodiesFor(c, p);
      auto cpu = core::createCpuEngine(p);
      cpu->reset(start);
      cpu->step(1);
      const Bodies ref = cpu->readBodies();
      auto gpu = cuda::createCudaEngine(p);
      for (int block = core::kMinBlockSize; block <= core::kMaxBlockSize; block += 32) {
        p.blockSize = block;
        gpu->setParams(p);
        gpu->reset(start);
        gpu->step(1);
        std::string report;
        const size_t bad = test::countStateMismatches(gpu->readBodies(), ref, kRel, kAbsFloor, kAbsFloor, &report);
        EXPECT_LE(bad, allowedOutliers(p, n))
            << core::toString(f) << " " << core::toString(pipe) << " block " << block << report;
      }
    }
}

TEST_F(CudaEngineTest, ReynoldsRulesMatchCpu) {
  // Scattered is left out: it runs coherent's force kernel (launchBoidsGrid) over an index of the
  // unsorted state, and the rules are the kernel's.
  for (Pipeline pipe : without(boidsPipelines(), {Pipeline::Scattered})) {
    const Case c{ForceMode::Boids, pipe, 1, 1000, Integrator::Leapfrog};
    SimParams p = paramsFor(c);
    p.boids.rules = core::RuleSet::Reynolds;
    expectOneStepMatches(p, bodiesFor(c, p), std::string("reynolds ") + core::toString(pipe));
  }
}

// Boids packed against the faces: wrapping and the no-search-across-the-boundary rule.
TEST_F(CudaEngineTest, BoidsAtTheWorldBoundaryMatchCpu) {
  for (Pipeline pipe : boidsPipelines()) {
    SimParams p = core::defaultParams();
    p.pipeline = pipe;
    p.halfSize = 10.0f;
    Bodies start = test::boidBodies(1500, p, 9);
    for (size_t i = 0; i < start.size(); i += 2) start.pos[i].x = (i % 4 ? 9.95f : -9.99f);
    expectOneStepMatches(p, start, std::string("boundary ") + core::toString(pipe));
  }
}

TEST_F(CudaEngineTest, NeighbourStatsMatchCpu) {
  for (size_t n : {size_t(1), size_t(1000), kLargeN})
    for (Pipeline pipe : boidsPipelines())
      for (int width : {1, 2}) {
        if (n == kLargeN && pipe == Pipeline::Naive) continue;  // CPU all pairs is too slow here
        const Case c{ForceMode::Boids, pipe, width, n, Integrator::Leapfrog};
        const SimParams p = paramsFor(c);
        const Bodies start = bodiesFor(c, p);
        auto gpu = cuda::createCudaEngine(p);
        auto cpu = core::createCpuEngine(p);
        gpu->reset(start);
        cpu->reset(start);
        const core::NeighbourStats g = gpu->neighbourStats(), r = cpu->neighbourStats();
        // Integer counts over identical neighbour decisions: exact.
        EXPECT_EQ(g.meanCandidates, r.meanCandidates) << nameOf(c);
        EXPECT_EQ(g.meanNeighbours, r.meanNeighbours) << nameOf(c);
        if (n == 1000) {
          EXPECT_GT(g.meanNeighbours, 3.0);  // the dense test world does have neighbours
        }
      }
}

// Switching pipeline, cell width, block size and force without reset: after every switch, one
// step from the GPU's current state matches the CPU engine started from that same state.
TEST_F(CudaEngineTest, SwitchingParametersMidRunWorks) {
  struct Switch {
    ForceMode force;
    Pipeline pipeline;
    int width;
    int block;
  };
  const Switch sequence[] = {
      {ForceMode::Boids, Pipeline::Naive, 1, 256},      {ForceMode::Boids, Pipeline::Coherent, 1, 128},
      {ForceMode::Boids, Pipeline::Scattered, 2, 96},   {ForceMode::Boids, Pipeline::Coherent, 2, 1024},
      {ForceMode::Gravity, Pipeline::Coherent, 1, 256}, {ForceMode::Gravity, Pipeline::Naive, 1, 64},
      {ForceMode::Gravity, Pipeline::Scattered, 1, 512}, {ForceMode::Boids, Pipeline::Scattered, 1, 32},
      {ForceMode::Boids, Pipeline::Naive, 2, 160},      {ForceMode::Boids, Pipeline::Rows, 2, 224},
      {ForceMode::Gravity, Pipeline::Rows, 1, 128},     {ForceMode::Boids, Pipeline::Rows, 1, 64},
  };
  constexpr size_t n = 3000;
  SimParams p = core::defaultParams();
  p.halfSize = test::denseHalfSize(n, p);
  p.gravity.G = 1e-3f;  // the boids have unit mass; keep their gravity gentle
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(test::boidBodies(n, p, 77));
  for (const Switch& s : sequence) {
    p.force = s.force;
    p.pipeline = s.pipeline;
    p.cellWidthFactor = s.width;
    p.blockSize = s.block;
    gpu->setParams(p);
    ASSERT_EQ(gpu->params().pipeline, s.pipeline);
    const Bodies before = gpu->readBodies();
    auto cpu = core::createCpuEngine(p);
    cpu->reset(before);
    gpu->step(1);
    cpu->step(1);
    std::string report;
    const size_t bad =
        test::countStateMismatches(gpu->readBodies(), cpu->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
    EXPECT_LE(bad, allowedOutliers(p, n)) << core::toString(s.force) << " " << core::toString(s.pipeline) << " w"
                                          << s.width << " block " << s.block << report;
    gpu->step(3);  // and keeps running
    ASSERT_TRUE(test::allFinite(gpu->readBodies()));
  }
}

}  // namespace
