// Couzin's zones (core/rules/couzin.h): hand-built neighbourhoods for each zone, repulsion over the
// others, the blind angle and the turning limit; every CPU pipeline against a brute-force
// reference written from the paper, in the plane and in 3D; the speed held at s; the noise's
// spread; and every CPU pipeline against naive with the noise on, under every boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "couzin_reference.h"
#include "run_steps.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::couzinReferenceStep;
using murmur::test::Dir;
using murmur::test::expectStatesClose;

namespace {

constexpr double kPi = 3.14159265358979323846;

SimParams couzinParams(int dims, float halfSize) {
  SimParams p = defaultParams();
  selectRule(p, *findRule("couzin"));
  p.dims = dims;
  p.halfSize = halfSize;
  p.couzin.noise = 0.0f;
  p.boundary = Boundary::Reflect;
  return p;
}

Bodies stepped(const SimParams& p, const Bodies& b, int steps = 1) {
  CpuEngine e(p);
  return murmur::test::runSteps(e, b, steps);
}

// Body 0 at the origin heading +x at the rule's speed, and the others at the given positions and
// velocities.
Bodies around(const SimParams& p, const std::vector<Vec4>& pos, const std::vector<Vec4>& vel) {
  Bodies b;
  b.resize(pos.size() + 1);
  b.pos[0] = Vec4{0, 0, 0, 1};
  b.vel[0] = Vec4{p.couzin.speed, 0, 0, 0};
  for (size_t k = 0; k < pos.size(); ++k) b.pos[k + 1] = pos[k], b.vel[k + 1] = vel[k];
  for (size_t k = 0; k < b.size(); ++k) b.id[k] = static_cast<uint32_t>(k);
  return b;
}

double headingDeg(const Vec4& v) { return std::atan2(double(v.y), double(v.x)) * 180.0 / kPi; }

Bodies planar(Bodies b) {
  for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0, b.vel[i].z = 0;
  return b;
}

}  // namespace

// r_r = 1, r_o = 3, r_a = 17 (the defaults); a free turn (180 degrees a step) and no blind angle
// unless a case sets them.
TEST(Couzin, EachZoneSetsTheHeadingAsThePaperSays) {
  SimParams p = couzinParams(2, 50.0f);
  p.couzin.turnRate = 180.0f;
  p.couzin.fieldOfView = 360.0f;
  const Vec4 up{0, 0.3f, 0, 0}, still{0.3f, 0, 0, 0};
  struct Case {
    const char* what;
    std::vector<Vec4> pos, vel;
    double wantDeg;  // body 0's new heading
  };
  const std::vector<Case> cases = {
      // One neighbour 0.5 ahead: away from it.
      {"repulsion", {Vec4{0.5f, 0, 0, 1}}, {up}, 180.0},
      // Repulsion overrides a neighbour in the zone of orientation and one in that of attraction.
      {"repulsion first", {Vec4{0, 0.5f, 0, 1}, Vec4{2, 0, 0, 1}, Vec4{10, 0, 0, 1}}, {still, up, still}, -90.0},
      // A neighbour 2 away heading +y: its heading, whatever its speed.
      {"orientation", {Vec4{2, 0, 0, 1}}, {Vec4{0, 5, 0, 0}}, 90.0},
      // A neighbour 10 away up and to the left: towards it.
      {"attraction", {Vec4{-6, 8, 0, 1}}, {still}, std::atan2(8.0, -6.0) * 180.0 / kPi},
      // Orientation (+y) and attraction (+x) both: the mean of the two unit vectors, 45 degrees.
      {"orientation and attraction", {Vec4{0, 2, 0, 1}, Vec4{10, 0, 0, 1}}, {up, still}, 45.0},
      // Two neighbours in the zone of attraction pulling opposite ways: no direction, the heading
      // is kept.
      {"cancelling", {Vec4{0, 10, 0, 1}, Vec4{0, -10, 0, 1}}, {still, still}, 0.0},
      // Beyond r_a: nothing.
      {"beyond", {Vec4{0, 17.5f, 0, 1}}, {still}, 0.0},
  };
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    p.pipeline = pipe;
    for (const Case& c : cases) {
      const Bodies a = stepped(p, around(p, c.pos, c.vel));
      EXPECT_NEAR(std::remainder(headingDeg(a.vel[0]) - c.wantDeg, 360.0), 0.0, 1e-3) << c.what << ", " << toString(pipe);
      EXPECT_NEAR(std::hypot(a.vel[0].x, a.vel[0].y), 0.3, 1e-6) << c.what << ", " << toString(pipe);
      // x(t + dt) = x(t) + s dt u(t + dt).
      EXPECT_NEAR(a.pos[0].x, 0.3 * std::cos(c.wantDeg * kPi / 180.0), 1e-6) << c.what << ", " << toString(pipe);
    }
  }
}

// A field of perception of 270 degrees leaves a blind cone of 45 degrees either side of straight
// behind: a neighbour at 141 degrees from the heading is not seen, one at 130 degrees is.
TEST(Couzin, TheBlindAngleIsBehind) {
  SimParams p = couzinParams(2, 50.0f);
  p.couzin.turnRate = 180.0f;
  const Vec4 still{0.3f, 0, 0, 0};
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    p.pipeline = pipe;
    p.couzin.fieldOfView = 270.0f;
    EXPECT_NEAR(headingDeg(stepped(p, around(p, {Vec4{-5, 4, 0, 1}}, {still})).vel[0]), 0.0, 1e-4)
        << "blind, " << toString(pipe);
    EXPECT_NEAR(headingDeg(stepped(p, around(p, {Vec4{-5, 6, 0, 1}}, {still})).vel[0]),
                std::atan2(6.0, -5.0) * 180.0 / kPi, 1e-3)
        << "seen, " << toString(pipe);
    // Repulsion is seen through the same field: a neighbour close behind is not avoided.
    EXPECT_NEAR(headingDeg(stepped(p, around(p, {Vec4{-0.5f, 0, 0, 1}}, {still})).vel[0]), 0.0, 1e-4)
        << "close behind, " << toString(pipe);
    // With the whole circle in view the one behind is seen.
    p.couzin.fieldOfView = 360.0f;
    EXPECT_NEAR(std::fabs(headingDeg(stepped(p, around(p, {Vec4{-5, 0.001f, 0, 1}}, {still})).vel[0])), 180.0,
                0.1)
        << "all seen, " << toString(pipe);
  }
}

// 4 degrees a time unit at dt 1: a neighbour straight across turns the body by 4 degrees, in the
// plane and in 3D, where the turn stays in the plane of the heading and the desired direction.
TEST(Couzin, ATurnIsAtMostTheTurningRateTimesDt) {
  for (int dims : {2, 3}) {
    SimParams p = couzinParams(dims, 50.0f);
    p.couzin.fieldOfView = 360.0f;
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      p.pipeline = pipe;
      const Bodies a = stepped(p, around(p, {Vec4{0, 10, 0, 1}}, {Vec4{0.3f, 0, 0, 0}}));
      EXPECT_NEAR(headingDeg(a.vel[0]), 4.0, 1e-4) << dims << "D, " << toString(pipe);
      EXPECT_NEAR(a.vel[0].z, 0.0, 1e-7) << dims << "D, " << toString(pipe);
      // A smaller desired turn is taken whole.
      const Bodies b = stepped(p, around(p, {Vec4{10, 0.5f, 0, 1}}, {Vec4{0.3f, 0, 0, 0}}));
      EXPECT_NEAR(headingDeg(b.vel[0]), std::atan2(0.5, 10.0) * 180.0 / kPi, 1e-3) << dims << "D, " << toString(pipe);
    }
    // dt 0.5 halves the turn.
    p.couzin.dt = 0.5f;
    p.pipeline = Pipeline::Naive;
    EXPECT_NEAR(headingDeg(stepped(p, around(p, {Vec4{0, 10, 0, 1}}, {Vec4{0.3f, 0, 0, 0}})).vel[0]), 2.0, 1e-4);
  }
}

// Random crowded states with the paper's field of perception and turning rate: every pipeline's
// velocities equal the brute-force reference's.
TEST(Couzin, EveryCpuPipelineMatchesTheBruteForceReference) {
  for (int dims : {2, 3}) {
    SimParams p = couzinParams(dims, dims == 2 ? 20.0f : 12.0f);
    p.couzin.zoneAttraction = 4.0f;  // r_a = 7: several cells of the grids
    p.couzin.turnRate = 30.0f;
    Bodies b = murmur::test::randomBodies(dims == 2 ? 700 : 1500, 0.6f * p.halfSize, 0.3f, 17);
    if (dims == 2) b = planar(b);
    const std::vector<Dir> want = couzinReferenceStep(p, b);
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      p.pipeline = pipe;
      CpuEngine e(p);
      e.reset(b);
      e.step(1);
      const Bodies a = e.readBodies();
      int bad = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        const uint32_t id = a.id[i];
        const Dir w = want[id];
        const double err = std::hypot(std::hypot(a.vel[i].x - w.x, a.vel[i].y - w.y), a.vel[i].z - w.z);
        if (err > 1e-5 && bad++ < 5)
          ADD_FAILURE() << dims << "D " << toString(pipe) << " body " << id << ": (" << a.vel[i].x << ", "
                        << a.vel[i].y << ", " << a.vel[i].z << ") against (" << w.x << ", " << w.y << ", " << w.z
                        << ")";
      }
      EXPECT_EQ(bad, 0) << dims << "D " << toString(pipe);
    }
  }
}

// Isolated bodies turn by the noise alone: in the plane by an angle of standard deviation sigma
// and mean 0; in 3D by an angle whose mean is sigma sqrt(2 / pi) (the Gaussian's absolute value).
TEST(Couzin, TheNoiseIsAGaussianAngleOfSigma) {
  for (int dims : {2, 3}) {
    SimParams p = couzinParams(dims, 400.0f);
    p.couzin.noise = 0.1f;
    p.couzin.turnRate = 180.0f;
    p.couzin.zoneOrientation = 0, p.couzin.zoneAttraction = 0;  // r_a = 1: the bodies 13 apart see no one
    Bodies b;
    const int side = 60;
    b.resize(side * side);
    for (int i = 0; i < side * side; ++i) {
      const float a = 0.37f * float(i);
      b.pos[i] = Vec4{-390.0f + 13.0f * float(i % side), -390.0f + 13.0f * float(i / side), 0, 1};
      b.vel[i] = Vec4{0.3f * std::cos(a), 0.3f * std::sin(a), 0, 0};
      b.id[i] = static_cast<uint32_t>(i);
    }
    const Bodies a = stepped(p, b);
    double sum = 0, sum2 = 0, sumAbs = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const double cross = double(b.vel[i].x) * a.vel[i].y - double(b.vel[i].y) * a.vel[i].x;
      const double dot = double(b.vel[i].x) * a.vel[i].x + double(b.vel[i].y) * a.vel[i].y + 0.0;
      const double along = dims == 2 ? std::atan2(cross, dot)
                                     : std::acos(std::fmin(1.0, dot / (0.3 * std::hypot(std::hypot(a.vel[i].x, a.vel[i].y), a.vel[i].z))));
      sum += along, sum2 += along * along, sumAbs += std::fabs(along);
      EXPECT_NEAR(std::hypot(std::hypot(a.vel[i].x, a.vel[i].y), a.vel[i].z), 0.3, 1e-6);
    }
    const double n = double(a.size());
    if (dims == 2) {
      EXPECT_NEAR(sum / n, 0.0, 0.006);                                   // 3.5 standard errors
      EXPECT_NEAR(std::sqrt(sum2 / n - (sum / n) * (sum / n)), 0.1, 0.005);  // about 4 of the sd's
    } else {
      EXPECT_NEAR(sumAbs / n, 0.1 * std::sqrt(2.0 / kPi), 0.004);
    }
  }
}

// With the noise on, under every boundary, every pipeline agrees with naive: the same neighbours
// seen, the same draws for each body.
TEST(Couzin, EveryCpuPipelineAgreesWithNaive) {
  for (int dims : {2, 3}) {
    for (Boundary k : {Boundary::Reflect, Boundary::Periodic, Boundary::Wrap}) {
      SimParams p = couzinParams(dims, dims == 2 ? 25.0f : 15.0f);
      p.boundary = k;
      p.couzin.noise = 0.3f;
      p.couzin.zoneAttraction = 4.0f;
      p.couzin.turnRate = 30.0f;
      Bodies b = murmur::test::randomBodies(dims == 2 ? 900 : 1700, p.halfSize, 0.3f, 11);
      if (dims == 2) b = planar(b);
      p.pipeline = Pipeline::Naive;
      const Bodies want = stepped(p, b, 2);
      const std::string tag = std::to_string(dims) + "D " + toString(k);
      for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
        p.pipeline = pipe;
        expectStatesClose(want, stepped(p, b, 2), 1e-4f, 1e-5f, std::string(toString(pipe)) + ", " + tag);
      }
    }
  }
}

// The zones all empty is refused; a zone of width 0 is absent.
TEST(Couzin, EmptyZonesAreRefusedAndAZeroWidthIsNoZone) {
  SimParams p = couzinParams(2, 50.0f);
  p.couzin.zoneRepulsion = 0, p.couzin.zoneOrientation = 0, p.couzin.zoneAttraction = 0;
  EXPECT_NE(validateParams(p).find("the zones are all empty"), std::string::npos) << validateParams(p);
  // No zone of orientation: a neighbour 2 away (r_r = 1) is in the zone of attraction.
  p = couzinParams(2, 50.0f);
  p.couzin.turnRate = 180.0f;
  p.couzin.fieldOfView = 360.0f;
  p.couzin.zoneOrientation = 0;
  const Bodies a = stepped(p, around(p, {Vec4{0, 2, 0, 1}}, {Vec4{0.3f, 0, 0, 0}}));
  EXPECT_NEAR(headingDeg(a.vel[0]), 90.0, 1e-3);
}
