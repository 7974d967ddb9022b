// Boid rules and integrators on hand-built configurations with answers worked out by hand, and
// the plane's squared distance against distance2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/physics.h"
#include "core/rules/boids.h"

using namespace murmur::core;

namespace {
Vec3 newVelocity(const Vec4& pi, const Vec4& vi, const std::vector<std::pair<Vec4, Vec4>>& others,
                 const BoidParams& b) {
  BoidsRule::Sum a = BoidsRule::zero([] { return Vec4{0, 0, 0, 0}; });
  const BoidsRule::Setup r = BoidsRule::setup(b);
  for (const auto& o : others) {
    const Vec3 d = xyz(o.first) - xyz(pi);
    BoidsRule::add(a, o.first, d, distance2(d), [&] { return o.second; }, r);
  }
  return BoidsRule::velocity(a, pi, vi, b, BodyDraws{});
}
constexpr float kTol = 1e-6f;
}  // namespace

TEST(BoidRules, OneNeighbourInsideAllRadii) {
  const BoidParams b = defaultParams().boids;
  // j at distance 1: cohesion (1,0,0)*0.01, separation (-1,0,0)*0.1, alignment (0,1,0)*0.1.
  const Vec3 v = newVelocity({0, 0, 0, 1}, {0, 0, 0, 0}, {{{1, 0, 0, 1}, {0, 1, 0, 0}}}, b);
  EXPECT_NEAR(v.x, 0.01f - 0.1f, kTol);
  EXPECT_NEAR(v.y, 0.1f, kTol);
  EXPECT_NEAR(v.z, 0.0f, kTol);
}

TEST(BoidRules, NeighbourBetweenSeparationAndCohesionRadius) {
  const BoidParams b = defaultParams().boids;
  // d = 4: inside r1 = r3 = 5, outside r2 = 3: no separation.
  const Vec3 v = newVelocity({0, 0, 0, 1}, {0, 0, 0, 0}, {{{0, 4, 0, 1}, {0, 0, 2, 0}}}, b);
  EXPECT_NEAR(v.x, 0.0f, kTol);
  EXPECT_NEAR(v.y, 4 * 0.01f, kTol);
  EXPECT_NEAR(v.z, 2 * 0.1f, kTol);
}

TEST(BoidRules, RadiiAreStrict) {
  const BoidParams b = defaultParams().boids;
  // Exactly at r = 5: no rule applies; velocity unchanged.
  const Vec3 v = newVelocity({0, 0, 0, 1}, {0.25f, 0, 0, 0}, {{{5, 0, 0, 1}, {0, 1, 0, 0}}}, b);
  EXPECT_FLOAT_EQ(v.x, 0.25f);
  EXPECT_FLOAT_EQ(v.y, 0.0f);
}

TEST(BoidRules, MeansOverSeveralNeighbours) {
  const BoidParams b = defaultParams().boids;
  // Two neighbours at (2,0,0) and (0,2,0): centre (1,1,0); separation sum (-2,-2,0);
  // mean velocity ((1,0,0)+(0,0,1))/2.
  const Vec3 v = newVelocity({0, 0, 0, 1}, {0, 0, 0, 0},
                             {{{2, 0, 0, 1}, {1, 0, 0, 0}}, {{0, 2, 0, 1}, {0, 0, 1, 0}}}, b);
  EXPECT_NEAR(v.x, 0.01f - 0.2f + 0.05f, kTol);
  EXPECT_NEAR(v.y, 0.01f - 0.2f, kTol);
  EXPECT_NEAR(v.z, 0.05f, kTol);
}

TEST(BoidRules, ReynoldsAlignmentSteersTowardsMeanVelocity) {
  BoidParams b = defaultParams().boids;
  b.rules = RuleSet::Reynolds;
  b.cohesionScale = 0;
  b.separationScale = 0;
  const Vec3 v = newVelocity({0, 0, 0, 1}, {0.5f, 0, 0, 0}, {{{4, 0, 0, 1}, {0, 1, 0, 0}}}, b);
  EXPECT_NEAR(v.x, 0.5f - 0.05f, kTol);
  EXPECT_NEAR(v.y, 0.1f, kTol);
  b.rules = RuleSet::Cis565;
  const Vec3 w = newVelocity({0, 0, 0, 1}, {0.5f, 0, 0, 0}, {{{4, 0, 0, 1}, {0, 1, 0, 0}}}, b);
  EXPECT_NEAR(w.x, 0.5f, kTol);
}

TEST(BoidRules, SpeedIsClampedToMaxSpeed) {
  const BoidParams b = defaultParams().boids;
  const Vec3 v = newVelocity({0, 0, 0, 1}, {3, 4, 0, 0}, {}, b);
  EXPECT_NEAR(v.x, 0.6f, kTol);
  EXPECT_NEAR(v.y, 0.8f, kTol);
  const Vec3 slow = newVelocity({0, 0, 0, 1}, {0.3f, 0.4f, 0, 0}, {}, b);
  EXPECT_FLOAT_EQ(slow.x, 0.3f);
}

TEST(BoidRules, SemiImplicitStepAndWrap) {
  const Vec4 p = boidIntegrate({99.9f, -99.95f, 0, 1}, {1, -1, 0.5f}, 0.2f, 100.0f);
  EXPECT_NEAR(p.x, -99.9f, 1e-4f);   // left through +x, re-enters at -x
  EXPECT_NEAR(p.y, 99.85f, 1e-4f);   // left through -y
  EXPECT_NEAR(p.z, 0.1f, 1e-6f);
  EXPECT_FLOAT_EQ(p.w, 1.0f);        // mass kept
  EXPECT_FLOAT_EQ(wrapCoord(100.0f, 100.0f), -100.0f);
  EXPECT_FLOAT_EQ(wrapCoord(-100.0f, 100.0f), -100.0f);
  EXPECT_NEAR(wrapCoord(350.0f, 100.0f), -50.0f, 1e-4f);
  for (float x = -1000; x < 1000; x += 0.37f) {
    const float w = wrapCoord(x, 100.0f);
    EXPECT_GE(w, -100.0f);
    EXPECT_LT(w, 100.0f);
  }
}

TEST(Gravity, PairForceMatchesNewton) {
  // m = 3 at distance 2 along x, no softening: a = m / d^2 = 0.75 towards j.
  const Vec3 a = gravityPair({0, 0, 0, 1}, {2, 0, 0, 3}, 0.0f);
  EXPECT_NEAR(a.x, 0.75f, 1e-6f);
  EXPECT_NEAR(a.y, 0.0f, 1e-7f);
  // Softened: m d / (d^2 + eps^2)^(3/2)
  const Vec3 s = gravityPair({0, 0, 0, 1}, {0, 2, 0, 3}, 1.0f);
  EXPECT_NEAR(s.y, 3.0f * 2.0f / std::pow(5.0f, 1.5f), 1e-6f);
  // The self pair adds exactly nothing when softened.
  const Vec3 z = gravityPair({1, 2, 3, 1}, {1, 2, 3, 1}, 0.01f);
  EXPECT_EQ(z.x, 0.0f);
  EXPECT_EQ(z.y, 0.0f);
}

TEST(Gravity, IntegratorsUpdateAsSpecified) {
  Vec4 p{0, 0, 0, 1}, v{1, 0, 0, 0};
  leapfrogKickDrift(p, v, {0, 2, 0, 0}, 0.5f);  // v = (1, 0.5), p = (0.5, 0.25)
  EXPECT_FLOAT_EQ(v.y, 0.5f);
  EXPECT_FLOAT_EQ(p.x, 0.5f);
  EXPECT_FLOAT_EQ(p.y, 0.25f);
  leapfrogKick(v, {0, 2, 0, 0}, 0.5f);
  EXPECT_FLOAT_EQ(v.y, 1.0f);
  Vec4 q{0, 0, 0, 1}, w{1, 0, 0, 0};
  dampedEuler(q, w, {0, 2, 0, 0}, 0.5f, 0.5f);  // v = 0.5 (1, 1) ; p = v dt
  EXPECT_FLOAT_EQ(w.x, 0.5f);
  EXPECT_FLOAT_EQ(w.y, 0.5f);
  EXPECT_FLOAT_EQ(q.x, 0.25f);
  EXPECT_FLOAT_EQ(q.y, 0.25f);
}

// The rows kernels measure a candidate in the plane with distance2Plane: it must give distance2's
// bits for the offset (dx, dy, z), z = 0 - 0 with either zero's sign, or the plane's neighbour
// sets would part from every other pipeline's at the radius. Offsets spread over many binades,
// with values just either side of squares that round to the same float.
TEST(Distance, ThePlanesSquaredDistanceIsDistance2sBits) {
  uint32_t s = 12345u;
  const auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return s;
  };
  const auto bitsOf = [](float f) {
    uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  for (int k = 0; k < 200000; ++k) {
    const float dx = std::ldexp(float(next() >> 8) / 16777216.0f, int(next() % 40) - 20) * (next() & 1 ? -1.0f : 1.0f);
    const float dy = k % 7 == 0 ? 0.0f : std::ldexp(float(next() >> 8) / 16777216.0f, int(next() % 40) - 20);
    for (float z : {0.0f - 0.0f, 0.0f - -0.0f, -0.0f}) {
      const float want = distance2(Vec3{dx, dy, z});
      ASSERT_EQ(bitsOf(distance2Plane(dx, dy)), bitsOf(want)) << dx << " " << dy << " " << z;
    }
  }
}
