// Stages of the `rows` boids pipeline (core/row_search.h): findCellFirst turns the sorted keys
// into one offset per cell, so that a row of cells is one [first, last) range; the force kernel
// walks the pruned rows; the statistics kernel counts what it examines. The grid is labelled,
// sorted and reordered by the shared stages of grid_build.h.
#pragma once

#include <cstdint>

#include "core/grid.h"
#include "core/params.h"
#include "cuda/launch.h"
#include "cuda/module_guard.h"

namespace murmur::cuda {

// findCellFirst. Input d_sortedKeys[0, n), n > 0. Output d_cellFirst[0, numCells]: the first
// sorted slot whose key is >= c (n for c past the last key), so cell c holds
// [d_cellFirst[c], d_cellFirst[c + 1]) and empty cells need no marker.
void launchFindCellFirst(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellFirst,
                         const LaunchConfig& lc);

// accumulateForces, rows. Input d_pos, d_vel in cell order of d_grid, d_cellFirst. Output
// d_velOut[i] = core::boidVelocity of body i (w = 0), in the same order. `batched`: the loop for
// long rows (core::rowBatched); either loop finds the same neighbours and sums in the same order.
void launchBoidsRows(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const core::BoidParams& b, float searchRadius, bool batched,
                     core::Vec4* d_velOut, const LaunchConfig& lc);

// Neighbour statistics over the rows the force kernel visits, reading the (unreordered) bodies
// through d_sortedIndex. Adds candidates (j != i) to d_counts[0], neighbours (d^2 < radius2) to
// d_counts[1].
void launchBoidsStatsRows(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid,
                          const uint32_t* d_cellFirst, const uint32_t* d_sortedIndex, float searchRadius, float radius2,
                          unsigned long long* d_counts, const LaunchConfig& lc);

}  // namespace murmur::cuda
