// The splat kernels against the CPU executor: the hand-built scenes of tests/core/test_splat.cpp
// and a large random scene, bit for bit, with and without the warp pre-reduction.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/splat_scene.h"
#include "core/splat.h"
#include "cuda/cuda_check.h"
#include "cuda/splat_kernels.h"
#include "cuda_test_helpers.h"

namespace murmur::cuda {
namespace {

using test::CudaTest;
using test::simpleView;
using test::SplatScene;

template <typename T>
struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    MURMUR_CUDA_CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  explicit DeviceArray(size_t n) { MURMUR_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(n, 1) * sizeof(T))); }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

std::vector<uint64_t> resolveGpu(const core::SplatView& v, const SplatScene& s, bool warpReduce, int block = 256) {
  const size_t pixels = static_cast<size_t>(v.width) * static_cast<size_t>(v.height);
  DeviceArray<core::Vec4> pos(s.pos), vel(s.vel);
  DeviceArray<uint32_t> id(s.id);
  DeviceArray<uint64_t> keys(pixels);
  const LaunchConfig lc{block, nullptr};
  launchSplatClear(keys.ptr, pixels, lc);
  launchSplat(pos.ptr, vel.ptr, id.ptr, static_cast<uint32_t>(s.size()), v, keys.ptr, warpReduce, lc);
  std::vector<uint64_t> out(pixels);
  MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), keys.ptr, pixels * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return out;
}

std::vector<uint64_t> resolveCpu(const core::SplatView& v, const SplatScene& s) {
  std::vector<uint64_t> keys(static_cast<size_t>(v.width) * static_cast<size_t>(v.height));
  core::clearSplat(keys.data(), keys.size());
  core::splatBodies(v, s.pos.data(), s.vel.data(), s.id.data(), s.size(), keys.data());
  return keys;
}

size_t lit(const std::vector<uint64_t>& keys) {
  size_t k = 0;
  for (uint64_t key : keys) k += key != core::kSplatEmpty;
  return k;
}

class CudaSplat : public CudaTest {};

TEST_F(CudaSplat, KnownBodyLandsOnTheExpectedPixel) {
  const core::SplatView v = simpleView();
  SplatScene s;
  s.add(0.21f, -0.39f, -2.0f, 1.0f, 0.0f, 0.0f);
  for (bool reduce : {false, true}) {
    const std::vector<uint64_t> keys = resolveGpu(v, s, reduce);
    ASSERT_EQ(lit(keys), 1u);
    float r, g, b;
    core::headingColour(1.0f, 0.0f, 0.0f, r, g, b);
    EXPECT_EQ(keys[40 * 100 + 55], core::splatKey(2.0f, core::packRgba(r, g, b)));
  }
}

TEST_F(CudaSplat, NearBodyHidesFarOneInEitherOrder) {
  const core::SplatView v = simpleView();
  for (bool reduce : {false, true}) {
    for (int order = 0; order < 2; ++order) {
      SplatScene s;
      // Same warp, same pixel: the pre-reduction has to pick the near one itself.
      if (order == 0) s.add(-0.78f, 0.82f, -2.0f, 1, 0, 0);
      s.add(-0.39f * 5.0f, 0.41f * 5.0f, -5.0f, -1, 0, 0);
      if (order == 1) s.add(-0.78f, 0.82f, -2.0f, 1, 0, 0);
      const std::vector<uint64_t> keys = resolveGpu(v, s, reduce);
      ASSERT_EQ(lit(keys), 1u);
      EXPECT_EQ(keys[70 * 100 + 30] >> 32, core::splatKey(2.0f, 0) >> 32) << "order " << order << " reduce " << reduce;
    }
  }
}

TEST_F(CudaSplat, BodiesOffScreenBehindOrInvalidDrawNothing) {
  const core::SplatView v = simpleView();
  SplatScene s;
  s.add(-2.2f, 0.0f, -2.0f, 1, 0, 0);
  s.add(2.2f, 0.0f, -2.0f, 1, 0, 0);
  s.add(0.0f, 2.2f, -2.0f, 1, 0, 0);
  s.add(0.0f, -2.2f, -2.0f, 1, 0, 0);
  s.add(0.0f, 0.0f, 2.0f, 1, 0, 0);
  s.add(0.0f, 0.0f, -0.05f, 1, 0, 0);
  s.add(0.0f, 0.0f, std::nanf(""), 1, 0, 0);
  for (bool reduce : {false, true}) EXPECT_EQ(lit(resolveGpu(v, s, reduce)), 0u);
}

TEST_F(CudaSplat, CloseBodyIsTheSameDiscAsOnTheCpu) {
  core::SplatView v = simpleView();
  v.bodySize = 0.2f;
  SplatScene s;
  s.add(0.0f, 0.0f, -2.0f, 1, 0, 0);
  const std::vector<uint64_t> cpu = resolveCpu(v, s);
  EXPECT_GE(lit(cpu), 16u);
  EXPECT_EQ(resolveGpu(v, s, true), cpu);
}

// Every pixel of a dense random frame, bit for bit against the CPU: the same projection, the
// same depth resolve, the same tie-break; sizes that leave partial warps and blocks.
TEST_F(CudaSplat, RandomSceneMatchesTheCpuExactly) {
  core::SplatView v = simpleView(320, 180);
  v.bodySize = 0.03f;
  v.fogNear = 1.0f;
  v.fogRange = 10.0f;
  v.fogStrength = 0.7f;
  for (size_t n : {size_t(1), size_t(33), size_t(1000), size_t(200003)}) {
    const SplatScene s = test::randomSplatScene(n, 11 + n);
    const std::vector<uint64_t> cpu = resolveCpu(v, s);
    for (bool reduce : {false, true})
      for (int block : {32, 256, 1024}) {
        const std::vector<uint64_t> gpu = resolveGpu(v, s, reduce, block);
        size_t diff = 0;
        for (size_t i = 0; i < cpu.size(); ++i) diff += cpu[i] != gpu[i];
        EXPECT_EQ(diff, 0u) << "n " << n << " reduce " << reduce << " block " << block << " (lit " << lit(cpu) << ")";
      }
  }
}

}  // namespace
}  // namespace murmur::cuda
