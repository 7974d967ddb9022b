// The plane (--dims 2, SimParams::dims = 2): grids one cell deep (a search visits 9 cells, or 4
// at twice the width, instead of 27 or 8), every pipeline finding naive's neighbours as in 3D,
// scenarios in the plane, bodies that stay in it, and bodies off it refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/body_io.h"
#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/grid.h"
#include "core/pipeline_table.h"
#include "core/row_search.h"
#include "core/scenarios.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;

namespace {

SimParams planeParams(float halfSize, int factor) {
  SimParams p = defaultParams();
  p.dims = 2;
  p.halfSize = halfSize;
  p.cellWidthFactor = factor;
  return p;
}

// Bodies uniform in the square [-h, h)^2 at z = 0, velocities in the plane.
Bodies planeBodies(size_t n, float h, float speed, uint64_t seed) {
  Bodies b = murmur::test::randomBodies(n, h, speed, seed);
  for (size_t i = 0; i < n; ++i) b.pos[i].z = 0.0f, b.vel[i].z = 0.0f;
  return b;
}

void expectInThePlane(const Bodies& b, const std::string& what) {
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b.pos[i].z, 0.0f) << what << " body " << i;
    ASSERT_EQ(b.vel[i].z, 0.0f) << what << " body " << i;
  }
}

size_t cellsInRange(const CellRange& r) {
  return size_t(r.hi.x - r.lo.x + 1) * size_t(r.hi.y - r.lo.y + 1) * size_t(r.hi.z - r.lo.z + 1);
}

}  // namespace

TEST(Plane, GridsAreOneCellDeepAndASearchVisitsNineCellsOrFour) {
  for (int factor : {1, 2}) {
    const SimParams p = planeParams(50.0f, factor);
    const GridSpec g = boidGrid(p, 100000);
    EXPECT_EQ(g.dims.z, 1);
    EXPECT_EQ(g.dims.x, g.dims.y);
    EXPECT_EQ(rowGrid(p, 100000).dims.z, 1);
    // A body well inside a cell, away from the faces: 3 x 3 cells at width r, 2 x 2 at 2r.
    const float w = g.cellWidth;
    const Vec3 body{0.3f * w, 0.6f * w, 0.0f};
    const CellRange r = cellRangeForRadius(g, body, searchRadius(p));
    EXPECT_EQ(cellsInRange(r), factor == 1 ? 9u : 4u) << "factor " << factor;
    SimParams cube = p;
    cube.dims = 3;
    const GridSpec g3 = boidGrid(cube, 100000);
    EXPECT_EQ(cellsInRange(cellRangeForRadius(g3, Vec3{0.3f * w, 0.6f * w, 0.5f * w}, searchRadius(p))),
              factor == 1 ? 27u : 8u);
  }
}

TEST(Plane, EveryBoidsPipelineFindsNaivesNeighbours) {
  for (int factor : {1, 2}) {
    SimParams p = planeParams(60.0f, factor);
    const Bodies start = planeBodies(3000, 60.0f, 1.0f, 40 + factor);
    std::vector<double> neighbours;
    Bodies naive;
    for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
      p.pipeline = pipe;
      CpuEngine e(p);
      e.reset(start);
      neighbours.push_back(e.neighbourStats().meanNeighbours);
      e.step(1);
      const Bodies after = e.readBodies();
      expectInThePlane(after, toString(pipe));
      if (pipe == Pipeline::Naive)
        naive = after;
      else
        expectStatesClose(naive, after, 1e-5f, 1e-6f, std::string("naive vs ") + toString(pipe) + " in the plane");
    }
    for (size_t k = 1; k < neighbours.size(); ++k) EXPECT_DOUBLE_EQ(neighbours[0], neighbours[k]) << k;
    // density 3000 / 120^2, disc of radius 5: about 16 expected (fewer at the edges)
    EXPECT_GT(neighbours[0], 11.0);
    EXPECT_LT(neighbours[0], 17.5);
  }
}

TEST(Plane, GravityPipelinesAgreeAndStayInThePlane) {
  SimParams p = defaultParams();
  p.dims = 2;
  p.force = ForceMode::Gravity;
  p.gravity.gridDim = 8;
  const Bodies start = planeBodies(1500, 2.0f, 0.1f, 91);
  p.pipeline = Pipeline::Naive;
  CpuEngine ref(p);
  ref.reset(start);
  const std::vector<Vec4> exact = ref.computeAccelerations();
  double norm = 0;
  for (const Vec4& a : exact) norm += double(a.x) * a.x + double(a.y) * a.y;
  for (Pipeline pipe : pipelinesFor(ForceMode::Gravity)) {
    p.pipeline = pipe;
    CpuEngine e(p);
    e.reset(start);
    const std::vector<Vec4> acc = e.computeAccelerations();
    // The grid's monopoles and the tree approximate the far field: the field stays in the plane
    // and close to all pairs' (rms relative error).
    double err = 0;
    for (size_t i = 0; i < acc.size(); ++i) {
      ASSERT_EQ(acc[i].z, 0.0f) << toString(pipe) << " body " << i;
      err += double(acc[i].x - exact[i].x) * (acc[i].x - exact[i].x) +
             double(acc[i].y - exact[i].y) * (acc[i].y - exact[i].y);
    }
    EXPECT_LT(std::sqrt(err / norm), pipe == Pipeline::Naive ? 1e-12 : 0.02) << toString(pipe);
    e.step(50);
    expectInThePlane(e.readBodies(), toString(pipe));
  }
}

TEST(Plane, ScenariosLieInThePlane) {
  for (const std::string name : {"uniform", "dense", "plummer", "galaxies", "galaxy"}) {
    SimParams p = defaultParams();
    p.dims = 2;
    ScenarioSpec spec;
    spec.name = name;
    spec.n = 4000;
    spec.denseNeighbours = 6;
    const Scenario sc = makeScenario(spec, p);
    expectInThePlane(sc.bodies, name);
    if (sc.force == ForceMode::Gravity) {
      EXPECT_NE(sc.note.find("projected onto the plane"), std::string::npos) << name;
    } else {
      EXPECT_TRUE(sc.note.empty()) << name;
    }
    if (name == "dense") {
      // k = N pi r^2 / side^2 in the plane: 6 neighbours within the largest radius, about.
      p.halfSize = sc.halfSize;
      p.pipeline = Pipeline::Naive;
      CpuEngine e(p);
      e.reset(sc.bodies);
      const double k = e.neighbourStats().meanNeighbours;
      EXPECT_GT(k, 5.0);
      EXPECT_LT(k, 6.5);
    }
  }
}

TEST(Plane, BodiesOffThePlaneAreRefused) {
  const SimParams p = planeParams(20.0f, 1);
  Bodies b = planeBodies(100, 20.0f, 1.0f, 5);
  b.pos[42].z = 0.25f;
  CpuEngine e(p);
  try {
    e.reset(b);
    FAIL() << "reset took a body off the plane";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("body 42 has z = 0.25"), std::string::npos) << err.what();
  }
  b.pos[42].z = 0.0f;
  b.vel[7].z = -1.0f;
  EXPECT_THROW(e.reset(b), std::invalid_argument);
  b.vel[7].z = 0.0f;
  EXPECT_NO_THROW(e.reset(b));
  // A file in 3D is not flattened silently.
  const std::string path = ::testing::TempDir() + "plane_off.txt";
  {
    std::ofstream f(path);
    f << "1 0 0 0 0 0 0\n1 1 0 0.5 0 0 0\n";
  }
  SimParams q = p;
  ScenarioSpec spec;
  spec.name = "file:" + path;
  try {
    makeScenario(spec, q);
    FAIL() << "a body file off the plane was taken";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("--dims 2: body 1"), std::string::npos) << err.what();
  }
  std::remove(path.c_str());
}

TEST(Plane, DimsIsAParameterWithItsRange) {
  SimParams p = defaultParams();
  EXPECT_EQ(p.dims, 3);
  p.dims = 2;
  EXPECT_EQ(validateParams(p), "");
  p.dims = 4;
  EXPECT_NE(validateParams(p).find("dimensions"), std::string::npos) << validateParams(p);
}
