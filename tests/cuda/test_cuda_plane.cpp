// The plane (--dims 2) on the GPU: every pipeline of both forces, one step against the CPU engine
// per id as in 3D (engine_cases.h), at both grid widths and several sizes; a longer run stays
// in the plane to the bit; bodies off the plane are refused through the device arrays too. (The
// rows step's sample of the observables in the plane: test_cuda_observables.cpp.)
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <vector>

#include "core/cpu_engine.h"
#include "core/params.h"
#include "core/pipeline_table.h"
#include "core/scenarios.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::ForceMode;
using core::Pipeline;
using core::SimParams;

namespace {

using namespace test;

Bodies flatten(Bodies b) {
  for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0.0f, b.vel[i].z = 0.0f;
  return b;
}

void expectInThePlane(const Bodies& b, const std::string& what) {
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b.pos[i].z, 0.0f) << what << " body " << i;
    ASSERT_EQ(b.vel[i].z, 0.0f) << what << " body " << i;
  }
}

class CudaPlane : public CudaEngineTest {};

TEST_F(CudaPlane, EveryPipelineMatchesTheCpuAndStaysInThePlane) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : core::pipelinesFor(f)) {
      if (!(core::pipelineInfo(pipe).runsOn & core::kOnCuda)) continue;
      for (int width : {1, 2})
        for (size_t n : {size_t(33), size_t(1000), size_t(20000)}) {
          const Case c{f, pipe, width, n, core::Integrator::Leapfrog};
          SimParams p = paramsFor(c);
          p.dims = 2;
          if (f == ForceMode::Boids) p.halfSize = core::denseHalfSize(n, p, 10.0);
          const Bodies start = flatten(bodiesFor(c, p));
          const std::string what = "plane " + nameOf(c);
          expectOneStepMatches(p, start, what);
          auto gpu = cuda::createCudaEngine(p);
          gpu->reset(start);
          gpu->step(40);
          expectInThePlane(gpu->readBodies(), what);
        }
    }
}

TEST_F(CudaPlane, DeviceArraysOffThePlaneAreRefused) {
  SimParams p = core::defaultParams();
  p.dims = 2;
  p.halfSize = 30.0f;
  const Bodies start = flatten(boidBodies(500, p, 17));
  auto engine = cuda::createCudaEngine(p);
  engine->reset(start);
  core::DeviceAccess* dev = engine->deviceAccess();
  ASSERT_NE(dev, nullptr);
  cuda::DeviceBuffer<core::Vec4> pos, vel;
  pos.allocate(start.size());
  vel.allocate(start.size());
  dev->gatherById(pos.get(), vel.get());
  std::vector<core::Vec4> host(start.size());
  ASSERT_EQ(cudaMemcpy(host.data(), pos.get(), host.size() * sizeof(core::Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
  host[123].z = 0.5f;
  ASSERT_EQ(cudaMemcpy(pos.get(), host.data(), host.size() * sizeof(core::Vec4), cudaMemcpyHostToDevice), cudaSuccess);
  try {
    dev->scatterById(pos.get(), nullptr);
    FAIL() << "a body off the plane was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("off the plane"), std::string::npos) << e.what();
  }
  expectInThePlane(engine->readBodies(), "after the refusal");
}

}  // namespace
