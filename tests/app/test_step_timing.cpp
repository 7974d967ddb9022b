// The viewer's timing panel: the stage times it shows are those of the step it shows (read on the
// thread that ran the step) and add up to that step's time, on every pipeline and force.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/async_stepper.h"
#include "app/engine_factory.h"
#include "core/pipeline_table.h"
#include "core/scenarios.h"

namespace murmur::app {
namespace {

TEST(StepTiming, StagesAreThoseOfTheStepAndAddUpToIt) {
  for (core::ForceMode force : {core::ForceMode::Boids, core::ForceMode::Gravity}) {
    for (core::Pipeline pipeline : {core::Pipeline::Naive, core::Pipeline::Scattered, core::Pipeline::Coherent,
                                    core::Pipeline::Rows, core::Pipeline::Tree, core::Pipeline::Verlet}) {
      if (force == core::ForceMode::Boids && !core::serves(pipeline, force)) continue;  // the tree
      core::SimParams params = core::defaultParams();
      params.force = force;
      params.pipeline = pipeline;
      core::ScenarioSpec spec;
      spec.name = force == core::ForceMode::Boids ? "dense" : "plummer";
      spec.n = 3000;
      const core::Scenario sc = core::makeScenario(spec, params);
      params.halfSize = sc.halfSize;
      auto engine = makeEngine(core::EngineKind::Cpu, params);
      engine->setProfiling(true);
      engine->reset(sc.bodies);
      const std::string what = std::string(core::toString(force)) + " on " + core::toString(pipeline);
      // Every step of a verlet cycle (one builds the list), so the list stage is seen too.
      bool sawList = false;
      double stagedMs = 0, stepMs = 0;
      for (int s = 0; s < 12; ++s) {
        const TimedStep t = timeOneStep(*engine);
        EXPECT_GT(t.profile.forceMs, 0.0) << what << ", step " << s;
        // The stages lie inside the step.
        EXPECT_LE(t.profile.totalMs(), t.ms + 1e-6) << what << ", step " << s;
        sawList = sawList || t.profile.listMs > 0;
        stagedMs += t.profile.totalMs();
        stepMs += t.ms;
        // The panel's items: every stage and the rest, adding up to the step.
        double sum = 0;
        bool listShown = false;
        for (const auto& [name, ms] : stageItems(t)) {
          sum += ms;
          listShown = listShown || name == "list";
        }
        EXPECT_NEAR(sum, t.ms, 1e-9) << what;
        EXPECT_TRUE(listShown) << what;
      }
      // And they are most of it: the rest (synchronising, bookkeeping) is the smaller part.
      EXPECT_GT(stagedMs, 0.5 * stepMs) << what << ": stages " << stagedMs << " ms of " << stepMs << " ms";
      if (force == core::ForceMode::Boids && pipeline == core::Pipeline::Verlet) {
        EXPECT_TRUE(sawList) << what;
      }
    }
  }
}

}  // namespace
}  // namespace murmur::app
