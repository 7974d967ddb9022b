// `murmur bench`, the files: one CSV row per measured configuration and the JSON sidecar.
#include "app/bench_output.h"
#include "app/summary.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "app/git_sha.h"
#include "core/atomic_file.h"
#include "core/errors.h"
#include "core/format.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/verlet.h"

namespace murmur::app {

using core::EngineKind;
using core::ForceMode;
using core::Pipeline;
using core::UsageError;

// Three significant digits without an exponent: 0.0123, 1.23, 812, 43210.
double observeCostMs(const Measurement& m) {
  return stepStats(m.sampledStepMs).median - stepStats(m.stepMs).median;
}

std::string shortNumber(double v) {
  char buf[64];
  if (std::fabs(v) >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string cutColumn(const Measurement& m) {
  const bool warmup = m.warmup < m.warmupAsked, steps = m.stepsPerRepeat < m.stepsAsked;
  if (warmup && steps) return "warmup+steps";
  return warmup ? "warmup" : steps ? "steps" : "";
}

std::string cutText(const Measurement& m, int repeats, double maxSeconds) {
  std::string parts;
  if (m.warmup < m.warmupAsked)
    parts = "warm-up cut to " + std::to_string(m.warmup) + " of " + std::to_string(m.warmupAsked);
  if (m.stepsPerRepeat < m.stepsAsked)
    parts += (parts.empty() ? "timed steps cut to " : " and timed steps to ") + std::to_string(m.stepsPerRepeat) +
             " of " + std::to_string(m.stepsAsked) + (repeats > 1 ? " per repeat" : "");
  if (parts.empty()) return parts;
  char limit[48];
  std::snprintf(limit, sizeof limit, " by --max-seconds %g", maxSeconds);
  return parts + limit;
}

Sidecar::Sidecar(std::string path, bool append) : path_(std::move(path)) {
  doc_ = json{{"runs", json::array()}};
  if (!append) return;
  std::ifstream in(path_);
  if (!in) return;
  try {
    json old;
    in >> old;
    if (old.contains("runs") && old["runs"].is_array()) doc_ = std::move(old);
  } catch (const json::exception&) {
    std::fprintf(stderr, "bench: %s is not valid JSON; starting it afresh\n", path_.c_str());
  }
}

void Sidecar::save() const {
  // Checked writes to a temporary renamed into place: a sweep killed mid-write or a full disk
  // leaves the previous version whole.
  core::writeFileAtomically("--csv (sidecar)", path_, doc_.dump(2) + "\n");
}

core::CsvRow makeRow(const BenchConfig& c, const std::string& deviceName, const core::DeviceInfo& device,
                     const Measurement& m, const StepStats& st) {
  core::CsvRow row;
  row.set("timestamp", core::isoUtcNow());
  row.set("git_sha", std::string(gitSha()));
  row.set("gpu", deviceName);
  if (c.engine == EngineKind::Cuda) {
    row.set("cc", device.cc);
    row.set("driver", device.driver);
    row.set("cuda", device.runtime);
  }
  row.set("engine", std::string(core::toString(c.engine)));
  row.set("force", std::string(core::toString(c.force)));
  core::SimParams ran = m.params;
  ran.force = c.force;
  row.set("rule", std::string(core::activeRule(ran).name));
  if (core::runsLocalRule(ran)) row.set("boundary", std::string(core::toString(ran.boundary)));
  if (core::runsLocalRule(ran) && ran.topological > 0) row.set("topological", static_cast<long long>(ran.topological));
  row.set("pipeline", pipelineName(c));
  row.set("scenario", scenarioLabel(c.scenario, c.denseNeighbours, m.params.dims));
  row.set("n", static_cast<long long>(m.n));
  if (c.blockSize) row.set("block_size", static_cast<long long>(c.blockSize));
  if (c.cellWidth) row.set("cell_width_factor", static_cast<long long>(c.cellWidth));
  if (m.hasNeighbours) {
    row.set("neighbours_mean", m.neighbours.meanNeighbours);
    row.set("neighbours_timed", m.neighboursTimed.meanNeighbours);
  }
  row.set("render", static_cast<long long>(m.rendered ? 1 : 0));
  row.set("warmup_steps", static_cast<long long>(m.warmup));
  row.set("steps", static_cast<long long>(m.stepMs.size()));
  row.set("cut", cutColumn(m));
  row.set("sim_ms_median", st.median);
  row.set("sim_ms_min", st.min);
  row.set("sim_ms_p90", st.p90);
  row.set("steps_per_s", 1000.0 / st.median);
  // Stages a step does not have stay empty rather than 0 (the pipeline table says which it has:
  // naive builds no grid, scattered does not reorder, only verlet keeps lists).
  if (m.profiled) {
    const core::StepProfile& s = m.stageMean;
    for (int k = 0; k < core::kStageCount; ++k) {
      const auto stage = static_cast<core::Stage>(k);
      if (stage == core::Stage::Comm) continue;  // not a column: several ranks report it in their summary
      const bool integrates = stage != core::Stage::Integrate || !c.reference;
      if (core::hasStage(c.pipeline, c.force, stage) && integrates) row.set(core::kStageColumns[k], s.at(stage));
    }
    if (core::pipelineInfo(core::effectivePipeline(c.pipeline, c.force)).lists)
      row.set("list_steps", static_cast<long long>(core::verletPlan(m.params).steps));
  }
  if (m.observed && !m.sampledStepMs.empty()) {
    row.set("observe_ms", observeCostMs(m));
    row.set("observe_flocks", static_cast<long long>(m.observedFlocks ? 1 : 0));
  }
  if (m.rendered) {
    row.set("render_ms", m.renderMs);
    row.set("frame_fps", 1000.0 / (st.median + m.renderMs));
    row.set("draw", m.drawMode);
  }
  if (c.force == ForceMode::Gravity) {
    // NVIDIA's nbody convention for every pipeline: N^2 interactions per step, 20 flops each.
    // For the grid pipelines this is the all-pairs work the approximation stands in for.
    const double ips = double(m.n) * double(m.n) / (st.median / 1000.0);
    row.set("interactions_per_s", ips);
    row.set("gflops", 20.0 * ips / 1e9);
  }
  return row;
}

core::CsvRow runRow(core::EngineKind kind, const core::SimParams& params, const core::ScenarioSpec& scenario,
                    core::Engine& engine, size_t n, const RunSamples& samples) {
  BenchConfig c;
  c.engine = kind;
  c.force = params.force;
  c.pipeline = params.pipeline;
  c.scenario = scenario.name;
  c.denseNeighbours = scenario.denseNeighbours;
  c.n = n;
  if (kind == EngineKind::Cuda) c.blockSize = params.blockSize;
  if (core::hasCellWidth(params.pipeline, params.force)) c.cellWidth = params.cellWidthFactor;
  Measurement m;
  m.n = n;
  m.stepMs = samples.stepMs;
  m.params = params;
  m.warmup = samples.warmup;
  m.rendered = !samples.renderMs.empty();
  m.drawMode = samples.drawMode;
  m.profiled = samples.stageSum && !samples.stepMs.empty();
  if (m.profiled) m.stageMean = *samples.stageSum, m.stageMean *= 1.0 / double(samples.stepMs.size());
  if (m.rendered) m.renderMs = stepStats(samples.renderMs).median;
  const StepStats st = samples.stepMs.empty() ? StepStats{} : stepStats(samples.stepMs);
  core::CsvRow row = makeRow(c, engine.deviceName(), engine.deviceInfo(), m, st);
  if (samples.stepMs.empty()) {
    for (const char* col : {"sim_ms_median", "sim_ms_min", "sim_ms_p90", "steps_per_s", "frame_fps"})
      row.set(col, std::string());
  }
  return row;
}

json configJson(const BenchConfig& c, size_t n) {
  return json{{"engine", core::toString(c.engine)},
              {"force", core::toString(c.force)},
              {"pipeline", pipelineName(c)},
              {"scenario", scenarioLabel(c.scenario, c.denseNeighbours)},
              {"n", n},
              {"block_size", c.blockSize ? json(c.blockSize) : json(nullptr)},
              {"cell_width_factor", c.cellWidth ? json(c.cellWidth) : json(nullptr)}};
}

json deviceJson(const core::DeviceInfo& d) {
  return json{{"name", d.name}, {"cc", d.cc}, {"driver", d.driver}, {"runtime", d.runtime}};
}

}  // namespace murmur::app
