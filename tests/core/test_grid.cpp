// Grid invariants: cell assignment, sorted order, start/end partition, empty cells, and that the
// cells a radius reaches always contain every neighbour within that radius.
#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "core/grid.h"
#include "core/rng.h"
#include "test_helpers.h"

using namespace murmur::core;

TEST(Grid, BoidGridDimensions) {
  SimParams p = defaultParams();
  GridSpec g = boidGrid(p);
  EXPECT_EQ(g.dims.x, 40);  // 200 / 5
  EXPECT_FLOAT_EQ(g.cellWidth, 5.0f);
  p.cellWidthFactor = 2;
  g = boidGrid(p);
  EXPECT_EQ(g.dims.x, 20);
  EXPECT_EQ(g.numCells, 20u * 20u * 20u);
}

TEST(Grid, RadiusReachesAtMost27Or8Cells) {
  Rng rng(3);
  for (int factor : {1, 2}) {
    SimParams p = defaultParams();
    p.cellWidthFactor = factor;
    const GridSpec g = boidGrid(p);
    int maxCells = 0;
    for (int k = 0; k < 20000; ++k) {
      const Vec3 x{float(rng.uniform(-100, 100)), float(rng.uniform(-100, 100)), float(rng.uniform(-100, 100))};
      const CellRange r = cellRangeForRadius(g, x, 5.0f);
      const int cells = (r.hi.x - r.lo.x + 1) * (r.hi.y - r.lo.y + 1) * (r.hi.z - r.lo.z + 1);
      maxCells = std::max(maxCells, cells);
    }
    EXPECT_EQ(maxCells, factor == 1 ? 27 : 8) << "factor " << factor;
  }
}

TEST(Grid, EveryNeighbourWithinRadiusIsInAVisitedCell) {
  Rng rng(11);
  for (int factor : {1, 2}) {
    SimParams p = defaultParams();
    p.cellWidthFactor = factor;
    const GridSpec g = boidGrid(p);
    for (int k = 0; k < 200000; ++k) {
      // Points near cell faces are the interesting ones: snap some to multiples of the width.
      Vec3 a{float(rng.uniform(-100, 100)), float(rng.uniform(-100, 100)), float(rng.uniform(-100, 100))};
      if (k % 2) a.x = std::round(a.x / 5.0f) * 5.0f;
      const Vec3 dir{float(rng.normal()), float(rng.normal()), float(rng.normal())};
      const float len = length(dir);
      const float d = float(rng.uniform(0.0, 5.0));
      Vec3 b = a + dir * (d / len);
      if (b.x < -100 || b.x >= 100 || b.y < -100 || b.y >= 100 || b.z < -100 || b.z >= 100) continue;
      const Vec3 diff = b - a;
      if (dot(diff, diff) >= 25.0f) continue;
      const CellRange r = cellRangeForRadius(g, a, 5.0f);
      const Int3 c = cellOf(g, b);
      ASSERT_TRUE(c.x >= r.lo.x && c.x <= r.hi.x && c.y >= r.lo.y && c.y <= r.hi.y && c.z >= r.lo.z &&
                  c.z <= r.hi.z)
          << "neighbour at distance " << std::sqrt(dot(diff, diff)) << " outside the visited cells";
    }
  }
}

namespace {
void checkGridInvariants(CpuEngine& e) {
  const CpuEngine::GridView v = e.debugBuildGrid();
  const size_t n = e.numBodies();
  ASSERT_EQ(v.sortedKeys.size(), n);
  ASSERT_EQ(v.cellStart.size(), v.grid.numCells);
  // Bodies sorted by key; each key is the cell of its body.
  std::vector<bool> seen(n, false);
  for (size_t k = 0; k < n; ++k) {
    if (k) ASSERT_LE(v.sortedKeys[k - 1], v.sortedKeys[k]);
    ASSERT_LT(v.sortedIndex[k], n);
    ASSERT_FALSE(seen[v.sortedIndex[k]]) << "index appears twice";
    seen[v.sortedIndex[k]] = true;
  }
  // start/end partition [0, N): walking the cells in key order covers every slot exactly once.
  size_t covered = 0, occupied = 0;
  for (uint32_t c = 0; c < v.grid.numCells; ++c) {
    const uint32_t s = v.cellStart[c], en = v.cellEnd[c];
    if (s == kEmptyCell) {
      ASSERT_EQ(en, kEmptyCell) << "cell " << c << " has an end but no start";
      continue;
    }
    ASSERT_EQ(s, covered) << "cell " << c << " does not start where the previous ended";
    ASSERT_LT(s, en);
    for (uint32_t k = s; k < en; ++k) ASSERT_EQ(v.sortedKeys[k], c);
    covered = en;
    ++occupied;
  }
  EXPECT_EQ(covered, n);
  EXPECT_GT(occupied, 0u);
  EXPECT_LT(occupied, v.grid.numCells) << "test wants some empty cells";
}
}  // namespace

TEST(Grid, BoidGridInvariantsOnRandomStates) {
  for (int factor : {1, 2}) {
    SimParams p = defaultParams();
    p.cellWidthFactor = factor;
    CpuEngine e(p);
    e.reset(murmur::test::randomBodies(5000, 100.0f, 1.0f, 7 + factor));
    checkGridInvariants(e);
    // Cells computed independently of the engine: each sorted key is the cell of its body.
    const CpuEngine::GridView v = e.debugBuildGrid();
    const Bodies b = e.readBodies();  // identity order after reset (no coherent step yet)
    for (size_t k = 0; k < b.size(); ++k)
      ASSERT_EQ(v.sortedKeys[k], cellKeyOf(v.grid, xyz(b.pos[v.sortedIndex[k]])));
  }
}

TEST(Grid, GravityGridInvariantsAndBoundingCube) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.gravity.gridDim = 8;
  CpuEngine e(p);
  Bodies b = murmur::test::randomBodies(3000, 3.0f, 0.1f, 5);
  b.pos[0] = Vec4{40, -2, 1, 1};  // an outlier stretches the cube
  e.reset(b);
  checkGridInvariants(e);
  const CpuEngine::GridView v = e.debugBuildGrid();
  EXPECT_EQ(v.grid.dims.x, 8);
  EXPECT_GE(v.grid.cellWidth * 8, 43.0f);
  for (size_t i = 0; i < b.size(); ++i) {
    const Vec3 rel = xyz(b.pos[i]) - v.grid.origin;
    EXPECT_GE(rel.x, 0.0f);
    EXPECT_LT(rel.x, v.grid.cellWidth * 8);
  }
}
