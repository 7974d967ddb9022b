// Couzin's zones (core/rules/couzin.h) on the CUDA engine: every boids pipeline against the
// brute-force reference written from the paper (zones, blind angle, turning limit; no noise), and
// with the noise on against the CPU engine's naive pipeline after a step (the engines' last bits of
// trigonometry differ, which the repulsion's near-cancelling sums can grow over further steps), in
// the plane and in 3D, under the reflecting, periodic and wrap boundaries (the draws are the
// host's for every body).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/params.h"
#include "core/rule_table.h"
#include "../core/couzin_reference.h"
#include "cuda/cuda_engine.h"
#include "../core/run_steps.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::Pipeline;
using core::SimParams;

namespace {

using test::CudaEngineTest;

SimParams couzinWorld(int dims, float halfSize, core::Boundary boundary) {
  SimParams p = core::defaultParams();
  core::selectRule(p, *core::findRule("couzin"));
  p.dims = dims;
  p.halfSize = halfSize;
  p.boundary = boundary;
  p.couzin.zoneAttraction = 4.0f;  // r_a = 7
  p.couzin.turnRate = 30.0f;
  return p;
}

// Bodies in the cube of half-size `spread` (the world's or less), in p's plane or space.
Bodies randomCouzin(size_t n, const SimParams& p, float spread, uint64_t seed) {
  SimParams q = p;
  q.halfSize = spread;
  return test::boidBodiesInWorld(n, q, seed);
}

Bodies run(std::unique_ptr<core::Engine> e, const Bodies& b, int steps) { return test::runSteps(*e, b, steps); }

TEST_F(CudaEngineTest, CouzinOnEveryPipelineMatchesTheBruteForceReference) {
  for (int dims : {2, 3}) {
    SimParams p = couzinWorld(dims, dims == 2 ? 20.0f : 12.0f, core::Boundary::Reflect);
    p.couzin.noise = 0.0f;
    const Bodies b = randomCouzin(dims == 2 ? 700 : 1500, p, 0.6f * p.halfSize, 17);
    const std::vector<test::Dir> want = test::couzinReferenceStep(p, b);
    for (Pipeline pipe : test::boidsPipelines()) {
      p.pipeline = pipe;
      const Bodies a = run(cuda::createCudaEngine(p), b, 1);
      int bad = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const test::Dir w = want[a.id[i]];
        const double err = std::hypot(std::hypot(a.vel[i].x - w.x, a.vel[i].y - w.y), a.vel[i].z - w.z);
        if (err > 1e-5 && bad++ < 5)
          ADD_FAILURE() << dims << "D " << core::toString(pipe) << " body " << a.id[i] << ": (" << a.vel[i].x << ", "
                        << a.vel[i].y << ", " << a.vel[i].z << ") against (" << w.x << ", " << w.y << ", " << w.z
                        << ")";
      }
      EXPECT_EQ(bad, 0) << dims << "D " << core::toString(pipe);
    }
  }
}

TEST_F(CudaEngineTest, CouzinWithNoiseOnEveryPipelineMatchesCpuNaive) {
  for (int dims : {2, 3}) {
    for (core::Boundary k : {core::Boundary::Reflect, core::Boundary::Periodic, core::Boundary::Wrap}) {
      SimParams p = couzinWorld(dims, dims == 2 ? 25.0f : 15.0f, k);
      p.couzin.noise = 0.3f;
      const Bodies b = randomCouzin(dims == 2 ? 1600 : 2700, p, p.halfSize, 21);
      p.pipeline = Pipeline::Naive;
      const Bodies want = run(core::createCpuEngine(p), b, 1);
      const std::string tag = std::to_string(dims) + "D " + core::toString(k);
      for (Pipeline pipe : test::boidsPipelines()) {
        p.pipeline = pipe;
        std::string report;
        const size_t bad =
            test::countStateMismatches(run(cuda::createCudaEngine(p), b, 1), want, 1e-4, 1e-4, 1e-5, &report);
        EXPECT_EQ(bad, 0u) << core::toString(pipe) << ", " << tag << "\n" << report;
      }
    }
  }
}

}  // namespace
