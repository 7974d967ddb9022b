// The headless summary line: one line of key=value words per run, read by scripts that split it
// on spaces (bench/scaling_csv.py). A key that does not apply to the run keeps its place with the
// value "-" (block= off the CUDA engine, cell_width= without a boids grid, fps= from one frame).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/scenarios.h"

namespace murmur::app {

struct RunSummary {
  core::EngineKind engine = core::EngineKind::Cpu;
  core::SimParams params;
  core::ScenarioSpec scenario;
  size_t n = 0;
  int steps = 0;
  std::vector<double> stepMs;    // ms per step, one entry per timed iteration
  std::vector<double> renderMs;  // ms per drawn frame
  double totalMs = 0;
  std::optional<uint64_t> checksum;  // none with --checksum off: printed as checksum=off
  bool rendered = false, interop = false;
  int framesWritten = 0;  // --record frames (video or PNG files) and the --screenshot
};

// The scenario as the summary line, the bench CSV's scenario column and the viewer's HUD name it:
// "dense:K" for the dense world at K neighbours per boid (the default world of the viewer,
// headless runs and a boids sweep is dense:4; --scenario dense alone is dense:8), the scenario's
// name otherwise.
// "dense:4", "plummer"; a 2D world (dims 2) adds "/2d": "dense:4/2d".
std::string scenarioLabel(const std::string& name, double denseNeighbours, int dims = 3);
inline std::string scenarioLabel(const core::ScenarioSpec& s) { return scenarioLabel(s.name, s.denseNeighbours); }

// The summary line without its newline (and without " interrupted=...", which the caller adds).
std::string summaryLine(const RunSummary& s);

}  // namespace murmur::app
