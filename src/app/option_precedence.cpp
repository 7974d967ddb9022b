// Where the simulation parameters come from, in rising precedence: a bench preset's, then the
// parameters a saved state carries (its header), then the --params file, then the options. And
// the scenario: --scenario, or the default world (dense, kDefaultWorldNeighbours neighbours).
#include "app/options_internal.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/body_io.h"
#include "core/param_table.h"
#include "core/pipeline_table.h"

namespace murmur::app::cli {

namespace {

// A saved state carries the parameters it ran with, below --params and the options.
void applyStateHeader(const CommandLine& cl, Options& o) {
  if (!cl.has("--scenario")) return;
  const std::string& s = cl.text("--scenario");
  if (s.rfind("file:", 0) != 0 || s.size() <= 5) return;
  const core::StateHeader h = core::readStateHeader(s.substr(5));
  if (!h.paramsJson.empty()) loadParamsText("--scenario " + s + ": params", h.paramsJson, o.params);
  if (h.halfSize > 0) o.params.halfSize = h.halfSize;
  o.fileForce = h.force;
  o.startStep = h.step;
}

// --scenario checked and kept, or the default world of the viewer and headless runs. A world size
// asked for (--half-size, or a --params file's halfSize) keeps the uniform cube of that size.
void applyScenario(const CommandLine& cl, Options& o, bool halfSizeGiven) {
  if (cl.has("--scenario")) {
    const std::string& s = cl.text("--scenario");
    if (s.rfind("file:", 0) != 0) {
      std::vector<std::string> allowed = core::scenarioNames();
      allowed.push_back("file:PATH");  // any value starting with file: is a path, never checked here
      parseName("--scenario", s, allowed);
    }
    o.scenario.name = s;
    if (o.mode == Mode::Bench) o.bench.scenario = s;
    if (cl.has("--select")) o.scenario.select = cl.text("--select");
  } else if (o.mode == Mode::Bench) {
    // A boids sweep's default world is the viewer's (bench_plan.cpp, planBench).
    o.bench.defaultDense = !halfSizeGiven;
    o.bench.neighboursGiven = cl.has("--neighbours");
  } else if ((o.mode == Mode::Viewer || o.mode == Mode::Headless) && !halfSizeGiven && cl.has("--force") &&
             cl.text("--force") == core::toString(core::ForceMode::Gravity)) {
    // Gravity with no --scenario: two disk galaxies colliding, a world where gravity shows (the
    // boids' default world under gravity is a uniform cloud that barely moves), on the pipeline
    // the table names for it (the tree: a laptop's CPU steps 20k bodies several times a second).
    o.scenario.name = "galaxies";
    if (!cl.has("--pipeline") && !cl.has("--params")) o.params.pipeline = core::gravityWorldPipeline();
  } else if ((o.mode == Mode::Viewer || o.mode == Mode::Headless) && !halfSizeGiven) {
    // With no --scenario (and no world size asked for): a world in which flocks form within a
    // few hundred steps with space between them. At 8 neighbours per boid the flocks fill the
    // world and merge; at 4 they separate (README, "The viewer").
    o.scenario.name = "dense";
    if (!cl.has("--neighbours")) o.scenario.denseNeighbours = kDefaultWorldNeighbours;
    // The fastest exact pipeline in that world (the pipeline table's, core::defaultWorldPipeline):
    // the small world's until N is known, then the one for N (resolveDefaults). --list-steps
    // keeps the small world's, verlet, whose lists it asks for; --topological, the rows pipeline
    // its search runs on.
    if (!cl.has("--pipeline") && !cl.has("--params") && !cl.has("--topological")) {
      o.params.pipeline = core::defaultWorldPipeline(0);
      o.defaultWorld = !cl.has("--list-steps");
    }
  }
}

}  // namespace

const BenchPreset* applyParameterSources(const CommandLine& cl, int argc, char** argv, Options& o) {
  const BenchPreset* preset = nullptr;
  if (o.mode == Mode::Bench) {
    o.bench.commandLine = shellQuotedCommandLine(argc, argv);
    if (!o.bench.preset.empty()) {
      preset = &findBenchPreset(o.bench.preset);
      if (preset->applyParams) preset->applyParams(o.params);
    }
    if (!o.csv.empty()) o.bench.csv = o.csv;
  }
  applyStateHeader(cl, o);
  std::set<std::string> fileKeys;  // a --params file's "force" beats the scenario's own force
  if (cl.has("--params")) loadParamsFile(cl.text("--params"), o.params, &fileKeys);
  const bool paramsForce = fileKeys.count("force") > 0;
  applyParamOptions(cl.given, o.params);
  applyAppValues(cl.given, false, o);
  o.forceSet = cl.has("--force") || cl.benchGiven.at("--force").given() || paramsForce;
  o.nSet = cl.has("--n") || cl.benchGiven.at("--n").given();
  // --n with a file's bodies: an even subset of them (a run's only; a sweep refuses it).
  o.scenario.fileSubset = cl.has("--n") && cl.has("--scenario") && cl.text("--scenario").rfind("file:", 0) == 0;
  o.pipelineSet = cl.has("--pipeline");
  if (o.mode == Mode::Bench) applyBenchOptions(cl.benchGiven, o);
  if (cl.accuracyGiven.at("--drift-n").given()) {
    o.driftBodies = static_cast<uint64_t>(parseOption("--drift-n", cl.accuracyGiven.at("--drift-n").text,
                                                      "drift bodies", core::countRange(0, core::kMaxBodies)));
    o.driftSet = true;
  }
  applyScenario(cl, o, cl.has("--half-size") || fileKeys.count("halfSize") > 0);
  return preset;
}

}  // namespace murmur::app::cli
