// Every attribute of core/bodies.h travels with its body on the GPU: the species of every body
// after steps on every CUDA pipeline of both forces (each reorders into cell or key order), the
// same bits as the run without species, and species through the id-order copies of DeviceAccess.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/engine.h"
#include "core/params.h"
#include "core/pipeline_table.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::Species;
using core::Vec4;

namespace {

using test::CudaEngineTest;

Species speciesOf(uint32_t id) { return static_cast<Species>((id * 37u + 11u) % core::kSpeciesCount); }

bool sameBits(const Vec4& a, const Vec4& b) { return std::memcmp(&a, &b, sizeof(Vec4)) == 0; }

TEST_F(CudaEngineTest, SpeciesTravelsWithItsBodyOnEveryPipeline) {
  constexpr size_t n = 5000;
  for (core::ForceMode f : {core::ForceMode::Boids, core::ForceMode::Gravity}) {
    for (core::Pipeline pipe : core::pipelinesFor(f)) {
      if (!(core::pipelineInfo(pipe).runsOn & core::kOnCuda)) continue;
      core::SimParams p = core::defaultParams();
      p.force = f;
      p.pipeline = pipe;
      p.halfSize = test::denseHalfSize(n, p);
      const Bodies plain = test::boidBodies(n, p, 8);
      Bodies tagged = plain;
      tagged.species.resize(n);
      for (size_t i = 0; i < n; ++i) tagged.species[i] = speciesOf(tagged.id[i]);
      const std::string tag = std::string(core::toString(f)) + " on " + core::toString(pipe);
      auto with = cuda::createCudaEngine(p), without = cuda::createCudaEngine(p);
      with->reset(tagged);
      without->reset(plain);
      with->step(5);
      without->step(5);
      const Bodies a = with->readBodies(), b = without->readBodies();
      ASSERT_EQ(a.species.size(), n) << tag;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(a.species[i], speciesOf(static_cast<uint32_t>(i))) << tag << ", body " << i;
        ASSERT_EQ(b.species[i], 0) << tag << ", body " << i;
        ASSERT_TRUE(sameBits(a.pos[i], b.pos[i]) && sameBits(a.vel[i], b.vel[i])) << tag << ", body " << i;
      }
    }
  }
}

TEST_F(CudaEngineTest, SpeciesGoesThroughTheIdOrderCopies) {
  constexpr size_t n = 3000;
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Rows;
  p.halfSize = test::denseHalfSize(n, p);
  auto gpu = cuda::createCudaEngine(p);
  Bodies start = test::boidBodies(n, p, 2);
  start.species.assign(n, 0);
  for (size_t i = 0; i < n; ++i) start.species[i] = speciesOf(start.id[i]);
  gpu->reset(start);
  gpu->step(3);  // cell order now
  core::DeviceAccess* access = gpu->deviceAccess();
  ASSERT_NE(access, nullptr);
  Species* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), n), cudaSuccess);
  access->gatherById(core::BodyPointers{nullptr, nullptr, nullptr, d});
  std::vector<Species> h(n);
  ASSERT_EQ(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(h[i], speciesOf(static_cast<uint32_t>(i))) << i;
  // Species alone, scattered by id: every body takes its new species, positions stay.
  const Bodies before = gpu->readBodies();
  for (size_t i = 0; i < n; ++i) h[i] = static_cast<Species>(255 - i % 256);
  ASSERT_EQ(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  access->scatterById(core::ConstBodyPointers{nullptr, nullptr, nullptr, d});
  const Bodies after = gpu->readBodies();
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(after.species[i], h[i]) << i;
    ASSERT_TRUE(sameBits(after.pos[i], before.pos[i])) << i;
  }
  uint32_t* ids = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ids), n * sizeof(uint32_t)), cudaSuccess);
  EXPECT_THROW(access->scatterById(core::ConstBodyPointers{nullptr, nullptr, ids, nullptr}), std::invalid_argument);
  cudaFree(ids);
  cudaFree(d);
}

}  // namespace
