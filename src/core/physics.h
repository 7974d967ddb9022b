// Per-body arithmetic shared by the CPU engine and the CUDA kernels: the exact neighbour test,
// the boundary, the gravity pair and the gravity integrators. The local rules themselves (boids:
// what a neighbour adds, the new velocity) are units of their own under core/rules/, which every
// pipeline takes as a compile-time parameter (docs/design.md#rules-and-how-to-add-a-rule).
#pragma once

#include "core/hd.h"
#include "core/params.h"

namespace murmur::core {

// Squared length for the neighbour tests, d^2 < r^2: three products and two sums, each rounded,
// in the host's order (see mulRn), so that every engine finds the same neighbours.
MURMUR_HD float distance2(Vec3 d) {
  return addRn(addRn(mulRn(d.x, d.x), mulRn(d.y, d.y)), mulRn(d.z, d.z));
}
// The same for an offset in the plane, d = (dx, dy, 0): distance2's bits, since the sum of two
// squares is never -0 and adding the z term (+0) leaves it as it is.
MURMUR_HD float distance2Plane(float dx, float dy) { return addRn(mulRn(dx, dx), mulRn(dy, dy)); }

// Wrap boundary: a coordinate leaving [-h, h) re-enters at the opposite face.
MURMUR_HD float wrapCoord(float x, float h) {
  if (x >= h || x < -h) {
    const float w = 2.0f * h;
    x -= mulRn(w, floorf((x + h) / w));
    if (x >= h) x -= w;  // rounding can land exactly on +h
    if (x < -h) x = -h;
  }
  return x;
}

// The largest float below h (h > 0): the last coordinate inside the half-open world [-h, h).
MURMUR_HD float floatBelow(float h) {
#if defined(__CUDA_ARCH__)
  return nextafterf(h, 0.0f);
#else
  return std::nextafter(h, 0.0f);
#endif
}

// Reflecting walls (Boundary::Reflect): a coordinate that leaves [-h, h) through a face is mirrored
// back in at that face (x -> 2h - x, or -2h - x at the low one) and v, the velocity along that axis,
// turns to point inward. Rounded like the host; a mirror image on h itself moves to the float just
// below it (the world is [-h, h)), and a move of more than a world's width stops at the far face.
MURMUR_HD float reflectCoord(float x, float& v, float h) {
  if (x >= h) {
    x = addRn(h, -addRn(x, -h));
    if (x >= h) x = floatBelow(h);
    if (x < -h) x = -h;
    v = -fabsf(v);
  } else if (x < -h) {
    x = addRn(-h, addRn(-h, -x));
    if (x >= h) x = floatBelow(h);
    v = fabsf(v);
  }
  return x;
}

// Semi-implicit step: p' = wrap(p + v' dt). Keeps w (mass). Rounded like the host: whether a
// body wraps, and which cell it lands in, must not depend on the engine.
MURMUR_HD Vec4 boidIntegrate(const Vec4& p, const Vec3& vNew, float dt, float halfSize) {
  return Vec4{wrapCoord(addRn(p.x, mulRn(vNew.x, dt)), halfSize), wrapCoord(addRn(p.y, mulRn(vNew.y, dt)), halfSize),
              wrapCoord(addRn(p.z, mulRn(vNew.z, dt)), halfSize), p.w};
}

// The step under boundary b: wrap (boidIntegrate) for Wrap and Periodic; under Reflect the same
// p + v' dt with each coordinate mirrored back in at a face it crossed (reflectCoord), and vNew
// (in and out) turned there. The caller stores vNew after this.
MURMUR_HD Vec4 boidIntegrate(const Vec4& p, Vec3& vNew, float dt, float halfSize, Boundary b) {
  if (b != Boundary::Reflect) return boidIntegrate(p, static_cast<const Vec3&>(vNew), dt, halfSize);
  const float x = reflectCoord(addRn(p.x, mulRn(vNew.x, dt)), vNew.x, halfSize);
  const float y = reflectCoord(addRn(p.y, mulRn(vNew.y, dt)), vNew.y, halfSize);
  const float z = reflectCoord(addRn(p.z, mulRn(vNew.z, dt)), vNew.z, halfSize);
  return Vec4{x, y, z, p.w};
}

// ---------------------------------------------------------------------------------------------
// Gravity (softened Newtonian). Returns m_j (p_j - p_i) / (|r|^2 + eps^2)^(3/2), without G:
// the sum is scaled by G once per body. 20 flops by NVIDIA's counting convention.
// |r|^2 + eps^2 summed from eps^2 upwards: under FMA contraction (the gravity kernels) this is
// three FMAs with the softening as the first addend, one instruction fewer than dot(r, r) + eps2.
MURMUR_HD float softenedDist2(const Vec3& r, float eps2) { return r.x * r.x + (r.y * r.y + (r.z * r.z + eps2)); }

MURMUR_HD Vec3 gravityPair(const Vec4& pi, const Vec4& pj, float eps2) {
  const Vec3 r = xyz(pj) - xyz(pi);
  const float d2 = softenedDist2(r, eps2);
  const float inv = rsqrtHD(d2);
  const float s = pj.w * inv * inv * inv;
  return r * s;
}

// Leapfrog (kick-drift-kick), first half: v += a dt/2, p += v dt. `acc` is a(p) from the last step.
MURMUR_HD void leapfrogKickDrift(Vec4& p, Vec4& v, const Vec4& acc, float dt) {
  const float h = 0.5f * dt;
  v.x += acc.x * h;
  v.y += acc.y * h;
  v.z += acc.z * h;
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
}

// Leapfrog second half: v += a(p') dt/2 with the new acceleration.
MURMUR_HD void leapfrogKick(Vec4& v, const Vec4& acc, float dt) {
  const float h = 0.5f * dt;
  v.x += acc.x * h;
  v.y += acc.y * h;
  v.z += acc.z * h;
}

// The seeds' damped semi-implicit Euler: v = damping (v + a dt); p += v dt.
MURMUR_HD void dampedEuler(Vec4& p, Vec4& v, const Vec4& acc, float dt, float damping) {
  v.x = damping * (v.x + acc.x * dt);
  v.y = damping * (v.y + acc.y * dt);
  v.z = damping * (v.z + acc.z * dt);
  p.x += v.x * dt;
  p.y += v.y * dt;
  p.z += v.z * dt;
}

}  // namespace murmur::core
