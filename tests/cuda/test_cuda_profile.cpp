// What the engine reports besides the state: the per-stage profile (core/stages.h), only when
// profiling is on, and the state on the device that the engine hands out (core::DeviceAccess).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <vector>
#include "core/engine.h"
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

TEST_F(CudaEngineTest, ProfileFillsStagesOnlyWhenOn) {
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Coherent;
  p.halfSize = test::denseHalfSize(20000, p);
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(test::boidBodies(20000, p, 8));
  gpu->step(2);
  EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
  gpu->setProfiling(true);
  gpu->step(2);
  core::StepProfile s = gpu->lastProfile();
  EXPECT_GT(s.labelMs, 0.0);
  EXPECT_GT(s.sortMs, 0.0);
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_GT(s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  EXPECT_GT(s.integrateMs, 0.0);
  // Rows: the first step counts its cells (label); later steps start from the counts the force
  // kernel made while it integrated, so label and integrate are part of the force stage.
  p.pipeline = Pipeline::Rows;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_GT(s.labelMs, 0.0);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_EQ(s.labelMs + s.integrateMs, 0.0);
  EXPECT_GT(s.sortMs, 0.0);
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_GT(s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  // Gravity naive: no grid stages.
  p.force = ForceMode::Gravity;
  p.pipeline = Pipeline::Naive;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_EQ(s.labelMs + s.sortMs + s.boundsMs + s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  EXPECT_GT(s.integrateMs, 0.0);
  // Gravity grid: bounds covers the bounding box and the monopoles.
  p.pipeline = Pipeline::Scattered;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_EQ(s.reorderMs, 0.0);
  gpu->setProfiling(false);
  gpu->step(1);
  EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
}

TEST_F(CudaEngineTest, DrawBuffersHoldTheCurrentState) {
  constexpr size_t n = 5000;
  SimParams p = core::defaultParams();
  p.halfSize = test::denseHalfSize(n, p);
  auto engine = cuda::createCudaEngine(p);
  core::Engine& gpu = *engine;
  // The capability, not a cast to the engine's class.
  core::DeviceAccess* access = gpu.deviceAccess();
  ASSERT_NE(access, nullptr);
  gpu.reset(test::boidBodies(n, p, 4));
  gpu.step(2);  // coherent: the state is now in cell order
  const core::DeviceAccess::Bodies onDevice = access->deviceBodies();
  EXPECT_EQ(onDevice.n, n);
  EXPECT_NE(onDevice.pos, nullptr);
  EXPECT_NE(onDevice.vel, nullptr);
  EXPECT_NE(onDevice.id, nullptr);
  void *dPos = nullptr, *dVel = nullptr, *dId = nullptr;
  ASSERT_EQ(cudaMalloc(&dPos, n * sizeof(Vec4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dVel, n * sizeof(Vec4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dId, n * sizeof(uint32_t)), cudaSuccess);
  access->writeDrawBuffers(dPos, dVel, dId);
  std::vector<Vec4> pos(n), vel(n);
  std::vector<uint32_t> id(n);
  ASSERT_EQ(cudaMemcpy(pos.data(), dPos, n * sizeof(Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(vel.data(), dVel, n * sizeof(Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(id.data(), dId, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dPos);
  cudaFree(dVel);
  cudaFree(dId);
  const Bodies b = gpu.readBodies();
  std::vector<bool> seen(n, false);
  size_t permuted = 0;
  for (size_t k = 0; k < n; ++k) {
    ASSERT_LT(id[k], n);
    ASSERT_FALSE(seen[id[k]]);
    seen[id[k]] = true;
    permuted += id[k] != k;
    EXPECT_EQ(pos[k].x, b.pos[id[k]].x);
    EXPECT_EQ(pos[k].w, b.pos[id[k]].w);
    EXPECT_EQ(vel[k].z, b.vel[id[k]].z);
  }
  EXPECT_GT(permuted, n / 2);  // the coherent order really is a permutation
  EXPECT_FALSE(gpu.deviceName().empty());
}

}  // namespace
