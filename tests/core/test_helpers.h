// Shared helpers for the core tests: random states and per-id comparisons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <vector>

#include "core/bodies.h"
#include "core/grid.h"
#include "core/engine.h"
#include "core/metrics.h"
#include "core/rng.h"
#include "core/scenarios.h"

namespace murmur::test {

// Bodies sorted by the cell of g they lie in (stable), and per cell the first sorted slot:
// first[c] .. first[c + 1] are cell c's slots, as the rows and verlet pipelines lay them out.
struct SortedCells {
  std::vector<uint32_t> order;  // sorted slot -> body
  std::vector<uint32_t> first;  // numCells + 1 offsets
};
inline SortedCells sortIntoCells(const core::GridSpec& g, const std::vector<core::Vec4>& pos) {
  const size_t n = pos.size();
  std::vector<uint32_t> keys(n);
  SortedCells s;
  s.order.resize(n);
  for (size_t i = 0; i < n; ++i) keys[i] = core::cellKeyOf(g, core::xyz(pos[i])), s.order[i] = uint32_t(i);
  std::stable_sort(s.order.begin(), s.order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  s.first.assign(size_t(g.numCells) + 1, uint32_t(n));
  uint32_t next = 0;
  for (size_t k = 0; k < n; ++k)
    for (; next <= keys[s.order[k]]; ++next) s.first[next] = uint32_t(k);
  return s;
}

// N bodies uniform in [-h, h)^3 with random velocities up to `speed` and masses in [0.5, 1.5].
inline core::Bodies randomBodies(size_t n, float h, float speed, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    b.pos[i] = core::Vec4{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)),
                          float(rng.uniform(0.5, 1.5))};
    b.vel[i] = core::Vec4{float(rng.uniform(-speed, speed)), float(rng.uniform(-speed, speed)),
                          float(rng.uniform(-speed, speed)), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// Runs `steps` steps of `engine` from `start` and returns the drift of the total momentum over the
// momentum scale sum m |v| of the start (0 = conserved exactly).
inline double relativeMomentumDrift(core::Engine& engine, const core::Bodies& start, int steps) {
  engine.reset(start);
  const core::Vec3d p0 = core::totalMomentum(start);
  double scale = 0;
  for (size_t i = 0; i < start.size(); ++i) scale += start.pos[i].w * core::length(core::xyz(start.vel[i]));
  engine.step(steps);
  const core::Vec3d p1 = core::totalMomentum(engine.readBodies());
  const double dx = p1.x - p0.x, dy = p1.y - p0.y, dz = p1.z - p0.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz) / scale;
}

// |a - b| <= rel * max(|a|, |b|) + abs, per component.
inline bool closeTo(float a, float b, float rel, float abs) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + abs;
}

// Per-id comparison of two states; reports the first mismatches.
inline void expectStatesClose(const core::Bodies& a, const core::Bodies& b, float rel, float abs,
                              const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < a.size() && failures < 5; ++i) {
    ASSERT_EQ(a.id[i], b.id[i]);
    const float* pa = &a.pos[i].x;
    const float* pb = &b.pos[i].x;
    const float* va = &a.vel[i].x;
    const float* vb = &b.vel[i].x;
    for (int c = 0; c < 4; ++c) {
      if (!closeTo(pa[c], pb[c], rel, abs) || !closeTo(va[c], vb[c], rel, abs)) {
        ADD_FAILURE() << what << ": body " << i << " component " << c << " pos " << pa[c] << " vs " << pb[c]
                      << ", vel " << va[c] << " vs " << vb[c];
        ++failures;
        break;
      }
    }
  }
}

// The plummer scenario of n bodies (default parameters).
inline core::Bodies plummerBodies(size_t n, uint64_t seed) {
  core::ScenarioSpec s;
  s.name = "plummer";
  s.n = n;
  s.seed = seed;
  return core::makeScenario(s, core::defaultParams()).bodies;
}

}  // namespace murmur::test
