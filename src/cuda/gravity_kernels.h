// Gravity stages (docs/design.md#gravity, docs/design.md#pipelines): accumulateForces as accelerations (naive all pairs, or the
// particle-cell approximation on a grid) and the integrators' kick/drift kernels.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/hd.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// accumulateForces, naive: all pairs, tiled through shared memory like NVIDIA's nbody sample.
// Input pos[n] (w = mass); output acc[i] = G * sum_j core::gravityPair(targets[i], pos[j], eps2),
// w = 0, for i < numTargets. The targets are pos itself on one GPU, or one rank's bodies against
// the gathered positions of every rank. commonMass > 0 says every source has exactly that mass
// (core::commonMass): the kernel then leaves the mass out of the pair and applies it once.
struct NaiveGravityArgs {
  const core::Vec4* pos = nullptr;
  uint32_t n = 0;
  const core::Vec4* targets = nullptr;
  uint32_t numTargets = 0;
  float eps2 = 0;
  float G = 0;
  float commonMass = 0;
  core::Vec4* acc = nullptr;
};
void launchGravityNaive(const NaiveGravityArgs& args, const LaunchConfig& lc);

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
