// Pins the CPU engine's results. A fixed run of each force mode ends in a state whose checksum is
// written below; any change to the physics, the grid, the integrators, the scenarios or the order
// of a sum changes it. When a change is meant to change results, review it, then paste the new
// value this test prints. When it is not, this test is how you find out.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/scenarios.h"

using namespace murmur::core;

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// Builds the scenario as every caller does, runs `steps` steps, returns the state's checksum.
uint64_t checksumAfter(const std::string& scenario, size_t n, SimParams p, int steps) {
  ScenarioSpec spec;
  spec.name = scenario;
  spec.n = n;
  spec.seed = 2024;
  const Scenario sc = makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  p.force = sc.force;
  CpuEngine engine(p);
  engine.reset(sc.bodies);
  engine.step(steps);
  return stateChecksum(engine.readBodies());
}

}  // namespace

TEST(Determinism, BoidsCoherentChecksumIsPinned) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Coherent;
  const uint64_t sum = checksumAfter("dense", 1500, p, 30);
  EXPECT_EQ(hex(sum), "8215a3452b9a7619") << "new value to review: " << hex(sum);
}

TEST(Determinism, GravityLeapfrogChecksumIsPinned) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Scattered;
  const uint64_t sum = checksumAfter("plummer", 1000, p, 20);
  EXPECT_EQ(hex(sum), "0635914c4864286c") << "new value to review: " << hex(sum);
  p.pipeline = Pipeline::Naive;
  p.gravity.integrator = Integrator::DampedEuler;
  p.gravity.damping = 0.99f;
  const uint64_t euler = checksumAfter("plummer", 1000, p, 20);
  EXPECT_EQ(hex(euler), "ba234df3da5966c0") << "new value to review: " << hex(euler);
}
