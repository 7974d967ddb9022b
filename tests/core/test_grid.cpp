// Grid invariants: cell assignment, sorted order, start/end partition, empty cells, and that the
// cells a radius reaches always contain every neighbour within that radius.
#include <gtest/gtest.h>

#include <limits>

#include "core/cpu_engine.h"
#include "core/grid.h"
#include "core/pipeline_table.h"
#include "core/rng.h"
#include "core/row_search.h"
#include "core/scenarios.h"
#include "test_helpers.h"

using namespace murmur::core;

TEST(Grid, BoidGridDimensions) {
  SimParams p = defaultParams();
  GridSpec g = boidGrid(p, 10000);
  EXPECT_EQ(g.dims.x, 40);  // 200 / 5
  EXPECT_FLOAT_EQ(g.cellWidth, 5.0f);
  p.cellWidthFactor = 2;
  g = boidGrid(p, 10000);
  EXPECT_EQ(g.dims.x, 20);
  EXPECT_EQ(g.numCells, 20u * 20u * 20u);
}

TEST(Grid, RadiusReachesAtMost27Or8Cells) {
  Rng rng(3);
  for (int factor : {1, 2}) {
    SimParams p = defaultParams();
    p.cellWidthFactor = factor;
    const GridSpec g = boidGrid(p, 10000);
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
    const GridSpec g = boidGrid(p, 10000);
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
    if (k) {
      ASSERT_LE(v.sortedKeys[k - 1], v.sortedKeys[k]);
    }
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
  p.gravity.gridSpread = 0.0f;  // the plain bounding cube
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

TEST(Grid, QuarterOctaveRounding) {
  for (float h : {1e-4f, 0.3f, 1.5f, 7.77f, 1234.5f}) {
    const float q = quarterOctaveCeil(h);
    EXPECT_GE(q, h);
    EXPECT_LT(q, h * 1.1893f);
    EXPECT_EQ(quarterOctaveCeil(q), q);  // a rounded value is a fixed point
    EXPECT_EQ(quarterOctaveCeil(h * 1.0000001f), q) << "nearby values share the step (not at a boundary)";
  }
  EXPECT_EQ(quarterOctaveCeil(1.0f), 1.0f);
  EXPECT_EQ(quarterOctaveCeil(1.001f), 2.0f * 0.59460356f);
}

TEST(Grid, GravityGridAroundTheMassClampsOutliers) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.gravity.gridDim = 16;
  CpuEngine e(p);
  Bodies b = murmur::test::randomBodies(4000, 1.0f, 0.1f, 6);
  b.pos[0] = Vec4{60, 0, 0, 1};  // far outlier
  e.reset(b);
  const CpuEngine::GridView v = e.debugBuildGrid();
  checkGridInvariants(e);
  // The cube is sized by the mass (mean distance ~0.96 with the outlier), not by the outlier.
  const float side = v.grid.cellWidth * 16;
  EXPECT_LT(side, 12.0f);
  EXPECT_GT(side, 2.0f);
  // Centred on the centre of mass (near the origin; the outlier pulls it by 60/4000).
  const float cx = v.grid.origin.x + side / 2;
  EXPECT_NEAR(cx, 0.015f, side / 32);
  // The outlier sits in the last x cell; every cell index is in range.
  EXPECT_EQ(cellOf(v.grid, xyz(b.pos[0])).x, 15);
  // A finer grid than the bounding cube: many more occupied cells.
  SimParams q = p;
  q.gravity.gridSpread = 0.0f;
  CpuEngine f(q);
  f.reset(b);
  const CpuEngine::GridView w = f.debugBuildGrid();
  auto occupied = [](const CpuEngine::GridView& g) {
    size_t k = 0;
    for (uint32_t s : g.cellStart) k += s != kEmptyCell;
    return k;
  };
  EXPECT_GT(occupied(v), 4 * occupied(w));
}

// Coordinates far outside the world (a blown-up state, a hand-written file) clamp to the border
// cells instead of overflowing the float-to-int conversion (undefined; on x86 it gives INT_MIN,
// which put +1e10 into cell 0, the wrong side of the grid).
TEST(Grid, FarCoordinatesClampToTheBorderCells) {
  const GridSpec g = boidGrid(defaultParams(), 10000);
  const int last = g.dims.x - 1;
  for (float far : {1.07e10f, 2.4e9f * 5.0f, 3.0e38f, std::numeric_limits<float>::infinity()}) {
    const Int3 hi = cellOf(g, Vec3{far, far, far});
    EXPECT_EQ(hi.x, last) << far;
    const Int3 lo = cellOf(g, Vec3{-far, -far, -far});
    EXPECT_EQ(lo.x, 0) << far;
    const CellRange rh = cellRangeForRadius(g, Vec3{far, 0, -far}, 5.0f);
    // Beyond the grid nothing else is within reach: only the border cell is searched.
    EXPECT_EQ(rh.lo.x, last) << far;
    EXPECT_EQ(rh.hi.x, last) << far;
    EXPECT_EQ(rh.lo.z, 0) << far;
    EXPECT_EQ(rh.hi.z, 0) << far;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Int3 c = cellOf(g, Vec3{nan, nan, nan});
  EXPECT_TRUE(c.x >= 0 && c.x <= last && c.y >= 0 && c.y <= last && c.z >= 0 && c.z <= last);
}

// A boids grid holds at most a few cells a body (boidGridCellCap): a sparse world (1000 boids in a
// box of half-size 3000, 1200 cells of the reach along each axis: 1.7 billion cells) widens its
// cells, never below the reach, still covering the world, so that its memory follows n; a world
// of the usual density keeps the cells the rule's reach asks for; and at any n the cell keys stay
// within 31 bits (a crowded world whose finer rows cells would pass 2^32 widens them too).
TEST(Grid, ASparseWorldWidensItsCellsAndADenseOneKeepsThem) {
  for (int dims : {2, 3}) {
    SimParams p = defaultParams();
    p.dims = dims;
    const float reach = searchRadius(p);
    p.halfSize = 3000.0f;
    for (const GridSpec& g : {boidGrid(p, 1000), rowGrid(p, 1000), rowGridForRadius(p, 1000, 1.1f * reach)}) {
      EXPECT_LE(double(g.numCells), boidGridCellCap(1000)) << dims;
      EXPECT_LE(boidGridCellCap(1000), 8000.0);
      EXPECT_GE(g.cellWidth, reach) << dims;
      EXPECT_GE(double(g.dims.y) * double(g.cellWidth), 2.0 * double(p.halfSize)) << dims;
      EXPECT_EQ(g.dims.z, dims == 2 ? 1 : g.dims.y);
    }
    // The dense world at 4 neighbours a boid: the rule's cells, as before the cap.
    SimParams d = defaultParams();
    d.dims = dims;
    d.halfSize = denseHalfSize(1000000, d, 4.0);
    EXPECT_EQ(boidGrid(d, 1000000).cellWidth, reach);
    EXPECT_EQ(rowGrid(d, 1000000).cellWidth, reach / float(rowCellsPerRadius(d, 1000000)));
    d.cellWidthFactor = 2;
    EXPECT_EQ(boidGrid(d, 1000000).cellWidth, 2.0f * reach);
  }
  // A billion boids in the dense world, crowded sixteen times over: rows cells of half the radius
  // would pass 2^32; the cap holds the grid under 2^31 keys.
  SimParams c = defaultParams();
  c.pipeline = Pipeline::Rows;
  c.halfSize = denseHalfSize(1000000000, c, 8.0);
  const size_t crowded = 16000000000ull;
  ASSERT_EQ(rowCellsPerRadius(c, crowded), 2);
  const GridSpec g = rowGrid(c, crowded);
  EXPECT_LT(double(g.dims.x) * g.dims.y * g.dims.z, 2147483648.0);
  EXPECT_GE(g.cellWidth, searchRadius(c) / 2.0f);
}

// The CPU engine's memory for that sparse world follows n: the grid no longer dominates it.
TEST(Grid, TheSparseWorldsMemoryFollowsTheBodyCount) {
  for (Pipeline pipe : {Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
    SimParams p = defaultParams();
    p.pipeline = pipe;
    p.halfSize = 3000.0f;
    uint64_t cells = 0;
    size_t gridBytes = 0;
    const size_t total = cpuEngineBytes(1000, p, &cells, &gridBytes);
    EXPECT_LE(double(cells), boidGridCellCap(1000)) << toString(pipe);
    EXPECT_LT(total, size_t(2) << 20) << toString(pipe);
  }
}
