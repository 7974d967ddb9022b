// Couzin's zones (I. D. Couzin, J. Krause, R. James, G. D. Ruxton and N. R. Franks, "Collective
// memory and spatial sorting in animal groups", J. Theor. Biol. 218, 1, 2002): every body moves at
// a constant speed s and responds to the others it can see in three nested zones about it,
//   repulsion   |d| < r_r,
//   orientation r_r <= |d| < r_o = r_r + dr_o,
//   attraction  r_o <= |d| < r_a = r_o + dr_a
// (a zone of width 0 is absent). A neighbour is seen when the angle between the body's velocity
// and the direction to it is at most half the field of perception (the blind angle is behind);
// every zone is seen through it. The desired direction:
//   - with anyone in the zone of repulsion, d = -sum r_ij / |r_ij| over them alone (repulsion
//     overrides the other zones);
//   - else d_o = sum v_j / |v_j| over the zone of orientation and d_a = sum r_ij / |r_ij| over the
//     zone of attraction: d = d_o or d_a where only one zone holds anyone, and
//     (d_o / |d_o| + d_a / |d_a|) / 2 where both do;
//   - with no one seen, or a d of length 0, the body keeps its heading.
// Then the noise turns d by an angle drawn from a Gaussian of standard deviation sigma (radians):
// in the plane about the normal, in 3D towards an azimuth uniform about d (the spherically wrapped
// Gaussian). Then the turn: a body turns at most theta dt (the turning rate times the step) towards
// the noisy direction, and x(t + dt) = x(t) + s dt u(t + dt). A local rule
// (docs/design.md#rules-and-how-to-add-a-rule).
//
// Which neighbours a body sees decides on exactly rounded products (core::mulRn, addRn, sqrtf) of
// the body's own velocity and the offset, so every pipeline and both engines see the same ones.
#pragma once

#include <math.h>

#include "core/hd.h"
#include "core/params.h"
#include "core/physics.h"
#include "core/random.h"

namespace murmur::core {

struct CouzinRule {
  // The rule's section of the parameters, with what the host computes once from it: the zones'
  // outer radii, the cosine of half the field of perception and of the largest turn a step.
  struct Params {
    CouzinParams c;
    bool plane;
    float rr, ro, ra;  // the outer radii of the zones of repulsion, orientation and attraction
    float cosHalfView;  // cos(fieldOfView / 2); every direction is seen when allSeen
    bool allSeen;       // a field of perception of 360 degrees: no blind angle
    float maxTurn;      // the largest turn a step, radians: turnRate dt
    float cosMaxTurn;
  };
  static Params params(const SimParams& p) {
    constexpr float kDegree = 3.14159265358979323846f / 180.0f;
    const CouzinParams& c = p.couzin;
    Params r{};
    r.c = c;
    r.plane = p.dims == 2;
    r.rr = c.zoneRepulsion;
    r.ro = r.rr + c.zoneOrientation;
    r.ra = r.ro + c.zoneAttraction;
    r.allSeen = c.fieldOfView >= 360.0f;
    r.cosHalfView = cosf(0.5f * c.fieldOfView * kDegree);
    r.maxTurn = c.turnRate * kDegree * c.dt;
    // A turn of half a circle or more a step: any direction is within reach.
    r.cosMaxTurn = r.maxTurn >= 180.0f * kDegree ? -2.0f : cosf(r.maxTurn);
    return r;
  }
  static constexpr bool kDraws = true;
  static constexpr bool kBoidCounts = false;      // no boids counts: the observer samples on its own
  static constexpr bool kHeadingRecords = false;  // repulsion and attraction read the offsets

  MURMUR_HD static float radius(const Params& b) { return b.ra; }

  struct Setup {
    float rr2, ro2;
    float reach2;       // ra^2: the zone of attraction's outer edge
    float cosHalfView;  // Params' (the host's cosine)
    bool allSeen;
  };
  MURMUR_HD static Setup setup(const Params& b) {
    return Setup{b.rr * b.rr, b.ro * b.ro, b.ra * b.ra, b.cosHalfView, b.allSeen};
  }

  // Over topological neighbours (core/topological.h) the zones apply within them.
  MURMUR_HD static Setup setupTopological(const Params& b) { return setup(b); }

  // ---- The three zones' sums and counts, and the body's own velocity for the blind angle (zero
  // sets it; combine keeps the first one's). The absolute and relative
  // frames hold the same sums: every term is a function of the offset d = p_j - p_i. ----
  struct Sum {
    Vec3 rep;  // sum of d / |d| in the zone of repulsion
    Vec3 ori;  // sum of v_j / |v_j| in the zone of orientation
    Vec3 att;  // sum of d / |d| in the zone of attraction
    int nr, no, na;
    Vec3 own;       // v_i
    float ownNorm;  // |v_i|, rounded as sqrtf(distance2(v_i))
  };
  using RelSum = Sum;

  // The empty sums of body i: velI() returns v_i (the blind angle is about it).
  template <typename VelI>
  MURMUR_HD static Sum zero(VelI&& velI) {
    const Vec3 v = xyz(velI());
    return Sum{Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0, 0, 0, v, sqrtf(distance2(v))};
  }
  template <typename VelI>
  MURMUR_HD static Sum relZero(VelI&& velI) {
    return zero(velI);
  }

  // Whether the body sees a neighbour at offset d (d2 = distance2(d)): the angle between v_i and
  // d is at most half the field of perception, v_i . d >= cos(fov / 2) |v_i| |d|, every product
  // rounded on its own. A neighbour at d = 0 is seen.
  MURMUR_HD static bool seen(const Sum& a, const Vec3& d, float d2, const Setup& s) {
    if (s.allSeen) return true;
    const float vd = addRn(addRn(mulRn(a.own.x, d.x), mulRn(a.own.y, d.y)), mulRn(a.own.z, d.z));
    return vd >= mulRn(mulRn(s.cosHalfView, a.ownNorm), sqrtf(d2));
  }

  template <typename VelJ>
  MURMUR_HD static void add(Sum& a, const Vec4&, const Vec3& d, float d2, VelJ&& velJ, const Setup& s) {
    addRel(a, d, d2, velJ, s);
  }
  template <typename VelJ>
  MURMUR_HD static void addRel(Sum& a, const Vec3& d, float d2, VelJ&& velJ, const Setup& s) {
    if (!(d2 < s.reach2) || !seen(a, d, d2, s)) return;
    if (d2 < s.rr2) {
      a.rep += unitOrZero(d);
      a.nr += 1;
    } else if (d2 < s.ro2) {
      a.ori += unitOrZero(xyz(velJ()));
      a.no += 1;
    } else {
      a.att += unitOrZero(d);
      a.na += 1;
    }
  }
  MURMUR_HD static Sum combine(const Sum& a, const Sum& b) {
    Sum r = a;
    r.rep += b.rep, r.ori += b.ori, r.att += b.att;
    r.nr += b.nr, r.no += b.no, r.na += b.na;
    return r;
  }
  // Takes the body, visited once as its own candidate at d = 0 (seen, in the innermost zone that
  // has a width), out of the sums: at d = 0 it added nothing to a sum of offsets.
  MURMUR_HD static void removeSelf(Sum& a, const Vec4& vi, const Setup& s) {
    if (!(0.0f < s.reach2)) return;
    if (0.0f < s.rr2) {
      a.nr -= 1;
    } else if (0.0f < s.ro2) {
      a.ori = a.ori - unitOrZero(xyz(vi));
      a.no -= 1;
    } else {
      a.na -= 1;
    }
  }

  MURMUR_HD static Vec3 velocity(const Sum& a, const Vec4&, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    return steer(a, vi, b, draws);
  }
  MURMUR_HD static Vec3 velocityRel(const Sum& a, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    return steer(a, vi, b, draws);
  }

  MURMUR_HD static float dt(const Params& b) { return b.c.dt; }
  MURMUR_HD static float maxSpeed(const Params& b) { return b.c.speed; }

  // The desired direction from the zones' sums (the rule of the header), before noise and turn.
  MURMUR_HD static Vec3 desired(const Sum& a) {
    if (a.nr > 0) return a.rep * -1.0f;
    if (a.no > 0 && a.na > 0) return (unitOrZero(a.ori) + unitOrZero(a.att)) * 0.5f;
    if (a.no > 0) return a.ori;
    if (a.na > 0) return a.att;
    return a.own;
  }

  // The new velocity: the desired direction, turned by the noise, then at most maxTurn from the
  // body's heading, at speed s.
  MURMUR_HD static Vec3 steer(const Sum& a, const Vec4& vi, const Params& b, const BodyDraws& draws) {
    constexpr float kTwoPi = 6.28318530717958647692f;
    const Vec3 own = unitOrZero(xyz(vi));
    Vec3 d = unitOrZero(desired(a));
    if (!(dot(d, d) > 0.0f)) d = own;
    if (!(dot(d, d) > 0.0f)) return Vec3{0, 0, 0};  // a body at rest with no one to follow stays
    // The noise: an angle from the Gaussian (Box-Muller), towards a uniform azimuth in 3D.
    const Draw4 w = draws(0);
    const float g = sqrtf(-2.0f * logf(uniform01Open0(w.w[0]))) * cosf(kTwoPi * uniform01(w.w[1]));
    const float angle = b.c.noise * g;
    const float ca = cosf(angle), sa = sinf(angle);
    if (b.plane) {
      d = Vec3{ca * d.x - sa * d.y, sa * d.x + ca * d.y, 0.0f};
    } else {
      const float phi = kTwoPi * uniform01(w.w[2]);
      Vec3 e1, e2;
      perpendiculars(d, e1, e2);
      d = d * ca + (e1 * cosf(phi) + e2 * sinf(phi)) * sa;
    }
    d = unitOrZero(d);
    // The turn: the noisy direction where it is within maxTurn of the heading, else the heading
    // turned by maxTurn towards it (about the normal of the plane the two span).
    if (dot(own, own) > 0.0f) {
      const float c = dot(own, d);
      if (!(c >= b.cosMaxTurn)) {
        Vec3 t = d - own * c;  // the part of d across the heading
        if (!(dot(t, t) > 1e-12f)) {
          // d is straight behind: turn towards any direction across the heading (in the plane,
          // to the left).
          Vec3 e1, e2;
          perpendiculars(own, e1, e2);
          t = b.plane ? Vec3{-own.y, own.x, 0.0f} : e1;
        }
        d = own * cosf(b.maxTurn) + unitOrZero(t) * sinf(b.maxTurn);
      }
    }
    return unitOrZero(d) * b.c.speed;
  }
};

}  // namespace murmur::core
