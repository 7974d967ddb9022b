// The neighbour test of the grid, rows and verlet kernels for one candidate, for any local rule
// (core/rules/local_rules.h): the same d^2 as the CPU engine's, the rule's sums skipped beyond its
// reach (most candidates are not neighbours, and a warp often jumps over them), and the
// neighbour's velocity loaded only if the rule asks for it (the boids rule: inside the alignment
// radius). One definition, so that the pipelines keep deciding exactly alike. Also what the
// periodic boundary adds to them (docs/design.md#the-boundary-rule, core/boundary.h): the choice of
// a kernel's variant, a body's images, and the offset of a candidate from the image it lies near.
// Included only by .cu files.
#pragma once

#include "cuda/module_guard.h"

#include <type_traits>
#include <utility>

#include "core/boundary.h"
#include "core/params.h"
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

// The same for candidate j found near an image c of body i (core::forEachImage, c != p_i): the
// offset measured from c, and j's position as seen from i (core::imageOf) in the rule's absolute
// sums, as the CPU engine's core::localRuleLoop adds it.
template <typename Rule, typename IndexT>
__device__ __forceinline__ void rulePairAddImage(typename Rule::Sum& acc, const core::Vec4& pi, const core::Vec3& c,
                                                 const core::Vec4& pj, const core::Vec4* vel, IndexT j,
                                                 const typename Rule::Setup& su) {
  const core::Vec3 d = core::xyz(pj) - c;
  const float d2 = core::distance2(d);
  if (!(d2 < su.reach2)) return;
  Rule::add(acc, core::imageOf(pi, d, pj), d, d2, [&] { return ldg4(vel + j); }, su);
}

// Lane (lane ^ off)'s partial sums of a rule added to this lane's (Rule::combine), the sums moved
// word by word through the shuffle: any rule's RelSum of 32-bit fields. Every lane of `mask` calls
// it, and lane ^ off is one of them.
template <typename Rule>
__device__ __forceinline__ void shuffleCombine(typename Rule::RelSum& a, int off, unsigned mask = kFullWarpMask) {
  using Sum = typename Rule::RelSum;
  static_assert(sizeof(Sum) % sizeof(uint32_t) == 0, "a rule's sums are 32-bit words");
  constexpr int kWords = sizeof(Sum) / sizeof(uint32_t);
  uint32_t w[kWords];
  memcpy(w, &a, sizeof(Sum));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_xor_sync(mask, w[k], off);
  Sum other;
  memcpy(&other, w, sizeof(Sum));
  a = Rule::combine(a, other);
}

// Calls f(std::bool_constant<b>): a launcher picks a kernel's compile-time variant.
template <typename F>
void withBool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// Calls f(std::bool_constant<periodic>) for boundary b: a boids launcher instantiates a kernel's
// periodic variant, which also searches around a body's images, only where the parameters ask for
// it, so that the wrap boundary's kernels stay as they were, with no test of the boundary inside.
template <typename F>
void withBoundary(core::Boundary b, F&& f) {
  withBool(b == core::Boundary::Periodic, std::forward<F>(f));
}

// Calls f(c) for each image c of p that core::forEachImage visits after p itself (periodic), in its
// order and bit for bit its centres (p + core::imageShift along the axes shifted): the centres a
// search visits beyond the body's own. One loop over the nonzero subsets of the axes near a face
// (bit a: axis a, x the lowest), in increasing order as forEachImage's loops take them, the
// shifts formed again per image: across the search inside, the loop keeps two words live.
// nearFaces: the axes along which p has an image (bit a: axis a, x the lowest); 0 when its search
// stays inside the box and forEachOtherImage visits nothing.
__device__ __forceinline__ unsigned nearFaces(const core::Vec3& p, float radius, float halfSize) {
  return (core::imageShift(p.x, radius, halfSize) != 0.0f ? 1u : 0u) |
         (core::imageShift(p.y, radius, halfSize) != 0.0f ? 2u : 0u) |
         (core::imageShift(p.z, radius, halfSize) != 0.0f ? 4u : 0u);
}
template <typename F>
__device__ __forceinline__ void forEachOtherImage(const core::Vec3& p, float radius, float halfSize, F&& f) {
  const unsigned near = nearFaces(p, radius, halfSize);
  for (unsigned s = (0u - near) & near; s != 0; s = (s - near) & near)
    f(core::Vec3{(s & 1u) ? p.x + core::imageShift(p.x, radius, halfSize) : p.x,
                 (s & 2u) ? p.y + core::imageShift(p.y, radius, halfSize) : p.y,
                 (s & 4u) ? p.z + core::imageShift(p.z, radius, halfSize) : p.z});
}

// A body's search centres under the periodic boundary, axis by axis: p itself, and q, the
// coordinate of its image along each axis where it has one (p + core::imageShift, the sum
// core::forEachImage forms) and p's own where it has none. core::forEachImage's centres are the
// combinations of the two per axis.
struct ImageAxes {
  core::Vec3 p, q;
};
__device__ __forceinline__ ImageAxes imageAxes(const core::Vec3& p, float radius, float halfSize) {
  const float sx = core::imageShift(p.x, radius, halfSize), sy = core::imageShift(p.y, radius, halfSize),
              sz = core::imageShift(p.z, radius, halfSize);
  return ImageAxes{p, core::Vec3{sx != 0.0f ? p.x + sx : p.x, sy != 0.0f ? p.y + sy : p.y, sz != 0.0f ? p.z + sz : p.z}};
}

// The offset of pj from the centre of `a` it lies nearest, axis by axis, bit for bit the offset
// pj - c that a search around that centre c forms; `image` says whether c is an image (not p).
// The world is more than twice the reach wide (core::periodicFits), so a candidate lies within the
// reach of one centre at most, and on every axis that centre's coordinate is the nearer of the
// two (the other is a world's width further): a pair the rule accepts here is the pair a search
// of every centre accepts, at the same offset, and a pair no centre accepts is refused here too.
// The all-pairs and list kernels test each candidate once this way instead of once per centre.
__device__ __forceinline__ core::Vec3 nearestImageOffset(const core::Vec3& pj, const ImageAxes& a, bool& image) {
  const float x0 = pj.x - a.p.x, x1 = pj.x - a.q.x;
  const float y0 = pj.y - a.p.y, y1 = pj.y - a.q.y;
  const float z0 = pj.z - a.p.z, z1 = pj.z - a.q.z;
  const bool bx = fabsf(x1) < fabsf(x0), by = fabsf(y1) < fabsf(y0), bz = fabsf(z1) < fabsf(z0);
  image = bx || by || bz;
  return core::Vec3{bx ? x1 : x0, by ? y1 : y0, bz ? z1 : z0};
}

// Candidate j of body i under the periodic boundary, measured from the centre of `a` it lies
// nearest (nearestImageOffset), added to i's absolute sums as core::localRuleLoop adds it there:
// p_j from i's own centre, core::imageOf from an image.
template <typename Rule, typename IndexT>
__device__ __forceinline__ void rulePairAddNearest(typename Rule::Sum& acc, const core::Vec4& pi, const ImageAxes& a,
                                                   const core::Vec4& pj, const core::Vec4* vel, IndexT j,
                                                   const typename Rule::Setup& su) {
  bool image = false;
  const core::Vec3 d = nearestImageOffset(core::xyz(pj), a, image);
  const float d2 = core::distance2(d);
  if (!(d2 < su.reach2)) return;
  Rule::add(acc, image ? core::imageOf(pi, d, pj) : pj, d, d2, [&] { return ldg4(vel + j); }, su);
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
