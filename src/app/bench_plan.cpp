// `murmur bench`, the plan: presets, the sweep's configurations in run order, and the size limits
// that skip a configuration.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "app/bench.h"
#include "app/parse.h"
#include "core/errors.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"

namespace murmur::app {

using core::EngineKind;
using core::ForceMode;
using core::Pipeline;
using core::UsageError;

namespace {

// The boids pipelines with a grid (a cell width to sweep), in table order.
std::vector<Pipeline> boidGridPipelines() {
  const ForceMode boids = core::localRuleForce();
  std::vector<Pipeline> out;
  for (Pipeline p : core::pipelinesFor(boids))
    if (core::hasCellWidth(p, boids)) out.push_back(p);
  return out;
}

// The CIS 565 project's world: half-size 100 and radii 5/3/5. They are the defaults too; the
// preset pins them so that its results stay comparable if the defaults ever move.
void cis565Params(core::SimParams& p) {
  p.halfSize = 100.0f;
  p.boids.cohesionRadius = 5.0f;
  p.boids.separationRadius = 3.0f;
  p.boids.alignmentRadius = 5.0f;
}

// FLAME GPU 2's "Circles" density: one boid per unit volume, radius 2 (about 33 neighbours).
void flameParams(core::SimParams& p) {
  p.halfSize = 50.0f;
  p.boids.cohesionRadius = 2.0f;
  p.boids.separationRadius = 2.0f;
  p.boids.alignmentRadius = 2.0f;
}

}  // namespace

const std::vector<BenchPreset>& benchPresets() {
  const std::vector<Pipeline> kAllPipelines = core::allPipelines();
  const ForceMode boids = core::localRuleForce();
  static const std::vector<BenchPreset> presets = {
      {"cis565", "boids, uniform cube of half-size 100, radii 5/3/5, N 5k..5M, block 128",
       {boids}, kAllPipelines,
       {5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2000000, 5000000},
       {128}, {}, "uniform", cis565Params, false, true},
      {"constant-density", "boids, world grown with N so every boid has ~8 neighbours, N 25k..10M",
       {boids}, kAllPipelines,
       {25000, 100000, 250000, 1000000, 2500000, 5000000, 10000000},
       {}, {}, "dense", nullptr},
      {"gravity", "gravity, Plummer sphere, N 16k..1M, block sizes 64..1024",
       {ForceMode::Gravity}, core::pipelinesFor(ForceMode::Gravity),
       {16000, 32000, 64000, 128000, 256000, 512000, 1000000},
       {64, 128, 256, 512, 1024}, {}, "plummer", nullptr},
      {"gravity-pipelines",
       "gravity, Plummer sphere, every pipeline and the nbody sample's kernel, N 16k..10M, block 256",
       {ForceMode::Gravity}, core::pipelinesFor(ForceMode::Gravity),
       {16384, 65536, 262144, 1048576, 4194304, 10000000},
       {256}, {}, "plummer", nullptr, true},
      {"flame", "boids at FLAME GPU 2 Circles density: half-size 50, radii 2/2/2, 1M, cell widths 1 and 2, block 128",
       {boids}, boidGridPipelines(),
       {1000000}, {128}, {1, 2}, "uniform", flameParams, false, true},
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
  if (b.pipelines.empty() && !b.textbook) {
    b.pipelines = preset.pipelines;
    b.textbook = preset.textbook;
  }
  if (b.counts.empty()) b.counts = preset.counts;
  if (b.blockSizes.empty()) b.blockSizes = preset.blockSizes;
  if (b.cellWidths.empty()) b.cellWidths = preset.cellWidths;
  if (b.scenario.empty()) b.scenario = preset.scenario;
  b.reference = b.reference || preset.reference;
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
    if (!core::pipelineInfo(pipeline).allPairs) return {};
    limit = core::runsLocalRule(force) ? kCudaNaiveBoidsMaxN : kCudaNaiveGravityMaxN;
    what = std::string("the GPU naive ") + core::toString(force) + " limit";
  } else if (core::pipelineInfo(pipeline).allPairs) {
    limit = kCpuNaiveMaxN;
    what = "the CPU engine's naive limit";
  } else {
    limit = core::runsLocalRule(force) ? kCpuGridMaxN : kCpuGravityGridMaxN;
    what = std::string("the CPU engine's ") + core::toString(force) + " grid limit";
  }
  if (n <= limit) return {};
  return "n=" + std::to_string(n) + " is above " + what + " of " + withSuffix(limit) +
         " bodies (a configuration there takes too long)";
}

namespace {
// The default world: the viewer's for boids (dense; uniform when a --half-size is given),
// plummer for gravity.
std::string defaultScenario(ForceMode f, const BenchOptions& b) {
  if (!core::runsLocalRule(f)) return "plummer";
  return b.defaultDense ? "dense" : "uniform";
}
}  // namespace

std::vector<BenchConfig> planBench(const Options& o) {
  const BenchOptions& b = o.bench;
  std::vector<EngineKind> engines = {o.engine};
  if (b.cpuBaseline && o.engine != EngineKind::Cpu) engines.push_back(EngineKind::Cpu);
  const std::vector<ForceMode> forces = b.forces.empty() ? std::vector<ForceMode>{core::localRuleForce()} : b.forces;
  // (pipeline, textbook baseline): the engine's pipelines (those with a method of their own for the
  // force), then the baseline when asked for.
  const auto sweepPipelines = [&](ForceMode force) {
    std::vector<std::pair<Pipeline, bool>> list;
    const std::vector<Pipeline> own = core::pipelinesFor(force);
    for (Pipeline p : b.pipelines.empty() && !b.textbook ? own : b.pipelines) list.push_back({p, false});
    if (b.textbook) list.push_back({core::textbookGridPipeline(), true});
    return list;
  };
  const std::vector<uint64_t> counts =
      b.counts.empty() ? std::vector<uint64_t>{o.engine == EngineKind::Cuda ? 100000u : 10000u} : b.counts;
  const std::vector<int> blockSizes = b.blockSizes.empty() ? std::vector<int>{o.params.blockSize} : b.blockSizes;
  const std::vector<int> cellWidths =
      b.cellWidths.empty() ? std::vector<int>{o.params.cellWidthFactor} : b.cellWidths;

  std::vector<BenchConfig> plan;
  std::set<std::tuple<int, int, int, bool, std::string, uint64_t, int, int>> seen;
  for (EngineKind engine : engines) {
    const bool baseline = engine != o.engine;
    for (ForceMode force : forces) {
      const std::string scenario = b.scenario.empty() ? defaultScenario(force, b) : b.scenario;
      // The default world is dense at kDefaultWorldNeighbours; --scenario dense (or a preset's) at
      // the scenario's own default, 8, unless --neighbours says otherwise.
      const double neighbours =
          b.scenario.empty() && !b.neighboursGiven ? kDefaultWorldNeighbours : o.scenario.denseNeighbours;
      // A file scenario fixes N itself; the --n list would only repeat the same measurement.
      const bool fromFile = scenario.rfind("file:", 0) == 0;
      for (uint64_t n : fromFile ? std::vector<uint64_t>{0} : counts) {
        if (baseline && n > kCpuBaselineMaxN) continue;
        for (const auto& [pipeline, textbook] : sweepPipelines(force)) {
          // The baseline repeats GPU measurements only; the CPU engine has no textbook variant.
          if (textbook && baseline) continue;
          // Not a configuration at all (options refuse a boids-only sweep that names tree).
          if (core::runsLocalRule(force) && !core::pipelineInfo(pipeline).boids) continue;
          for (int bs : blockSizes) {
            for (int cw : cellWidths) {
              BenchConfig c;
              c.engine = engine;
              c.force = force;
              c.pipeline = pipeline;
              c.textbook = textbook;
              c.scenario = scenario;
              c.denseNeighbours = neighbours;
              c.n = n;
              c.blockSize = engine == EngineKind::Cuda ? bs : 0;
              c.cellWidth = core::hasCellWidth(pipeline, force) ? cw : 0;
              if (!seen.insert({int(engine), int(force), int(pipeline), textbook, scenario, n, c.blockSize,
                                c.cellWidth})
                       .second)
                continue;
              if (textbook && engine != EngineKind::Cuda)
                c.skipReason = std::string(kTextbookPipeline) + " runs on the CUDA engine only";
              else if (textbook && !core::runsLocalRule(force))
                c.skipReason = std::string(kTextbookPipeline) + " is a boids baseline";
              else if (n > 0)
                c.skipReason = sizeLimitReason(engine, force, pipeline, n);
              plan.push_back(c);
              if (b.reference && engine == EngineKind::Cuda && force == ForceMode::Gravity &&
                  pipeline == core::referencePipeline()) {
                c.reference = true;
                plan.push_back(c);
              }
            }
          }
        }
      }
    }
  }
  return plan;
}

std::string pipelineName(const BenchConfig& c) {
  if (c.reference) return kReferencePipelineName;
  if (c.textbook) return kTextbookPipeline;
  return core::toString(c.pipeline);
}

std::string describe(const BenchConfig& c) {
  std::ostringstream s;
  s << core::toString(c.engine) << ' ' << core::toString(c.force) << ' ' << pipelineName(c)
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

void spreadCycleMeans(std::vector<double>& ms, size_t cycle) {
  if (cycle <= 1) return;
  for (size_t a = 0; a < ms.size(); a += cycle) {
    const size_t b = std::min(ms.size(), a + cycle);
    double sum = 0;
    for (size_t k = a; k < b; ++k) sum += ms[k];
    std::fill(ms.begin() + static_cast<std::ptrdiff_t>(a), ms.begin() + static_cast<std::ptrdiff_t>(b),
              sum / double(b - a));
  }
}
}  // namespace murmur::app
