// Initial conditions. Scenario code sits here so the viewer, the headless runner, the benchmark
// and the tests all build the same bodies from the same (name, N, seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"
#include "core/rule_table.h"

namespace murmur::core {

struct ScenarioSpec {
  std::string name = "uniform";  // uniform | dense | plummer | galaxies | galaxy | file:PATH
  size_t n = 10000;              // ignored for file:
  uint64_t seed = 1;
  // dense: mean number of other boids inside the largest rule radius (sets the world size)
  double denseNeighbours = 8.0;
  // file: only (takeFromFile). select: the bodies to keep, in file order ("0-16383,32768-40959":
  // 0-based, inclusive ranges, ascending; "" keeps all); fileSubset: then an even subset of n of
  // them (--n with a file); scale*: factors on positions, velocities and masses (units).
  std::string select;
  bool fileSubset = false;
  double scaleLength = 1.0, scaleVelocity = 1.0, scaleMass = 1.0;
};

// One range of --select, first <= last (0-based body indices in file order).
struct BodyRange {
  size_t first = 0, last = 0;
};
// The ranges of a --select value: "A-B" or "A" items, comma-separated, ascending and
// non-overlapping. UsageError naming --select and the value otherwise.
std::vector<BodyRange> parseSelect(const std::string& text);

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
  ForceMode force = localRuleForce();
  std::string note;  // file: what was taken from it when not every body as it is; --dims 2 with a
                     // gravity scenario: its projection onto the plane ("" otherwise)
};

// file: the selection, the even subset and the scales of spec applied to the bodies read from
// `name` (what messages call the file), ids renumbered 0..N-1 in file order. Returns a line that
// says what was kept ("" when every body was, unscaled). UsageError for a range or N past the
// file's bodies, or a scale that overflows a value.
std::string takeFromFile(Bodies& b, const ScenarioSpec& spec, const std::string& name);

// Builds the scenario from the spec and the parameters it depends on (world half-size, rule
// radii, max speed). Throws UsageError for an unknown name, N out of range, or an
// unreadable/malformed file.
Scenario makeScenario(const ScenarioSpec& spec, const SimParams& params);

// Whether each body of the scenario comes from draws of its own, as many per body, so that a run
// of ids can be made alone (makeScenarioShare): uniform and dense. The others are made whole.
// The bodies of ids [first, last) of makeScenario(spec, params), bit for bit, made without the
// others: the generator jumps to the first one's draws (Rng::advance). Over ranks each makes its
// own. halfSize, force and note as makeScenario's; UsageError as makeScenario;
// std::invalid_argument for a scenario made whole or a run outside [0, spec.n].
bool scenarioMakesShares(const std::string& name);
Scenario makeScenarioShare(const ScenarioSpec& spec, const SimParams& params, size_t first, size_t last);

// The world half-size `dense` gives n boids (spec.denseNeighbours neighbours each).
float denseHalfSize(size_t n, const SimParams& p, double neighbours);
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

// Largest N one engine's scenario accepts (a sanity bound, not a memory check). Boids made in
// shares over several ranks (makeScenarioShare: each rank makes and holds only its own) go up to
// kMaxBodiesOverRanks, the most 32-bit ids can name.
constexpr size_t kMaxBodies = size_t(1) << 30;
constexpr size_t kMaxBodiesOverRanks = (size_t(1) << 32) - 1;
// "" when n bodies are within those bounds, else the one line that says they are not; inShares:
// the bodies are made in shares over several ranks.
std::string checkBodyCount(size_t n, bool inShares);

}  // namespace murmur::core
