// The headless summary line and the progress estimate, as functions (no process started).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/progress.h"
#include "app/summary.h"
#include "app/viewer_state.h"

namespace murmur::app {
namespace {

RunSummary boidsRun(core::EngineKind engine, core::Pipeline pipeline, core::ForceMode force) {
  RunSummary s;
  s.engine = engine;
  s.params.pipeline = pipeline;
  s.params.force = force;
  s.params.blockSize = 128;
  s.params.cellWidthFactor = 2;
  s.scenario.name = "dense";
  s.n = 1000;
  s.steps = 3;
  s.stepMs = {1.0, 1.0, 1.0};
  return s;
}

TEST(Summary, BlockOnlyOnTheCudaEngine) {
  EXPECT_NE(summaryLine(boidsRun(core::EngineKind::Cpu, core::Pipeline::Coherent, core::ForceMode::Boids)).find(" block=- "),
            std::string::npos);
  EXPECT_NE(summaryLine(boidsRun(core::EngineKind::Cuda, core::Pipeline::Coherent, core::ForceMode::Boids)).find(" block=128 "),
            std::string::npos);
}

TEST(Summary, CellWidthOnlyWithABoidsGrid) {
  const auto line = [](core::Pipeline p, core::ForceMode f) {
    return summaryLine(boidsRun(core::EngineKind::Cpu, p, f));
  };
  EXPECT_NE(line(core::Pipeline::Coherent, core::ForceMode::Boids).find(" cell_width=2 "), std::string::npos);
  EXPECT_NE(line(core::Pipeline::Naive, core::ForceMode::Boids).find(" cell_width=- "), std::string::npos);
  EXPECT_NE(line(core::Pipeline::Tree, core::ForceMode::Gravity).find(" cell_width=- "), std::string::npos);
  EXPECT_NE(line(core::Pipeline::Coherent, core::ForceMode::Gravity).find(" cell_width=- "), std::string::npos);
}

TEST(Summary, FramesDrawnAndWrittenAndNoRateFromOneFrame) {
  RunSummary s = boidsRun(core::EngineKind::Cpu, core::Pipeline::Coherent, core::ForceMode::Boids);
  EXPECT_EQ(summaryLine(s).find("fps="), std::string::npos) << "no frames, no frame keys";
  s.rendered = true;
  s.renderMs = {4.0};
  s.framesWritten = 1;
  std::string l = summaryLine(s);
  EXPECT_NE(l.find(" fps=- "), std::string::npos) << l;
  EXPECT_NE(l.find(" frames_drawn=1 frames_written=1"), std::string::npos) << l;
  s.renderMs = {4.0, 4.0, 4.0};
  s.framesWritten = 0;
  l = summaryLine(s);
  EXPECT_NE(l.find(" fps=200.0 "), std::string::npos) << l;
  EXPECT_NE(l.find(" frames_drawn=3 frames_written=0"), std::string::npos) << l;
}

// A run whose steps slow down, as a collapsing galaxy's do: the first tenth at 20 steps/s, the rest
// at 5 steps/s. Once a tenth is done and the slow rate has run a while, the estimate is within 20%.
TEST(ProgressEstimate, EstimateFollowsTheRecentRate) {
  double clock = 0;
  Progress p("steps", 600, [&clock] { return clock; });
  const auto secondsPerStep = [](long i) { return i < 60 ? 0.05 : 0.2; };
  double total = 0;
  for (long i = 0; i < 600; ++i) total += secondsPerStep(i);
  for (long done = 0; done < 600; ++done) {
    p.update(done);
    if (done >= 90) {
      const double trueLeft = total - clock;
      EXPECT_NEAR(p.secondsLeft(), trueLeft, 0.2 * trueLeft) << "after " << done << " steps at " << clock << " s";
    }
    clock += secondsPerStep(done);
  }
}

TEST(ProgressEstimate, SteadyRunIsExact) {
  double clock = 0;
  Progress p("steps", 1000, [&clock] { return clock; });
  for (long done = 0; done < 1000; ++done) {
    p.update(done);
    if (done >= 100) {
      EXPECT_NEAR(p.secondsLeft(), 0.01 * double(1000 - done), 1e-6);
    }
    clock += 0.01;
  }
}

// G twice returns to the starting world; a file's state stays under either force.
TEST(ViewerState, ForceSwitchReturnsToTheStartingWorld) {
  core::ScenarioSpec start;
  start.name = "dense";
  start.denseNeighbours = 4;
  start.n = 20000;
  const core::ScenarioSpec gravity = worldForForce(start, start, core::ForceMode::Boids, core::ForceMode::Gravity);
  EXPECT_EQ(gravity.name, "plummer");
  EXPECT_EQ(gravity.n, 20000u);
  const core::ScenarioSpec back = worldForForce(gravity, start, core::ForceMode::Boids, core::ForceMode::Boids);
  EXPECT_EQ(scenarioLabel(back), "dense:4");
  EXPECT_EQ(back.n, 20000u);
  // Started in a galaxy collision: boids get the uniform cube, gravity the galaxies again.
  core::ScenarioSpec galaxies;
  galaxies.name = "galaxies";
  const auto boids = worldForForce(galaxies, galaxies, core::ForceMode::Gravity, core::ForceMode::Boids);
  EXPECT_EQ(boids.name, "uniform");
  EXPECT_EQ(worldForForce(boids, galaxies, core::ForceMode::Gravity, core::ForceMode::Gravity).name, "galaxies");
  core::ScenarioSpec file;
  file.name = "file:state.txt";
  EXPECT_EQ(worldForForce(file, file, core::ForceMode::Gravity, core::ForceMode::Boids).name, "file:state.txt");
}

// The HUD names the pipeline that runs, not only the one asked for.
TEST(ViewerState, HudNamesWhatRuns) {
  core::SimParams p = core::defaultParams();
  core::ScenarioSpec s;
  s.name = "dense";
  s.denseNeighbours = 4;
  p.force = core::ForceMode::Boids;
  p.pipeline = core::Pipeline::Verlet;
  EXPECT_EQ(runDescription(s, 10000, p, "splat", "velocity", 12),
            "dense:4 | N=10000 | boids on verlet | splat, velocity | 12 steps");
  p.force = core::ForceMode::Gravity;
  s.name = "plummer";
  EXPECT_EQ(runDescription(s, 5000, p, "sprites", "speed", 0),
            "plummer | N=5000 | gravity on coherent (verlet asked) | sprites, speed | 0 steps");
}

}  // namespace
}  // namespace murmur::app
