// The open boundary (Boundary::Open): no box. --half-size only says where the scenarios put the
// bodies; they go wherever they fly. The engines run an open world as the wrap boundary's
// pipelines over a box [-H, H) that they choose and grow, so that no body ever reaches a face:
// the wrap then never acts (a coordinate inside the box integrates to p + v dt exactly, as in no
// box at all) and no search has a face to stop at. H starts at the half-size (at least the
// rule's reach) and doubles while the bodies come within a margin of 64 of the fastest steps of
// the faces; each fit says how many steps the bodies are sure to stay inside (no body moves more
// than the rule's top speed times dt a step), and the engines look again after them. The grids
// over [-H, H) keep their cells at most a constant times N (core::boidGridCellCap), however far
// apart the bodies drift: wider cells add candidates, never lose a neighbour
// (docs/design.md#the-boundary-rule).
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hd.h"
#include "core/params.h"
#include "core/rules/local_rules.h"

namespace murmur::core {

struct OpenWorld {
  float halfSize = 0;  // H, the box the engine runs now (0: none fitted yet)
  long stepsLeft = 0;  // steps every body is sure to stay inside it
};

// The largest |x|, |y| or |z| of any body.
inline float maxAbsCoord(const std::vector<Vec4>& pos) {
  float m = 0;
  for (const Vec4& p : pos) m = std::max({m, std::fabs(p.x), std::fabs(p.y), std::fabs(p.z)});
  return m;
}

// Fits w to bodies whose coordinates all lie within `bound` of the origin, for the user's
// parameters p: H grows (doubling, never shrinking) until the bodies are at least 64 steps of
// the fastest body inside it; stepsLeft is how many steps they are sure to stay. True when H
// changed. A world whose bodies have flown to where a float's steps are wider than the rule's
// reach is refused (std::runtime_error): no search could tell neighbours apart there.
inline bool fitOpenWorld(const SimParams& p, float bound, OpenWorld& w) {
  const double move = std::max(double(localMaxSpeed(p)) * double(localDt(p)), 1e-30);
  const double reach = searchRadius(p);
  if (!std::isfinite(bound) || double(bound) * 1.2e-7 > reach)
    throw std::runtime_error("open world: a body is " + std::to_string(bound) +
                             " from the origin, where float positions are too coarse for the rule's reach " +
                             std::to_string(reach));
  double h = std::max({double(w.halfSize), double(p.halfSize), reach});
  const double need = double(bound) + 64.0 * move;
  while (h < need) h *= 2.0;
  const bool changed = float(h) != w.halfSize;
  w.halfSize = float(h);
  // Steps before a body could reach a face, less one for the rounding of the moves.
  const double steps = std::floor((h - double(bound)) / (move * 1.001)) - 1.0;
  w.stepsLeft = static_cast<long>(std::clamp(steps, 1.0, 1e6));
  return changed;
}

// The parameters an engine runs for the user's p: under the open boundary the box of w (and the
// searches and the wrap of that box, which never acts), otherwise p itself.
inline SimParams runParams(const SimParams& p, const OpenWorld& w) {
  SimParams q = p;
  if (p.boundary == Boundary::Open && w.halfSize > 0) q.halfSize = w.halfSize;
  return q;
}

}  // namespace murmur::core
