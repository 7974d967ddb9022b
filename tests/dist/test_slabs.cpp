// Ownership and halo rules of the slab decomposition, and the load balancer.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

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
  int lo = 0, hi = 0;
  neededRanks(l, 8, lo, hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 3);
}

TEST(Slabs, RankNeedsAgreesWithRanksNeedingForEveryHalo) {
  for (int halo = 1; halo <= 4; ++halo) {
    SlabLayout uneven = evenSlabs(5, 17, halo);
    uneven.start[1] = 1, uneven.start[2] = 2, uneven.start[3] = 4, uneven.start[4] = 12;
    for (const SlabLayout& l : {evenSlabs(1, 5, halo), evenSlabs(3, 9, halo), evenSlabs(4, 40, halo), uneven})
      for (int c = 0; c < l.numPlanes; ++c) {
        int need[kMaxRanks];
        const int k = ranksNeeding(l, c, need);
        EXPECT_EQ(need[0], ownerOfPlane(l, c));
        EXPECT_LE(k, 2 * halo + 1);
        for (int r = 0; r < l.numRanks; ++r) {
          bool listed = false;
          for (int j = 0; j < k; ++j) listed = listed || need[j] == r;
          EXPECT_EQ(rankNeeds(l, r, c), listed) << "halo " << halo << " rank " << r << " plane " << c;
          // rank r needs c exactly when one of its planes lies within the halo of c
          bool near = false;
          for (int q = l.start[r]; q < l.start[r + 1]; ++q) near = near || (q - c <= halo && c - q <= halo);
          EXPECT_EQ(listed, near) << "halo " << halo << " rank " << r << " plane " << c;
        }
      }
  }
  std::vector<uint64_t> hist(30, 5);
  EXPECT_EQ(balancedSlabs(hist, 3, 2).halo, 2);
  EXPECT_EQ(balancedSlabs(std::vector<uint64_t>(30, 0), 3, 2).halo, 2);
  EXPECT_EQ(evenSlabs(3, 30).halo, 1);
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
