// The Vicsek model (core/rules/vicsek.h): the heading of hand-built neighbourhoods, the speed held
// at v0, the noise's distribution in the plane and in 3D (angular and vectorial), draws that follow
// the body (its id and the step, not its slot), and every CPU pipeline against naive under both
// boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "run_steps.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;

namespace {

constexpr double kPi = 3.14159265358979323846;

SimParams vicsekParams(int dims, float halfSize, float noise) {
  SimParams p = defaultParams();
  selectRule(p, *findRule("vicsek"));
  p.dims = dims;
  p.halfSize = halfSize;
  p.vicsek.noise = noise;
  p.boundary = Boundary::Periodic;
  return p;
}

Bodies stepped(const SimParams& p, const Bodies& b, int steps = 1) {
  CpuEngine e(p);
  return murmur::test::runSteps(e, b, steps);
}

// n boids on a lattice 10 radii apart (no neighbours), headings from a fixed sequence.
Bodies isolated(size_t n, const SimParams& p) {
  Bodies b;
  b.resize(n);
  const int side = static_cast<int>(std::ceil(std::sqrt(double(n))));
  for (size_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(0.37 * double(i));
    b.pos[i] = Vec4{-p.halfSize + 5.0f + 10.0f * float(i % side), -p.halfSize + 5.0f + 10.0f * float(i / side), 0, 1};
    b.vel[i] = p.dims == 2 ? Vec4{std::cos(a) * 0.03f, std::sin(a) * 0.03f, 0, 0}
                           : Vec4{std::cos(a) * 0.02f, std::sin(a) * 0.02f, 0.0224f * std::cos(3.0f * a), 0};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

double angleBetween(const Vec4& a, const Vec4& b) {
  const double d = double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z;
  const double na = std::sqrt(double(a.x) * a.x + double(a.y) * a.y + double(a.z) * a.z);
  const double nb = std::sqrt(double(b.x) * b.x + double(b.y) * b.y + double(b.z) * b.z);
  return std::acos(std::clamp(d / (na * nb), -1.0, 1.0));
}

// Kolmogorov-Smirnov distance of the samples from the uniform distribution on [lo, hi].
double ksUniform(std::vector<double> x, double lo, double hi) {
  std::sort(x.begin(), x.end());
  double d = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    const double f = (x[k] - lo) / (hi - lo);
    d = std::max({d, std::fabs(f - double(k) / x.size()), std::fabs(f - double(k + 1) / x.size())});
  }
  return d;
}

}  // namespace

TEST(Vicsek, TheHeadingIsTheSumOfTheUnitVelocitiesItselfIncluded) {
  SimParams p = vicsekParams(2, 20.0f, 0.0f);
  p.boundary = Boundary::Wrap;
  Bodies b;
  b.resize(4);
  // Boid 0 heads +x at 0.03; boid 1 (0.5 away) heads +y at 0.2 (its speed does not weigh);
  // boid 2 (0.9 away) heads +y too; boid 3 lies beyond r = 1.
  b.pos[0] = Vec4{0, 0, 0, 1}, b.vel[0] = Vec4{0.03f, 0, 0, 0};
  b.pos[1] = Vec4{0.5f, 0, 0, 1}, b.vel[1] = Vec4{0, 0.2f, 0, 0};
  b.pos[2] = Vec4{0, 0.9f, 0, 1}, b.vel[2] = Vec4{0, 0.01f, 0, 0};
  b.pos[3] = Vec4{1.2f, 0, 0, 1}, b.vel[3] = Vec4{-0.03f, 0, 0, 0};
  b.id = {0, 1, 2, 3};
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    p.pipeline = pipe;
    const Bodies a = stepped(p, b);
    // Unit sum (1, 2): heading atan2(2, 1), speed v0, moved by v0 dt.
    const double want = std::atan2(2.0, 1.0);
    EXPECT_NEAR(std::atan2(a.vel[0].y, a.vel[0].x), want, 1e-6) << toString(pipe);
    EXPECT_NEAR(std::hypot(a.vel[0].x, a.vel[0].y), 0.03, 1e-8) << toString(pipe);
    EXPECT_NEAR(a.pos[0].x, 0.03 * std::cos(want), 1e-7) << toString(pipe);
    // Boid 3 sees boid 1 only (0.7 away): unit sum (-1, 1).
    EXPECT_NEAR(std::atan2(a.vel[3].y, a.vel[3].x), std::atan2(1.0, -1.0), 1e-6)
        << toString(pipe) << " " << a.vel[3].x << " " << a.vel[3].y;
  }
}

TEST(Vicsek, AngularNoiseInThePlaneIsUniformOverTheInterval) {
  const float eta = 2.0f;
  const SimParams p = vicsekParams(2, 400.0f, eta);
  const Bodies b = isolated(1600, p);
  const Bodies a = stepped(p, b);
  std::vector<double> turn;
  for (size_t i = 0; i < b.size(); ++i) {
    double d = std::atan2(a.vel[i].y, a.vel[i].x) - std::atan2(b.vel[i].y, b.vel[i].x);
    d = std::remainder(d, 2.0 * kPi);
    turn.push_back(d);
    ASSERT_LE(std::fabs(d), eta / 2 + 1e-5) << i;
    ASSERT_NEAR(std::hypot(a.vel[i].x, a.vel[i].y), p.vicsek.speed, 1e-7);
  }
  // KS at 1600 samples: the 1% critical value is 1.63 / 40.
  EXPECT_LT(ksUniform(turn, -eta / 2, eta / 2), 1.63 / 40.0);
  // Another seed draws other angles; the same seed the same bits.
  SimParams q = p;
  q.seed = p.seed + 1;
  const Bodies other = stepped(q, b), again = stepped(p, b);
  int same = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    same += other.vel[i].x == a.vel[i].x;
    ASSERT_EQ(again.vel[i].x, a.vel[i].x);
  }
  EXPECT_LT(same, 5);
}

TEST(Vicsek, AngularNoiseIn3DIsUniformOnTheCap) {
  const float eta = 1.5f;
  SimParams p = vicsekParams(3, 400.0f, eta);
  p.pipeline = Pipeline::Naive;  // a grid over this sparse world would be mostly empty cells
  const Bodies b = isolated(1600, p);
  const Bodies a = stepped(p, b);
  std::vector<double> cosines, azimuths;
  for (size_t i = 0; i < b.size(); ++i) {
    const double alpha = angleBetween(a.vel[i], b.vel[i]);
    ASSERT_LE(alpha, eta / 2 + 1e-4) << i;
    cosines.push_back(std::cos(alpha));
  }
  // cos(alpha) uniform on [cos(eta/2), 1].
  EXPECT_LT(ksUniform(cosines, std::cos(eta / 2.0), 1.0), 1.63 / 40.0);
}

TEST(Vicsek, VectorialNoiseAddsEtaNTimesARandomUnitVector) {
  // An isolated boid (n = 1) with eta large: the heading is the direction of u + eta xi, nearly
  // xi itself, so headings spread over the whole circle.
  const SimParams p0 = vicsekParams(2, 400.0f, 0.0f);
  SimParams p = p0;
  p.vicsek.noiseKind = VicsekNoise::Vectorial;
  p.vicsek.noise = 50.0f > 6.28f ? 6.28f : 50.0f;
  const Bodies b = isolated(1600, p);
  const Bodies a = stepped(p, b);
  std::vector<double> headings;
  for (size_t i = 0; i < b.size(); ++i) {
    headings.push_back(std::atan2(a.vel[i].y, a.vel[i].x));
    ASSERT_NEAR(std::hypot(a.vel[i].x, a.vel[i].y), p.vicsek.speed, 1e-7);
  }
  // u + 6.28 xi: the heading is not uniform, but it covers the circle: every sixth of it is hit.
  int sectors[6] = {};
  for (double h : headings) ++sectors[std::min(5, static_cast<int>((h + kPi) / (kPi / 3.0)))];
  for (int s : sectors) EXPECT_GT(s, 100);
  // Without noise the heading stays.
  SimParams quiet = p;
  quiet.vicsek.noise = 0.0f;
  const Bodies still = stepped(quiet, b);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_NEAR(angleBetween(still.vel[i], b.vel[i]), 0.0, 1e-3) << i;
}

// The draws follow the body: the same bodies given in another order (ids kept) draw the same
// noise, so isolated boids end identical per id, bit for bit.
TEST(Vicsek, DrawsFollowTheBodyNotItsSlot) {
  const SimParams p = vicsekParams(2, 400.0f, 1.0f);
  const Bodies b = isolated(900, p);
  std::vector<uint32_t> reversed(b.size());
  std::iota(reversed.rbegin(), reversed.rend(), 0u);
  const Bodies shuffled = gatherBodies(b, reversed);
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    SimParams q = p;
    q.pipeline = pipe;
    const Bodies x = stepped(q, b, 3), y = stepped(q, shuffled, 3);
    for (size_t i = 0; i < b.size(); ++i)
      ASSERT_TRUE(x.vel[i].x == y.vel[i].x && x.vel[i].y == y.vel[i].y && x.pos[i].x == y.pos[i].x)
          << toString(pipe) << ", body " << i;
  }
}

TEST(Vicsek, EveryCpuPipelineAgreesWithNaive) {
  for (int dims : {2, 3}) {
    for (Boundary k : {Boundary::Periodic, Boundary::Wrap}) {
      for (VicsekNoise kind : {VicsekNoise::Angular, VicsekNoise::Vectorial}) {
        SimParams p = vicsekParams(dims, dims == 2 ? 15.0f : 6.0f, 0.8f);
        p.boundary = k;
        p.vicsek.noiseKind = kind;
        p.vicsek.dt = 3.0f;
        Bodies b = murmur::test::randomBodies(dims == 2 ? 900 : 1700, p.halfSize, 0.03f, 11);
        if (dims == 2)
          for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0, b.vel[i].z = 0;
        p.pipeline = Pipeline::Naive;
        const Bodies want = stepped(p, b);
        const std::string tag = std::to_string(dims) + "D " + toString(k) + " " + toString(kind);
        for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
          p.pipeline = pipe;
          expectStatesClose(want, stepped(p, b), 1e-4f, 1e-6f, std::string(toString(pipe)) + ", " + tag);
        }
      }
    }
  }
}

// Below the transition the flock orders: from random headings at density 4 and small noise, the
// polarization (Vicsek's v_a) grows from about 0 to near 1.
TEST(Vicsek, LowNoiseOrdersTheFlock) {
  SimParams p = vicsekParams(2, 10.0f, 0.1f);  // 400 boids in 20 x 20: density 1... at N = 1600, 4
  p.pipeline = Pipeline::Rows;
  const Bodies b = murmur::test::randomBodies(1600, p.halfSize, 0.03f, 3);
  Bodies flat = b;
  for (size_t i = 0; i < flat.size(); ++i) flat.pos[i].z = 0, flat.vel[i].z = 0;
  const auto va = [&](const Bodies& s) {
    double x = 0, y = 0;
    for (const Vec4& v : s.vel) {
      const double n = std::hypot(v.x, v.y);
      if (n > 0) x += v.x / n, y += v.y / n;
    }
    return std::hypot(x, y) / double(s.size());
  };
  EXPECT_LT(va(flat), 0.1);
  EXPECT_GT(va(stepped(p, flat, 400)), 0.9);
}
