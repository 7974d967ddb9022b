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

// Every boids pipeline under both rule sets, in 3D and in the plane: the checksums the engine gave
// before the rules became units of their own (core/rules/), which must not change while the
// physics does not. The same world as the command line's `--scenario dense --n 1500 --seed 2024
// --steps 30 --engine cpu`.
TEST(Determinism, EveryBoidsPipelineAndRuleSetIsPinned) {
  struct Pin {
    Pipeline pipeline;
    RuleSet rules;
    int dims;
    const char* sum;
  };
  const Pin pins[] = {
      {Pipeline::Naive, RuleSet::Cis565, 3, "cedb7e1cb24d6fc8"},     {Pipeline::Naive, RuleSet::Cis565, 2, "ccb6e82732a86a5c"},
      {Pipeline::Naive, RuleSet::Reynolds, 3, "84d19761b1454a6f"},   {Pipeline::Naive, RuleSet::Reynolds, 2, "59961fa726d1fe5d"},
      {Pipeline::Scattered, RuleSet::Cis565, 3, "12b069e5b4c44fb1"}, {Pipeline::Scattered, RuleSet::Cis565, 2, "3db4b5235eda30db"},
      {Pipeline::Scattered, RuleSet::Reynolds, 3, "202641ca524e6e8e"}, {Pipeline::Scattered, RuleSet::Reynolds, 2, "87a12565c6b73366"},
      {Pipeline::Coherent, RuleSet::Cis565, 3, "8215a3452b9a7619"},  {Pipeline::Coherent, RuleSet::Cis565, 2, "52a6f6a682438607"},
      {Pipeline::Coherent, RuleSet::Reynolds, 3, "7d0fc8b8a0cbcbb6"}, {Pipeline::Coherent, RuleSet::Reynolds, 2, "06f840b2c1fcc6d9"},
      {Pipeline::Rows, RuleSet::Cis565, 3, "7a870439220834be"},      {Pipeline::Rows, RuleSet::Cis565, 2, "57ee57d19c542873"},
      {Pipeline::Rows, RuleSet::Reynolds, 3, "4f4ef2956261be98"},    {Pipeline::Rows, RuleSet::Reynolds, 2, "a42d93e1b7b60c7e"},
      {Pipeline::Verlet, RuleSet::Cis565, 3, "39f12fecad65694a"},    {Pipeline::Verlet, RuleSet::Cis565, 2, "4d0096adc0aa8c78"},
      {Pipeline::Verlet, RuleSet::Reynolds, 3, "89314abb6eb774dd"},  {Pipeline::Verlet, RuleSet::Reynolds, 2, "29b3aba2458d3eb3"},
      {Pipeline::Clusters, RuleSet::Cis565, 3, "cdbdc4fb1e9375d0"},  {Pipeline::Clusters, RuleSet::Cis565, 2, "ca4d1656a7542cd5"},
      {Pipeline::Clusters, RuleSet::Reynolds, 3, "e6f03f37a164e6b7"}, {Pipeline::Clusters, RuleSet::Reynolds, 2, "4057003ad7b73ecb"},
  };
  for (const Pin& pin : pins) {
    SimParams p = defaultParams();
    p.pipeline = pin.pipeline;
    p.boids.rules = pin.rules;
    p.dims = pin.dims;
    const uint64_t sum = checksumAfter("dense", 1500, p, 30);
    EXPECT_EQ(hex(sum), pin.sum) << toString(pin.pipeline) << " " << toString(pin.rules) << " " << pin.dims
                                 << "D: new value to review: " << hex(sum);
  }
}
