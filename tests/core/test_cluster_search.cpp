// The clusters pipeline (core/cluster_search.h): a box's bounds never exceed those of a point in
// it; every pair the naive test accepts is a candidate of the cluster, on random states, on cell
// and world faces, outside the world and in the plane; clusters are compact and the search prunes;
// the engine agrees with naive over many steps across the wrap boundary; the grid stays
// addressable at any size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/cluster_search.h"
#include "core/cpu_engine.h"
#include "core/rng.h"
#include "core/scenarios.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;
using murmur::test::randomBodies;

namespace {

struct Walk {
  double candidates = 0;  // per body, itself not counted
  double members = 0;     // per cluster
  size_t clusters = 0;
  int missed = 0;
};

// Lays pos out as the pipeline does (sorted by the cluster grid's cells, groups of 8 cut where a
// row ends), gathers each cluster's candidates with forEachBoxRow and boxDistance2, and checks
// that every j that the naive test d^2 < r^2 accepts for a member is among them.
Walk walkClusters(const SimParams& p, const std::vector<Vec4>& pos, const std::string& what) {
  const GridSpec g = clusterGrid(p, pos.size());
  const float radius = searchRadius(p);
  const float r2 = radius * radius;
  const size_t n = pos.size();
  const murmur::test::SortedCells sc = murmur::test::sortIntoCells(g, pos);
  Walk w;
  std::vector<char> candidate(n, 0);
  for (size_t base = 0; base < n && w.missed < 5; base += kClusterSize) {
    const size_t end = std::min(base + kClusterSize, n);
    size_t a = base;
    while (a < end) {
      const uint32_t row = clusterRowOf(g, xyz(pos[sc.order[a]]));
      std::vector<uint32_t> members;
      Vec3 lo = xyz(pos[sc.order[a]]), hi = lo;
      for (; a < end && clusterRowOf(g, xyz(pos[sc.order[a]])) == row; ++a) {
        const Vec3 q = xyz(pos[sc.order[a]]);
        lo = Vec3{std::min(lo.x, q.x), std::min(lo.y, q.y), std::min(lo.z, q.z)};
        hi = Vec3{std::max(hi.x, q.x), std::max(hi.y, q.y), std::max(hi.z, q.z)};
        members.push_back(sc.order[a]);
      }
      EXPECT_LE(members.size(), size_t(kClusterSize));
      ++w.clusters;
      w.members += double(members.size());
      std::vector<uint32_t> found;
      forEachBoxRow(g, lo, hi, radius, [&](uint32_t f, uint32_t l) {
        for (uint32_t k = sc.first[f]; k < sc.first[l + 1]; ++k)
          if (boxDistance2(xyz(pos[sc.order[k]]), lo, hi) < r2) found.push_back(sc.order[k]);
      });
      for (uint32_t j : found) candidate[j] = 1;
      w.candidates += double(found.size() - 1) * double(members.size());
      for (uint32_t i : members) {
        EXPECT_TRUE(candidate[i]) << what << ": body " << i << " is not its own candidate";
        for (size_t j = 0; j < n; ++j) {
          if (j == i || candidate[j]) continue;
          const float d2 = distance2(xyz(pos[j]) - xyz(pos[i]));
          if (d2 < r2 && w.missed++ < 5)
            ADD_FAILURE() << what << ": body " << i << " misses neighbour " << j << " at d^2 " << d2;
        }
      }
      for (uint32_t j : found) candidate[j] = 0;
    }
  }
  w.candidates /= double(n);
  w.members /= double(w.clusters);
  return w;
}

}  // namespace

TEST(ClusterSearch, BoxBoundsNeverExceedThoseOfAPointInTheBox) {
  Rng rng(11);
  for (int t = 0; t < 200000; ++t) {
    const float a = float(rng.uniform(-3, 40)), b = float(rng.uniform(-3, 40));
    const float lo = std::min(a, b), hi = std::max(a, b);
    const float x = t % 3 == 0 ? lo : t % 3 == 1 ? hi : float(rng.uniform(lo, hi));
    const int c = int(rng.uniform(0, 40)), dim = 40;
    const float m = t % 2 ? 0.0f : 1e-3f;
    ASSERT_LE(boxGap(lo, hi, c, dim, m), rowGap(x, c, dim, m)) << lo << " " << hi << " " << x << " " << c;
    const Vec3 blo{float(rng.uniform(-5, 5)), float(rng.uniform(-5, 5)), float(rng.uniform(-5, 5))};
    const Vec3 bhi{blo.x + float(rng.uniform(0, 3)), blo.y + float(rng.uniform(0, 3)), blo.z + float(rng.uniform(0, 3))};
    const Vec3 in{t % 5 == 0 ? blo.x : float(rng.uniform(blo.x, bhi.x)), t % 7 == 0 ? bhi.y : float(rng.uniform(blo.y, bhi.y)),
                  float(rng.uniform(blo.z, bhi.z))};
    const Vec3 j{float(rng.uniform(-12, 12)), float(rng.uniform(-12, 12)), float(rng.uniform(-12, 12))};
    ASSERT_LE(boxDistance2(j, blo, bhi), distance2(j - in));
    ASSERT_EQ(boxDistance2(in, blo, bhi), 0.0f);
  }
}

TEST(ClusterSearch, EveryNaiveNeighbourIsACandidateOfRandomStates) {
  struct World {
    float halfSize;
    size_t n;
    int dims;
  };
  for (World wd : {World{20.0f, 3000, 3}, World{10.0f, 3000, 3}, World{40.0f, 500, 3}, World{15.0f, 2000, 2},
                   World{3.0f, 400, 3}}) {
    SimParams p = defaultParams();
    p.pipeline = Pipeline::Clusters;
    p.halfSize = wd.halfSize;
    p.dims = wd.dims;
    Bodies b = randomBodies(wd.n, wd.halfSize, 1.0f, 17 + wd.n);
    if (wd.dims == 2)
      for (Vec4& q : b.pos) q.z = 0.0f;
    const Walk w = walkClusters(p, b.pos, "half-size " + std::to_string(wd.halfSize) + " dims " + std::to_string(wd.dims));
    EXPECT_EQ(w.missed, 0);
  }
}

// Bodies on the faces of the cluster grid's cells (x faces at the split width), a hair either side
// of them, and a few beyond the world's faces (the border cells take them).
TEST(ClusterSearch, EveryNaiveNeighbourIsACandidateOnCellAndWorldFaces) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Clusters;
  p.halfSize = 12.0f;
  const int count = 3000;
  const GridSpec g = clusterGrid(p, count);
  ASSERT_GE(rowXSplit(g), 2.0f);
  const float h = p.halfSize;
  Rng rng(5);
  auto onFace = [&](bool alongX) {
    const int c = int(rng.uniform(0, (alongX ? g.dims.x : g.dims.y) + 1));
    float v = g.origin.x + float(c) * (alongX ? g.cellWidth / rowXSplit(g) : g.cellWidth);
    const int nudge = int(rng.uniform(0, 5)) - 2;
    for (int k = 0; k < nudge; ++k) v = std::nextafter(v, 1e9f);
    for (int k = 0; k > nudge; --k) v = std::nextafter(v, -1e9f);
    return v;
  };
  std::vector<Vec4> pos;
  for (int i = 0; i < count; ++i) {
    Vec4 q{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), 1.0f};
    if (i % 4 >= 1) q.x = onFace(true);
    if (i % 4 >= 2) q.y = onFace(false);
    if (i % 4 == 3) q.z = onFace(false);
    if (i % 97 == 0) q.y = h + float(rng.uniform(0, 3));
    if (i % 89 == 0) q.z = -h - float(rng.uniform(0, 3));
    pos.push_back(q);
  }
  EXPECT_EQ(walkClusters(p, pos, "faces").missed, 0);
}

// In the CIS 565 world's density (64 neighbours within the largest radius) the clusters are nearly
// full boxes of about one cell, and a cluster's candidates are a small part of the world and a few
// times the neighbours.
TEST(ClusterSearch, ClustersAreCompactAndTheSearchPrunes) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Clusters;
  p.boids.cohesionRadius = p.boids.alignmentRadius = 5.0f;
  p.boids.separationRadius = 3.0f;
  const double density = 64.0 / (4.0 / 3.0 * 3.14159265 * 125.0);
  const size_t n = 20000;
  p.halfSize = float(0.5 * std::cbrt(double(n) / density));
  const Bodies b = randomBodies(n, p.halfSize, 1.0f, 9);
  const GridSpec g = clusterGrid(p, n);
  EXPECT_NEAR(g.cellWidth, std::cbrt(double(kClusterSize) / density), 0.1);
  const Walk w = walkClusters(p, b.pos, "CIS 565 density");
  EXPECT_EQ(w.missed, 0);
  EXPECT_GT(w.members, 0.85 * kClusterSize);
  // 64 neighbours; the box of a cluster grown by r holds a few hundred bodies.
  EXPECT_GT(w.candidates, 64.0);
  EXPECT_LT(w.candidates, 400.0);
}

TEST(ClusterSearch, GridStaysAddressableAtAnySize) {
  for (double n : {1.0, 1000.0, 1e6, 1e8, 1e9, 2e9}) {
    for (int dims : {2, 3}) {
      SimParams p = defaultParams();
      p.pipeline = Pipeline::Clusters;
      p.dims = dims;
      p.halfSize = dims == 3 ? float(0.5 * std::cbrt(n / 0.1)) : float(0.5 * std::sqrt(n / 0.5));
      const GridSpec g = clusterGrid(p, size_t(n));
      EXPECT_GE(g.numCells, 1u);
      EXPECT_LT(double(g.dims.x) * g.dims.y * g.dims.z, 2147483648.0) << n << " " << dims;
      if (dims == 2) {
        EXPECT_EQ(g.dims.z, 1);
      }
    }
  }
}

// Many steps in a small world (thousands of wraps): at checkpoints the clusters engine's own state
// is stepped once by naive and by clusters; a neighbour missed anywhere shows as a mismatch.
TEST(ClusterSearch, AgreesWithNaiveAcrossManyStepsAndWraps) {
  for (RuleSet rules : {RuleSet::Cis565, RuleSet::Reynolds}) {
    SimParams p = defaultParams();
    p.halfSize = 12.0f;
    p.pipeline = Pipeline::Clusters;
    p.boids.rules = rules;
    const Bodies start = randomBodies(2500, 12.0f, 1.0f, 77);
    CpuEngine clusters(p);
    clusters.reset(start);
    size_t wraps = 0;
    Bodies prev = clusters.readBodies();
    for (int step = 1; step <= 45; ++step) {
      clusters.step(1);
      const Bodies now = clusters.readBodies();
      for (size_t i = 0; i < now.size(); ++i)
        if (std::fabs(now.pos[i].x - prev.pos[i].x) > p.halfSize || std::fabs(now.pos[i].y - prev.pos[i].y) > p.halfSize ||
            std::fabs(now.pos[i].z - prev.pos[i].z) > p.halfSize)
          ++wraps;
      prev = now;
      if (step % 15 == 0) {
        SimParams q = p;
        q.pipeline = Pipeline::Naive;
        CpuEngine a(q), b(p);
        a.reset(now);
        b.reset(now);
        a.step(1);
        b.step(1);
        expectStatesClose(a.readBodies(), b.readBodies(), 1e-5f, 1e-6f,
                          std::string(toString(rules)) + " step " + std::to_string(step));
      }
    }
    EXPECT_GT(wraps, 300u);
  }
}
