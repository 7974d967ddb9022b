// What the viewer shows of its state and how its keys move between worlds, as plain functions
// (no GL), so that the tests check them without a window.
#pragma once

#include <cstdint>
#include <string>

#include "core/params.h"
#include "core/scenarios.h"

namespace murmur::app {

// G: the world after switching to `force`. The starting world comes back with its own force (G
// twice returns to it); a file's state is kept under either force; otherwise the other force's
// own world (plummer for gravity, uniform for boids) at the same N.
core::ScenarioSpec worldForForce(const core::ScenarioSpec& current, const core::ScenarioSpec& start,
                                 core::ForceMode startForce, core::ForceMode force);

// The HUD's account of what runs: "dense:4 | N=10000 | boids on verlet | splat, velocity | 120
// steps"; a pipeline that runs another for this force says so ("gravity on coherent (verlet asked)").
std::string runDescription(const core::ScenarioSpec& scenario, size_t n, const core::SimParams& params,
                           const char* drawMode, const char* colourMode, uint64_t steps);

}  // namespace murmur::app
