// The command line: parseOptions puts the pieces in order (the definition, cli_definition.cpp;
// the parameters' sources, option_precedence.cpp; what applies to what, applies_to.cpp), then
// the checks that need the whole command line.
#include "app/options.h"

#include <algorithm>
#include <cctype>

#include "app/applies_to.h"
#include "app/engine_factory.h"
#include "app/options_internal.h"
#include "core/atomic_file.h"
#include "core/errors.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/scenarios.h"

namespace murmur::app {

using core::UsageError;

namespace {

// The extension of `path` in lower case ("" when none).
std::string extensionOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot + 1);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

// Names of image and video outputs that would come out as something else, or fail only after
// the run: a screenshot is a PNG; ffmpeg picks the container (and its default codec) by the
// extension, and only these take the yuv420p H.264 / MPEG-4 / VP9 stream it is given.
void checkOutputNames(const Options& o) {
  if (!o.screenshot.empty() && !core::isSpecial(o.screenshot) && extensionOf(o.screenshot) != "png")
    throw UsageError("--screenshot " + o.screenshot + ": screenshots are PNG files (name it .png)");
  if (!o.record.empty() && o.record.find('%') == std::string::npos && !core::isSpecial(o.record)) {
    static const char* const kVideo[] = {"mp4", "mkv", "mov", "avi", "webm"};
    const std::string e = extensionOf(o.record);
    bool ok = false;
    for (const char* v : kVideo) ok = ok || e == v;
    if (!ok)
      throw UsageError("--record " + o.record +
                       ": a video ends in .mp4, .mkv, .mov, .avi or .webm (or record PNG frames: frames/f%05d.png)");
  }
}

// Combinations of run options that would silently do less than asked.
void checkRunShape(const Options& o, bool stepsGiven, bool framesGiven, bool noRender) {
  if (o.mode != Mode::Headless) return;
  if (stepsGiven && framesGiven)
    throw UsageError("--steps " + std::to_string(o.steps) + " --frames " + std::to_string(o.frames) +
                     ": give one of them (--steps runs that many steps; --frames renders that many frames, one step each)");
  if (noRender && !o.screenshot.empty())
    throw UsageError("--screenshot " + o.screenshot + " needs rendering: drop --no-render");
  if (noRender && !o.record.empty())
    throw UsageError("--record " + o.record + " needs rendering: drop --no-render");
}

// The mode from the subcommand and --headless; --no-render needs one that can go without GL.
void setMode(const cli::CommandLine& cl, Options& o) {
  if (*cl.bench)
    o.mode = Mode::Bench;
  else if (*cl.accuracy)
    o.mode = Mode::Accuracy;
  else
    o.mode = cl.headless ? Mode::Headless : Mode::Viewer;
  if (cl.noRender && !cl.headless && o.mode != Mode::Bench && o.mode != Mode::Accuracy)
    throw UsageError("--no-render needs --headless (the viewer always renders)");
  o.render = !cl.noRender;
}

// The options given, with their values as typed (resolveDefaults refuses those a run ignores).
void recordTyped(const cli::CommandLine& cl, Options& o) {
  for (const auto& [name, g] : cl.given)
    if (g.given()) o.typed.emplace_back(name, g.text);
  for (const auto& [name, g] : cl.benchGiven)
    if (g.given()) o.benchTyped.emplace_back(name, g.text);
  for (const char* flag : {"--render", "--append", "--cpu-baseline", "--reference", "--observe", "--observe-flocks"})
    if (cl.bench->get_option(flag)->count() > 0) o.benchTyped.emplace_back(flag, "");
}

// A sweep drops the configurations of a pipeline that does not serve boids (tree) with boids;
// one whose --pipeline names such a pipeline with no gravity in it would silently measure less
// than asked. (Checked before the preset fills its own lists.)
void checkSweepPipelines(const Options& o, const BenchPreset* preset) {
  if (o.mode != Mode::Bench) return;
  const auto& forces = o.bench.forces.empty() && preset ? preset->forces : o.bench.forces;
  const bool gravity = std::find(forces.begin(), forces.end(), core::ForceMode::Gravity) != forces.end();
  for (core::Pipeline p : o.bench.pipelines)
    if (!core::serves(p, core::localRuleForce()) && !gravity)
      throw UsageError(std::string("--pipeline ") + core::toString(p) + ": " + core::gravityOnlyMessage() +
                       "; add --force gravity");
}

// Options that cannot apply to the scenario or the pipeline, refused rather than ignored.
void checkScenarioOptions(const cli::CommandLine& cl, const Options& o) {
  // Options that only the dense scenario reads are refused with any other rather than ignored.
  const std::string& scen = o.mode == Mode::Bench ? o.bench.scenario : o.scenario.name;
  // A sweep with no scenario of its own runs boids in the default world, dense.
  const bool benchBoids =
      o.bench.forces.empty() || std::any_of(o.bench.forces.begin(), o.bench.forces.end(),
                                            [](core::ForceMode f) { return core::runsLocalRule(f); });
  const bool denseDefault = o.mode == Mode::Bench && scen.empty() && o.bench.defaultDense && benchBoids;
  if (cl.has("--neighbours") && scen != "dense" && !denseDefault)
    throw UsageError("--neighbours " + cl.text("--neighbours") + " applies to --scenario dense only (the scenario is " +
                     (!scen.empty() ? scen : o.mode == Mode::Bench && !benchBoids ? std::string("plummer, gravity's") : std::string("uniform")) + ")");
  if (cl.has("--half-size") && scen == "dense")
    throw UsageError("--half-size " + cl.text("--half-size") +
                     " does not apply with --scenario dense: its world size follows from --n and --neighbours");
  // The rules checked while parsing (--list-steps: only pipelines with lists; a sweep: when it
  // measures one at all).
  RunTarget t;
  t.forces = {o.params.force};
  t.sweep = o.mode == Mode::Bench;
  t.pipelines = t.sweep ? o.bench.pipelines : std::vector<core::Pipeline>{o.params.pipeline};
  t.forceContext = t.otherContext = std::string(" (the pipeline is ") +
                                    (t.sweep ? "not in the sweep" : core::toString(o.params.pipeline)) + ")";
  for (const auto& [name, value] : o.typed) checkParamApplies(name, value, t, true);
  // A file's bodies: --n takes an even subset of them (of a run's; a sweep's counts are the
  // file's), --select ranges of them, the scales their units; with no file there is nothing to take.
  const bool file = scen.rfind("file:", 0) == 0;
  if (o.nSet && file && o.mode == Mode::Bench)
    throw UsageError("--n " + (cl.has("--n") ? cl.text("--n") : cl.benchGiven.at("--n").text) +
                     " does not apply to a sweep of --scenario " + scen + ": the file sets the number of bodies");
  for (const char* opt : {"--select", "--scale-length", "--scale-velocity", "--scale-mass"}) {
    if (!cl.has(opt)) continue;
    if (!file)
      throw UsageError(std::string(opt) + " " + cl.text(opt) + " applies with --scenario file:PATH only (the scenario is " +
                       (scen.empty() ? std::string("the default") : scen) + ")");
    if (o.mode == Mode::Bench)
      throw UsageError(std::string(opt) + " " + cl.text(opt) + " applies to a run, not to a sweep (bench)");
  }
  if (cl.has("--select")) core::parseSelect(cl.text("--select"));  // its form now, its bounds with the file
}

}  // namespace

bool parseOptions(int argc, char** argv, Options& o) {
  cli::CommandLine cl;
  cli::defineCommandLine(cl, o);
  if (!cli::parseCommandLine(cl, argc, argv)) return false;
  setMode(cl, o);
  recordTyped(cl, o);
  const BenchPreset* preset = cli::applyParameterSources(cl, argc, argv, o);
  checkSweepPipelines(o, preset);
  if (preset) fillFromPreset(*preset, o.bench);
  checkScenarioOptions(cl, o);
  if (o.mode == Mode::Accuracy) checkAccuracyOptions(o, cli::namedOutputs(o));
  checkRunShape(o, cl.has("--steps"), cl.has("--frames"), cl.noRender);
  checkOutputNames(o);
  core::checkDistinctOutputs(cli::namedOutputs(o));
  // Without --force the scenario decides the force later, so a gravity-only pipeline is checked
  // against boids only then (resolveDefaults); every other rule is checked here, against the
  // parameters as given.
  core::SimParams check = o.params;
  if (!o.forceSet && !core::serves(check.pipeline, core::localRuleForce())) check.force = core::ForceMode::Gravity;
  const std::string err = core::validateParams(check);
  if (!err.empty()) throw UsageError(err);
  return true;
}

void resolveDefaults(Options& o) {
  o.params.seed = o.scenario.seed;  // one seed for the bodies and for every random draw of a rule
  if (!o.engineSet) o.engine = defaultEngineKind();
  if (!o.nSet) o.scenario.n = o.engine == core::EngineKind::Cuda ? 100000 : 10000;
  // The fastest exact pipeline in the default world: on an H100 (100k / 1M / 10M boids,
  // bench/results/h100/counting-default-world.csv; measurements:
  // docs/performance.md#the-default-worlds-pipeline) verlet at 100k, rows at 1M and 10M: the
  // pipeline table's default-world rows (core::defaultWorldPipeline).
  if (o.defaultWorld) o.params.pipeline = core::defaultWorldPipeline(o.scenario.n);
  // A saved state says which force it was simulated with (a plain body file is gravity).
  if (!o.forceSet && o.mode != Mode::Bench &&
      (o.fileForce.empty() || !core::parse(o.fileForce, o.params.force)))
    o.params.force = core::naturalForce(o.scenario.name);
  if (o.mode != Mode::Bench && core::runsLocalRule(o.params) && !core::serves(o.params.pipeline, o.params.force))
    throw UsageError(std::string("--pipeline ") + core::toString(o.params.pipeline) + ": " + core::gravityOnlyMessage());
  if (o.dt > 0) core::setActiveDt(o.params, o.dt);
  checkOptionsApply(o);
}

}  // namespace murmur::app
