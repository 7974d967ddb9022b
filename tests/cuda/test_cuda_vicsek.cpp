// The Vicsek model (core/rules/vicsek.h) on the CUDA engine: every boids pipeline agrees per id
// with the CPU engine's naive pipeline after a step, in the plane and in 3D, under the periodic
// and wrap boundaries, with angular and vectorial noise; isolated boids (whose new heading is
// their own turned by noise alone) turn by the CPU's angles, so the device draws the host's bits
// for every body whatever slot a pipeline holds it in; and the rows pipeline's observables come
// from the observer (the rule keeps no boids counts) and leave the steps unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <string>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/params.h"
#include "core/rule_table.h"
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

SimParams vicsekWorld(int dims, float halfSize, core::Boundary boundary, core::VicsekNoise kind) {
  SimParams p = core::defaultParams();
  core::selectRule(p, *core::findRule("vicsek"));
  p.dims = dims;
  p.halfSize = halfSize;
  p.boundary = boundary;
  p.vicsek.noise = 0.8f;
  p.vicsek.noiseKind = kind;
  p.vicsek.dt = 3.0f;
  return p;
}

Bodies randomVicsek(size_t n, const SimParams& p, uint64_t seed) { return test::boidBodiesInWorld(n, p, seed); }

Bodies run(std::unique_ptr<core::Engine> e, const Bodies& b, int steps) { return test::runSteps(*e, b, steps); }

TEST_F(CudaEngineTest, VicsekOnEveryPipelineMatchesCpuNaive) {
  for (int dims : {2, 3}) {
    for (core::Boundary k : {core::Boundary::Periodic, core::Boundary::Wrap}) {
      for (core::VicsekNoise kind : {core::VicsekNoise::Angular, core::VicsekNoise::Vectorial}) {
        SimParams p = vicsekWorld(dims, dims == 2 ? 20.0f : 7.0f, k, kind);
        const Bodies b = randomVicsek(dims == 2 ? 1600 : 2700, p, 21);
        p.pipeline = Pipeline::Naive;
        const Bodies want = run(core::createCpuEngine(p), b, 1);
        const std::string tag =
            std::to_string(dims) + "D " + core::toString(k) + " " + core::toString(kind);
        for (Pipeline pipe : test::boidsPipelines()) {
          p.pipeline = pipe;
          std::string report;
          const size_t bad =
              test::countStateMismatches(run(cuda::createCudaEngine(p), b, 1), want, 1e-4, 1e-4, 1e-5, &report);
          EXPECT_EQ(bad, 0u) << core::toString(pipe) << ", " << tag << "\n" << report;
        }
        if (k != core::Boundary::Periodic) continue;
        // The rows pipeline with the images' rows in its one kernel and in the split's second.
        p.pipeline = Pipeline::Rows;
        using Split = cuda::CudaEngine::PeriodicSplit;
        for (Split split : {Split::Whole, Split::Split}) {
          auto e = std::make_unique<cuda::CudaEngine>(p);
          e->debugSetPeriodicSplit(split);
          std::string report;
          const size_t bad = test::countStateMismatches(run(std::move(e), b, 1), want, 1e-4, 1e-4, 1e-5, &report);
          EXPECT_EQ(bad, 0u) << "rows " << (split == Split::Split ? "split" : "one kernel") << ", " << tag << "\n"
                             << report;
        }
      }
    }
  }
}

// Isolated boids: the new heading is the old one turned by the noise alone, so the device's angle
// of every body equals the host's (the same draw, up to the last bits of the trigonometry), for
// bodies given in one order and in the reverse one.
TEST_F(CudaEngineTest, VicsekDrawsTheHostsNoiseForEveryBody) {
  SimParams p = vicsekWorld(2, 300.0f, core::Boundary::Periodic, core::VicsekNoise::Angular);
  p.vicsek.noise = 6.0f;
  Bodies b;
  b.resize(900);
  for (size_t i = 0; i < b.size(); ++i) {
    const float a = 0.37f * float(i);
    b.pos[i] = core::Vec4{-295.0f + 10.0f * float(i % 30), -295.0f + 10.0f * float(i / 30), 0, 1};
    b.vel[i] = core::Vec4{0.03f * std::cos(a), 0.03f * std::sin(a), 0, 0};
    b.id[i] = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> reversed(b.size());
  std::iota(reversed.rbegin(), reversed.rend(), 0u);
  const Bodies shuffled = core::gatherBodies(b, reversed);
  p.pipeline = Pipeline::Naive;
  const Bodies host = run(core::createCpuEngine(p), b, 4);
  for (Pipeline pipe : test::boidsPipelines()) {
    p.pipeline = pipe;
    for (const Bodies* start : {static_cast<const Bodies*>(&b), &shuffled}) {
      const Bodies dev = run(cuda::createCudaEngine(p), *start, 4);
      for (size_t i = 0; i < b.size(); ++i) {
        const double want = std::atan2(host.vel[i].y, host.vel[i].x), got = std::atan2(dev.vel[i].y, dev.vel[i].x);
        ASSERT_NEAR(std::remainder(got - want, 2.0 * test::kPi), 0.0, 1e-4) << core::toString(pipe) << ", body " << i;
      }
    }
  }
}

TEST_F(CudaEngineTest, VicsekObservablesComeFromTheObserverAndLeaveTheStepsAlone) {
  SimParams p = vicsekWorld(2, 20.0f, core::Boundary::Periodic, core::VicsekNoise::Angular);
  p.pipeline = Pipeline::Rows;
  const Bodies b = randomVicsek(1600, p, 5);
  auto observed = cuda::createCudaEngine(p), plain = cuda::createCudaEngine(p);
  observed->reset(b);
  plain->reset(b);
  core::ObserveRequest r;
  for (int s = 0; s < 5; ++s) {
    const core::Observables o = observed->observe(r);
    ASSERT_TRUE(o.has(core::Obs::Polarization));
    EXPECT_GE(o[core::Obs::Polarization], 0.0);
    EXPECT_LE(o[core::Obs::Polarization], 1.0);
    observed->step(1);
    plain->step(1);
  }
  const Bodies x = observed->readBodies(), y = plain->readBodies();
  for (size_t i = 0; i < b.size(); ++i) ASSERT_TRUE(x.vel[i].x == y.vel[i].x && x.pos[i].y == y.pos[i].y) << i;
}

}  // namespace
