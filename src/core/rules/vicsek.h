// The Vicsek model (T. Vicsek, A. Czirok, E. Ben-Jacob, I. Cohen and O. Shochet, "Novel type of
// phase transition in a system of self-driven particles", Phys. Rev. Lett. 75, 1226, 1995): every
// boid moves at the constant speed v0; its new heading is the direction of the sum of the unit
// velocities of every boid within r of it, itself included, turned by noise; then
// x(t + dt) = x(t) + v0 dt u(t + dt). A local rule (docs/design.md#rules-and-how-to-add-a-rule).
//
// The noise (eta in radians, 0 to 2 pi), drawn from the counter-based generator (core/random.h),
// so that it depends on nothing but the seed, the body's id and the step:
//   angular (the paper's): in the plane the heading turns by an angle uniform in
//     [-eta/2, eta/2]; in 3D the heading is uniform on the spherical cap of half-angle eta/2
//     about the mean direction;
//   vectorial (G. Gregoire and H. Chate, Phys. Rev. Lett. 92, 025702, 2004): eta n xi is added to
//     the sum of the n unit velocities, xi a unit vector uniform in every direction, and the
//     heading is the direction of the result.
// A heading the sum leaves undefined (the unit velocities cancel exactly) is the boid's own.
#pragma once

#include <math.h>

#include "core/hd.h"
#include "core/params.h"
#include "core/random.h"

namespace murmur::core {

struct VicsekRule {
  // The rule's section of the parameters, and whether the world is the plane (2D noise).
  struct Params {
    VicsekParams v;
    bool plane;
  };
  static Params params(const SimParams& p) { return Params{p.vicsek, p.dims == 2}; }
  static constexpr bool kDraws = true;
  static constexpr bool kBoidCounts = false;  // no boids counts: the observer samples on its own
  // The sums read a neighbour's velocity only through its unit vector (unit): the rows pipeline's
  // plane records hold it, formed once a step, and the kernels add it with addHeadingRel.
  static constexpr bool kHeadingRecords = true;

  MURMUR_HD static float radius(const Params& b) { return b.v.radius; }

  struct Setup {
    float r2;
    float reach2;
  };
  MURMUR_HD static Setup setup(const Params& b) {
    const float r2 = b.v.radius * b.v.radius;
    return Setup{r2, r2};
  }

  // Over topological neighbours (core/topological.h) the heading is theirs and the boid's own,
  // whatever the radius.
  MURMUR_HD static Setup setupTopological(const Params&) { return Setup{INFINITY, INFINITY}; }

  // ---- The sum of the neighbours' unit velocities and their count. The absolute and relative
  // frames hold the same sums: the heading does not depend on where a neighbour is. ----
  struct Sum {
    Vec3 dir;
    int n;
  };
  using RelSum = Sum;
  template <typename VelI>
  MURMUR_HD static Sum zero(VelI&&) {
    return Sum{Vec3{0, 0, 0}, 0};
  }
  template <typename VelI>
  MURMUR_HD static Sum relZero(VelI&& velI) {
    return zero(velI);
  }

  template <typename VelJ>
  MURMUR_HD static void add(Sum& a, const Vec4&, const Vec3&, float d2, VelJ&& velJ, const Setup& s) {
    if (d2 < s.r2) {
      a.dir += unit(xyz(velJ()));
      a.n += 1;
    }
  }
  template <typename VelJ>
  MURMUR_HD static void addRel(Sum& a, const Vec3&, float d2, VelJ&& velJ, const Setup& s) {
    if (d2 < s.r2) {
      a.dir += unit(xyz(velJ()));
      a.n += 1;
    }
  }
  // The same for a neighbour whose unit velocity u = unit(v_j) was formed beforehand.
  MURMUR_HD static void addHeadingRel(Sum& a, float d2, const Vec3& u, const Setup& s) {
    if (d2 < s.r2) {
      a.dir += u;
      a.n += 1;
    }
  }
  MURMUR_HD static Sum combine(const Sum& a, const Sum& b) { return Sum{a.dir + b.dir, a.n + b.n}; }
  // The boid counts itself (the model's "itself included"): its visit at d = 0 stays in the sums.
  MURMUR_HD static void removeSelf(Sum&, const Vec4&, const Setup&) {}

  // The absolute frame skipped the boid itself: it joins the sum here.
  MURMUR_HD static Vec3 velocity(const Sum& a, const Vec4&, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    return heading(Sum{a.dir + unit(xyz(vi)), a.n + 1}, vi, b, draws);
  }
  MURMUR_HD static Vec3 velocityRel(const Sum& a, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    return heading(a, vi, b, draws);
  }

  MURMUR_HD static float dt(const Params& b) { return b.v.dt; }
  MURMUR_HD static float maxSpeed(const Params& b) { return b.v.speed; }

  // v / |v|, or 0 for v = 0.
  MURMUR_HD static Vec3 unit(const Vec3& v) { return unitOrZero(v); }

  // The new velocity from the sum of unit velocities (the boid's included) and its count.
  MURMUR_HD static Vec3 heading(const Sum& a, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    constexpr float kTwoPi = 6.28318530717958647692f;
    const Draw4 w = draws(0);
    const float eta = b.v.noise;
    Vec3 m = a.dir;
    if (b.v.noiseKind == VicsekNoise::Vectorial) {
      // eta n xi, xi uniform on the circle or the sphere.
      const float scale = eta * static_cast<float>(a.n);
      const float phi = kTwoPi * uniform01(w.w[0]);
      if (b.plane) {
        m += Vec3{cosf(phi), sinf(phi), 0.0f} * scale;
      } else {
        const float z = 2.0f * uniform01(w.w[1]) - 1.0f;
        const float s = sqrtf(fmaxf(0.0f, 1.0f - z * z));
        m += Vec3{s * cosf(phi), s * sinf(phi), z} * scale;
      }
      if (!(dot(m, m) > 0.0f)) m = xyz(vi);
      return unit(m) * b.v.speed;
    }
    if (!(dot(m, m) > 0.0f)) m = xyz(vi);  // no direction from the sum: keep the boid's own
    if (b.plane) {
      const float theta = atan2f(m.y, m.x) + eta * (uniform01(w.w[0]) - 0.5f);
      return Vec3{cosf(theta), sinf(theta), 0.0f} * b.v.speed;
    }
    // Uniform on the cap of half-angle eta/2 about the mean: cos(alpha) uniform in
    // [cos(eta/2), 1], the azimuth uniform, about the axis e3 = the mean direction.
    const Vec3 e3 = unit(m);
    const float cosCap = cosf(0.5f * eta);
    const float c = 1.0f - uniform01(w.w[0]) * (1.0f - cosCap);
    const float s = sqrtf(fmaxf(0.0f, 1.0f - c * c));
    const float phi = kTwoPi * uniform01(w.w[1]);
    Vec3 e1, e2;
    perpendiculars(e3, e1, e2);
    const Vec3 dir = e3 * c + (e1 * cosf(phi) + e2 * sinf(phi)) * s;
    return unit(dir) * b.v.speed;
  }
};

}  // namespace murmur::core
