// Stages of the `verlet` boids pipeline (core/verlet.h). A build labels, sorts and reorders the
// bodies on the list grid (the shared stages of grid_build.h and rows_kernels.h), then the list
// kernel writes every body's list; each step the force kernel walks the lists with the exact
// tests, and the overflow kernel sums the bodies whose list did not fit by searching the build's
// grid again.
//
// Lists: `capacity` entries per body (a multiple of 4), in quads interleaved per warp of bodies so
// that a lane moves four entries with one 16-byte access and the lanes of a warp touch one
// contiguous 512-byte span: entry t of body i is
// list[(((i / 32) * (capacity / 4) + t / 4) * 32 + i % 32) * 4 + t % 4].
// count[i] is the length of i's list even when it exceeds capacity; such a body is appended to
// `overflow` and its list is not used.
#pragma once

#include <cstdint>

#include "core/grid.h"
#include "core/params.h"
#include "core/random.h"
#include "core/verlet.h"
#include "cuda/launch.h"
#include "cuda/module_guard.h"

namespace murmur::cuda {

struct VerletLists {
  uint32_t* list;           // ceil(n / 32) * 32 * capacity entries
  uint32_t* count;          // n
  uint32_t* overflow;       // n: bodies whose list exceeds capacity, in no particular order
  uint32_t* overflowCount;  // 1
  uint32_t* maxCount;       // 1: the longest list of the build
  unsigned long long* totalCount;  // 1: the entries of all lists of the build
  uint32_t capacity;         // a multiple of kListQuad
};

constexpr uint32_t kListQuad = 4;

// Words of the list buffer for n bodies at `capacity` entries each.
inline size_t verletListWords(size_t n, uint32_t capacity) { return (n + 31) / 32 * 32 * size_t(capacity); }

// The list build. Input d_pos in cell order of d_grid (the list grid), d_cellFirst its offsets.
// Expects *overflowCount, *maxCount and *totalCount 0; writes count, the lists, overflow, maxCount,
// totalCount.
void launchVerletBuild(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid,
                       const uint32_t* d_cellFirst, const core::VerletPlan& plan, float halfSize,
                       const VerletLists& lists, const LaunchConfig& lc);

// d_velOut[i] = the new velocity of body i under the local rule p selects, from its list, for
// every i whose list fits.
void launchVerletForce(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const VerletLists& lists,
                       const core::SimParams& p, const core::DrawKeys& keys, core::Vec4* d_velOut,
                       const LaunchConfig& lc);

// d_velOut[i] for the bodies of the overflow queue, one thread each: the rows of the list grid of
// the last build (d_grid, d_cellFirst) around the body's current position and its images, every
// candidate tested exactly against the current state. A neighbour now was within R of the body or
// one of its images at the build (the skin), so the search finds it.
void launchVerletOverflow(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                          const uint32_t* d_cellFirst, const core::VerletPlan& plan, float halfSize,
                          const VerletLists& lists, const core::SimParams& p, const core::DrawKeys& keys,
                          core::Vec4* d_velOut, const LaunchConfig& lc);

// Neighbour statistics of lists built now on the (unreordered) bodies read through
// d_sortedIndex: list entries to d_counts[0], those with d^2 < radius2 to d_counts[1].
void launchVerletStats(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, const uint32_t* d_cellFirst,
                       const uint32_t* d_sortedIndex, const core::VerletPlan& plan, float halfSize, float radius2,
                       unsigned long long* d_counts, const LaunchConfig& lc);

}  // namespace murmur::cuda
