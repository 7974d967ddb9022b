#include "app/bench.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "app/engine_factory.h"
#include "app/offscreen.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "app/run.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/scenarios.h"

// Set by CMake at configure time (git rev-parse --short HEAD).
#ifndef MURMUR_GIT_SHA
#define MURMUR_GIT_SHA "unknown"
#endif

namespace murmur::app {

using core::EngineKind;
using core::ForceMode;
using core::Pipeline;
using core::UsageError;
using json = nlohmann::ordered_json;

namespace {

// The CIS 565 project's world: half-size 100 and radii 5/3/5. They are the defaults too; the
// preset pins them so that its results stay comparable if the defaults ever move.
void cis565Params(core::SimParams& p) {
  p.halfSize = 100.0f;
  p.boids.cohesionRadius = 5.0f;
  p.boids.separationRadius = 3.0f;
  p.boids.alignmentRadius = 5.0f;
}

const std::vector<std::string> kAllPipelines = {"naive", "scattered", "coherent"};

}  // namespace

const std::vector<BenchPreset>& benchPresets() {
  static const std::vector<BenchPreset> presets = {
      {"cis565", "boids, uniform cube of half-size 100, radii 5/3/5, N 5k..5M, block 128",
       {"boids"}, kAllPipelines,
       {5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2000000, 5000000},
       {128}, {}, "uniform", cis565Params},
      {"constant-density", "boids, world grown with N so every boid has ~8 neighbours, N 25k..10M",
       {"boids"}, kAllPipelines,
       {25000, 100000, 250000, 1000000, 2500000, 5000000, 10000000},
       {}, {}, "dense", nullptr},
      {"gravity", "gravity, Plummer sphere, N 16k..1M, block sizes 64..1024",
       {"gravity"}, kAllPipelines,
       {16000, 32000, 64000, 128000, 256000, 512000, 1000000},
       {64, 128, 256, 512, 1024}, {}, "plummer", nullptr},
  };
  return presets;
}

const BenchPreset& findBenchPreset(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& p : benchPresets()) names.push_back(p.name);
  const std::string valid = parseName("--preset", name, names);
  for (const auto& p : benchPresets())
    if (p.name == valid) return p;
  throw UsageError("--preset " + name + " is unknown");  // unreachable: parseName threw
}

void fillFromPreset(const BenchPreset& preset, BenchOptions& b) {
  if (b.forces.empty()) b.forces = preset.forces;
  if (b.pipelines.empty()) b.pipelines = preset.pipelines;
  if (b.counts.empty()) b.counts = preset.counts;
  if (b.blockSizes.empty()) b.blockSizes = preset.blockSizes;
  if (b.cellWidths.empty()) b.cellWidths = preset.cellWidths;
  if (b.scenario.empty()) b.scenario = preset.scenario;
}

std::string shellQuotedCommandLine(int argc, char** argv) {
  // The sidecar is committed with the results: the program's own path would say nothing there.
  std::string line = "murmur";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    bool plain = !a.empty();
    for (char c : a)
      plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string("_./:=,+-%@").find(c) != std::string::npos);
    if (plain) {
      line += " " + a;
      continue;
    }
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + q + "'";
  }
  return line;
}

namespace {

std::string withSuffix(uint64_t n) {
  if (n >= 1000000 && n % 100000 == 0) {
    std::ostringstream s;
    s << double(n) / 1e6 << "M";
    return s.str();
  }
  if (n >= 1000 && n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

// Why a configuration of this size is not run; empty when it is.
std::string sizeLimitReason(EngineKind engine, ForceMode force, Pipeline pipeline, uint64_t n) {
  uint64_t limit = 0;
  std::string what;
  if (engine == EngineKind::Cuda) {
    if (pipeline != Pipeline::Naive) return {};
    limit = force == ForceMode::Boids ? kCudaNaiveBoidsMaxN : kCudaNaiveGravityMaxN;
    what = std::string("the GPU naive ") + core::toString(force) + " limit";
  } else if (pipeline == Pipeline::Naive) {
    limit = kCpuNaiveMaxN;
    what = "the CPU engine's naive limit";
  } else {
    limit = force == ForceMode::Boids ? kCpuGridMaxN : kCpuGravityGridMaxN;
    what = std::string("the CPU engine's ") + core::toString(force) + " grid limit";
  }
  if (n <= limit) return {};
  return "n=" + std::to_string(n) + " is above " + what + " of " + withSuffix(limit) +
         " bodies (a configuration there takes too long)";
}

std::string defaultScenario(ForceMode f) { return f == ForceMode::Boids ? "uniform" : "plummer"; }

}  // namespace

std::vector<BenchConfig> planBench(const Options& o) {
  const BenchOptions& b = o.bench;
  std::vector<EngineKind> engines = {o.engine};
  if (b.cpuBaseline && o.engine != EngineKind::Cpu) engines.push_back(EngineKind::Cpu);
  const std::vector<std::string> forces = b.forces.empty() ? std::vector<std::string>{"boids"} : b.forces;
  const std::vector<std::string> pipelines = b.pipelines.empty() ? kAllPipelines : b.pipelines;
  const std::vector<uint64_t> counts =
      b.counts.empty() ? std::vector<uint64_t>{o.engine == EngineKind::Cuda ? 100000u : 10000u} : b.counts;
  const std::vector<int> blockSizes = b.blockSizes.empty() ? std::vector<int>{o.params.blockSize} : b.blockSizes;
  const std::vector<int> cellWidths =
      b.cellWidths.empty() ? std::vector<int>{o.params.cellWidthFactor} : b.cellWidths;

  std::vector<BenchConfig> plan;
  std::set<std::tuple<int, int, int, std::string, uint64_t, int, int>> seen;
  for (EngineKind engine : engines) {
    const bool baseline = engine != o.engine;
    for (const std::string& forceName : forces) {
      ForceMode force{};
      core::parse(forceName, force);
      const std::string scenario = b.scenario.empty() ? defaultScenario(force) : b.scenario;
      // A file scenario fixes N itself; the --n list would only repeat the same measurement.
      const bool fromFile = scenario.rfind("file:", 0) == 0;
      for (uint64_t n : fromFile ? std::vector<uint64_t>{0} : counts) {
        if (baseline && n > kCpuBaselineMaxN) continue;
        for (const std::string& pipeName : pipelines) {
          Pipeline pipeline{};
          core::parse(pipeName, pipeline);
          for (int bs : blockSizes) {
            for (int cw : cellWidths) {
              BenchConfig c;
              c.engine = engine;
              c.force = force;
              c.pipeline = pipeline;
              c.scenario = scenario;
              c.n = n;
              c.blockSize = engine == EngineKind::Cuda ? bs : 0;
              c.cellWidth = (pipeline == Pipeline::Naive || force == ForceMode::Gravity) ? 0 : cw;
              if (!seen.insert({int(engine), int(force), int(pipeline), scenario, n, c.blockSize, c.cellWidth}).second)
                continue;
              if (n > 0) c.skipReason = sizeLimitReason(engine, force, pipeline, n);
              if (force == ForceMode::Boids && pipeline == Pipeline::Tree) c.skipReason = std::string("pipeline tree: ") + core::kTreeBoidsMessage;
              plan.push_back(c);
            }
          }
        }
      }
    }
  }
  return plan;
}

std::string describe(const BenchConfig& c) {
  std::ostringstream s;
  s << core::toString(c.engine) << ' ' << core::toString(c.force) << ' ' << core::toString(c.pipeline)
    << " n=" << (c.n ? std::to_string(c.n) : c.scenario) << " block="
    << (c.blockSize ? std::to_string(c.blockSize) : "-") << " cw=" << (c.cellWidth ? std::to_string(c.cellWidth) : "-");
  return s.str();
}

StepStats stepStats(std::vector<double> ms) {
  StepStats st;
  if (ms.empty()) return st;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  st.min = ms.front();
  st.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * double(n)));
  st.p90 = ms[std::max<size_t>(rank, 1) - 1];
  return st;
}

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string isoUtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string clockText(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// Three significant digits without an exponent: 0.0123, 1.23, 812, 43210.
std::string shortNumber(double v) {
  char buf[64];
  if (std::fabs(v) >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// A configuration that cannot run; the reason goes to the progress line and the sidecar.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::unique_ptr<OffscreenView> makeOffscreenView(const Options& o, core::Engine& engine, std::string* why) {
#if defined(MURMUR_HAVE_RENDER)
  return createOffscreenView(o, engine, why);
#else
  (void)o;
  (void)engine;
  *why = "this build has no renderer (built with MURMUR_ENABLE_RENDER=OFF)";
  return nullptr;
#endif
}

// The JSON sidecar: one entry per `murmur bench` run, rewritten after every configuration so
// that an interrupted sweep keeps what it measured (like the CSV, which flushes every row).
class Sidecar {
 public:
  Sidecar(std::string path, bool append) : path_(std::move(path)) {
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
  json& run() { return doc_["runs"].back(); }
  void beginRun(json run) { doc_["runs"].push_back(std::move(run)); }
  void save() const {
    const std::string tmp = path_ + ".tmp";
    {
      std::ofstream out(tmp);
      if (!out) throw UsageError("--csv: cannot write the sidecar " + path_);
      out << doc_.dump(2) << "\n";
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) throw UsageError("--csv: cannot write the sidecar " + path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  json doc_;
};

struct EngineSlot {
  std::unique_ptr<core::Engine> engine;
  DeviceInfo info;
  std::string deviceName;
  std::string brokenReason;  // set when the engine could not be recreated after a failure
};

// The bodies of the last (scenario, N): consecutive configurations differ only in pipeline,
// block size or cell width, and generating 10M bodies costs more than some measurements.
struct ScenarioCache {
  std::string name;
  uint64_t n = 0;
  core::Bodies bodies;
  float halfSize = 0;  // what makeScenario set (dense sizes the world to N)
};

struct Measurement {
  size_t n = 0;
  std::vector<double> stepMs;         // every timed step, ms
  std::vector<double> repeatMedians;  // per repeat, ms
  core::StepProfile stageMean;
  bool rendered = false;
  bool interop = false;
  double renderMs = 0;
  bool hasNeighbours = false;
  core::NeighbourStats neighbours;
  core::SimParams params{};
  int warmup = 0;  // warm-up steps actually run
};

core::SimParams configParams(const Options& o, const BenchConfig& c) {
  core::SimParams p = o.params;
  p.force = c.force;
  p.pipeline = c.pipeline;
  if (c.blockSize) p.blockSize = c.blockSize;
  if (c.cellWidth) p.cellWidthFactor = c.cellWidth;
  // Per-stage times are part of every row. Profiling records CUDA events (CPU clocks) around
  // the stages; the step is synchronised per step anyway, so the cost is small.
  p.profile = true;
  if (o.dt > 0) (c.force == ForceMode::Boids ? p.boids.dt : p.gravity.dt) = o.dt;
  return p;
}

Measurement measure(const Options& o, const BenchConfig& c, EngineSlot& slot, ScenarioCache& cache) {
  Measurement m;
  m.params = configParams(o, c);
  if (cache.name != c.scenario || cache.n != c.n || cache.bodies.size() == 0) {
    core::ScenarioSpec spec = o.scenario;
    spec.name = c.scenario;
    if (c.n) spec.n = c.n;
    cache.bodies = core::Bodies{};  // release the previous N before building the next
    if (c.n) checkFits(c.engine, c.n, m.params);  // UsageError: reported as skipped
    core::SimParams scratch = m.params;
    cache.bodies = core::makeScenario(spec, scratch);
    cache.name = c.scenario;
    cache.n = c.n;
    cache.halfSize = scratch.halfSize;
  }
  m.params.halfSize = cache.halfSize;
  m.n = cache.bodies.size();
  if (c.n == 0) {  // a file scenario: its size is known only now
    const std::string why = sizeLimitReason(c.engine, c.force, c.pipeline, m.n);
    if (!why.empty()) throw Skip(why);
  }

  core::Engine& engine = *slot.engine;
  engine.setParams(m.params);
  engine.reset(cache.bodies);

  std::unique_ptr<OffscreenView> view;
  if (o.bench.render) {
    std::string why;
    view = makeOffscreenView(o, engine, &why);
    if (!view) throw Skip("rendering: " + (why.empty() ? std::string("no offscreen view") : why));
    m.rendered = true;
    m.interop = view->interop();
  }
  if (c.force == ForceMode::Boids) {
    m.neighbours = engine.neighbourStats();
    m.hasNeighbours = true;
  }

  // Warm-up, and a time budget per configuration: a configuration whose steps take long (naive
  // at large N) runs fewer timed steps rather than stalling the sweep; the CSV's steps and
  // warmup_steps columns say how many ran.
  const double budgetMs = o.bench.maxSeconds * 1000.0;
  double warmMs = 0;
  for (int s = 0; s < o.bench.warmup || s == 0; ++s) {
    const auto t0 = Clock::now();
    engine.step(1);
    engine.synchronize();
    if (view) view->renderFrame(engine);
    const double ms = msBetween(t0, Clock::now());
    ++m.warmup;
    warmMs = s == 0 ? ms : std::min(warmMs, ms);
    if (m.warmup * warmMs > 0.25 * budgetMs) break;
  }
  int steps = o.bench.steps;
  const double perRepeat = budgetMs / double(o.bench.repeats);
  if (warmMs > 0 && steps * warmMs > perRepeat) steps = std::max(2, static_cast<int>(perRepeat / warmMs));
  m.stepMs.reserve(static_cast<size_t>(steps) * o.bench.repeats);
  double renderSum = 0;
  for (int r = 0; r < o.bench.repeats; ++r) {
    std::vector<double> repeatMs;
    for (int s = 0; s < steps; ++s) {
      const auto t0 = Clock::now();
      engine.step(1);
      engine.synchronize();
      const double ms = msBetween(t0, Clock::now());
      repeatMs.push_back(ms);
      m.stageMean += engine.lastProfile();
      if (view) renderSum += view->renderFrame(engine);
    }
    m.repeatMedians.push_back(stepStats(repeatMs).median);
    m.stepMs.insert(m.stepMs.end(), repeatMs.begin(), repeatMs.end());
  }
  const double k = 1.0 / double(m.stepMs.size());
  core::StepProfile& st = m.stageMean;
  st.labelMs *= k, st.sortMs *= k, st.boundsMs *= k, st.reorderMs *= k, st.forceMs *= k, st.integrateMs *= k;
  st.renderMs = m.renderMs = renderSum * k;

  // A state that blew up times different branches than a sane one: such a row would mislead.
  const core::Bodies final = engine.readBodies();
  for (const auto& p : final.pos)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      throw Skip("the state became non-finite (check dt and softening)");
  return m;
}

core::CsvRow makeRow(const BenchConfig& c, const EngineSlot& slot, const Measurement& m,
                     const StepStats& st) {
  core::CsvRow row;
  row.set("timestamp", isoUtcNow());
  row.set("git_sha", std::string(MURMUR_GIT_SHA));
  row.set("gpu", slot.deviceName);
  if (c.engine == EngineKind::Cuda) {
    row.set("cc", slot.info.cc);
    row.set("driver", slot.info.driver);
    row.set("cuda", slot.info.runtime);
  }
  row.set("engine", std::string(core::toString(c.engine)));
  row.set("force", std::string(core::toString(c.force)));
  row.set("pipeline", std::string(core::toString(c.pipeline)));
  row.set("scenario", c.scenario);
  row.set("n", static_cast<long long>(m.n));
  if (c.blockSize) row.set("block_size", static_cast<long long>(c.blockSize));
  if (c.cellWidth) row.set("cell_width_factor", static_cast<long long>(c.cellWidth));
  if (m.hasNeighbours) row.set("neighbours_mean", m.neighbours.meanNeighbours);
  row.set("render", static_cast<long long>(m.rendered ? 1 : 0));
  row.set("warmup_steps", static_cast<long long>(m.warmup));
  row.set("steps", static_cast<long long>(m.stepMs.size()));
  row.set("sim_ms_median", st.median);
  row.set("sim_ms_min", st.min);
  row.set("sim_ms_p90", st.p90);
  row.set("steps_per_s", 1000.0 / st.median);
  // Stages a pipeline does not have stay empty rather than 0: naive builds no grid, only the
  // coherent pipeline reorders.
  const core::StepProfile& s = m.stageMean;
  if (c.pipeline != Pipeline::Naive) {
    row.set("label_ms", s.labelMs);
    row.set("sort_ms", s.sortMs);
    row.set("bounds_ms", s.boundsMs);
  }
  if (c.pipeline == Pipeline::Coherent || c.pipeline == Pipeline::Tree) row.set("reorder_ms", s.reorderMs);
  row.set("force_ms", s.forceMs);
  row.set("integrate_ms", s.integrateMs);
  if (m.rendered) {
    row.set("render_ms", m.renderMs);
    row.set("frame_fps", 1000.0 / (st.median + m.renderMs));
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

json configJson(const BenchConfig& c, size_t n) {
  return json{{"engine", core::toString(c.engine)},
              {"force", core::toString(c.force)},
              {"pipeline", core::toString(c.pipeline)},
              {"scenario", c.scenario},
              {"n", n},
              {"block_size", c.blockSize ? json(c.blockSize) : json(nullptr)},
              {"cell_width_factor", c.cellWidth ? json(c.cellWidth) : json(nullptr)}};
}

json deviceJson(const DeviceInfo& d) {
  return json{{"name", d.name}, {"cc", d.cc}, {"driver", d.driver}, {"runtime", d.runtime}};
}

// Estimates the rest of the sweep from the time per unit of work measured so far in the same
// (engine, force, pipeline): all-pairs work grows as N^2, boids grid work as N, gravity grid
// work as N times the occupied cells (at most gridDim^3).
class Eta {
 public:
  explicit Eta(int gravityGridDim) : gravityCells_(std::pow(double(gravityGridDim), 3.0)) {}
  void add(const BenchConfig& c, size_t n, double seconds) {
    auto& g = groups_[key(c)];
    g.first += seconds;
    g.second += cost(c, n);
    total_ += seconds;
    ++count_;
  }
  // Seconds for the configurations plan[from..], or -1 when nothing has been measured yet.
  double remaining(const std::vector<BenchConfig>& plan, size_t from) const {
    if (count_ == 0) return -1;
    double s = 0;
    for (size_t i = from; i < plan.size(); ++i) {
      const BenchConfig& c = plan[i];
      if (!c.skipReason.empty()) continue;
      auto it = groups_.find(key(c));
      if (it != groups_.end() && it->second.second > 0)
        s += it->second.first / it->second.second * cost(c, c.n);
      else
        s += total_ / count_;
    }
    return s;
  }

 private:
  static std::tuple<int, int, int> key(const BenchConfig& c) { return {int(c.engine), int(c.force), int(c.pipeline)}; }
  double cost(const BenchConfig& c, size_t n) const {
    const double x = double(std::max<size_t>(n, 1));
    if (c.pipeline == Pipeline::Naive) return x * x;
    return c.force == ForceMode::Gravity ? x * std::min(x, gravityCells_) : x;
  }
  double gravityCells_;
  std::map<std::tuple<int, int, int>, std::pair<double, double>> groups_;  // seconds, cost
  double total_ = 0;
  int count_ = 0;
};

}  // namespace

int runBench(const Options& o) {
  const std::vector<BenchConfig> plan = planBench(o);
  const auto sweepStart = Clock::now();

  // Engines first, one per kind, reused by every configuration: an --engine that cannot run
  // here is a usage error before any file is touched.
  std::map<EngineKind, EngineSlot> slots;
  for (const BenchConfig& c : plan) {
    if (slots.count(c.engine)) continue;
    EngineSlot& s = slots[c.engine];
    s.engine = makeEngine(c.engine, o.params);
    s.deviceName = s.engine->deviceName();
    s.info = queryDeviceInfo(c.engine);
    std::fprintf(stderr, "bench: %s engine on %s\n", core::toString(c.engine), s.deviceName.c_str());
  }
  if (o.engine == EngineKind::Cpu && o.bench.blockSizes.size() > 1)
    std::fprintf(stderr, "bench: the CPU engine has no block size; each configuration runs once\n");
  if (o.bench.cpuBaseline && o.engine != EngineKind::Cpu && !slots.count(EngineKind::Cpu))
    std::fprintf(stderr, "bench: --cpu-baseline: no configuration has n <= %s\n", withSuffix(kCpuBaselineMaxN).c_str());

  core::CsvWriter csv(o.bench.csv, o.bench.append);
  Sidecar sidecar(o.bench.csv + ".json", o.bench.append);
  {
    json devices = json::object();
    for (const auto& [kind, s] : slots) {
      json d = deviceJson(s.info);
      d["engine_device"] = s.deviceName;
      devices[core::toString(kind)] = d;
    }
    sidecar.beginRun(json{{"command_line", o.bench.commandLine},
                          {"started_utc", isoUtcNow()},
                          {"git_sha", MURMUR_GIT_SHA},
                          {"csv", o.bench.csv},
                          {"preset", o.bench.preset},
                          {"warmup_steps", o.bench.warmup},
                          {"steps", o.bench.steps},
                          {"repeats", o.bench.repeats},
                          {"render", o.bench.render},
                          {"cpu_baseline", o.bench.cpuBaseline},
                          {"seed", o.scenario.seed},
                          {"params", json::parse(paramsToJson(o.params))},
                          {"devices", devices},
                          {"configurations", json::array()}});
    sidecar.save();
  }

  ScenarioCache cache;
  Eta eta(o.params.gravity.gridDim);
  int measured = 0, skipped = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const BenchConfig& c = plan[i];
    EngineSlot& slot = slots[c.engine];
    std::fprintf(stderr, "[%zu/%zu] %s ... ", i + 1, plan.size(), describe(c).c_str());
    std::fflush(stderr);
    json entry = configJson(c, c.n);
    const auto t0 = Clock::now();
    std::string skip = c.skipReason;
    if (skip.empty() && !slot.brokenReason.empty()) skip = slot.brokenReason;
    Measurement m;
    if (skip.empty()) {
      bool engineSuspect = false;
      try {
        m = measure(o, c, slot, cache);
      } catch (const Skip& e) {
        skip = e.what();
      } catch (const UsageError& e) {  // not enough device memory, a bad scenario
        skip = e.what();
      } catch (const std::invalid_argument& e) {  // parameters the engine rejects
        skip = e.what();
      } catch (const std::exception& e) {  // a device fault, host memory
        skip = e.what();
        engineSuspect = true;
      }
      if (engineSuspect) {
        // A failed step can leave the engine (and a CUDA context) unusable: start a fresh one
        // so that one bad configuration does not take the rest of the sweep with it.
        try {
          slot.engine.reset();
          cache = ScenarioCache{};
          slot.engine = makeEngine(c.engine, o.params);
        } catch (const std::exception& e) {
          slot.brokenReason = std::string("the engine failed earlier and cannot be recreated: ") + e.what();
        }
      }
    }
    const double seconds = msBetween(t0, Clock::now()) / 1000.0;
    if (!skip.empty()) {
      ++skipped;
      entry["status"] = "skipped";
      entry["reason"] = skip;
      std::fprintf(stderr, "skipped: %s\n", skip.c_str());
    } else {
      ++measured;
      const StepStats st = stepStats(m.stepMs);
      csv.write(makeRow(c, slot, m, st));
      eta.add(c, m.n, seconds);
      entry["n"] = m.n;
      entry["status"] = "measured";
      entry["sim_ms_median"] = st.median;
      entry["repeat_medians_ms"] = m.repeatMedians;
      entry["steps_per_s"] = 1000.0 / st.median;
      if (m.hasNeighbours) {
        entry["neighbours_mean"] = m.neighbours.meanNeighbours;
        entry["candidates_mean"] = m.neighbours.meanCandidates;
      }
      if (m.rendered) {
        entry["render_ms"] = m.renderMs;
        entry["interop"] = m.interop;
      }
      entry["params"] = json::parse(paramsToJson(m.params));
      const double left = eta.remaining(plan, i + 1);
      std::fprintf(stderr, "median %s ms (%s steps/s)", shortNumber(st.median).c_str(),
                   shortNumber(1000.0 / st.median).c_str());
      if (m.rendered)
        std::fprintf(stderr, ", render %s ms (%s fps)", shortNumber(m.renderMs).c_str(),
                     shortNumber(1000.0 / (st.median + m.renderMs)).c_str());
      std::fprintf(stderr, "  [%s elapsed, ~%s left]\n", clockText(msBetween(sweepStart, Clock::now()) / 1000).c_str(),
                   left < 0 ? "?" : clockText(left).c_str());
    }
    sidecar.run()["configurations"].push_back(entry);
    sidecar.save();
  }
  sidecar.run()["finished_utc"] = isoUtcNow();
  sidecar.save();
  std::printf("bench: %d measured, %d skipped in %s; rows in %s, parameters in %s\n", measured, skipped,
              clockText(msBetween(sweepStart, Clock::now()) / 1000).c_str(), csv.path().c_str(),
              sidecar.path().c_str());
  if (measured == 0) {
    std::fprintf(stderr, "bench: every configuration was skipped\n");
    return 1;
  }
  return 0;
}

}  // namespace murmur::app
