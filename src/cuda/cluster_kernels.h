// Kernels of the `clusters` boids pipeline (core/cluster_search.h). One warp per cluster of up to
// core::kClusterSize consecutive bodies of the cluster grid's order: the warp walks the rows its
// box reaches, 32 candidates per load, keeps those near the box in a staging buffer in shared
// memory, and tests them against its bodies in tiles of 8 lanes by 4 candidates (lane = 8 *
// candidate + body; each lane holds bodies ii and ii + 8, so each staged candidate it loads feeds
// two pairs).
#pragma once

#include <cstdint>

#include "core/grid.h"
#include "core/params.h"
#include "core/random.h"
#include "cuda/launch.h"
#include "cuda/module_guard.h"

namespace murmur::cuda {

// A whole step: d_velOut[i] = the new velocity of body i (the local rule p selects, from its relative sums) and
// d_posOut[i] = its position integrated with it (core::boidIntegrate). d_pos and d_vel in cell
// order of d_grid, d_cellFirst its offsets; the outputs are other buffers.
void launchClusterForce(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                        const uint32_t* d_cellFirst, const core::SimParams& p, float halfSize,
                        const core::DrawKeys& keys, core::Vec4* d_velOut, core::Vec4* d_posOut,
                        const LaunchConfig& lc);

// Neighbour statistics of the (unreordered) bodies read through d_sortedIndex: the pairs the tiles
// test (a body with itself not counted) to d_counts[0], those closer than the largest rule radius
// to d_counts[1].
void launchClusterStats(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, const uint32_t* d_cellFirst,
                        const uint32_t* d_sortedIndex, const core::SimParams& p, unsigned long long* d_counts,
                        const LaunchConfig& lc);

}  // namespace murmur::cuda
