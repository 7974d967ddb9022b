// The rows pipeline (core/row_search.h): its pruned search visits every pair that the naive test
// accepts, on random states, on states laid on cell faces and world faces, outside the world,
// and over many steps across the wrap boundary; and it really prunes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu_engine.h"
#include "core/pipeline_table.h"
#include "core/rng.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;
using murmur::test::randomBodies;

namespace {

// For every i, the sorted slots forEachRow visits, then every j the naive test d^2 < r^2 (the
// expression the boids rule uses) accepts must be among them. Returns mean candidates.
double checkEveryNeighbourVisited(const SimParams& p, const GridSpec& g, const std::vector<Vec4>& pos,
                                  const std::string& what) {
  const float radius = searchRadius(p);
  const float r2 = radius * radius;
  const size_t n = pos.size();
  const murmur::test::SortedCells sc = murmur::test::sortIntoCells(g, pos);
  const std::vector<uint32_t>& order = sc.order;
  const std::vector<uint32_t>& first = sc.first;
  double candidates = 0;
  int missed = 0;
  std::vector<char> seen(n);
  for (size_t i = 0; i < n && missed < 5; ++i) {
    std::fill(seen.begin(), seen.end(), 0);
    forEachRow(g, xyz(pos[i]), radius, [&](uint32_t lo, uint32_t hi) {
      for (uint32_t k = first[lo]; k < first[hi + 1]; ++k) seen[order[k]] = 1;
      candidates += double(first[hi + 1] - first[lo]);
    });
    for (size_t j = 0; j < n; ++j) {
      const Vec3 d = xyz(pos[j]) - xyz(pos[i]);
      if (j != i && dot(d, d) < r2 && !seen[j]) {
        ADD_FAILURE() << what << ": body " << i << " misses neighbour " << j << " at d^2 " << dot(d, d);
        ++missed;
      }
    }
  }
  return candidates / double(n);
}

// g with its cells not split along x.
GridSpec unsplit(GridSpec g) {
  g.dims.x = g.dims.y;
  g.invCellWidthX = g.invCellWidth;
  g.numCells = uint32_t(g.dims.x) * uint32_t(g.dims.y) * uint32_t(g.dims.z);
  return g;
}

// Classic 27-cell (or 8-cell) candidates per body for the same state.
double classicCandidates(const SimParams& p, const std::vector<Vec4>& pos) {
  const GridSpec g = boidGrid(p, pos.size());
  std::vector<uint32_t> count(g.numCells, 0);
  for (const Vec4& q : pos) ++count[cellKeyOf(g, xyz(q))];
  double total = 0;
  for (const Vec4& q : pos) {
    const CellRange cr = cellRangeForRadius(g, xyz(q), searchRadius(p));
    for (int z = cr.lo.z; z <= cr.hi.z; ++z)
      for (int y = cr.lo.y; y <= cr.hi.y; ++y)
        for (int x = cr.lo.x; x <= cr.hi.x; ++x) total += count[cellKey(g, x, y, z)];
  }
  return total / double(pos.size());
}

// Bodies on the faces of g's cells (x faces at the split width), a hair either side of them, on
// and next to the world faces, and a few outside the world; every naive pair must be visited.
void faceCheck(const SimParams& p, const GridSpec& g, int count, uint64_t seed, const std::string& what) {
  const float h = p.halfSize;
  Rng rng(seed);
  std::vector<Vec4> pos;
  auto onFace = [&](bool alongX) {
    const int c = int(rng.uniform(0, (alongX ? g.dims.x : g.dims.y) + 1));
    const float x = g.origin.x + float(c) * (alongX ? g.cellWidth / rowXSplit(g) : g.cellWidth);
    const int nudge = int(rng.uniform(0, 5)) - 2;  // -2..2 ulps
    float v = x;
    for (int k = 0; k < nudge; ++k) v = std::nextafter(v, 1e9f);
    for (int k = 0; k > nudge; --k) v = std::nextafter(v, -1e9f);
    return v;
  };
  for (int i = 0; i < count; ++i) {
    Vec4 q{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), 1.0f};
    const int mode = i % 4;
    if (mode >= 1) q.x = onFace(true);
    if (mode >= 2) q.y = onFace(false);
    if (mode == 3) q.z = onFace(false);
    if (i % 97 == 0) q.y = h + float(rng.uniform(0, 3));   // beyond the +y face
    if (i % 89 == 0) q.z = -h - float(rng.uniform(0, 3));  // beyond the -z face
    pos.push_back(q);
  }
  checkEveryNeighbourVisited(p, g, pos, what);
}

}  // namespace

TEST(RowSearch, VisitsEveryNeighbourOfRandomStates) {
  // World sizes on both sides of the occupancy rule: classic cells of 18.5 bodies get cells of
  // half the width, cells of 2.3 bodies keep the classic width (rows still pruned).
  for (int factor : {1, 2})
    for (float radius : {5.0f, 2.7f, 1.0f})
      for (float worldRadii : {3.0f, 6.0f}) {
        SimParams p = defaultParams();
        p.pipeline = Pipeline::Rows;
        p.cellWidthFactor = factor;
        p.boids.cohesionRadius = p.boids.alignmentRadius = radius;
        p.boids.separationRadius = radius * 0.6f;
        p.halfSize = worldRadii * radius;
        const Bodies b = randomBodies(4000, p.halfSize, 1.0f, 7 + factor);
        const int k = rowCellsPerRadius(p, b.size());
        EXPECT_EQ(k, factor == 1 && worldRadii == 6.0f ? 1 : 2);
        const std::string what = "r " + std::to_string(radius) + " factor " + std::to_string(factor) + " world " +
                                 std::to_string(worldRadii);
        const GridSpec g = rowGrid(p, b.size());
        // These worlds are crowded: their cells are split along x (rowXSplitFor).
        EXPECT_GE(rowXSplit(g), 2.0f) << what;
        const double rows = checkEveryNeighbourVisited(p, g, b.pos, what);
        // The point of the pipeline: fewer candidates than the classic grid of the same width.
        EXPECT_LT(rows, (k == 2 ? 0.6 : 0.85) * classicCandidates(p, b.pos)) << what;
        // And of the split: fewer than the same rows over unsplit cells.
        const double whole = checkEveryNeighbourVisited(p, unsplit(g), b.pos, what + " unsplit");
        EXPECT_LT(rows, 0.9 * whole) << what;
      }
}

// The split: the smallest power of two that leaves at most half a body per cell, none where cells
// are sparse, at most 16, and none that would overflow 31-bit keys.
TEST(RowSearch, SplitsCellsAlongXWhereTheyAreCrowded) {
  const auto split = [](size_t n, float h, float w, int d, int dims = 3) {
    SimParams q = defaultParams();
    q.halfSize = h;
    q.dims = dims;
    return rowXSplitFor(n, q, w, d);
  };
  EXPECT_EQ(split(1000, 100.0f, 5.0f, 40), 1);     // 0.016 per cell
  EXPECT_EQ(split(1000000, 100.0f, 2.5f, 80), 4);  // CIS 565 world: 1.95 per cell
  EXPECT_EQ(split(1000000, 50.0f, 2.0f, 50), 16);  // FLAME GPU density: 8 per cell
  EXPECT_EQ(split(100000000, 50.0f, 2.0f, 50), 16);
  EXPECT_EQ(split(2000000000, 500.0f, 1.0f, 1000), 2);  // 10^9 cells of 2: one doubling fits
  // The plane: bodies per cell from the area (1M in 100^2 cells of 2 of 200: 100 per cell), and
  // the cell count of one layer (here 2 x 10^6 cells leave room for every doubling).
  EXPECT_EQ(split(1000000, 100.0f, 2.0f, 100, 2), 16);
  EXPECT_EQ(split(1000, 100.0f, 5.0f, 40, 2), 2);  // 0.625 per cell: one doubling leaves 0.31
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Rows;
  p.halfSize = 100.0f;
  const GridSpec g = rowGrid(p, 1000000);
  EXPECT_EQ(g.dims.x, 4 * g.dims.y);
  EXPECT_EQ(g.invCellWidthX, 4.0f * g.invCellWidth);
  EXPECT_EQ(g.numCells, uint32_t(g.dims.x) * uint32_t(g.dims.y) * uint32_t(g.dims.z));
}

// Bodies on cell faces (where t - floor(t) rounds either way), a hair either side of them, on
// and next to the world faces, and a few outside the world (a scenario file may hold them; the
// border cells take them): the pruning's distance bounds must hold for all of them.
TEST(RowSearch, VisitsEveryNeighbourOnCellAndWorldFaces) {
  struct World {
    float halfSize;
    int count;  // 3000 in half-size 20: classic cells; in half-size 10: cells of half the width
  };
  for (int factor : {1, 2})
    for (World w : {World{20.0f, 3000}, World{10.0f, 3000}}) {
      SimParams p = defaultParams();
      p.pipeline = Pipeline::Rows;
      p.cellWidthFactor = factor;
      p.halfSize = w.halfSize;
      for (bool split : {true, false}) {
        const GridSpec g = split ? rowGrid(p, size_t(w.count)) : unsplit(rowGrid(p, size_t(w.count)));
        EXPECT_TRUE(!split || rowXSplit(g) >= 2.0f) << "split " << rowXSplit(g);
        faceCheck(p, g, w.count, 33 + factor,
                  "faces, factor " + std::to_string(factor) + " half-size " + std::to_string(w.halfSize) +
                      (split ? " split" : " unsplit"));
      }
    }
}

TEST(RowSearch, CpuRowsAgreesWithNaiveAfterOneStep) {
  for (int factor : {1, 2})
    for (float half : {25.0f, 12.0f})  // classic cells, and cells of half the width
      for (RuleSet rules : {RuleSet::Cis565, RuleSet::Reynolds}) {
        SimParams p = defaultParams();
        p.halfSize = half;
        p.cellWidthFactor = factor;
        p.boids.rules = rules;
        const Bodies start = randomBodies(3000, half, 1.0f, 300 + factor);
        CpuEngine naive(p), rows(p);
        SimParams q = p;
        q.pipeline = Pipeline::Naive;
        naive.setParams(q);
        q.pipeline = Pipeline::Rows;
        rows.setParams(q);
        naive.reset(start);
        rows.reset(start);
        naive.step(1);
        rows.step(1);
        expectStatesClose(naive.readBodies(), rows.readBodies(), 1e-5f, 1e-6f,
                          "factor " + std::to_string(factor) + " " + toString(rules));
      }
}

// Many steps in a small world: thousands of wraps. At checkpoints the rows engine's own state is
// stepped once by naive and by rows; a neighbour missed anywhere (a stale cell, a wrapped body,
// a pruned row) shows as a per-id mismatch. The run must really cross the boundary.
TEST(RowSearch, AgreesWithNaiveAcrossManyStepsAndWraps) {
  SimParams p = defaultParams();
  p.halfSize = 12.0f;
  p.pipeline = Pipeline::Rows;
  const Bodies start = randomBodies(2500, 12.0f, 1.0f, 77);
  ASSERT_EQ(rowCellsPerRadius(p, start.size()), kRowCellsPerRadius);
  CpuEngine rows(p);
  rows.reset(start);
  size_t wraps = 0;
  Bodies prev = rows.readBodies();
  for (int step = 1; step <= 60; ++step) {
    rows.step(1);
    const Bodies now = rows.readBodies();
    wraps += countWrapped(prev, now, p.halfSize);
    prev = now;
    if (step % 15 == 0) {
      CpuEngine a(p), b(p);
      SimParams q = p;
      q.pipeline = Pipeline::Naive;
      a.setParams(q);
      a.reset(now);
      b.reset(now);
      a.step(1);
      b.step(1);
      expectStatesClose(a.readBodies(), b.readBodies(), 1e-5f, 1e-6f, "step " + std::to_string(step));
    }
  }
  EXPECT_GT(wraps, 500u);
}

// Every boids pipeline finds naive's neighbours. Rows counts the candidates of its rows; verlet
// the entries of lists built now (for 4 steps: more than the neighbours, by the skin, and well
// under the rows' candidates).
TEST(RowSearch, NeighbourStatsCountNaiveNeighbours) {
  SimParams p = defaultParams();
  p.halfSize = 20.0f;
  p.listSteps = 4;
  const Bodies start = randomBodies(3000, 20.0f, 1.0f, 5);
  p.pipeline = Pipeline::Naive;
  CpuEngine naive(p);
  naive.reset(start);
  const NeighbourStats a = naive.neighbourStats();
  double rowCandidates = 0;
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    if (pipe == Pipeline::Naive) continue;  // the reference
    p.pipeline = pipe;
    CpuEngine e(p);
    e.reset(start);
    const NeighbourStats b = e.neighbourStats();
    EXPECT_EQ(a.meanNeighbours, b.meanNeighbours) << toString(pipe);
    EXPECT_GT(b.meanNeighbours, 5.0);
    EXPECT_LT(b.meanCandidates, 2999.0);
    if (pipe == Pipeline::Rows) {
      EXPECT_GE(b.meanCandidates, b.meanNeighbours);
      rowCandidates = b.meanCandidates;
    } else if (pipelineInfo(pipe).lists) {
      // Verlet comes after rows in the table, so rowCandidates is set.
      ASSERT_GT(rowCandidates, 0.0) << toString(pipe);
      EXPECT_GT(b.meanCandidates, b.meanNeighbours);
      EXPECT_LT(b.meanCandidates, rowCandidates);
    } else {
      EXPECT_GE(b.meanCandidates, b.meanNeighbours) << toString(pipe);
    }
  }
  EXPECT_GT(rowCandidates, 0.0);  // rows was among them
}

// Gravity on the pipelines without a gravity method of their own (rows, and verlet: no cut-off,
// no lists for gravity) is the table's gravityAs (the coherent grid), to the bit.
TEST(RowSearch, GravityRunsTheCoherentGrid) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  const Bodies start = randomBodies(2000, 5.0f, 0.1f, 9);
  int borrowed = 0;
  for (const PipelineInfo& row : pipelineTable()) {
    if (!row.gravity || row.gravityAs == row.id) continue;
    EXPECT_EQ(row.gravityAs, Pipeline::Coherent) << row.name;
    p.pipeline = row.gravityAs;
    CpuEngine own(p);
    own.reset(start);
    own.step(3);
    p.pipeline = row.id;
    CpuEngine e(p);
    e.reset(start);
    e.step(3);
    expectStatesClose(own.readBodies(), e.readBodies(), 0.0f, 0.0f, std::string("gravity ") + row.name);
    ++borrowed;
  }
  EXPECT_EQ(borrowed, 3);  // rows, verlet and clusters
}

// The GPU picks its row loop by the occupancy of the rows grid's cells: the worlds of the
// benchmark land on the side they were measured on (core/row_search.h).
TEST(RowSearch, BodiesPerCellPickTheRowLoop) {
  SimParams p = defaultParams();  // CIS 565 world: half-size 100, largest radius 5
  p.cellWidthFactor = 1;
  EXPECT_NEAR(rowBodiesPerCell(p, 1000000), 1e6 * 125.0 / 8e6 / 8.0, 1e-9);  // half-width cells
  EXPECT_EQ(rowLoop(p, 1000000), RowLoop::Short);
  p.cellWidthFactor = 2;
  EXPECT_NEAR(rowBodiesPerCell(p, 1000000), 1e6 * 1000.0 / 8e6 / 8.0, 1e-9);
  EXPECT_EQ(rowLoop(p, 1000000), RowLoop::Batched);
  SimParams f = defaultParams();  // FLAME GPU density: half-size 50, radii 2
  f.halfSize = 50.0f;
  f.boids.cohesionRadius = f.boids.separationRadius = f.boids.alignmentRadius = 2.0f;
  f.cellWidthFactor = 1;
  EXPECT_NEAR(rowBodiesPerCell(f, 1000000), 8.0, 1e-9);  // classic-width cells
  EXPECT_EQ(rowLoop(f, 1000000), RowLoop::Flat);
  EXPECT_EQ(rowLoop(f, 400000), RowLoop::Short);  // 3.2 per cell
  f.cellWidthFactor = 2;
  EXPECT_NEAR(rowBodiesPerCell(f, 1000000), 8.0, 1e-9);  // cells of half the classic width
  EXPECT_EQ(rowLoop(f, 1000000), RowLoop::Flat);
  // The plane reads packed records and takes the batched loop from 4 a cell on: Vicsek's world
  // at density 4 and r = 1 (4 a cell), and the plane's CIS 565 world at 12.6 neighbours.
  SimParams v = defaultParams();
  selectRule(v, *findRule("vicsek"));
  v.dims = 2;
  v.halfSize = 250.0f;
  EXPECT_NEAR(rowBodiesPerCell(v, 1000000), 4.0, 1e-9);
  EXPECT_EQ(rowLoop(v, 1000000), RowLoop::Batched);
  EXPECT_EQ(rowLoop(v, 500000), RowLoop::Short);  // 2 a cell
  v.dims = 3;
  v.halfSize = 50.0f;  // 1M in the cube at density 1: under 4 a cell
  EXPECT_EQ(rowLoop(v, 1000000), RowLoop::Short);
}

// The verlet kernels' one-loop walk visits exactly forEachRow's rows, in the same order, for
// points inside the world, on its faces and corners, and sphere sizes from a fraction of a cell
// to most of the world (so that rows are pruned, clamped at faces, or a single row).
TEST(RowSearch, OneLoopWalkVisitsTheSameRowsInTheSameOrder) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Rows;
  p.halfSize = 20.0f;
  const Bodies b = randomBodies(3000, p.halfSize, 1.0f, 11);
  const GridSpec g = rowGrid(p, b.size());
  std::vector<Vec3> points;
  for (size_t i = 0; i < 200; ++i) points.push_back(xyz(b.pos[i]));
  const float h = p.halfSize;
  for (float x : {-h, 0.0f, h * 0.999f})
    for (float y : {-h, h * 0.999f})
      for (float z : {-h, 0.0f, h * 0.999f}) points.push_back(Vec3{x, y, z});
  size_t rowsSeen = 0;
  for (float radius : {0.3f, 2.0f, 5.0f, 17.0f}) {
    for (const Vec3& q : points) {
      std::vector<std::pair<uint32_t, uint32_t>> nested, flat;
      forEachRow(g, q, radius, [&](uint32_t lo, uint32_t hi) { nested.emplace_back(lo, hi); });
      forEachRowOneLoop(g, q, radius, [&](uint32_t lo, uint32_t hi) { flat.emplace_back(lo, hi); });
      ASSERT_EQ(flat, nested) << "radius " << radius << " at " << q.x << " " << q.y << " " << q.z;
      rowsSeen += nested.size();
    }
  }
  EXPECT_GT(rowsSeen, points.size() * 4) << "the walks visited rows at all";
}

// The halo of a slab of the rows grid over several ranks (dist/slabs.h): every row a body's search
// visits lies within rowReachPlanes planes of the body's own along z, for bodies anywhere,
// including a hair either side of plane faces; and the bound is reached, so it is not loose.
TEST(RowSearch, ReachPlanesBoundTheRowsAlongZ) {
  struct World {
    float halfSize;
    size_t n;
    int factor;
  };
  for (World w : {World{20.0f, 3000, 1}, World{10.0f, 3000, 1}, World{10.0f, 3000, 2}, World{100.0f, 4000, 1},
                  World{100.0f, 1000000, 1}, World{100.0f, 1000000, 2}}) {
    SimParams p = defaultParams();
    p.pipeline = Pipeline::Rows;
    p.halfSize = w.halfSize;
    p.cellWidthFactor = w.factor;
    const GridSpec g = rowGrid(p, w.n);
    const float radius = searchRadius(p);
    const int k = rowReachPlanes(g, radius);
    const float reach = radius * g.invCellWidth + rowMargin(g);
    EXPECT_GE(k, 1);
    EXPECT_LE(k, static_cast<int>(std::ceil(reach)) + 1);
    Rng rng(5);
    bool reached = false;
    for (int t = 0; t < 20000; ++t) {
      float z = static_cast<float>(rng.uniform(-w.halfSize, w.halfSize));
      if (t % 2) {  // on a plane face, or a few ulp either side of it
        const int face = static_cast<int>(rng.uniform(0.0, double(g.dims.z)));
        z = g.origin.z + static_cast<float>(face) * g.cellWidth;
        for (int u = static_cast<int>(rng.uniform(-3.0, 4.0)); u != 0; u += u > 0 ? -1 : 1)
          z = std::nextafter(z, u > 0 ? 1e9f : -1e9f);
      }
      const Vec3 pos{0.0f, 0.0f, z};
      const int c = cellCoord(z, g.origin.z, g.invCellWidth, g.dims.z);
      const RowSphere s = rowSphere(g, pos, radius);
      ASSERT_GE(s.zlo, c - k) << "z " << z << " half-size " << w.halfSize;
      ASSERT_LE(s.zlo + s.nz - 1, c + k) << "z " << z << " half-size " << w.halfSize;
      reached = reached || s.zlo == c - k || s.zlo + s.nz - 1 == c + k;
    }
    EXPECT_TRUE(reached) << "half-size " << w.halfSize << ": the search never reaches " << k << " planes";
  }
}
