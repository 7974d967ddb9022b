// The state in id order on the device (DeviceAccess::gatherById and scatterById): the gather equals
// readBodies, a scatter of what was gathered changes nothing, a scattered change is what the next
// step starts from, and a state with a non-finite value is refused with the engine unchanged.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/engine.h"
#include "core/params.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

using namespace test;

struct DeviceArray {
  explicit DeviceArray(size_t count) : n(count) { EXPECT_EQ(cudaMalloc(&p, n * sizeof(Vec4)), cudaSuccess); }
  ~DeviceArray() { cudaFree(p); }
  Vec4* get() const { return static_cast<Vec4*>(p); }
  std::vector<Vec4> download() const {
    std::vector<Vec4> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  void upload(const std::vector<Vec4>& h) {
    EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice), cudaSuccess);
  }
  void* p = nullptr;
  size_t n;
};

bool same(const Vec4& a, const Vec4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

TEST_F(CudaEngineTest, GatherByIdEqualsReadBodiesAndScatterIsApplied) {
  constexpr size_t n = 6000;
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Rows;
  p.halfSize = test::denseHalfSize(n, p);
  auto gpu = cuda::createCudaEngine(p);
  auto cpu = core::createCpuEngine(p);
  core::DeviceAccess* access = gpu->deviceAccess();
  ASSERT_NE(access, nullptr);
  const Bodies start = test::boidBodies(n, p, 4);
  gpu->reset(start);
  gpu->step(3);  // rows: the state is in cell order now
  DeviceArray pos(n), vel(n);
  access->gatherById(pos.get(), vel.get());
  const Bodies b = gpu->readBodies();
  std::vector<Vec4> hp = pos.download(), hv = vel.download();
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(same(hp[i], b.pos[i])) << i;
    ASSERT_TRUE(same(hv[i], b.vel[i])) << i;
  }
  // Scattering the gathered state back changes nothing.
  access->scatterById(pos.get(), vel.get());
  const Bodies again = gpu->readBodies();
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(again.pos[i], b.pos[i])) << i;

  // A changed state is what the next step starts from: the CPU engine from the same state agrees.
  for (size_t i = 0; i < n; ++i) hv[i].x = -hv[i].x;
  vel.upload(hv);
  access->scatterById(nullptr, vel.get());
  Bodies changed = b;
  for (size_t i = 0; i < n; ++i) changed.vel[i].x = -changed.vel[i].x;
  cpu->reset(changed);
  gpu->step(2);
  cpu->step(2);
  std::string report;
  EXPECT_EQ(countStateMismatches(gpu->readBodies(), cpu->readBodies(), 1e-5, 1e-5, 1e-5, &report), 0u) << report;

  // A non-finite value is refused; the state stays.
  const Bodies before = gpu->readBodies();
  hp = pos.download();
  hp[17].y = std::numeric_limits<float>::quiet_NaN();
  pos.upload(hp);
  EXPECT_THROW(access->scatterById(pos.get(), nullptr), std::invalid_argument);
  const Bodies after = gpu->readBodies();
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same(after.pos[i], before.pos[i])) << i;
}

}  // namespace
