// The boids rule (CIS 565 and Reynolds): cohesion, separation and alignment over three radii, then
// the speed clamp. One unit (docs/design.md#rules-and-how-to-add-a-rule): its parameters, its per-step setup,
// its per-neighbour sums in the two frames the pipelines use, its finish (the new velocity) and
// its reach (the radius the search must cover). The two rule sets differ only in the alignment
// term, a run-time choice in BoidParams::rules, so both share one instantiation of every kernel.
#pragma once

#include <math.h>

#include "core/hd.h"
#include "core/params.h"
#include "core/physics.h"
#include "core/random.h"

namespace murmur::core {

struct BoidsRule {
  using Params = BoidParams;
  // Whether the finish draws random numbers (core/random.h): then the pipelines read the body's id.
  static constexpr bool kDraws = false;
  static constexpr bool kHeadingRecords = false;  // the sums read the neighbours' whole velocities
  // Its sums count the neighbours within the cohesion and alignment radii (n1, n3): the rows
  // kernel's sampled observables read them (core::samplesBoidCounts).
  static constexpr bool kBoidCounts = true;

  // The rule's section of the parameters.
  static const Params& params(const SimParams& p) { return p.boids; }

  // The radius a neighbour search must cover: the largest of the three rule radii.
  MURMUR_HD static float radius(const Params& b) {
    const float r = b.cohesionRadius > b.separationRadius ? b.cohesionRadius : b.separationRadius;
    return r > b.alignmentRadius ? r : b.alignmentRadius;
  }

  // What a step computes once from the parameters: the squared radii, and the squared reach (a
  // candidate at least this far adds nothing, so a pipeline may skip it before calling add).
  struct Setup {
    float r1, r2, r3;
    float reach2;
  };
  MURMUR_HD static Setup setup(const Params& b) {
    const float r1 = b.cohesionRadius * b.cohesionRadius, r2 = b.separationRadius * b.separationRadius,
                r3 = b.alignmentRadius * b.alignmentRadius;
    const float m = r1 > r2 ? r1 : r2;
    return Setup{r1, r2, r3, m > r3 ? m : r3};
  }

  // The setup of a step over topological neighbours (core/topological.h): each of the three sums
  // runs over all of them, whatever its radius.
  MURMUR_HD static Setup setupTopological(const Params&) { return Setup{INFINITY, INFINITY, INFINITY, INFINITY}; }

  // ---- Sums over the neighbours j != i, positions absolute (naive, the grids, verlet). ----
  struct Sum {
    Vec3 sumPos;  // sum of p_j with d < r1
    Vec3 sumVel;  // sum of v_j with d < r3
    Vec3 sep;     // sum of (p_i - p_j) with d < r2
    int n1;       // neighbours within r1
    int n3;       // neighbours within r3
  };
  // The empty sums of a body; velI() would return its velocity, which these sums do not read.
  template <typename VelI>
  MURMUR_HD static Sum zero(VelI&&) {
    return Sum{Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0, 0};
  }

  // Adds neighbour j (position pj, offset d = p_j - p_i, d2 = distance2(d)) to boid i's sums.
  // velJ() returns v_j; it is called only inside the alignment radius, so a kernel reads a
  // neighbour's velocity only where the rule uses it. The caller skips i itself.
  template <typename VelJ>
  MURMUR_HD static void add(Sum& a, const Vec4& pj, const Vec3& d, float d2, VelJ&& velJ, const Setup& s) {
    if (d2 < s.r1) {
      a.sumPos += xyz(pj);
      a.n1 += 1;
    }
    if (d2 < s.r2) a.sep += d * -1.0f;
    if (d2 < s.r3) {
      a.sumVel += xyz(velJ());
      a.n3 += 1;
    }
  }

  // The new velocity of boid i from its sums: the three rules, then the speed clamp. The body's
  // draws (unused here) are every rule's last argument.
  MURMUR_HD static Vec3 velocity(const Sum& a, const Vec4& pi, const Vec4& vi, const Params& b, const BodyDraws&) {
    Vec3 v = xyz(vi);
    if (a.n1 > 0) v += (a.sumPos * (1.0f / static_cast<float>(a.n1)) - xyz(pi)) * b.cohesionScale;
    v += a.sep * b.separationScale;
    return alignAndClamp(v, a.sumVel, a.n3, vi, b);
  }

  // ---- Sums relative to p_i, for kernels that let boid i be one of its own candidates (rows,
  // clusters: no j != i test per candidate). d1 = sum of (p_j - p_i) with d < r1, d2 = the same
  // with d < r2 (the separation sum is -d2, bit for bit), sumVel and the counts. i itself adds
  // exactly 0 to d1 and d2; removeSelf takes it out of the counts and of sumVel. (mean p_j - p_i)
  // is then d1 / n1: the same quantity as velocity()'s, rounded differently. ----
  struct RelSum {
    Vec3 d1, d2, sumVel;
    int n1, n3;
  };
  template <typename VelI>
  MURMUR_HD static RelSum relZero(VelI&&) {
    return RelSum{Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0, 0};
  }

  // Adds candidate j at offset d = p_j - p_i (d2 = distance2(d)); j may be i.
  template <typename VelJ>
  MURMUR_HD static void addRel(RelSum& a, const Vec3& d, float d2, VelJ&& velJ, const Setup& s) {
    if (d2 < s.r1) {
      a.d1 += d;
      a.n1 += 1;
    }
    if (d2 < s.r2) a.d2 += d;
    if (d2 < s.r3) {
      a.sumVel += xyz(velJ());
      a.n3 += 1;
    }
  }

  // Two partial sums of one boid as one (clusters sums a boid's candidates in several partials).
  MURMUR_HD static RelSum combine(const RelSum& a, const RelSum& b) {
    return RelSum{a.d1 + b.d1, a.d2 + b.d2, a.sumVel + b.sumVel, a.n1 + b.n1, a.n3 + b.n3};
  }

  // Takes boid i (velocity vi), visited once as its own candidate at d = 0, out of the sums: it
  // counted wherever 0 < r^2.
  MURMUR_HD static void removeSelf(RelSum& a, const Vec4& vi, const Setup& s) {
    if (0.0f < s.r1) a.n1 -= 1;
    if (0.0f < s.r3) {
      a.sumVel = a.sumVel - xyz(vi);
      a.n3 -= 1;
    }
  }

  // The new velocity of boid i from its relative sums (removeSelf already applied).
  MURMUR_HD static Vec3 velocityRel(const RelSum& a, const Vec4& vi, const Params& b, const BodyDraws&) {
    Vec3 v = xyz(vi);
    if (a.n1 > 0) v += a.d1 * (1.0f / static_cast<float>(a.n1)) * b.cohesionScale;
    v += a.d2 * -1.0f * b.separationScale;
    return alignAndClamp(v, a.sumVel, a.n3, vi, b);
  }

  // The time step the rule's velocities are integrated with, and the fastest a body can move
  // (world units per time unit): a body moves at most maxSpeed * dt a step, which bounds the
  // verlet skin and the bodies that can cross a rank's slab face.
  MURMUR_HD static float dt(const Params& b) { return b.dt; }
  MURMUR_HD static float maxSpeed(const Params& b) { return b.maxSpeed; }

 private:
  // Alignment from the velocity sum, then the speed clamp: the tail of both velocity functions.
  MURMUR_HD static Vec3 alignAndClamp(Vec3 v, const Vec3& sumVel, int n3, const Vec4& vi, const Params& b) {
    if (n3 > 0) {
      Vec3 mean = sumVel * (1.0f / static_cast<float>(n3));
      if (b.rules == RuleSet::Reynolds) mean = mean - xyz(vi);
      v += mean * b.alignmentScale;
    }
    const float s2 = dot(v, v);
    if (s2 > b.maxSpeed * b.maxSpeed) v = v * (b.maxSpeed * rsqrtHD(s2));
    return v;
  }
};

}  // namespace murmur::core
