// Gravity stages (DESIGN.md §2, §3): accumulateForces as accelerations (naive all pairs, or the
// particle-cell approximation on a grid) and the integrators' kick/drift kernels.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/hd.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// accumulateForces, naive: all pairs, tiled through shared memory like NVIDIA's nbody sample.
// Input d_pos (w = mass). Output d_acc[i] = G * sum_j core::gravityPair(p_i, p_j, eps2), w = 0.
void launchGravityNaive(const core::Vec4* d_pos, uint32_t n, float eps2, float G, core::Vec4* d_acc,
                        const LaunchConfig& lc);
// The same for a subset of targets against all n sources: d_acc[i] is the acceleration of
// d_targets[i], i < numTargets (one rank's bodies against the gathered positions of every rank).
void launchGravityNaiveTargets(const core::Vec4* d_pos, uint32_t n, const core::Vec4* d_targets,
                               uint32_t numTargets, float eps2, float G, core::Vec4* d_acc, const LaunchConfig& lc);

// accumulateForces, particle-cell: exact pairs with the bodies of core::nearCells of the body's
// cell, plus the monopole of every other occupied cell (tiled through shared memory).
// Input d_pos, the gravity grid and d_monopole[grid.numCells]. Output d_acc by body index.
void launchGravityGrid(bool coherent, const core::Vec4* d_pos, uint32_t n, const DeviceGrid& grid,
                       const core::Vec4* d_monopole, float eps2, float G, core::Vec4* d_acc,
                       const LaunchConfig& lc);

// integrate, leapfrog first half: core::leapfrogKickDrift per body, in place.
void launchLeapfrogKickDrift(core::Vec4* d_pos, core::Vec4* d_vel, const core::Vec4* d_acc, uint32_t n, float dt,
                             const LaunchConfig& lc);
// integrate, leapfrog second half: core::leapfrogKick with the new accelerations, in place.
void launchLeapfrogKick(core::Vec4* d_vel, const core::Vec4* d_acc, uint32_t n, float dt, const LaunchConfig& lc);
// integrate, damped Euler: core::dampedEuler per body, in place.
void launchDampedEuler(core::Vec4* d_pos, core::Vec4* d_vel, const core::Vec4* d_acc, uint32_t n, float dt,
                       float damping, const LaunchConfig& lc);

}  // namespace murmur::cuda
