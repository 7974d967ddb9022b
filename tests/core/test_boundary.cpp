// The periodic boundary (--boundary periodic): a torus whose neighbour searches cross the faces
// by the minimum image. Every CPU pipeline agrees per id with a brute-force minimum-image sum
// written here (not the engine's search), in 3D and in the plane, with bodies packed against the
// faces; the wrap boundary (the default) still sees no neighbour across a face; a world too small
// for one image per neighbour is refused in one line. Reflecting walls (--boundary reflect): a
// coordinate past a face is mirrored back in and its velocity turns; every pipeline agrees with
// the brute force there too, and over many fast steps no body leaves the box.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/boundary.h"
#include "core/cpu_engine.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/rules/boids.h"
#include "sparse_world.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;
using murmur::test::randomBodies;

namespace {

// One boids step by brute force: every pair, the offset to the nearest image (each axis shifted
// by the world's width when that brings it within half of it), then the rule's finish and the
// integration. Independent of the pipelines' images and grids.
Bodies bruteForceStep(const SimParams& p, const Bodies& in) {
  const float L = 2.0f * p.halfSize;
  const BoidParams& b = p.boids;
  const BoidsRule::Setup su = BoidsRule::setup(b);
  Bodies out = in;
  for (size_t i = 0; i < in.size(); ++i) {
    BoidsRule::Sum acc = BoidsRule::zero([] { return Vec4{0, 0, 0, 0}; });
    for (size_t j = 0; j < in.size(); ++j) {
      if (j == i) continue;
      Vec3 d = xyz(in.pos[j]) - xyz(in.pos[i]);
      if (p.boundary == Boundary::Periodic) {
        d.x = d.x > 0.5f * L ? d.x - L : (d.x < -0.5f * L ? d.x + L : d.x);
        d.y = d.y > 0.5f * L ? d.y - L : (d.y < -0.5f * L ? d.y + L : d.y);
        d.z = d.z > 0.5f * L ? d.z - L : (d.z < -0.5f * L ? d.z + L : d.z);
      }
      BoidsRule::add(acc, make4(xyz(in.pos[i]) + d, 1.0f), d, distance2(d), [&] { return in.vel[j]; }, su);
    }
    Vec3 v = BoidsRule::velocity(acc, in.pos[i], in.vel[i], b, BodyDraws{});
    out.pos[i] = boidIntegrate(in.pos[i], v, b.dt, p.halfSize, p.boundary);
    out.vel[i] = make4(v, 0.0f);
  }
  return out;
}

// A CPU engine of p's parameters on pipeline pipe, reset to `start`.
std::unique_ptr<CpuEngine> engineOn(SimParams p, Pipeline pipe, const Bodies& start) {
  p.pipeline = pipe;
  auto e = std::make_unique<CpuEngine>(p);
  e->reset(start);
  return e;
}

Bodies stepWith(const SimParams& p, Pipeline pipe, const Bodies& start) {
  auto e = engineOn(p, pipe, start);
  e->step(1);
  return e->readBodies();
}

// Bodies uniform in the world, half of them pushed within a radius of some face.
Bodies packedAgainstFaces(size_t n, const SimParams& p, uint64_t seed) {
  Bodies b = randomBodies(n, p.halfSize, 1.0f, seed);
  const float h = p.halfSize, r = searchRadius(p);
  for (size_t i = 0; i < n; i += 2) {
    float* c = i % 6 == 0 ? &b.pos[i].x : (i % 6 == 2 ? &b.pos[i].y : &b.pos[i].z);
    if (p.dims == 2 && c == &b.pos[i].z) c = &b.pos[i].x;
    const float inside = std::fmod(std::fabs(*c), r);
    *c = (i % 4 == 0) ? -h + inside : h - r + inside;
  }
  if (p.dims == 2)
    for (size_t i = 0; i < n; ++i) b.pos[i].z = 0.0f, b.vel[i].z = 0.0f;
  return b;
}

}  // namespace

TEST(Boundary, EveryCpuPipelineFindsTheMinimumImageNeighbours) {
  for (int dims : {3, 2}) {
    for (int factor : {1, 2}) {
      SimParams p = defaultParams();
      p.boundary = Boundary::Periodic;
      p.dims = dims;
      p.cellWidthFactor = factor;
      p.halfSize = dims == 3 ? 20.0f : 60.0f;
      const Bodies start = packedAgainstFaces(dims == 3 ? 2500 : 2000, p, 40 + dims + factor);
      const Bodies reference = bruteForceStep(p, start);
      const std::string tag = std::to_string(dims) + "D, cell width " + std::to_string(factor);
      for (Pipeline pipe : pipelinesFor(ForceMode::Boids))
        // The brute force sums its neighbours in another order and takes every cohesion position as
        // p_i + d: rounding apart, the same step.
        expectStatesClose(reference, stepWith(p, pipe, start), 1e-4f, 1e-5f, std::string(toString(pipe)) + ", " + tag);
      // The faces matter here: under the wrap boundary the same step differs.
      SimParams wrap = p;
      wrap.boundary = Boundary::Wrap;
      const Bodies walled = stepWith(wrap, Pipeline::Naive, start);
      int differ = 0;
      for (size_t i = 0; i < start.size(); ++i) differ += walled.vel[i].x != reference.vel[i].x;
      EXPECT_GT(differ, static_cast<int>(start.size() / 10)) << tag;
      expectStatesClose(bruteForceStep(wrap, start), walled, 1e-4f, 1e-5f, "wrap, " + tag);
    }
  }
}

// Several steps, so that lists that serve more than one step (verlet) and bodies that wrap meet
// the faces; every pipeline against naive. The pipelines sum in different orders, and the flock
// amplifies the rounding step by step: a neighbour missed across a face would move a body by a
// hundred times the tolerance.
TEST(Boundary, PipelinesAgreeWithNaiveOverSeveralSteps) {
  SimParams p = defaultParams();
  p.boundary = Boundary::Periodic;
  p.halfSize = 16.0f;
  p.boids.dt = 1.0f;  // fast bodies: many cross a face
  const Bodies start = packedAgainstFaces(2500, p, 5);
  auto ref = engineOn(p, Pipeline::Naive, start);
  ref->step(4);
  const Bodies want = ref->readBodies();
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    if (pipe == Pipeline::Naive) continue;
    auto e = engineOn(p, pipe, start);
    e->step(4);
    expectStatesClose(want, e->readBodies(), 5e-3f, 5e-3f, toString(pipe));
  }
}

TEST(Boundary, TwoBoidsSeeEachOtherAcrossAFaceOnlyOnATorus) {
  SimParams p = defaultParams();
  p.halfSize = 20.0f;
  Bodies b;
  b.resize(2);
  b.pos[0] = Vec4{-19.5f, 0, 0, 1}, b.pos[1] = Vec4{19.5f, 0, 0, 1};  // 1 apart through the face
  b.vel[0] = Vec4{0, 0.5f, 0, 0}, b.vel[1] = Vec4{0, 0, 0.5f, 0};
  b.id = {0, 1};
  for (Boundary k : {Boundary::Wrap, Boundary::Periodic, Boundary::Reflect}) {
    p.boundary = k;
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      const Bodies after = stepWith(p, pipe, b);
      const bool aligned = after.vel[0].z != 0.0f;  // took some of its neighbour's velocity
      EXPECT_EQ(aligned, k == Boundary::Periodic) << toString(k) << " on " << toString(pipe);
    }
  }
}

TEST(Boundary, APeriodicWorldTooSmallForOneImageIsRefused) {
  SimParams p = defaultParams();
  p.boundary = Boundary::Periodic;
  p.halfSize = 5.0f;  // the rule radius is 5
  const std::string err = validateParams(p);
  EXPECT_NE(err.find("--boundary periodic needs a world half-size of at least"), std::string::npos) << err;
  p.boundary = Boundary::Wrap;
  EXPECT_EQ(validateParams(p), "");
  p.boundary = Boundary::Reflect;
  EXPECT_EQ(validateParams(p), "");
  p.boundary = Boundary::Open;
  EXPECT_EQ(validateParams(p), "");
  p.boundary = static_cast<Boundary>(4);
  EXPECT_NE(validateParams(p).find("boundary"), std::string::npos);
}

TEST(Boundary, AWallMirrorsACoordinateAndTurnsItsVelocity) {
  const float h = 10.0f;
  float v = 0.5f;
  EXPECT_EQ(reflectCoord(10.25f, v, h), 9.75f);  // 0.25 past the face: 0.25 inside it
  EXPECT_EQ(v, -0.5f);
  v = -1.0f;
  EXPECT_EQ(reflectCoord(-10.5f, v, h), -9.5f);
  EXPECT_EQ(v, 1.0f);
  v = 2.0f;
  const float onFace = reflectCoord(10.0f, v, h);  // the world is [-h, h): h itself is outside
  EXPECT_LT(onFace, h);
  EXPECT_GT(onFace, 9.999f);
  EXPECT_EQ(v, -2.0f);
  v = 3.0f;
  EXPECT_EQ(reflectCoord(-10.0f, v, h), -10.0f);  // -h is inside
  EXPECT_EQ(v, 3.0f);
  EXPECT_EQ(reflectCoord(4.0f, v, h), 4.0f);
  EXPECT_EQ(v, 3.0f);
  v = 1.0f;
  EXPECT_EQ(reflectCoord(35.0f, v, h), -10.0f);  // more than a world's width past: the far face
  EXPECT_EQ(v, -1.0f);
  // The step: only the axes that met a wall turn.
  Vec3 w{1.0f, -0.5f, 0.25f};
  const Vec4 p = boidIntegrate(Vec4{9.5f, -9.8f, 0.0f, 2.0f}, w, 1.0f, h, Boundary::Reflect);
  EXPECT_EQ(p.x, 9.5f);
  EXPECT_EQ(p.y, -9.7f);
  EXPECT_EQ(p.z, 0.25f);
  EXPECT_EQ(p.w, 2.0f);
  EXPECT_EQ(w.x, -1.0f);
  EXPECT_EQ(w.y, 0.5f);
  EXPECT_EQ(w.z, 0.25f);
}

// Walls: bodies packed against the faces, every pipeline against the brute force (no neighbour
// across a face, positions mirrored back in); the same step under the wrap boundary differs. Then
// fast steps: every pipeline agrees with naive after 4 (the flock amplifies the rounding of
// different summation orders step by step, as in PipelinesAgreeWithNaiveOverSeveralSteps), and no
// body is outside [-h, h) after any of 30.
TEST(Boundary, UnderWallsEveryPipelineAgreesAndNoBodyLeaves) {
  for (int dims : {3, 2}) {
    SimParams p = defaultParams();
    p.boundary = Boundary::Reflect;
    p.dims = dims;
    p.halfSize = dims == 3 ? 20.0f : 60.0f;
    p.boids.dt = 1.0f;  // fast bodies: many meet a wall each step
    const Bodies start = packedAgainstFaces(dims == 3 ? 2500 : 2000, p, 60 + dims);
    const Bodies reference = bruteForceStep(p, start);
    const std::string tag = std::to_string(dims) + "D";
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids))
      expectStatesClose(reference, stepWith(p, pipe, start), 1e-4f, 1e-5f, std::string(toString(pipe)) + ", " + tag);
    SimParams wrap = p;
    wrap.boundary = Boundary::Wrap;
    const Bodies wrapped = bruteForceStep(wrap, start);
    int turned = 0;
    for (size_t i = 0; i < start.size(); ++i) turned += wrapped.vel[i].x != reference.vel[i].x;
    EXPECT_GT(turned, 20) << tag;
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      if (pipe == Pipeline::Naive) continue;
      auto e = engineOn(p, pipe, start);
      auto ref = engineOn(p, Pipeline::Naive, start);
      for (int s = 0; s < 30; ++s) {
        e->step(1);
        ref->step(1);
        const Bodies got = e->readBodies();
        if (s == 3) expectStatesClose(ref->readBodies(), got, 5e-3f, 5e-3f, std::string(toString(pipe)) + " 4 steps " + tag);
        for (size_t i = 0; i < got.size(); ++i) {
          const Vec4& x = got.pos[i];
          ASSERT_TRUE(x.x >= -p.halfSize && x.x < p.halfSize && x.y >= -p.halfSize && x.y < p.halfSize &&
                      x.z >= -p.halfSize && x.z < p.halfSize)
              << toString(pipe) << " step " << s << " body " << i << " at " << x.x << " " << x.y << " " << x.z;
          if (dims == 2) {
            ASSERT_EQ(x.z, 0.0f);
          }
        }
      }
    }
  }
}

// An open world has no faces: a flock flying +x from a box of half-size 5 goes 30 units out in
// 1000 steps, every body exactly where its straight flight takes it (no wrap, no wall), and
// every pipeline agrees with naive as the engine's box grows around it.
TEST(Boundary, AnOpenWorldHasNoFaces) {
  for (int dims : {2, 3}) {
    SimParams p = defaultParams();
    selectRule(p, *findRule("vicsek"));
    p.boundary = Boundary::Open;
    p.dims = dims;
    p.halfSize = 5.0f;
    p.vicsek.noise = 0.0f;
    Bodies start = randomBodies(dims == 2 ? 300 : 600, 5.0f, 0.03f, 4);
    for (size_t i = 0; i < start.size(); ++i) {
      start.vel[i] = Vec4{0.03f, 0, 0, 0};
      if (dims == 2) start.pos[i].z = 0;
    }
    const Bodies want = [&] {
      auto e = engineOn(p, Pipeline::Naive, start);
      e->step(1000);
      EXPECT_EQ(e->params().halfSize, 5.0f) << "params() are the ones given";
      return e->readBodies();
    }();
    for (size_t i = 0; i < start.size(); ++i) {
      EXPECT_NEAR(want.pos[i].x, start.pos[i].x + 30.0f, 5e-3) << i;
      EXPECT_EQ(want.pos[i].y, start.pos[i].y) << i;
    }
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      auto e = engineOn(p, pipe, start);
      e->step(1000);
      expectStatesClose(want, e->readBodies(), 1e-6f, 1e-6f, std::string(toString(pipe)) + " " + std::to_string(dims) + "D");
    }
  }
}

// Two clusters a million units apart under Couzin's zones: the grids' cells stay at most
// core::boidGridCellCap(N) (a grid at the rule's reach over the box would hold 10^14), and every
// pipeline finds naive's neighbours.
TEST(Boundary, TwoClustersAMillionApartRunInMemoryThatFollowsN) {
  for (int dims : {2, 3}) {
    SimParams p = defaultParams();
    selectRule(p, *findRule("couzin"));
    p.boundary = Boundary::Open;
    p.dims = dims;
    p.halfSize = 10.0f;
    p.couzin.noise = 0.2f;
    const Bodies start = murmur::test::twoFarClusters(2000, 1e6, p.couzin.speed, dims, 9);
    const Bodies want = [&] {
      auto e = engineOn(p, Pipeline::Naive, start);
      e->step(3);
      return e->readBodies();
    }();
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      const std::string what = std::string(toString(pipe)) + " " + std::to_string(dims) + "D";
      auto e = engineOn(p, pipe, start);
      e->step(3);
      expectStatesClose(want, e->readBodies(), 1e-4f, 1e-4f, what);
      if (pipe != Pipeline::Naive) {
        EXPECT_LE(double(e->debugBuildGrid().grid.numCells), boidGridCellCap(2000)) << what;
      }
    }
    // The clusters stay where they were: no body crossed to the other or was wrapped.
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_LT(std::fabs(std::fabs(want.pos[i].x) - 5e5f), 20.0f) << i;
  }
}

// The half-size of an open world only places the start: it may be smaller than the rule's reach
// and than a step; walls, wrap and torus still refuse that.
TEST(Boundary, AnOpenWorldsHalfSizeIsOnlyWhereItStarts) {
  SimParams p = defaultParams();
  p.halfSize = 2.0f;  // below the CIS 565 radius 5
  p.boundary = Boundary::Open;
  EXPECT_EQ(validateParams(p), "");
  p.boundary = Boundary::Reflect;
  EXPECT_NE(validateParams(p), "");
}
