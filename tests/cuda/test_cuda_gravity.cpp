// Gravity accuracy on the GPU: the naive kernel against a double-precision direct sum, and the
// particle-cell approximation of the grid pipelines against exact all pairs (its error is printed
// so that it can be quoted).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <string>

#include "core/params.h"
#include "core/scenarios.h"
#include "cuda/cuda_engine.h"
#include "cuda/sample_nbody.h"
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

class CudaGravityTest : public test::CudaTest {};

SimParams gravityParams(Pipeline pipe, int gridDim = 16) {
  SimParams p = core::defaultParams();
  p.force = ForceMode::Gravity;
  p.pipeline = pipe;
  p.gravity.gridDim = gridDim;
  return p;
}

// G * sum_j m_j (p_j - p_i) / (|r|^2 + eps^2)^(3/2) in double, with the engines' float eps^2.
std::vector<Vec4> directSum(const Bodies& b, const SimParams& p, const std::vector<size_t>& sample) {
  const float eps2f = p.gravity.softening * p.gravity.softening;
  const double eps2 = eps2f;
  std::vector<Vec4> out;
  for (size_t i : sample) {
    double ax = 0, ay = 0, az = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      const double dx = double(b.pos[j].x) - b.pos[i].x, dy = double(b.pos[j].y) - b.pos[i].y,
                   dz = double(b.pos[j].z) - b.pos[i].z;
      const double d2 = dx * dx + dy * dy + dz * dz + eps2;
      const double s = double(b.pos[j].w) / (d2 * std::sqrt(d2));
      ax += dx * s, ay += dy * s, az += dz * s;
    }
    const double G = p.gravity.G;
    out.push_back(Vec4{float(G * ax), float(G * ay), float(G * az), 0.0f});
  }
  return out;
}

std::vector<size_t> sampleIds(size_t n, size_t count) {
  std::vector<size_t> s;
  if (n <= count) {
    for (size_t i = 0; i < n; ++i) s.push_back(i);
  } else {
    for (size_t k = 0; k < count; ++k) s.push_back(k * (n - 1) / (count - 1));
  }
  return s;
}

TEST_F(CudaGravityTest, NaiveMatchesDoubleDirectSum) {
  for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(33), size_t(1000), kLargeN})
    for (bool plummer : {false, true}) {
      const SimParams p = gravityParams(Pipeline::Naive);
      const Bodies b = plummer ? test::plummerBodies(n, 70 + n) : test::ballBodies(n, 80 + n);
      auto gpu = cuda::createCudaEngine(p);
      gpu->reset(b);
      const std::vector<Vec4> a = gpu->computeAccelerations();
      const std::vector<size_t> sample = sampleIds(n, 256);
      const std::vector<Vec4> ref = directSum(b, p, sample);
      const test::AccError e = test::accelerationError(a, ref, kAccFloor, sample, true);
      // Float sums of n terms: the error grows like sqrt(n) ulps.
      const double tol = n <= 1000 ? 5e-5 : 2e-4;
      EXPECT_LE(e.max, tol) << "n " << n << (plummer ? " plummer" : " ball") << ", worst id " << e.worst;
      if (n == kLargeN)
        std::printf("[ accuracy ] naive gravity vs double, n %zu %s: max %.2e mean %.2e\n", n,
                    plummer ? "plummer" : "ball", e.max, e.mean);
    }
}

// Equal masses take the kernel that leaves the mass out of the pair and pads the last tile with
// far-away entries; one mass an ulp off takes the general kernel. On the same positions the two
// must agree within float rounding at every block size, tile remainder included (n = 1000 + 7).
TEST_F(CudaGravityTest, CommonMassKernelAgreesWithTheGeneralKernel) {
  for (int block : {64, 128, 256, 512, 1024, 96}) {
    SimParams p = gravityParams(Pipeline::Naive);
    p.blockSize = block;
    const Bodies equal = test::plummerBodies(1007, 31);
    ASSERT_GT(core::commonMass(equal.pos), 0.0f);
    Bodies mixed = equal;
    mixed.pos[500].w = std::nextafter(mixed.pos[500].w, 1.0f);
    ASSERT_EQ(core::commonMass(mixed.pos), 0.0f);
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(equal);
    const std::vector<Vec4> a = gpu->computeAccelerations();
    gpu->reset(mixed);
    const std::vector<Vec4> b = gpu->computeAccelerations();
    const test::AccError e = test::accelerationError(a, b, kAccFloor);
    EXPECT_LE(e.max, 1e-5) << "block " << block << ", worst id " << e.worst;
    const std::vector<Vec4> ref = directSum(equal, p, sampleIds(equal.size(), 256));
    EXPECT_LE(test::accelerationError(a, ref, kAccFloor, sampleIds(equal.size(), 256), true).max, 5e-5)
        << "block " << block;
  }
}

// With at most 2 cells per axis every cell is near every other: the particle-cell scheme is then
// exact all pairs, so the grid pipelines must agree with naive up to summation order.
TEST_F(CudaGravityTest, GridWithOnlyNearCellsIsExact) {
  constexpr size_t n = 5000;
  const Bodies b = test::plummerBodies(n, 5);
  auto naive = cuda::createCudaEngine(gravityParams(Pipeline::Naive));
  naive->reset(b);
  const std::vector<Vec4> ref = naive->computeAccelerations();
  for (int gridDim : {1, 2})
    for (Pipeline pipe : test::classicGridPipelines()) {  // the particle-cell grids
      auto gpu = cuda::createCudaEngine(gravityParams(pipe, gridDim));
      gpu->reset(b);
      const test::AccError e = test::accelerationError(gpu->computeAccelerations(), ref, kAccFloor);
      EXPECT_LE(e.max, 1e-4) << core::toString(pipe) << " gridDim " << gridDim;
    }
}

// The approximation error of the grid pipelines against exact all pairs, reported per grid size.
// Scattered and coherent compute the same approximation (up to summation order).
TEST_F(CudaGravityTest, GridForceErrorAgainstAllPairs) {
  constexpr size_t n = size_t(1) << 15;
  for (bool plummer : {false, true}) {
    const Bodies b = plummer ? test::plummerBodies(n, 21) : test::ballBodies(n, 22);
    auto naive = cuda::createCudaEngine(gravityParams(Pipeline::Naive));
    naive->reset(b);
    const std::vector<Vec4> exact = naive->computeAccelerations();
    for (int gridDim : {8, 16, 32}) {
      auto scattered = cuda::createCudaEngine(gravityParams(Pipeline::Scattered, gridDim));
      auto coherent = cuda::createCudaEngine(gravityParams(Pipeline::Coherent, gridDim));
      scattered->reset(b);
      coherent->reset(b);
      const std::vector<Vec4> as = scattered->computeAccelerations();
      const std::vector<Vec4> ac = coherent->computeAccelerations();
      EXPECT_LE(test::accelerationError(ac, as, kAccFloor).max, 1e-4) << "scattered vs coherent, gridDim " << gridDim;
      const test::AccError e = test::accelerationError(as, exact, kAccFloor);
      const std::string tag = std::string(plummer ? "plummer" : "ball") + "_grid" + std::to_string(gridDim);
      RecordProperty("mean_rel_error_" + tag, std::to_string(e.mean));
      RecordProperty("max_rel_error_" + tag, std::to_string(e.max));
      std::printf("[ accuracy ] particle-cell vs all pairs, n %zu %s, gridDim %d: mean %.2e max %.2e\n", n,
                  plummer ? "plummer" : "ball", gridDim, e.mean, e.max);
      // A sanity bound, not a specification: the monopole far field is a few per cent at worst.
      EXPECT_LT(e.mean, 0.1) << tag;
    }
  }
}

// The benchmark's baseline computes the same field as the naive pipeline (it is timed against
// it, so it must do the same work), at block sizes with and without slicing in the naive kernel.
TEST_F(CudaGravityTest, SampleReferenceMatchesNaive) {
  for (size_t n : {size_t(33), size_t(5000)})
    for (int block : {64, 256, 1024}) {
      SimParams p = gravityParams(Pipeline::Naive);
      p.blockSize = block;
      const Bodies b = test::plummerBodies(n, 9 + n);
      auto naive = cuda::createCudaEngine(p);
      naive->reset(b);
      cuda::SampleNbody sample(b.pos, p.gravity.softening * p.gravity.softening, p.gravity.G, block);
      sample.computeForces();
      const test::AccError e = test::accelerationError(sample.accelerations(), naive->computeAccelerations(), kAccFloor);
      EXPECT_LE(e.max, 1e-5) << "n " << n << " block " << block;
    }
}

// Radii enclosing 25/50/75% of the disk bodies (cylindrical, about the disk's centre of mass)
// and the rms height, of a `galaxy` state.
struct DiskShape {
  double r25 = 0, r50 = 0, r75 = 0, zRms = 0;
};

DiskShape diskShape(const Bodies& b) {
  const core::GalaxyLayout g = core::galaxyLayout(b.size());
  const size_t first = g.halo + g.bulge;
  double cx = 0, cy = 0, cz = 0;
  for (size_t i = first; i < b.size(); ++i) cx += b.pos[i].x, cy += b.pos[i].y, cz += b.pos[i].z;
  cx /= double(g.disk), cy /= double(g.disk), cz /= double(g.disk);
  std::vector<double> r;
  double z2 = 0;
  for (size_t i = first; i < b.size(); ++i) {
    const double x = b.pos[i].x - cx, y = b.pos[i].y - cy, z = b.pos[i].z - cz;
    r.push_back(std::sqrt(x * x + y * y));
    z2 += z * z;
  }
  std::sort(r.begin(), r.end());
  return DiskShape{r[r.size() / 4], r[r.size() / 2], r[3 * r.size() / 4], std::sqrt(z2 / double(g.disk))};
}

// A disk galaxy in its halo on its own stays a disk: over 3000 steps (dt 0.01, about three
// rotations at the half-mass radius) its radial profile and thickness hold. A disk without
// random motions, or without the halo, fragments or heats within one rotation; this test would
// see it in the quartiles (clumps pull mass inwards) or the height.
TEST_F(CudaGravityTest, IsolatedGalaxyKeepsItsShape) {
  SimParams p = gravityParams(Pipeline::Naive);
  p.gravity.dt = 0.01f;
  core::ScenarioSpec spec;
  spec.name = "galaxy";
  spec.n = 32768;
  spec.seed = 4;
  const Bodies b = core::makeScenario(spec, p).bodies;
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(b);
  const DiskShape s0 = diskShape(b);
  gpu->step(3000);
  gpu->synchronize();
  const DiskShape s1 = diskShape(gpu->readBodies());
  std::printf("[ galaxy ] disk of %zu bodies, 3000 steps: r25 %.3f -> %.3f, r50 %.3f -> %.3f, r75 %.3f -> %.3f, "
              "z_rms %.3f -> %.3f\n",
              core::galaxyLayout(b.size()).disk, s0.r25, s1.r25, s0.r50, s1.r50, s0.r75, s1.r75, s0.zRms, s1.zRms);
  EXPECT_NEAR(s1.r25 / s0.r25, 1.0, 0.15);
  EXPECT_NEAR(s1.r50 / s0.r50, 1.0, 0.15);
  EXPECT_NEAR(s1.r75 / s0.r75, 1.0, 0.15);
  EXPECT_LT(s1.zRms / s0.zRms, 1.6);
  EXPECT_GT(s1.zRms / s0.zRms, 0.6);
}

}  // namespace
