// Per-body rules shared by the CPU engine and the CUDA kernels. Every executor (naive, grid,
// CPU, GPU) feeds neighbours into the same accumulator and finishes with the same function, so
// pipelines differ only in which candidates they visit and in summation order; the GPU rows
// kernels sum offsets from the boid instead (BoidAccumRel), the same neighbours and the same
// rules, rounded differently.
#pragma once

#include "core/hd.h"
#include "core/params.h"

namespace murmur::core {

// ---------------------------------------------------------------------------------------------
// Boids (docs/design.md#boids). Squared radii are precomputed once per step.
struct BoidRadii2 {
  float r1, r2, r3;
};

MURMUR_HD BoidRadii2 boidRadii2(const BoidParams& b) {
  return BoidRadii2{b.cohesionRadius * b.cohesionRadius, b.separationRadius * b.separationRadius,
                    b.alignmentRadius * b.alignmentRadius};
}

struct BoidAccum {
  Vec3 sumPos;  // sum of p_j with d < r1
  Vec3 sumVel;  // sum of v_j with d < r3
  Vec3 sep;     // sum of (p_i - p_j) with d < r2
  int n1;       // neighbours within r1
  int n3;       // neighbours within r3
};

MURMUR_HD BoidAccum boidAccumInit() {
  return BoidAccum{Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0, 0};
}

// Squared length for the neighbour tests, d^2 < r^2: three products and two sums, each rounded,
// in the host's order (see mulRn), so that every engine finds the same neighbours.
MURMUR_HD float distance2(Vec3 d) {
  return addRn(addRn(mulRn(d.x, d.x), mulRn(d.y, d.y)), mulRn(d.z, d.z));
}

// Adds neighbour j (j != i) to boid i's sums. The caller skips i itself.
MURMUR_HD void boidAccumulate(BoidAccum& a, const Vec4& pi, const Vec4& pj, const Vec4& vj,
                              const BoidRadii2& r) {
  const Vec3 d = xyz(pj) - xyz(pi);
  const float d2 = distance2(d);
  if (d2 < r.r1) {
    a.sumPos += xyz(pj);
    a.n1 += 1;
  }
  if (d2 < r.r2) a.sep += d * -1.0f;
  if (d2 < r.r3) {
    a.sumVel += xyz(vj);
    a.n3 += 1;
  }
}

// The same sums taken relative to p_i, for kernels that let boid i be one of its own candidates
// (no j != i test per candidate): d1 = sum of (p_j - p_i) with d < r1, d2 = the same with d < r2
// (the separation sum is -d2, bit for bit), sumVel and the counts. i itself adds exactly 0 to d1
// and d2; boidRemoveSelf takes it out of the counts and of sumVel. (mean p_j - p_i) is then
// d1 / n1: the same quantity as boidVelocity's, rounded differently.
struct BoidAccumRel {
  Vec3 d1, d2, sumVel;
  int n1, n3;
};

MURMUR_HD BoidAccumRel boidAccumRelInit() {
  return BoidAccumRel{Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0, 0};
}

// Adds candidate j at offset d = p_j - p_i (d2 = distance2(d), velocity vj) to boid i's relative
// sums; j may be i.
MURMUR_HD void boidAccumulateRel(BoidAccumRel& a, const Vec3& d, float d2, const Vec4& vj, const BoidRadii2& r) {
  if (d2 < r.r1) {
    a.d1 += d;
    a.n1 += 1;
  }
  if (d2 < r.r2) a.d2 += d;
  if (d2 < r.r3) {
    a.sumVel += xyz(vj);
    a.n3 += 1;
  }
}
MURMUR_HD void boidAccumulateRel(BoidAccumRel& a, const Vec3& d, const Vec4& vj, const BoidRadii2& r) {
  boidAccumulateRel(a, d, distance2(d), vj, r);
}

// Takes boid i (velocity vi), visited once as its own candidate at d = 0, out of the sums: it
// counted wherever 0 < r^2.
MURMUR_HD void boidRemoveSelf(BoidAccumRel& a, const Vec4& vi, const BoidRadii2& r) {
  if (0.0f < r.r1) a.n1 -= 1;
  if (0.0f < r.r3) {
    a.sumVel = a.sumVel - xyz(vi);
    a.n3 -= 1;
  }
}

// Alignment from the velocity sum, then the speed clamp: the tail of both velocity functions.
MURMUR_HD Vec3 boidAlignAndClamp(Vec3 v, const Vec3& sumVel, int n3, const Vec4& vi, const BoidParams& b) {
  if (n3 > 0) {
    Vec3 mean = sumVel * (1.0f / static_cast<float>(n3));
    if (b.rules == RuleSet::Reynolds) mean = mean - xyz(vi);
    v += mean * b.alignmentScale;
  }
  const float s2 = dot(v, v);
  if (s2 > b.maxSpeed * b.maxSpeed) v = v * (b.maxSpeed * rsqrtHD(s2));
  return v;
}

// New velocity of boid i from its relative sums (boidRemoveSelf already applied).
MURMUR_HD Vec3 boidVelocityRel(const BoidAccumRel& a, const Vec4& vi, const BoidParams& b) {
  Vec3 v = xyz(vi);
  if (a.n1 > 0) v += a.d1 * (1.0f / static_cast<float>(a.n1)) * b.cohesionScale;
  v += a.d2 * -1.0f * b.separationScale;
  return boidAlignAndClamp(v, a.sumVel, a.n3, vi, b);
}

// New velocity of boid i from its sums: the three rules, then the speed clamp.
MURMUR_HD Vec3 boidVelocity(const BoidAccum& a, const Vec4& pi, const Vec4& vi, const BoidParams& b) {
  Vec3 v = xyz(vi);
  if (a.n1 > 0) v += (a.sumPos * (1.0f / static_cast<float>(a.n1)) - xyz(pi)) * b.cohesionScale;
  v += a.sep * b.separationScale;
  return boidAlignAndClamp(v, a.sumVel, a.n3, vi, b);
}

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

// Semi-implicit step: p' = wrap(p + v' dt). Keeps w (mass). Rounded like the host: whether a
// body wraps, and which cell it lands in, must not depend on the engine.
MURMUR_HD Vec4 boidIntegrate(const Vec4& p, const Vec3& vNew, float dt, float halfSize) {
  return Vec4{wrapCoord(addRn(p.x, mulRn(vNew.x, dt)), halfSize), wrapCoord(addRn(p.y, mulRn(vNew.y, dt)), halfSize),
              wrapCoord(addRn(p.z, mulRn(vNew.z, dt)), halfSize), p.w};
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
