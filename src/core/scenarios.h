// Initial conditions. Scenario code sits here so the viewer, the headless runner, the benchmark
// and the tests all build the same bodies from the same (name, N, seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"

namespace murmur::core {

struct ScenarioSpec {
  std::string name = "uniform";  // uniform | dense | plummer | galaxies | galaxy | file:PATH
  size_t n = 10000;              // ignored for file:
  uint64_t seed = 1;
  // dense: mean number of other boids inside the largest rule radius (sets the world size)
  double denseNeighbours = 8.0;
};

// The scenario names (without file:).
const std::vector<std::string>& scenarioNames();

// The force mode a scenario is made for (boids for uniform/dense, gravity for plummer/galaxies,
// gravity for files).
ForceMode naturalForce(const std::string& name);

// A scenario built: the bodies (ids 0..N-1), the boids world they live in, and the force mode
// they are made for. Callers take halfSize into their parameters as it is (`dense` sizes the world
// to N; the others keep the half-size they were given) and take force unless the user chose one.
struct Scenario {
  Bodies bodies;
  float halfSize = 0;
  ForceMode force = ForceMode::Boids;
};

// Builds the scenario from the spec and the parameters it depends on (world half-size, rule
// radii, max speed). Throws UsageError for an unknown name, N out of range, or an
// unreadable/malformed file.
Scenario makeScenario(const ScenarioSpec& spec, const SimParams& params);

// A disk galaxy of the `galaxy` and `galaxies` scenarios (each galaxy of `galaxies` is one
// half, the first n/2 bodies and the rest): bodies in the order halo, bulge, disk. Masses in
// units of G = 1 and lengths in disk scale lengths.
struct GalaxyLayout {
  size_t halo = 0, bulge = 0, disk = 0;
};
GalaxyLayout galaxyLayout(size_t n);
constexpr double kGalaxyLuminousMass = 1.0;    // disk + bulge of one galaxy
constexpr double kGalaxyBulgeShare = 0.2;      // of the luminous mass
constexpr double kGalaxyHaloToLuminous = 4.0;  // dark halo mass over luminous mass

// Largest N a generated scenario accepts (a sanity bound, not a memory check).
constexpr size_t kMaxBodies = size_t(1) << 30;

}  // namespace murmur::core
