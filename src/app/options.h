// The command line, parsed and validated into plain structs (CLI11 stays in the files behind
// options.cpp: src/app/options_internal.h lists them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/scenarios.h"

namespace murmur::app {

enum class Mode { Viewer, Headless, Bench, Accuracy };

// The viewer's and headless runs' world when no --scenario is given: dense, this many neighbours.
constexpr double kDefaultWorldNeighbours = 4.0;

// `murmur bench`: the sweep is the product of the lists (an empty list takes the preset's, else
// the default: boids; every pipeline; 100k bodies, 10k on the CPU engine; the parameters'
// block size and cell width). The bench subcommand has its own options for these (list-valued,
// `bench --help` shows them); see bench/README.md.
struct BenchOptions {
  std::vector<core::ForceMode> forces;
  std::vector<core::Pipeline> pipelines;
  bool textbook = false;  // also (or, with no pipelines, only) the textbook coherent baseline
  std::vector<uint64_t> counts;  // bodies per configuration
  std::vector<int> blockSizes, cellWidths;
  std::string scenario;  // --scenario or the preset's; empty = the default world for boids, plummer for gravity
  // The default boids world (no --scenario, no preset's): the viewer's, dense at
  // kDefaultWorldNeighbours unless --neighbours; the uniform cube when --half-size is given.
  bool defaultDense = true;
  bool neighboursGiven = false;
  std::string preset;    // --preset NAME (its lists and parameters already applied by parseOptions)
  int warmup = 5;        // untimed steps per configuration after the reset
  int steps = 30;        // timed steps per repeat
  int repeats = 3;       // timed runs per configuration; statistics pool all their steps
  double maxSeconds = 3.0;  // time budget per configuration (fewer timed steps when slow)
  bool render = false;   // also draw an offscreen frame per step (render_ms, frame_fps)
  bool append = false;   // append rows to an existing CSV (no second header)
  bool cpuBaseline = false;  // repeat the configurations with N <= kCpuBaselineMaxN on the CPU engine
  bool reference = false;    // also time NVIDIA's nbody formulation next to every CUDA naive gravity row
  // --observe: sample the scalar observables after every timed step (observe_ms, untimed in
  // sim_ms); --observe-flocks: the flock count too (boids)
  bool observe = false, observeFlocks = false;
  std::string csv = "bench.csv";  // the sidecar is csv + ".json"
  std::string commandLine;        // argv, shell-quoted, for the sidecar
};

struct Options {
  Mode mode = Mode::Viewer;
  core::SimParams params = core::defaultParams();
  bool forceSet = false;  // --force given (else the scenario's natural force)
  core::EngineKind engine = core::EngineKind::Cpu;
  bool engineSet = false;
  core::ScenarioSpec scenario;
  bool nSet = false;
  bool pipelineSet = false;  // --pipeline given (several ranks pick the one they run otherwise)
  bool defaultWorld = false;  // the default world, pipeline not chosen: resolveDefaults picks it by N
  float dt = 0;           // --dt for the active force mode (0 = the parameter default)
  int steps = 100;        // steps to run headless (the benchmark has its own, bench.steps)
  int warmup = 0;         // --warmup K: headless steps before the timed ones (not timed, not counted)
  uint64_t startStep = 0; // the step a saved state (file: with a header) was written at
  std::string fileForce;  // the force a saved state records ("" = not recorded)
  bool render = true;     // --no-render clears it
  bool profile = false;   // --profile: per-stage times (Engine::setProfiling) in the summary
  std::string out;        // --out FILE: final state
  std::string screenshot; // --screenshot FILE.png
  std::string record;     // --record FILE.mp4, or a PNG path pattern with %0Nd
  int recordEvery = 1;    // --record-every K steps
  std::string csv;        // --csv FILE (viewer FPS log; the benchmark's rows)
  // Observables and trajectories (docs/observables.md)
  std::string observables;     // --observables FILE.csv: one row per sample
  int observeEvery = 10;       // --observe-every K steps (headless file; the viewer's panel)
  bool observeFlocks = false;  // --observables-flocks: the flock columns too (boids)
  std::string trajectory;      // --trajectory FILE.h5 (and FILE.xdmf beside it)
  int trajectoryEvery = 10;    // --trajectory-every K steps
  // The options of the main command given on the command line, with their values as typed
  // (resolveDefaults refuses those the run would ignore).
  std::vector<std::pair<std::string, std::string>> typed;
  // The same for the options and flags of `murmur bench` (a flag's value is "").
  std::vector<std::pair<std::string, std::string>> benchTyped;
  int frames = 0;         // --frames K: frames to render headless (0 = steps); the window closes after K
  int stepsPerFrame = 1;  // --steps-per-frame K (headless): simulation steps between two frames
  int width = 1280, height = 720;
  float zoom = 1.0f;      // camera: > 1 moves closer than the fitted view
  std::string drawMode, colourMode;  // empty = renderer default for the force and N
  float slab = 0;         // --slab: splat slab thickness, world units (0 = everything)
  float fog = -1;         // --fog 0..1 (< 0: the default)
  float edl = -1;         // --edl >= 0 (< 0: the default)
  bool warpReduce = false; // --warp-reduce (measured slower on an H100: bench/results/h100/README.md)
  bool box = true;         // --box off: no world box over the frame
  bool legend = true;      // --legend off: no colour legend in the corner
  bool checksum = true;    // --checksum off (headless): no final state gathered; the summary says checksum=off
  BenchOptions bench;
  // accuracy: Plummer bodies of the 1000-step energy drift (0: skip); without --drift-n 16384 on a
  // GPU and 1000 on the CPU engine (1000 all-pairs steps of 16k bodies take minutes there).
  uint64_t driftBodies = 16384;
  bool driftSet = false;
};

// Parses argv. Returns false when help was printed (exit 0). Throws core::UsageError with one
// line for every invalid option or value. Machine-dependent defaults (engine, N) are left to resolveDefaults().
bool parseOptions(int argc, char** argv, Options& out);

// Fills defaults that depend on the machine: the engine (cuda when available), N (100k on a GPU,
// 10k on the CPU engine) and the force mode from the scenario.
void resolveDefaults(Options& o);

}  // namespace murmur::app
