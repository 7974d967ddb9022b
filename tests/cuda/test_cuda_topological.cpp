// Topological neighbours (--topological K) on the CUDA engine: every body's K nearest equal the
// CPU engine's (which tests/core/test_topological.cpp holds to brute force) on random, clustered
// and lattice states, in the plane and in 3D, under every boundary, with and without a cutoff; and
// a step of each rule over them agrees with the CPU engine's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../core/run_steps.h"
#include "../core/sparse_world.h"
#include "core/cpu_engine.h"
#include "core/params.h"
#include "core/rule_table.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::Boundary;
using core::SimParams;

namespace {

using test::CudaEngineTest;

SimParams topoWorld(const char* rule, int dims, float h, Boundary k, int K) {
  SimParams p = core::defaultParams();
  core::selectRule(p, *core::findRule(rule));
  p.dims = dims;
  p.halfSize = h;
  p.boundary = k;
  p.topological = K;
  p.pipeline = core::Pipeline::Rows;
  return p;
}

}  // namespace

TEST_F(CudaEngineTest, TopologicalNeighboursEqualTheCpusInEveryWorld) {
  for (int dims : {2, 3})
    for (Boundary k : {Boundary::Wrap, Boundary::Periodic, Boundary::Reflect, Boundary::Open})
      for (int K : {1, 7, 16, 64})
        for (float cutoff : {0.0f, 1.7f}) {
          SimParams p = topoWorld("vicsek", dims, dims == 2 ? 16.0f : 7.0f, k, K);
          p.topologicalRadius = cutoff;
          const std::vector<std::pair<std::string, Bodies>> states = {
              {"random", test::boidBodiesInWorld(1000, p, 3 + K)},
              {"clustered", test::sparseClumps(1000, p.halfSize, dims, 7 + K)},
              {"lattice", test::lattice(dims == 2 ? 1024 : 1000, dims, p.halfSize)},
          };
          for (const auto& [name, b] : states) {
            core::CpuEngine cpu(p);
            cpu.reset(b);
            cuda::CudaEngine gpu(p);
            gpu.reset(b);
            const auto want = cpu.topologicalNeighbours(), got = gpu.topologicalNeighbours();
            ASSERT_EQ(got.size(), want.size());
            int bad = 0;
            for (size_t id = 0; id < want.size(); ++id)
              if (got[id] != want[id] && bad++ < 3)
                ADD_FAILURE() << name << " " << dims << "D " << core::toString(k) << " K=" << K << " cutoff "
                              << cutoff << ": body " << id;
            EXPECT_EQ(bad, 0);
          }
        }
}

// After steps the search starts from each body's K-th distance of the step before (a radius that
// may now be too small or too large): the sets still equal the CPU engine's on the same state.
TEST_F(CudaEngineTest, TopologicalNeighboursAfterStepsEqualTheCpus) {
  for (int dims : {2, 3})
    for (Boundary k : {Boundary::Wrap, Boundary::Reflect, Boundary::Open})
      for (int K : {1, 7, 16}) {
        SimParams p = topoWorld("cis565", dims, dims == 2 ? 16.0f : 7.0f, k, K);
        cuda::CudaEngine gpu(p);
        gpu.reset(test::sparseClumps(1000, p.halfSize, dims, 5 + K));
        for (int step = 0; step < 4; ++step) {
          gpu.step();
          const Bodies now = gpu.readBodies();
          core::CpuEngine cpu(gpu.params());
          cpu.reset(now);
          const auto want = cpu.topologicalNeighbours(), got = gpu.topologicalNeighbours();
          ASSERT_EQ(got.size(), want.size());
          size_t bad = 0;
          for (size_t id = 0; id < want.size(); ++id) bad += got[id] != want[id];
          EXPECT_EQ(bad, 0u) << dims << "D " << core::toString(k) << " K=" << K << " after step " << step + 1;
        }
      }
}

TEST_F(CudaEngineTest, TopologicalStepsAgreeWithTheCpu) {
  for (const char* rule : {"vicsek", "cis565", "couzin"})
    for (int dims : {2, 3})
      for (Boundary k : {Boundary::Periodic, Boundary::Open}) {
        SimParams p = topoWorld(rule, dims, dims == 2 ? 30.0f : 20.0f, k, 7);
        const Bodies b = test::boidBodiesInWorld(3000, p, 21);
        core::CpuEngine cpu(p);
        cuda::CudaEngine gpu(p);
        std::string report;
        const size_t bad = test::countStateMismatches(test::runSteps(gpu, b, 1), test::runSteps(cpu, b, 1), 1e-4,
                                                      1e-4, 1e-5, &report);
        EXPECT_EQ(bad, 0u) << rule << " " << dims << "D " << core::toString(k) << report;
      }
}
