// `murmur bench`: sweeps over engine x force x pipeline x N x block size x cell width. Each
// configuration is timed per step (step + synchronize, wall clock) and written as one tidy CSV
// row (docs/design.md#the-benchmark-csv-schema) plus an entry in a JSON sidecar (<csv>.json). Three parts: the plan (this
// header, bench_plan.cpp), the run (bench.cpp, runBench in run.h) and the files
// (bench_output.h). bench/README.md documents the presets, the columns and how to plot them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/options.h"
#include "core/params.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"

namespace murmur::app {

// Sizes above which a configuration is reported skipped instead of run. An all-pairs step costs
// N^2 pair tests: at these sizes one configuration (warm-up + repeats x steps) already takes
// minutes, and the next size up would take hours. The CPU engine's grid beyond 2M bodies is
// minutes per configuration as well.
constexpr uint64_t kCudaNaiveBoidsMaxN = 2000000;
constexpr uint64_t kCudaNaiveGravityMaxN = uint64_t(1) << 20;  // 1M as 2^20, NVIDIA's sample's largest
constexpr uint64_t kCpuNaiveMaxN = 50000;
constexpr uint64_t kCpuGridMaxN = 2000000;
// Gravity on the CPU grid: the near field of a centrally concentrated cluster is close to all
// pairs (a Plummer sphere of 60k bodies takes seconds per step on two cores).
constexpr uint64_t kCpuGravityGridMaxN = 100000;
// --cpu-baseline repeats the configurations up to this N on the CPU engine.
constexpr uint64_t kCpuBaselineMaxN = 50000;

// A named sweep (`--preset NAME`). Empty lists leave the default; lists given on the command
// line replace the preset's.
struct BenchPreset {
  std::string name;
  std::string summary;  // one line for --help and the README
  std::vector<core::ForceMode> forces;
  std::vector<core::Pipeline> pipelines;
  std::vector<uint64_t> counts;
  std::vector<int> blockSizes, cellWidths;
  std::string scenario;                          // empty: per-force default
  void (*applyParams)(core::SimParams&) = nullptr;  // parameters the preset fixes
  bool reference = false;                        // sets --reference
  bool textbook = false;                         // also the textbook coherent baseline
};

const std::vector<BenchPreset>& benchPresets();

// Throws core::UsageError naming --preset, the value and the known names.
const BenchPreset& findBenchPreset(const std::string& name);

// Copies the preset's lists (and scenario) into the ones `b` leaves empty.
void fillFromPreset(const BenchPreset& preset, BenchOptions& b);

// argv as one line a shell would accept, program name shortened to "murmur".
std::string shellQuotedCommandLine(int argc, char** argv);

// The CSV's pipeline value for --reference rows.
constexpr const char* kReferencePipelineName = "sample-reference";

// 5000 -> "5k", 2500000 -> "2.5M", 1234 -> "1234".
std::string withSuffix(uint64_t n);

// Why a configuration of this size is not run (the limits above); empty when it is.
std::string sizeLimitReason(core::EngineKind engine, core::ForceMode force, core::Pipeline pipeline, uint64_t n);

// One point of the sweep.
struct BenchConfig {
  core::EngineKind engine = core::EngineKind::Cpu;
  core::ForceMode force = core::localRuleForce();
  core::Pipeline pipeline = core::defaultPipeline();
  std::string scenario;
  double denseNeighbours = 8;  // the dense scenario's neighbours per boid (scenarioLabel)
  uint64_t n = 0;
  int blockSize = 0;       // 0: not applicable (the CPU engine has no launch configuration)
  int cellWidth = 0;       // 0: not applicable (naive has no grid; gravity sizes its own grid)
  bool textbook = false;   // the textbook coherent baseline (cuda/textbook_coherent.h), not the engine's
  std::string skipReason;  // set when the size limits above rule the configuration out
  // The sample-formulation kernel (--reference) instead of the engine: CUDA, gravity, pipeline
  // naive; its CSV rows say pipeline=sample-reference.
  bool reference = false;
};

// The configurations of o's sweep in run order (o after resolveDefaults): per engine (o.engine,
// then the CPU baseline), force, N, pipeline, block size, cell width. Dimensions that do not
// apply to a configuration collapse, so no two configurations measure the same thing.
std::vector<BenchConfig> planBench(const Options& o);

// The textbook coherent grid's name in --pipeline lists and the CSV: the bench runs it beside the
// engine's pipelines as a yardstick (boids, CUDA engine only; not a pipeline of the simulator).
constexpr const char* kTextbookPipeline = "textbook-coherent";

// "cuda boids coherent n=1000000 block=256 cw=1" (a dash where a dimension does not apply).
// The CSV's pipeline value: the pipeline's name, kReferencePipelineName or kTextbookPipeline.
std::string pipelineName(const BenchConfig& c);

std::string describe(const BenchConfig& c);

// Per-step times of one configuration, in ms. p90 is the nearest-rank 90th percentile; the
// median of an even count is the mean of the middle two.
struct StepStats {
  double median = 0, min = 0, p90 = 0;
};
StepStats stepStats(std::vector<double> ms);

// The time budget per configuration (--max-seconds): the warm-up stops once its steps have taken
// a quarter of it (at least one step runs), and each repeat runs fewer timed steps when --steps
// steps at the warm-up's fastest step (warmMs) would overrun the rest of it split over the
// repeats (at least 2 steps, so a median exists, but never more than --steps).
// budgetedWarmup: the warm-up steps a configuration runs at stepMs per step.
int budgetedWarmup(const BenchOptions& b, double stepMs);
int stepsWithinBudget(const BenchOptions& b, double warmMs);

// The time left of a sweep, from what the configurations done measured. Each (engine, force,
// pipeline) keeps its configurations' wall time per step (step, wait and frame); another N of it
// takes the time of the measured N nearest to it, scaled by the work of a step (all pairs N^2, the
// boids grid N, the gravity grid N times the occupied cells, at most gridDim^3). That time per
// step runs through the budget above (the warm-up and the timed steps it would cut, the steps
// again with --observe), and every configuration adds the mean time the ones done spent outside
// their steps (scenario, reset, checks). A combination not measured yet takes the mean
// configuration so far.
class SweepEstimate {
 public:
  SweepEstimate(const BenchOptions& b, int gravityGridDim);
  // A measured configuration: its wall seconds in all, the steps it ran (warm-up, timed and
  // sampled) and its median wall time per step, ms. `n` is the bodies it ran (a file scenario's
  // plan says 0).
  void add(const BenchConfig& c, size_t n, double seconds, long stepsRun, double msPerStep);
  // Seconds for the configurations plan[from..] (skipped ones take none), or -1 before any
  // configuration was measured.
  double remaining(const std::vector<BenchConfig>& plan, size_t from) const;
  // Seconds of steps one configuration runs at msPerStep under the budget.
  double stepSeconds(double msPerStep) const;

 private:
  struct Done {
    size_t n;
    double msPerStep;
  };
  double cost(const BenchConfig& c, size_t n) const;
  BenchOptions b_;
  double gravityCells_;
  std::vector<std::pair<BenchConfig, Done>> done_;
  double seconds_ = 0, outside_ = 0;  // sums over the configurations done
  size_t fileN_ = 0;                  // the bodies a file scenario turned out to hold
};

// A pipeline whose work repeats over several steps (a verlet list serves k steps, one of which
// builds it) is summarised in whole cycles: each run of `cycle` consecutive samples (the last may
// be shorter) is replaced by its mean, so that a median cannot pick the samples without a build.
void spreadCycleMeans(std::vector<double>& ms, size_t cycle);

}  // namespace murmur::app
