// The engine's edges: long runs stay finite (and boids inside the world, below their top speed),
// zero bodies on every pipeline, and invalid parameters refused without a change.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
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

TEST_F(CudaEngineTest, LongBoidRunStaysFiniteAndInside) {
  constexpr size_t n = 10000;
  for (Pipeline pipe : boidsPipelines()) {
    SimParams p = core::defaultParams();
    p.pipeline = pipe;
    p.halfSize = test::denseHalfSize(n, p);
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(test::boidBodies(n, p, 5));
    gpu->step(2000);
    const Bodies b = gpu->readBodies();
    ASSERT_TRUE(test::allFinite(b)) << core::toString(pipe);
    size_t outside = 0, tooFast = 0;
    for (size_t i = 0; i < n; ++i) {
      const Vec4& q = b.pos[i];
      outside += !(q.x >= -p.halfSize && q.x < p.halfSize && q.y >= -p.halfSize && q.y < p.halfSize &&
                   q.z >= -p.halfSize && q.z < p.halfSize);
      const Vec4& v = b.vel[i];
      tooFast += std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z) > p.boids.maxSpeed * 1.0001;
    }
    EXPECT_EQ(outside, 0u) << core::toString(pipe);
    EXPECT_EQ(tooFast, 0u) << core::toString(pipe);
  }
}

TEST_F(CudaEngineTest, LongGravityRunStaysFinite) {
  constexpr size_t n = 10000;
  for (Pipeline pipe : bothForcesPipelines())
    for (Integrator in : {Integrator::Leapfrog, Integrator::DampedEuler}) {
      SimParams p = core::defaultParams();
      p.force = ForceMode::Gravity;
      p.pipeline = pipe;
      p.gravity.integrator = in;
      p.gravity.damping = in == Integrator::DampedEuler ? 0.999f : 1.0f;
      auto gpu = cuda::createCudaEngine(p);
      gpu->reset(test::plummerBodies(n, 11));
      gpu->step(500);
      EXPECT_TRUE(test::allFinite(gpu->readBodies())) << core::toString(pipe) << " " << core::toString(in);
    }
}

TEST_F(CudaEngineTest, ZeroBodies) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : bothForcesPipelines()) {
      SimParams p = core::defaultParams();
      p.force = f;
      p.pipeline = pipe;
      auto gpu = std::make_unique<cuda::CudaEngine>(p);
      gpu->setProfiling(true);
      gpu->reset(Bodies{});
      EXPECT_EQ(gpu->numBodies(), 0u);
      gpu->step(3);
      EXPECT_EQ(gpu->readBodies().size(), 0u);
      EXPECT_TRUE(gpu->computeAccelerations().empty());
      const core::NeighbourStats st = gpu->neighbourStats();
      EXPECT_EQ(st.meanCandidates, 0.0);
      EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
      gpu->writeDrawBuffers(nullptr, nullptr, nullptr);
      p.pipeline = Pipeline::Coherent;
      gpu->setParams(p);
      gpu->step(1);
      // And it comes back to life.
      gpu->reset(test::ballBodies(5, 1));
      gpu->step(1);
      EXPECT_EQ(gpu->readBodies().size(), 5u);
    }
}

TEST_F(CudaEngineTest, InvalidParamsAreRejected) {
  SimParams p = core::defaultParams();
  p.blockSize = 100;
  EXPECT_THROW(cuda::createCudaEngine(p), std::invalid_argument);
  p = core::defaultParams();
  auto gpu = cuda::createCudaEngine(p);
  SimParams bad = p;
  bad.cellWidthFactor = 3;
  EXPECT_THROW(gpu->setParams(bad), std::invalid_argument);
  EXPECT_EQ(gpu->params().cellWidthFactor, 1);  // unchanged
}

}  // namespace
