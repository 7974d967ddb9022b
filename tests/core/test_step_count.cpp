// The engine owns the step count (core/engine.h): reset zeroes it, every step adds one, a state
// with a step of its own sets it, and changing the parameters keeps it.
#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "core/scenarios.h"

using namespace murmur::core;

TEST(StepCount, TheEngineCountsItsStepsFromReset) {
  SimParams p = defaultParams();
  ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 500;
  const Scenario sc = makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  CpuEngine engine(p);
  EXPECT_EQ(engine.stepCount(), 0u);
  engine.reset(sc.bodies);
  engine.step(3);
  EXPECT_EQ(engine.stepCount(), 3u);
  p.pipeline = Pipeline::Naive;
  engine.setParams(p);
  engine.step();
  EXPECT_EQ(engine.stepCount(), 4u);
  engine.setStepCount(5000000000ull);  // a saved state's step, past 2^32
  engine.step(2);
  EXPECT_EQ(engine.stepCount(), 5000000002ull);
  engine.reset(sc.bodies);
  EXPECT_EQ(engine.stepCount(), 0u);
  engine.step(0);
  EXPECT_EQ(engine.stepCount(), 0u);
}
