// The neighbour test of the boids grid, rows and verlet kernels for one candidate: the same d^2 as
// core::boidAccumulate's tests, the sums skipped outside every radius (most candidates are not
// neighbours, and a warp often jumps over them), and a neighbour's velocity read only inside the
// alignment radius. One definition, so that the pipelines keep deciding exactly alike. Included
// only by .cu files.
#pragma once

#include "cuda/module_guard.h"

#include "core/physics.h"
#include "cuda/device_utils.cuh"
#include "cuda/observables.h"

namespace murmur::cuda {

// The largest rule radius, squared: a candidate at least this far adds nothing.
__device__ __forceinline__ float boidReach2(const core::BoidRadii2& r2) { return fmaxf(r2.r1, fmaxf(r2.r2, r2.r3)); }

// Adds candidate j (position pj, velocity vel[j]) to body i's sums; the caller skips i itself.
template <typename IndexT>
__device__ __forceinline__ void boidPairAdd(core::BoidAccum& acc, const core::Vec4& pi, const core::Vec4& pj,
                                            const core::Vec4* vel, IndexT j, const core::BoidRadii2& r2,
                                            float reach2) {
  const float d2 = core::distance2(core::xyz(pj) - core::xyz(pi));
  if (!(d2 < reach2)) return;
  core::boidAccumulate(acc, pi, pj, d2 < r2.r3 ? ldg4(vel + j) : core::Vec4{0, 0, 0, 0}, r2);
}

// The same test for sums relative to body i (core::BoidAccumRel), d = p_j - p_i, d2 =
// distance2(d); j may be i.
template <typename IndexT>
__device__ __forceinline__ void boidPairAddRel(core::BoidAccumRel& acc, const core::Vec3& d, float d2,
                                               const core::Vec4* vel, IndexT j, const core::BoidRadii2& r2,
                                               float reach2) {
  if (!(d2 < reach2)) return;
  core::boidAccumulateRel(acc, d, d2, d2 < r2.r3 ? ldg4(vel + j) : core::Vec4{0, 0, 0, 0}, r2);
}
template <typename IndexT>
__device__ __forceinline__ void boidPairAddRel(core::BoidAccumRel& acc, const core::Vec3& d, const core::Vec4* vel,
                                               IndexT j, const core::BoidRadii2& r2, float reach2) {
  boidPairAddRel(acc, d, core::distance2(d), vel, j, r2, reach2);
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
