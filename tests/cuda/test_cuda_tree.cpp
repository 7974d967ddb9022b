// The tree pipeline on the GPU against the CPU engine's tree (the same tree and the same walk,
// so the accelerations agree to rounding), against a double-precision direct sum, and over a
// leapfrog run (energy drift).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/params.h"
#include "core/scenarios.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"

using namespace murmur;
using core::Bodies;
using core::ForceMode;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

using test::kAccFloor;
using test::kLargeN;
// Both engines open the same nodes (the opening test rounds identically); what is left is the
// GPU's FMA and rsqrt in the sums.
constexpr double kGpuCpuTolerance = 1e-4;

class CudaTreeTest : public test::CudaTest {};

SimParams treeParams(int blockSize = 256) {
  SimParams p = core::defaultParams();
  p.force = ForceMode::Gravity;
  p.pipeline = Pipeline::Tree;
  p.blockSize = blockSize;
  return p;
}

test::AccError gpuAgainstCpu(const Bodies& b, const SimParams& p) {
  core::CpuEngine cpu(p);
  cpu.reset(b);
  cuda::CudaEngine gpu(p);
  gpu.reset(b);
  return test::accelerationError(gpu.computeAccelerations(), cpu.computeAccelerations(), kAccFloor);
}

Bodies scenario(const std::string& name, size_t n, uint64_t seed) {
  SimParams p = core::defaultParams();
  core::ScenarioSpec s;
  s.name = name;
  s.n = n;
  s.seed = seed;
  return core::makeScenario(s, p).bodies;
}

}  // namespace

TEST_F(CudaTreeTest, GpuMatchesCpuAtEdgeSizesAndBlockSizes) {
  for (size_t n : {size_t(1), size_t(2), size_t(31), size_t(32), size_t(33), size_t(1000), kLargeN}) {
    const Bodies b = test::plummerBodies(n, 40 + n);
    for (int block : {32, 256, 1024}) {
      if (n == kLargeN && block != 256) continue;  // the CPU reference is the slow part
      const test::AccError e = gpuAgainstCpu(b, treeParams(block));
      EXPECT_LT(e.max, kGpuCpuTolerance) << "n " << n << " block " << block << " worst id " << e.worst;
    }
  }
}

TEST_F(CudaTreeTest, GpuMatchesCpuOnDegenerateInputs) {
  const SimParams p = treeParams();
  // All bodies at one point.
  {
    Bodies b = test::ballBodies(5000, 3);
    for (auto& q : b.pos) q = Vec4{-0.5f, 0.25f, 2.0f, q.w};
    core::CpuEngine cpu(p);
    cpu.reset(b);
    cuda::CudaEngine gpu(p);
    gpu.reset(b);
    const std::vector<Vec4> a = gpu.computeAccelerations();
    for (const Vec4& ai : a) ASSERT_LT(std::fabs(ai.x) + std::fabs(ai.y) + std::fabs(ai.z), 1e-3f);
  }
  // Collinear, with a stack of coincident bodies.
  {
    Bodies b = test::ballBodies(5000, 4);
    for (size_t i = 0; i < b.size(); ++i) {
      const float t = i % 10 == 0 ? 0.5f : float(std::pow(double(b.pos[i].x) * 0.5 + 0.5, 3.0));
      b.pos[i] = Vec4{2.0f * t - 1.0f, 0.5f * t, -t, b.pos[i].w};
    }
    EXPECT_LT(gpuAgainstCpu(b, p).max, kGpuCpuTolerance);
  }
  // Two tight clusters far apart.
  {
    Bodies b = test::ballBodies(6000, 5);
    for (size_t i = 0; i < b.size(); ++i) {
      b.pos[i].x = b.pos[i].x * 1e-2f + (i % 2 ? 10.0f : 0.0f);
      b.pos[i].y *= 1e-2f;
      b.pos[i].z *= 1e-2f;
    }
    EXPECT_LT(gpuAgainstCpu(b, p).max, kGpuCpuTolerance);
  }
}

TEST_F(CudaTreeTest, StepsMatchCpu) {
  const Bodies b = test::plummerBodies(3001, 7);
  const SimParams p = treeParams();
  core::CpuEngine cpu(p);
  cpu.reset(b);
  cuda::CudaEngine gpu(p);
  gpu.reset(b);
  cpu.step(20);
  gpu.step(20);
  std::string report;
  const size_t bad = test::countStateMismatches(gpu.readBodies(), cpu.readBodies(), 1e-3, 1e-4, 1e-3, &report);
  EXPECT_EQ(bad, 0u) << report;
}

TEST_F(CudaTreeTest, DefaultThetaErrorAgainstDirectSum) {
  for (size_t n : {size_t(20000), size_t(262144)}) {
    const Bodies b = scenario("plummer", n, 3);
    const SimParams p = treeParams();
    cuda::CudaEngine gpu(p);
    gpu.reset(b);
    const core::ForceError fe = core::forceError(b, gpu.computeAccelerations(), p.gravity.G, p.gravity.softening, 4096);
    std::printf("tree theta %.2f, plummer n=%zu: median %.3e p90 %.3e max %.3e (%zu samples)\n", p.gravity.theta, n,
                fe.median, fe.p90, fe.max, fe.samples);
    EXPECT_LT(fe.p90, 1e-3);
    EXPECT_GT(fe.median, 1e-7);  // the multipoles are in use
  }
}

TEST_F(CudaTreeTest, LeapfrogEnergyDriftOver1000Steps) {
  const Bodies b = scenario("plummer", 8192, 11);
  const SimParams p = treeParams();
  cuda::CudaEngine gpu(p);
  gpu.reset(b);
  const double e0 = core::totalEnergy(b, p.gravity.G, p.gravity.softening);
  double worst = 0;
  for (int k = 0; k < 10; ++k) {
    gpu.step(100);
    const Bodies s = gpu.readBodies();
    ASSERT_TRUE(test::allFinite(s));
    worst = std::max(worst, std::fabs(core::totalEnergy(s, p.gravity.G, p.gravity.softening) / e0 - 1.0));
  }
  std::printf("tree energy drift over 1000 leapfrog steps (plummer n=8192, dt %g): %.3e\n", p.gravity.dt, worst);
  EXPECT_LT(worst, 1e-3);
}

TEST_F(CudaTreeTest, RefusesBoids) {
  SimParams p = treeParams();
  p.force = ForceMode::Boids;
  EXPECT_THROW(cuda::CudaEngine e(p), std::invalid_argument);
}
