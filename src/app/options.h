// The command line, parsed and validated into plain structs (CLI11 stays in options.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/scenarios.h"

namespace murmur::app {

enum class Mode { Viewer, Headless, Bench, Accuracy };

struct BenchOptions {
  std::vector<std::string> forces, pipelines;  // names
  std::vector<uint64_t> counts;
  std::vector<int> blockSizes, cellWidths;
  std::string preset;
  int warmup = 5;
  int steps = 30;
  int repeats = 3;
  bool render = false;
  bool append = false;
  bool cpuBaseline = false;
  std::string csv = "bench.csv";
};

struct Options {
  Mode mode = Mode::Viewer;
  core::SimParams params = core::defaultParams();
  bool forceSet = false;  // --force given (else the scenario's natural force)
  core::EngineKind engine = core::EngineKind::Cpu;
  bool engineSet = false;
  core::ScenarioSpec scenario;
  bool nSet = false;
  float dt = 0;           // --dt for the active force mode (0 = the parameter default)
  int steps = 100;
  bool render = true;     // --no-render clears it
  bool profile = false;   // print per-stage times
  std::string out;        // --out FILE: final state
  std::string screenshot; // --screenshot FILE.png
  std::string record;     // --record FILE.mp4
  std::string csv;        // --csv FILE (viewer FPS log / headless timings)
  int frames = 0;         // --frames K (headless rendering); 0 = steps
  int width = 1280, height = 720;
  std::string drawMode, colourMode;  // empty = renderer default for the force
  BenchOptions bench;
};

// Parses argv. Returns false when help was printed (exit 0). Throws core::UsageError with one
// line for every invalid option or value. Engine-dependent defaults (N) are left to resolve().
bool parseOptions(int argc, char** argv, Options& out);

// Fills defaults that depend on the machine: the engine (cuda when available), N (100k on a GPU,
// 10k on the CPU engine) and the force mode from the scenario.
void resolveDefaults(Options& o);

}  // namespace murmur::app
