// The verlet pipeline's lists (verlet_lists.h) against naive on the GPU: at every step across
// rebuilds and wraps, and with lists too short for most bodies (the overflow path).
#include <gtest/gtest.h>

#include <string>
#include "core/metrics.h"
#include "core/params.h"
#include "core/verlet.h"
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

// Verlet on the GPU against naive on the GPU at 2^17 + 3 bodies in a world where thousands of
// boids wrap: the verlet engine runs on, reusing and rebuilding its lists, and before every step
// its state is also stepped once by naive; a neighbour missing from a reused list shows as a
// per-id mismatch. List steps 0 (the cost model), 1 (no reuse) and 6; both cell widths.
TEST_F(CudaEngineTest, VerletMatchesNaiveAtEveryStepAcrossRebuildsAndWraps) {
  for (int k : {0, 1, 6})
    for (int width : {1, 2}) {
      const Case c{ForceMode::Boids, Pipeline::Verlet, width, kLargeN, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.halfSize = test::denseHalfSize(c.n, p, 30.0);
      p.listSteps = k;
      auto verlet = cuda::createCudaEngine(p);
      verlet->reset(bodiesFor(c, p));
      SimParams q = p;
      q.pipeline = Pipeline::Naive;
      auto naive = cuda::createCudaEngine(q);
      size_t wraps = 0;
      for (int step = 1; step <= 14; ++step) {
        const Bodies before = verlet->readBodies();
        naive->reset(before);
        naive->step(1);
        verlet->step(1);
        const Bodies after = verlet->readBodies();
        wraps += core::countWrapped(before, after, p.halfSize);
        std::string report;
        const size_t bad =
            test::countStateMismatches(after, naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
        ASSERT_EQ(bad, 0u) << "list steps " << k << " width " << width << " step " << step << report;
      }
      EXPECT_GT(wraps, 100u) << "list steps " << k << " width " << width;
      EXPECT_EQ(verlet->stepsPerCycle(), core::verletPlan(p).steps);
      if (k == 6) {
        EXPECT_EQ(verlet->stepsPerCycle(), 6);
      }
    }
}

// Lists with room for 4 entries: most bodies overflow and are summed by a search of the build's
// grid around them and their images; the result still matches naive at every step across the
// reuse and the wrap, and bodies whose list fits take the list path.
TEST_F(CudaEngineTest, VerletOverflowMatchesNaive) {
  for (size_t n : {size_t(33), size_t(5000)}) {
    const Case c{ForceMode::Boids, Pipeline::Verlet, 1, n, Integrator::Leapfrog};
    SimParams p = paramsFor(c);
    p.halfSize = test::denseHalfSize(n, p, 6.0);
    // 5000 bodies: lists serve 3 steps, with images; 33: a world too narrow for images, where the
    // plan rebuilds every step (and --list-steps 3 would be refused).
    p.listSteps = n == 5000 ? 3 : 0;
    EXPECT_EQ(core::verletPlan(p).periodic, n == 5000);
    cuda::CudaEngine verlet(p);
    verlet.reset(bodiesFor(c, p));
    verlet.debugSetListCapacity(4);
    SimParams q = p;
    q.pipeline = Pipeline::Naive;
    auto naive = cuda::createCudaEngine(q);
    size_t wraps = 0;
    for (int step = 1; step <= 15; ++step) {
      const Bodies before = verlet.readBodies();
      naive->reset(before);
      naive->step(1);
      verlet.step(1);
      const Bodies after = verlet.readBodies();
      wraps += core::countWrapped(before, after, p.halfSize);
      std::string report;
      const size_t bad =
          test::countStateMismatches(after, naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
      ASSERT_EQ(bad, 0u) << "n " << n << " step " << step << report;
    }
    if (n == 5000) {
      EXPECT_GT(wraps, 50u);
    }
  }
}

}  // namespace
