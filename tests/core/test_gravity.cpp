// Gravity against a double-precision direct sum, conservation laws, and the integrators.
#include <gtest/gtest.h>

#include <cmath>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/pipeline_table.h"
#include "core/scenarios.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::plummerBodies;

namespace {
SimParams gravityParams(Pipeline pipe) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.pipeline = pipe;
  return p;
}
}  // namespace

TEST(Gravity, NaiveMatchesDoublePrecisionDirectSum) {
  const Bodies b = murmur::test::randomBodies(1500, 3.0f, 0.0f, 21);
  CpuEngine e(gravityParams(Pipeline::Naive));
  e.reset(b);
  const std::vector<Vec4> acc = e.computeAccelerations();
  const std::vector<Vec3d> ref = directAccelerations(b, 1.0, 0.05);
  double worst = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double dx = acc[i].x - ref[i].x, dy = acc[i].y - ref[i].y, dz = acc[i].z - ref[i].z;
    const double r = std::sqrt(ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z);
    worst = std::max(worst, std::sqrt(dx * dx + dy * dy + dz * dz) / r);
  }
  EXPECT_LT(worst, 1e-4);
  const ForceError fe = forceError(b, acc, 1.0, 0.05);
  EXPECT_LT(fe.median, 2e-6);
  EXPECT_EQ(fe.samples, b.size());
}

TEST(Gravity, CommonMassIsTheMassOnlyWhenEveryBodyHasIt) {
  EXPECT_EQ(commonMass({}), 0.0f);
  std::vector<Vec4> pos(5, Vec4{1, 2, 3, 0.25f});
  EXPECT_EQ(commonMass(pos), 0.25f);
  pos[4].w = std::nextafter(0.25f, 1.0f);  // one ulp apart is a different mass
  EXPECT_EQ(commonMass(pos), 0.0f);
  pos.assign(3, Vec4{0, 0, 0, 0.0f});  // massless bodies: no mass to fold in
  EXPECT_EQ(commonMass(pos), 0.0f);
  pos.assign(1, Vec4{0, 0, 0, 2.0f});
  EXPECT_EQ(commonMass(pos), 2.0f);
}

TEST(Gravity, GridApproximationErrorIsSmallAndNonZero) {
  const Bodies b = plummerBodies(4000, 3);
  for (Pipeline pipe : pipelinesFor(ForceMode::Gravity)) {
    // The grid methods only: naive is the exact sum, tree's error is test_tree.cpp's (theta).
    if (pipe == Pipeline::Naive || pipe == Pipeline::Tree) continue;
    CpuEngine e(gravityParams(pipe));
    e.reset(b);
    const ForceError fe = forceError(b, e.computeAccelerations(), 1.0, 0.05);
    EXPECT_LT(fe.median, 5e-3) << toString(pipe);
    EXPECT_LT(fe.p90, 2e-2) << toString(pipe);
    // The far field is an approximation: an exact match would mean it was not used.
    EXPECT_GT(fe.median, 1e-6) << toString(pipe);
  }
}

TEST(Gravity, GravityScalesWithG) {
  const Bodies b = murmur::test::randomBodies(300, 3.0f, 0.0f, 2);
  SimParams p = gravityParams(Pipeline::Naive);
  CpuEngine e(p);
  e.reset(b);
  const std::vector<Vec4> a1 = e.computeAccelerations();
  p.gravity.G = 2.5f;
  e.setParams(p);
  const std::vector<Vec4> a2 = e.computeAccelerations();
  for (size_t i = 0; i < b.size(); i += 17) EXPECT_NEAR(a2[i].x, 2.5f * a1[i].x, 1e-5f * std::fabs(a2[i].x) + 1e-7f);
}

TEST(Gravity, NaiveConservesMomentum) {
  CpuEngine e(gravityParams(Pipeline::Naive));
  EXPECT_LT(murmur::test::relativeMomentumDrift(e, plummerBodies(512, 5), 200), 1e-5);
}

TEST(Gravity, LeapfrogEnergyDriftOver1000StepsBelow1e3) {
  const Bodies b = plummerBodies(256, 9);
  SimParams p = gravityParams(Pipeline::Naive);
  CpuEngine e(p);
  e.reset(b);
  const double e0 = totalEnergy(b, 1.0, p.gravity.softening);
  ASSERT_LT(e0, 0.0);  // bound system
  double worst = 0;
  for (int k = 0; k < 10; ++k) {
    e.step(100);
    const double ek = totalEnergy(e.readBodies(), 1.0, p.gravity.softening);
    worst = std::max(worst, std::fabs((ek - e0) / e0));
  }
  EXPECT_LT(worst, 1e-3);
}

TEST(Gravity, DampedEulerDriftsMoreThanLeapfrog) {
  // The same system with the seeds' integrator (no damping) drifts further: the test would not
  // notice a leapfrog that silently ran Euler.
  const Bodies b = plummerBodies(256, 9);
  double drift[2];
  int k = 0;
  for (Integrator integ : {Integrator::Leapfrog, Integrator::DampedEuler}) {
    SimParams p = gravityParams(Pipeline::Naive);
    p.gravity.integrator = integ;
    p.gravity.dt = 0.02f;
    CpuEngine e(p);
    e.reset(b);
    const double e0 = totalEnergy(b, 1.0, p.gravity.softening);
    e.step(300);
    drift[k++] = std::fabs(totalEnergy(e.readBodies(), 1.0, p.gravity.softening) / e0 - 1.0);
  }
  EXPECT_LT(drift[0] * 5, drift[1]);
}

TEST(Gravity, DampingScalesVelocity) {
  Bodies b = murmur::test::randomBodies(50, 3.0f, 1.0f, 4);
  SimParams p = gravityParams(Pipeline::Naive);
  p.gravity.G = 0.0f;
  p.gravity.integrator = Integrator::DampedEuler;
  p.gravity.damping = 0.9f;
  CpuEngine e(p);
  e.reset(b);
  e.step(1);
  const Bodies r = e.readBodies();
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_NEAR(r.vel[i].y, 0.9f * b.vel[i].y, 1e-6f);
    EXPECT_NEAR(r.pos[i].y, b.pos[i].y + 0.9f * b.vel[i].y * p.gravity.dt, 1e-5f);
  }
}
