// The `verlet` pipeline's plan (boids), shared by the CPU engine and the CUDA kernels.
//
// Each body keeps a list of the bodies within a list radius R = r + skin of it, built by the rows
// search (core/row_search.h) and used for k steps; every step tests each listed pair with the
// exact d^2 < r^2 of naive all-pairs, so the lists only have to hold a superset of the true
// neighbours. Between two builds a body moves at most delta per step (the speed clamp bounds
// |v'| dt; the rounding of p + v' dt and of the wrap add a few ulp of halfSize), so a pair closer
// than r after m steps was closer than r + 2 m delta at the build: with skin = 2 (k - 1) delta the
// list holds every pair that can become a neighbour before the next build.
//
// The wrap boundary: a body that leaves through one face re-enters at the opposite one, and from
// then on its neighbours are bodies that were a world away at the build. Distances measured
// through the wrap (the shortest over the periodic images) are what the speed bound holds for
// (a wrap moves a body by a whole period), and the true distance is never shorter than that, so
// lists that take pairs near across the faces (searching around the images of a body near a
// face) stay a superset; the exact test then uses the true positions, so pairs across a face
// still never count (docs/design.md#the-boundary-rule). A pair is found through at most one image while the world is
// at least 2 R wide; narrower worlds rebuild every step (k = 1, no images).
//
// k comes from the parameters (listSteps) or from the skin it costs (kVerletSkinFraction): a
// longer reuse spreads the build (sort, reorder, search) over more steps but lengthens every list
// as the skin grows.
#pragma once

#include <cmath>

#include "core/grid.h"
#include "core/hd.h"
#include "core/params.h"
#include "core/boundary.h"
#include "core/physics.h"
#include "core/row_search.h"

namespace murmur::core {

struct VerletPlan {
  int steps = 1;          // k: steps each list serves (1 = rebuilt every step)
  float radius = 0;       // R: pairs closer than this at the build are listed
  bool periodic = false;  // lists hold pairs near across the wrap (k > 1)
};

// A body's largest move per step, measured through the wrap.
inline float verletStepBound(const SimParams& p) {
  const float ulpH = p.halfSize * 1.1920929e-7f;
  return localMaxSpeed(p) * localDt(p) * (1.0f + 1e-5f) + 4.0f * ulpH;
}

// R for lists that serve k steps: the skin, plus a margin for the rounding of the build's d^2.
inline float verletRadius(const SimParams& p, int k) {
  const float ulpH = p.halfSize * 1.1920929e-7f;
  const float skin = 2.0f * static_cast<float>(k - 1) * verletStepBound(p);
  return (searchRadius(p) + skin) * (1.0f + 1e-5f) + 16.0f * ulpH;
}

// Whether lists of radius R may take pairs across the wrap: the world is wide enough that no
// pair is found through two images, and that no cell of the list grid (at most R cellWidthFactor
// wide) is reached from two images of a body. The CUDA engine's overflow path searches that grid
// around a body's images, and each of its cells must then be visited once: a cell reached from
// an image near one face and from the body near the opposite one needs 2 halfSize < 3 R + width.
inline double verletMinHalfSize(const SimParams& p, float radius) {
  return 1.001 * double(radius) * (1.5 + 0.5 * double(p.cellWidthFactor));
}
inline bool verletPeriodicFits(const SimParams& p, float radius) {
  return double(p.halfSize) >= verletMinHalfSize(p, radius);
}

// The periodic boundary (--boundary periodic) searches around a body's images and measures each
// candidate from the image it was found near: a neighbour lies within `radius` of one image only,
// and a list of that radius holds it once, while the world is more than twice `radius` wide.
inline double periodicMinHalfSize(float radius) { return 1.001 * double(radius); }
inline bool periodicFits(const SimParams& p, float radius) { return double(p.halfSize) >= periodicMinHalfSize(radius); }

// The skin that lists carry when the parameters leave k open (listSteps 0) stays below this
// fraction of the rule radius: k is the largest with 2 (k - 1) delta < fraction r. On an H100
// (docs/performance.md#the-verlet-pipeline, bench/results/h100/verlet-targets.csv) the step was
// fastest at k = 3 in the 1M CIS 565 world (r = 5, delta = 0.2), at k = 1 at FLAME GPU density
// (r = 2) and at k = 4 in the 10M `dense` world, a little ahead of k = 3 there; a fifth of the
// radius gives 3, 1 and 3.
constexpr double kVerletSkinFraction = 0.2;

inline VerletPlan verletPlanFor(const SimParams& p, int k) {
  VerletPlan plan;
  plan.steps = k < 1 ? 1 : k;
  plan.radius = verletRadius(p, plan.steps);
  if (plan.steps > 1 && !verletPeriodicFits(p, plan.radius)) {
    plan.steps = 1;
    plan.radius = verletRadius(p, 1);
  }
  // Lists that serve several steps take pairs across the wrap; under the periodic boundary every
  // list does, since the search crosses the faces.
  plan.periodic = plan.steps > 1 || p.boundary == Boundary::Periodic;
  return plan;
}

// The plan: p.listSteps when set, otherwise the longest reuse whose skin stays below
// kVerletSkinFraction of the radius (verletPlanFor falls back to k = 1 where such lists would not
// fit the world).
inline VerletPlan verletPlan(const SimParams& p) {
  if (p.listSteps > 0) return verletPlanFor(p, p.listSteps);
  const double skinSteps = kVerletSkinFraction * double(searchRadius(p)) / (2.0 * double(verletStepBound(p)));
  // The largest k - 1 strictly below skinSteps.
  const double k = std::ceil(skinSteps);
  return verletPlanFor(p, k >= double(kMaxListSteps) ? kMaxListSteps : (k < 1.0 ? 1 : static_cast<int>(k)));
}

// The grid the lists of n bodies are built on: the rows grid for a search to R.
inline GridSpec verletGrid(const SimParams& p, size_t n) { return rowGridForRadius(p, n, verletPlan(p).radius); }

// Calls f(first, last) for the rows of the list grid g around p and each of its images (the
// cells a list of p could reach); with verletPeriodicFits no cell comes twice.
template <typename F>
MURMUR_HD void forEachListRow(const GridSpec& g, const VerletPlan& plan, float halfSize, const Vec3& p, F&& f) {
  forEachImage(p, plan.radius, halfSize, plan.periodic, [&](Vec3 c) { forEachRowOneLoop(g, c, plan.radius, f); });
}

// Calls f(j) for every sorted slot j != i whose position lies within R of body i's position or
// of one of its images: the list of i, in the order every engine builds it. pos and cellFirst
// are the state and the offsets of verletGrid at the build; load(k) reads cellFirst[k].
template <typename PosF, typename FirstF, typename F>
MURMUR_HD void forEachListed(const GridSpec& g, const VerletPlan& plan, float halfSize, uint32_t i, const Vec3& pi,
                             PosF&& posOf, FirstF&& firstOf, F&& f) {
  const float R2 = plan.radius * plan.radius;
  // The centre by value: a reference to it would put it in local memory on the GPU.
  forEachImage(pi, plan.radius, halfSize, plan.periodic, [&](Vec3 c) {
    forEachRowOneLoop(g, c, plan.radius, [&](uint32_t first, uint32_t last) {
      const uint32_t e = firstOf(last + 1);
      for (uint32_t j = firstOf(first); j < e; ++j) {
        if (j == i) continue;
        if (distance2(posOf(j) - c) < R2) f(j);
      }
    });
  });
}

}  // namespace murmur::core
