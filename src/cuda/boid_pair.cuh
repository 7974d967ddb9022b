// The neighbour test of the grid, rows and verlet kernels for one candidate, for any local rule
// (core/rules/local_rules.h): the same d^2 as the CPU engine's, the rule's sums skipped beyond its
// reach (most candidates are not neighbours, and a warp often jumps over them), and the
// neighbour's velocity loaded only if the rule asks for it (the boids rule: inside the alignment
// radius). One definition, so that the pipelines keep deciding exactly alike. Included only by
// .cu files.
#pragma once

#include "cuda/module_guard.h"

#include "core/physics.h"
#include "core/rules/local_rules.h"
#include "cuda/device_utils.cuh"
#include "cuda/observables.h"

namespace murmur::cuda {

// Adds candidate j (position pj, velocity vel[j]) to body i's sums of local rule Rule; the
// caller skips i itself.
template <typename Rule, typename IndexT>
__device__ __forceinline__ void rulePairAdd(typename Rule::Sum& acc, const core::Vec4& pi, const core::Vec4& pj,
                                            const core::Vec4* vel, IndexT j, const typename Rule::Setup& su) {
  const core::Vec3 d = core::xyz(pj) - core::xyz(pi);
  const float d2 = core::distance2(d);
  if (!(d2 < su.reach2)) return;
  Rule::add(acc, pj, d, d2, [&] { return ldg4(vel + j); }, su);
}

// The same test for sums relative to body i (the rule's RelSum), d = p_j - p_i, d2 =
// distance2(d); j may be i.
template <typename Rule, typename IndexT>
__device__ __forceinline__ void rulePairAddRel(typename Rule::RelSum& acc, const core::Vec3& d, float d2,
                                               const core::Vec4* vel, IndexT j, const typename Rule::Setup& su) {
  if (!(d2 < su.reach2)) return;
  Rule::addRel(acc, d, d2, [&] { return ldg4(vel + j); }, su);
}

// A boid's speed and heading as the boids observables sum them (cuda/observables.h BoidSum): the
// speed in double and the unit velocity where the speed is not 0. DeviceObserver's kernel and a
// sampled rows step form them alike. Three divisions: one reciprocal and three products made the
// sampled rows kernel slower (1M boids, the default world, H100, Nsight Compute), though with
// fewer instructions; so did the speed and heading in float (sqrtf, __frcp_rn), with fewer
// instructions too (measurements: docs/performance.md#the-sampled-rows-step). In both the sampled
// kernel's loop (capped at 64 registers) then loaded the two velocities only after the positions'
// arithmetic, not beside the positions.
__device__ __forceinline__ void setSpeedAndHeading(const core::Vec4& v, double (&sums)[kNumBoidSums]) {
  const double s = sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
  sums[kSpeed] = s;
  if (s > 0) sums[kPolX] = v.x / s, sums[kPolY] = v.y / s, sums[kPolZ] = v.z / s;
}

}  // namespace murmur::cuda
