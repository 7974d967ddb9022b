// `murmur bench`, the files: what one configuration's measurement is, and how it becomes a CSV row
// (docs/design.md#the-benchmark-csv-schema) and an entry of the JSON sidecar (<csv>.json), which keeps what the CSV cannot:
// the command line, the full parameters, the devices, the skipped configurations and why.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/bench.h"
#include "core/csv.h"
#include "core/engine.h"
#include "core/observables.h"

namespace murmur::app {

using json = nlohmann::ordered_json;

// What measuring one configuration found.
struct Measurement {
  size_t n = 0;
  std::vector<double> stepMs;         // every timed step, ms
  std::vector<double> repeatMedians;  // per repeat, ms
  core::StepProfile stageMean;        // the engine's stage times, mean over the timed steps
  bool profiled = true;               // stageMean was measured (a headless run without --profile: no)
  bool rendered = false;
  bool interop = false;
  double renderMs = 0;  // median render_ms (DrawSource::drawFrame) over the timed steps
  std::string drawMode;  // the offscreen view's draw mode
  bool hasNeighbours = false;
  core::NeighbourStats neighbours;       // of the initial state
  core::NeighbourStats neighboursTimed;  // of the state the timed steps left (hasNeighbours)
  core::SimParams params{};
  int warmup = 0;  // warm-up steps actually run
  // What the time budget (--max-seconds) left of what was asked: the warm-up steps asked
  // (warmup < warmupAsked: cut), and the timed steps per repeat asked and run (stepsPerRepeat <
  // stepsAsked: cut). All 0 where no budget applies (a headless run's --csv).
  int warmupAsked = 0, stepsAsked = 0, stepsPerRepeat = 0;
  // bench --observe: after the timed steps, as many steps again with a sample after each, each
  // step and its sample timed together (sampledStepMs), and the last sample's values
  // (docs/observables.md).
  bool observed = false, observedFlocks = false;
  std::vector<double> sampledStepMs;
  core::Observables lastObservables;
};

// What a sample after every step adds to a step: the median step with its sample less the median
// step (observe_ms; it can come out slightly negative where sampling costs less than the noise).
double observeCostMs(const Measurement& m);

// Three significant digits without an exponent: 0.0123, 1.23, 812, 43210.
std::string shortNumber(double v);

// The CSV's cut column: "warmup" when the budget cut the warm-up, "steps" when it cut the timed
// steps, "warmup+steps" when both, "" when nothing was cut.
std::string cutColumn(const Measurement& m);
// The same for the progress line, with the counts and the limit: "warm-up cut to 173 of 300 by
// --max-seconds 3", "timed steps cut to 12 of 30 per repeat by --max-seconds 0.5"; "" when
// nothing was cut.
std::string cutText(const Measurement& m, int repeats, double maxSeconds);

// The CSV row of a measured configuration, for `murmur bench` and a headless run's --csv alike.
// Stages a pipeline does not have stay empty.
core::CsvRow makeRow(const BenchConfig& c, const std::string& deviceName, const core::DeviceInfo& device,
                     const Measurement& m, const StepStats& st);
// The row of a run that is not a sweep (a headless run's --csv, the viewer's FPS log): the bench
// row of the same setup, from the run's own samples. stageSum: the stage times summed over
// stepMs, or null when the run was not profiled; drawMode: the frames' draw mode ("" when none
// were drawn).
struct RunSamples {
  std::vector<double> stepMs, renderMs;
  const core::StepProfile* stageSum = nullptr;
  std::string drawMode;
  int warmup = 0;
};
core::CsvRow runRow(core::EngineKind kind, const core::SimParams& params, const core::ScenarioSpec& scenario,
                    core::Engine& engine, size_t n, const RunSamples& samples);
json configJson(const BenchConfig& c, size_t n);
json deviceJson(const core::DeviceInfo& d);

// The JSON sidecar: one entry per `murmur bench` run, rewritten after every configuration so
// that an interrupted sweep keeps what it measured (like the CSV, which flushes every row).
class Sidecar {
 public:
  // append: keep the runs already in the file (a file that does not parse starts afresh).
  Sidecar(std::string path, bool append);
  json& run() { return doc_["runs"].back(); }
  void beginRun(json run) { doc_["runs"].push_back(std::move(run)); }
  // Throws UsageError when the file cannot be written.
  void save() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  json doc_;
};

}  // namespace murmur::app
