// The clusters pipeline on the GPU (cuda/cluster_kernels.h): against naive on the GPU across
// steps and wraps at several densities and in the plane, and against the CPU engine's clusters at
// every block size, the warps of a block each staging their own candidates.
#include <gtest/gtest.h>

#include <string>

#include "core/cpu_engine.h"
#include "core/metrics.h"
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

namespace {

using namespace test;

TEST_F(CudaEngineTest, ClustersMatchNaiveAcrossStepsAndWraps) {
  for (int dims : {3, 2})
    for (double neighbours : {4.0, 30.0, 64.0}) {
      const Case c{ForceMode::Boids, Pipeline::Clusters, 1, kLargeN, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.dims = dims;
      p.halfSize = test::denseHalfSize(c.n, p, neighbours);
      Bodies start = bodiesFor(c, p);
      if (dims == 2)
        for (size_t i = 0; i < start.size(); ++i) start.pos[i].z = start.vel[i].z = 0.0f;
      const size_t wraps = expectMatchesNaiveAtCheckpoints(
          p, start, 30, 15, "dims " + std::to_string(dims) + " neighbours " + std::to_string(neighbours));
      EXPECT_GT(wraps, 20u) << "dims " << dims << " neighbours " << neighbours;
    }
}

// Every block size, 1024 included (64 KB of staging buffers: more than a kernel gets without
// asking), one step. The kernel adds the same terms in the same order as the CPU engine; the
// speed clamp's reciprocal square root is the GPU's own (core::rsqrtHD), so the states agree to
// rounding, not to the bit (and over several steps an ulp can move a pair across a radius: on an
// H100, 1 body of 30011 at 64 neighbours differed by 5e-5 after 4 steps).
TEST_F(CudaEngineTest, ClustersMatchTheCpuAtEveryBlockSize) {
  for (double neighbours : {8.0, 64.0})
    for (int block : {32, 128, 992, 1024}) {
      const Case c{ForceMode::Boids, Pipeline::Clusters, 1, 30011, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.halfSize = test::denseHalfSize(c.n, p, neighbours);
      p.blockSize = block;
      const Bodies start = bodiesFor(c, p);
      auto gpu = cuda::createCudaEngine(p);
      auto cpu = core::createCpuEngine(p);
      gpu->reset(start);
      cpu->reset(start);
      EXPECT_EQ(gpu->neighbourStats().meanCandidates, cpu->neighbourStats().meanCandidates);
      gpu->step(1);
      cpu->step(1);
      std::string report;
      const size_t bad =
          test::countStateMismatches(gpu->readBodies(), cpu->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
      EXPECT_EQ(bad, 0u) << "neighbours " << neighbours << " block " << block << report;
    }
}

}  // namespace
