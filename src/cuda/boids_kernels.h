// Boids stages (docs/design.md#boids): accumulateForces (new velocities from the old state, ping-pong)
// and integrate (positions from the new velocities, wrapped), plus the neighbour statistics.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/hd.h"
#include "core/params.h"
#include "core/random.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// accumulateForces, naive: all pairs tiled through shared memory. Input d_pos, d_vel (old state).
// Output d_velOut[i] = the new velocity of body i under the local rule p selects (w = 0): every
// kernel here is instantiated for each rule of core/rules/local_rules.h. keys: the rule's draws
// (core/random.h), ids in the order of d_pos.
void launchBoidsNaive(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const core::SimParams& p,
                      const core::DrawKeys& keys, core::Vec4* d_velOut, const LaunchConfig& lc);

// accumulateForces, grid: visits the cells core::cellRangeForRadius(searchRadius) reaches.
// coherent: the body arrays are in cell order. Output as for the naive kernel, by body index.
void launchBoidsGrid(bool coherent, const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n,
                     const DeviceGrid& grid, const core::SimParams& p, float searchRadius,
                     const core::DrawKeys& keys, core::Vec4* d_velOut, const LaunchConfig& lc);

// integrate: d_pos[i] = core::boidIntegrate(d_pos[i], d_velNew[i]) in place; under reflecting
// walls d_velNew[i] turned where the body met one.
void launchBoidsIntegrate(core::Vec4* d_pos, core::Vec4* d_velNew, uint32_t n, float dt, float halfSize,
                          core::Boundary boundary, const LaunchConfig& lc);

// Neighbour statistics. Adds to d_counts[0] the candidates examined (j != i) and to d_counts[1]
// the neighbours (squared distance < radius2). The naive variant only counts neighbours (every
// other body is a candidate). The grid variant reads the grid through the sorted index.
void launchBoidsStatsNaive(const core::Vec4* d_pos, uint32_t n, float radius2, unsigned long long* d_counts,
                           const LaunchConfig& lc);
void launchBoidsStatsGrid(const core::Vec4* d_pos, uint32_t n, const DeviceGrid& grid, float searchRadius,
                          float radius2, unsigned long long* d_counts, const LaunchConfig& lc);

}  // namespace murmur::cuda
