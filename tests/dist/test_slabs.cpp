// Ownership and halo rules of the slab decomposition, and the load balancer.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "dist/slabs.h"

namespace murmur::dist {
namespace {

TEST(Slabs, EvenSlabsCoverEveryColumnOnce) {
  for (int ranks = 1; ranks <= 7; ++ranks) {
    const SlabLayout l = evenSlabs(ranks, 40);
    EXPECT_EQ(l.start[0], 0);
    EXPECT_EQ(l.start[ranks], 40);
    for (int r = 0; r < ranks; ++r) EXPECT_GE(l.start[r + 1] - l.start[r], 40 / ranks);
    for (int c = 0; c < 40; ++c) {
      const int o = ownerOfColumn(l, c);
      EXPECT_TRUE(ownsColumn(l, o, c));
      for (int r = 0; r < ranks; ++r)
        if (r != o) {
          EXPECT_FALSE(ownsColumn(l, r, c));
        }
    }
  }
}

TEST(Slabs, TooFewColumnsForTheRanksIsRejected) {
  EXPECT_THROW(evenSlabs(5, 4), std::invalid_argument);
  EXPECT_THROW(evenSlabs(kMaxRanks + 1, 1000), std::invalid_argument);
}

TEST(Slabs, HaloGoesToTheNeighbouringSlabsButNotAcrossTheWrap) {
  const SlabLayout l = evenSlabs(3, 9);  // columns 0-2, 3-5, 6-8
  int need[3];
  ASSERT_EQ(ranksNeeding(l, 4, need), 1);  // inside slab 1
  EXPECT_EQ(need[0], 1);
  ASSERT_EQ(ranksNeeding(l, 3, need), 2);  // first column of slab 1: slab 0 reads it
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  ASSERT_EQ(ranksNeeding(l, 5, need), 2);
  EXPECT_EQ(need[1], 2);
  ASSERT_EQ(ranksNeeding(l, 0, need), 1);  // the world's first column: no halo for the last slab
  EXPECT_EQ(need[0], 0);
  ASSERT_EQ(ranksNeeding(l, 8, need), 1);
  EXPECT_EQ(need[0], 2);
}

TEST(Slabs, OneColumnSlabIsHaloForBothNeighbours) {
  SlabLayout l = evenSlabs(3, 5);
  l.start[1] = 2, l.start[2] = 3;  // slab 1 is column 2 alone
  int need[3];
  ASSERT_EQ(ranksNeeding(l, 2, need), 3);
  EXPECT_EQ(need[0], 1);
  EXPECT_EQ(need[1], 0);
  EXPECT_EQ(need[2], 2);
}

TEST(Slabs, BalancedSlabsFollowTheBodies) {
  // Most bodies in columns 10-13 of 40: a clump.
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
  hist[0] = 1000000;  // everything in the first column
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
