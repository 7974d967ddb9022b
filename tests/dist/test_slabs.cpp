// Ownership and halo rules of the slab decomposition (the halo across the z faces under the
// periodic boundary too), and the load balancer.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/boundary.h"
#include "core/pipeline_table.h"
#include "core/row_search.h"
#include "dist/slabs.h"

namespace murmur::dist {
namespace {

TEST(Slabs, EvenSlabsCoverEveryPlaneOnce) {
  for (int ranks = 1; ranks <= 7; ++ranks) {
    const SlabLayout l = evenSlabs(ranks, 40);
    EXPECT_EQ(l.start[0], 0);
    EXPECT_EQ(l.start[ranks], 40);
    for (int r = 0; r < ranks; ++r) EXPECT_GE(l.start[r + 1] - l.start[r], 40 / ranks);
    for (int c = 0; c < 40; ++c) {
      const int o = ownerOfPlane(l, c);
      EXPECT_TRUE(ownsPlane(l, o, c));
      for (int r = 0; r < ranks; ++r)
        if (r != o) {
          EXPECT_FALSE(ownsPlane(l, r, c));
        }
    }
  }
}

TEST(Slabs, TooFewPlanesForTheRanksIsRejected) {
  EXPECT_THROW(evenSlabs(5, 4), std::invalid_argument);
  EXPECT_THROW(evenSlabs(kMaxRanks + 1, 1000), std::invalid_argument);
}

TEST(Slabs, HaloGoesToTheNeighbouringSlabsButNotAcrossTheWrap) {
  const SlabLayout l = evenSlabs(3, 9);  // planes 0-2, 3-5, 6-8
  int need[3];
  ASSERT_EQ(ranksNeeding(l, 4, need), 1);  // inside slab 1
  EXPECT_EQ(need[0], 1);
  ASSERT_EQ(ranksNeeding(l, 3, need), 2);  // first plane of slab 1: slab 0 reads it
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  ASSERT_EQ(ranksNeeding(l, 5, need), 2);
  EXPECT_EQ(need[1], 2);
  ASSERT_EQ(ranksNeeding(l, 0, need), 1);  // the world's first plane: no halo for the last slab
  EXPECT_EQ(need[0], 0);
  ASSERT_EQ(ranksNeeding(l, 8, need), 1);
  EXPECT_EQ(need[0], 2);
}

TEST(Slabs, OnePlaneSlabIsHaloForBothNeighbours) {
  SlabLayout l = evenSlabs(3, 5);
  l.start[1] = 2, l.start[2] = 3;  // slab 1 is plane 2 alone
  int need[3];
  ASSERT_EQ(ranksNeeding(l, 2, need), 3);
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  EXPECT_EQ(need[2], 2);
}

TEST(Slabs, RankNeedsAgreesWithRanksNeeding) {
  SlabLayout uneven = evenSlabs(4, 13);
  uneven.start[1] = 1, uneven.start[2] = 2, uneven.start[3] = 9;  // one-plane slabs next to each other
  for (const SlabLayout& l : {evenSlabs(1, 5), evenSlabs(2, 9), evenSlabs(3, 9), uneven})
    for (int c = 0; c < l.numPlanes; ++c) {
      int need[3];
      const int k = ranksNeeding(l, c, need);
      for (int r = 0; r < l.numRanks; ++r) {
        bool listed = false;
        for (int j = 0; j < k; ++j) listed = listed || need[j] == r;
        EXPECT_EQ(rankNeeds(l, r, c), listed) << "rank " << r << " plane " << c << " of " << l.numPlanes;
      }
    }
}

// The rows grid's halo is several planes (core::rowReachPlanes), and a slab may be thinner than
// it: a body is then needed by every rank owning a plane within the halo of it, owner first.
TEST(Slabs, AHaloOfSeveralPlanesReachesPastThinSlabs) {
  const SlabLayout two = evenSlabs(2, 20, 3);  // planes 0-9, 10-19
  EXPECT_EQ(two.halo, 3);
  int need[kMaxRanks];
  ASSERT_EQ(ranksNeeding(two, 6, need), 1);  // planes 3-9: slab 0 alone
  EXPECT_EQ(need[0], 0);
  ASSERT_EQ(ranksNeeding(two, 7, need), 2);  // planes 4-10: slab 1 reads it
  EXPECT_EQ(need[0], 0);
  EXPECT_EQ(need[1], 1);
  ASSERT_EQ(ranksNeeding(two, 12, need), 2);
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  ASSERT_EQ(ranksNeeding(two, 0, need), 1);  // no halo across the wrap
  ASSERT_EQ(ranksNeeding(two, 19, need), 1);
  SlabLayout l = evenSlabs(5, 20, 3);  // planes 0-3, 4-7, 8-11, 12-15, 16-19
  l.start[2] = 9, l.start[3] = 10;  // slab 2 is plane 9 alone
  ASSERT_EQ(ranksNeeding(l, 9, need), 3);  // planes 6-12: ranks 1, 2, 3
  EXPECT_EQ(need[0], 2);
  EXPECT_EQ(need[1], 1);
  EXPECT_EQ(need[2], 3);
  l.start[1] = 8;  // slab 1 is planes 8-8
  ASSERT_EQ(ranksNeeding(l, 8, need), 4);  // planes 5-11: ranks 0, 1, 2, 3
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  EXPECT_EQ(need[2], 2);
  EXPECT_EQ(need[3], 3);
  EXPECT_EQ(maxRanksNeeding(l), 5);  // 2 halo + 1 = 7 planes, but 5 ranks
  EXPECT_FALSE(neededOnlyBy(l, 1, 8));
  EXPECT_TRUE(neededOnlyBy(l, 4, 19));
  EXPECT_FALSE(neededOnlyBy(l, 3, 19));  // not its plane
}

// Under either boundary (wrapHalo 0: none across the z faces; otherwise the periodic halo, one or
// two planes more than the halo, or less), every rank listed once, owner first.
TEST(Slabs, RankNeedsAgreesWithRanksNeedingForEveryHalo) {
  for (int halo = 1; halo <= 4; ++halo)
    for (int wrapHalo : {0, halo - 1, halo + 1, halo + 2}) {
      if (wrapHalo == 0 && halo > 1) continue;  // the wrap boundary: once is enough
      SlabLayout uneven = evenSlabs(5, 17, halo, wrapHalo);
      uneven.start[1] = 1, uneven.start[2] = 2, uneven.start[3] = 4, uneven.start[4] = 12;
      SlabLayout thinAtTheTop = evenSlabs(4, 12, halo, wrapHalo);
      thinAtTheTop.start[1] = 7, thinAtTheTop.start[2] = 10, thinAtTheTop.start[3] = 11;
      for (const SlabLayout& l : {evenSlabs(1, 5, halo, wrapHalo), evenSlabs(2, 4, halo, wrapHalo),
                                  evenSlabs(3, 9, halo, wrapHalo), evenSlabs(4, 40, halo, wrapHalo), uneven,
                                  thinAtTheTop})
        for (int c = 0; c < l.numPlanes; ++c) {
          int need[kMaxRanks];
          const int k = ranksNeeding(l, c, need);
          EXPECT_EQ(need[0], ownerOfPlane(l, c));
          EXPECT_LE(k, maxRanksNeeding(l));
          EXPECT_LE(maxRanksNeeding(l), l.numRanks);
          if (wrapHalo == 0) {
            EXPECT_LE(k, 2 * halo + 1);
          }
          EXPECT_EQ(neededOnlyBy(l, need[0], c), k == 1);
          for (int r = 0; r < l.numRanks; ++r) {
            int times = 0;
            for (int j = 0; j < k; ++j) times += need[j] == r;
            EXPECT_LE(times, 1) << "rank " << r << " listed twice for plane " << c;
            const bool listed = times > 0;
            const std::string at = "halo " + std::to_string(halo) + " across " + std::to_string(wrapHalo) +
                                   " of " + std::to_string(l.numPlanes) + " planes, rank " + std::to_string(r) +
                                   " plane " + std::to_string(c);
            EXPECT_EQ(rankNeeds(l, r, c), listed) << at;
            // rank r needs c exactly when one of its planes lies within the halo of c, inside the
            // world or (periodic) through a z face: q below c reaches up through the top face and
            // on from plane 0 to c in q + planes - c, and c below q the same way.
            bool near = false;
            for (int q = l.start[r]; q < l.start[r + 1]; ++q) {
              const int inside = q > c ? q - c : c - q, across = (q < c ? q : c) + l.numPlanes - (q < c ? c : q);
              near = near || inside <= halo || (wrapHalo > 0 && across <= wrapHalo);
              EXPECT_EQ(planesReach(l, q, c), inside <= halo || (wrapHalo > 0 && across <= wrapHalo)) << at;
              EXPECT_EQ(planesReach(l, q, c), planesReach(l, c, q)) << at;
            }
            EXPECT_EQ(listed, near) << at;
          }
        }
    }
  std::vector<uint64_t> hist(30, 5);
  EXPECT_EQ(balancedSlabs(hist, 3, 2).halo, 2);
  EXPECT_EQ(balancedSlabs(std::vector<uint64_t>(30, 0), 3, 2).halo, 2);
  EXPECT_EQ(evenSlabs(3, 30).halo, 1);
}

// Under the periodic boundary the halo wraps: the first slab reads the last planes and the last
// slab the first ones, within wrapHalo across the z face.
TEST(Slabs, APeriodicHaloWrapsAroundTheFaces) {
  const SlabLayout l = evenSlabs(3, 9, 1, 2);  // planes 0-2, 3-5, 6-8
  int need[kMaxRanks];
  ASSERT_EQ(ranksNeeding(l, 0, need), 2);  // slab 2 reads it across the face: 8 -> 0 is 1 plane
  EXPECT_EQ(need[0], 0);
  EXPECT_EQ(need[1], 2);
  ASSERT_EQ(ranksNeeding(l, 1, need), 2);  // 8 -> 1: 2 planes
  EXPECT_EQ(need[1], 2);
  ASSERT_EQ(ranksNeeding(l, 2, need), 2);  // 8 -> 2 is 3 planes: only slab 1, inside the world
  EXPECT_EQ(need[1], 1);
  ASSERT_EQ(ranksNeeding(l, 7, need), 2);  // 7 -> 0: 2 planes
  EXPECT_EQ(need[0], 2);
  EXPECT_EQ(need[1], 0);
  ASSERT_EQ(ranksNeeding(l, 6, need), 2);  // 6 -> 0 is 3 planes: only slab 1
  EXPECT_EQ(need[1], 1);
  ASSERT_EQ(ranksNeeding(l, 4, need), 1);  // the middle of the middle slab: nobody else
  EXPECT_TRUE(neededOnlyBy(l, 1, 4));
  EXPECT_FALSE(neededOnlyBy(l, 0, 0));
  // The same slabs under the wrap boundary: nothing crosses the faces.
  const SlabLayout walled = evenSlabs(3, 9, 1, 0);
  ASSERT_EQ(ranksNeeding(walled, 0, need), 1);
  ASSERT_EQ(ranksNeeding(walled, 7, need), 1);
  EXPECT_TRUE(neededOnlyBy(walled, 0, 0));
}

// Two ranks: each reads the other on both sides, inside the world and across the face, and a plane
// it reads both ways is sent once. One rank reads nothing: its own slab is its neighbour across
// the face.
TEST(Slabs, APeriodicHaloOfFewRanksListsEachRankOnce) {
  const SlabLayout two = evenSlabs(2, 4, 1, 2);  // planes 0-1, 2-3
  int need[kMaxRanks];
  for (int c = 0; c < 4; ++c) {
    ASSERT_EQ(ranksNeeding(two, c, need), 2) << c;
    EXPECT_EQ(need[1], 1 - need[0]) << c;
  }
  EXPECT_TRUE(rankNeeds(two, 1, 1));  // inside the world (plane 2 is next) and across (3 -> 1 is 2)
  EXPECT_TRUE(rankNeeds(two, 0, 3));
  const SlabLayout one = evenSlabs(1, 5, 3, 4);
  for (int c = 0; c < 5; ++c) {
    ASSERT_EQ(ranksNeeding(one, c, need), 1);
    EXPECT_TRUE(neededOnlyBy(one, 0, c));
  }
  EXPECT_EQ(maxRanksNeeding(one), 1);
}

// Slabs thinner than the halo across the face: a plane near it goes to ranks beyond the
// neighbours on both sides.
TEST(Slabs, APeriodicHaloReachesPastThinSlabsAcrossTheFace) {
  const SlabLayout l = evenSlabs(6, 12, 2, 3);  // two planes each: 0-1, 2-3, ..., 10-11
  EXPECT_EQ(maxRanksNeeding(l), 6);
  int need[kMaxRanks];
  // Plane 0: planes 0-2 inside (ranks 0, 1), 9-11 across (12 - 9 = 3: ranks 4, 5).
  ASSERT_EQ(ranksNeeding(l, 0, need), 4);
  EXPECT_EQ(need[0], 0);
  EXPECT_EQ(need[1], 1);
  EXPECT_EQ(need[2], 4);
  EXPECT_EQ(need[3], 5);
  // Plane 11: planes 9-11 inside (ranks 4, 5), 0-2 across (2 + 12 - 11 = 3: ranks 0, 1).
  ASSERT_EQ(ranksNeeding(l, 11, need), 4);
  EXPECT_EQ(need[0], 5);
  EXPECT_EQ(need[1], 0);
  EXPECT_EQ(need[2], 1);
  EXPECT_EQ(need[3], 4);
  // Plane 3: inside only (1-5: ranks 0, 1, 2); across, 3 + 12 - 11 = 4 is too far.
  ASSERT_EQ(ranksNeeding(l, 3, need), 3);
  EXPECT_EQ(need[0], 1);
}

// The halo across the z face is the halo and one plane more (the grid's last plane runs past the
// top face), one more still when the world ends just inside the last plane; none under the wrap
// boundary.
TEST(Slabs, TheHaloAcrossTheFaceIsThePeriodicBoundarysOnly) {
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Coherent;
  p.halfSize = 20.0f;  // 8 planes of 5: the grid ends at the face
  const core::GridSpec fits = rankGrid(p, 1000);
  ASSERT_EQ(fits.dims.z, 8);
  EXPECT_EQ(rankHaloPlanes(p, fits), 1);
  EXPECT_EQ(rankWrapHaloPlanes(p, fits), 0);
  p.boundary = core::Boundary::Periodic;
  EXPECT_EQ(rankWrapHaloPlanes(p, fits), 2);
  p.halfSize = 21.0f;  // 8.4 planes: 9
  EXPECT_EQ(rankWrapHaloPlanes(p, rankGrid(p, 1000)), 2);
  p.halfSize = 20.01f;  // 8.004 planes: the last one holds 0.004 of a cell of the world
  const core::GridSpec sliver = rankGrid(p, 1000);
  ASSERT_EQ(sliver.dims.z, 9);
  EXPECT_EQ(rankWrapHaloPlanes(p, sliver), 3);
  p.pipeline = core::Pipeline::Rows;
  p.halfSize = 19.0f;
  const core::GridSpec rows = rankGrid(p, 6000);  // the halo of 3 planes of the rows test
  ASSERT_EQ(rankHaloPlanes(p, rows), 3);
  EXPECT_EQ(rankWrapHaloPlanes(p, rows), 4);
}

// What the halo across the face rests on: every plane that a search around a body or any of its
// images (core::forEachImage) visits, in the coherent grid's cells or the rows grid's rows,
// reaches the body's own plane (planesReach) with the halos the slabs use. Bodies densely along z
// at both faces, on the planes' borders and just inside them, in worlds whose grid ends at the
// face, past it, and just past it, on both grids of both cell widths. Without the plane more
// across the face some search would leave the halo.
TEST(Slabs, EverySearchAcrossTheFaceStaysInsideTheHalo) {
  bool extraPlaneUsed = false;
  for (core::Pipeline pipe : {core::Pipeline::Coherent, core::Pipeline::Rows})
    for (int factor : {1, 2})
      for (float halfSize : {20.0f, 21.0f, 20.01f, 19.0f, 23.3f, 37.5f}) {
        core::SimParams p = core::defaultParams();
        p.pipeline = pipe;
        p.cellWidthFactor = factor;
        p.halfSize = halfSize;
        p.boundary = core::Boundary::Periodic;
        for (size_t n : {size_t(1000), size_t(40000)}) {
          const core::GridSpec g = rankGrid(p, n);
          const float radius = core::searchRadius(p);
          const SlabLayout l = evenSlabs(1, g.dims.z, rankHaloPlanes(p, g), rankWrapHaloPlanes(p, g));
          SlabLayout tight = l;
          tight.wrapHalo = l.halo;
          const bool rows = core::pipelineInfo(pipe).rowGrid;
          const std::string what = std::string(core::toString(pipe)) + " cell width " + std::to_string(factor) +
                                   " half-size " + std::to_string(halfSize) + " n " + std::to_string(n);
          std::vector<float> zs;
          const float h = p.halfSize, w = g.cellWidth;
          for (int k = 0; k <= 400; ++k) {
            const float t = float(k) / 400.0f * (radius + w);
            zs.push_back(-h + t);
            zs.push_back(std::nextafter(h, 0.0f) - t);
          }
          for (int c = 0; c <= g.dims.z; ++c) {
            const float border = g.origin.z + float(c) * w;
            for (float z : {std::nextafter(border, -1e9f), border, std::nextafter(border, 1e9f)})
              if (z >= -h && z < h) zs.push_back(z);
          }
          zs.push_back(-h);
          zs.push_back(std::nextafter(-h, 0.0f));
          for (float z : zs) {
            const int own = planeOf(g, z);
            core::forEachImage(core::Vec3{0.0f, 0.0f, z}, radius, h, true, [&](const core::Vec3& c) {
              int lo = 0, hi = 0;
              if (rows) {
                const core::RowSphere s = core::rowSphere(g, c, radius);
                lo = s.zlo, hi = s.zlo + s.nz - 1;
              } else {
                const core::CellRange cr = core::cellRangeForRadius(g, c, radius);
                lo = cr.lo.z, hi = cr.hi.z;
              }
              for (int q = lo; q <= hi; ++q) {
                EXPECT_TRUE(planesReach(l, own, q)) << what << ": z " << z << " (plane " << own << ") reads plane "
                                                    << q << " of " << g.dims.z << " from " << c.z;
                extraPlaneUsed = extraPlaneUsed || !planesReach(tight, own, q);
              }
            });
          }
        }
      }
  EXPECT_TRUE(extraPlaneUsed) << "some search should read the plane more across the face";
}

TEST(Slabs, ASlabIsOneRunOfCellKeys) {
  // Planes are z layers and the key runs z slowest: the keys of planes [a, b) are one range.
  const core::GridSpec g = core::makeGrid(core::Vec3{-10, -10, -10}, 2.0f, core::Int3{10, 10, 10});
  for (int z = 0; z < 10; ++z)
    for (int y = 0; y < 10; y += 3)
      for (int x = 0; x < 10; x += 3) {
        const uint32_t key = core::cellKey(g, x, y, z);
        EXPECT_EQ(planeOfKey(g, key), z);
        EXPECT_GE(key, firstKeyOfPlane(g, z));
        EXPECT_LT(key, firstKeyOfPlane(g, z + 1));
      }
  EXPECT_EQ(firstKeyOfPlane(g, 10), g.numCells);
  EXPECT_EQ(planeOf(g, -10.0f), 0);
  EXPECT_EQ(planeOf(g, 9.99f), 9);
}

TEST(Slabs, BalancedSlabsFollowTheBodies) {
  // Most bodies in planes 10-13 of 40: a clump.
  std::vector<uint64_t> hist(40, 10);
  for (int c = 10; c < 14; ++c) hist[static_cast<size_t>(c)] = 1000;
  const SlabLayout even = evenSlabs(4, 40);
  const SlabLayout bal = balancedSlabs(hist, 4);
  EXPECT_GT(imbalance(even, hist), 2.5);
  EXPECT_LT(imbalance(bal, hist), imbalance(even, hist));
  EXPECT_LT(imbalance(bal, hist), 1.3);
  for (int r = 0; r < 4; ++r) EXPECT_GE(bal.start[r + 1] - bal.start[r], 1);
  EXPECT_EQ(bal.start[4], 40);
}

TEST(Slabs, BalancedSlabsKeepEverySlabNonEmpty) {
  std::vector<uint64_t> hist(6, 0);
  hist[0] = 1000000;  // everything in the first plane
  const SlabLayout l = balancedSlabs(hist, 4);
  for (int r = 0; r < 4; ++r) EXPECT_GE(l.start[r + 1] - l.start[r], 1) << r;
  EXPECT_EQ(l.start[4], 6);
  // An empty world falls back to even slabs.
  const SlabLayout e = balancedSlabs(std::vector<uint64_t>(8, 0), 2);
  EXPECT_EQ(e.start[1], 4);
}

TEST(Slabs, GravityIdRangesPartitionTheBodies) {
  for (int ranks = 1; ranks <= 5; ++ranks) {
    EXPECT_EQ(firstIdOfRank(1001, ranks, 0), 0u);
    EXPECT_EQ(firstIdOfRank(1001, ranks, ranks), 1001u);
    for (int r = 0; r < ranks; ++r) EXPECT_LE(firstIdOfRank(1001, ranks, r), firstIdOfRank(1001, ranks, r + 1));
  }
}

}  // namespace
}  // namespace murmur::dist
