// The "applies to" rules as data, and the one checker that reads them. The messages are the ones
// tests/app/test_bad_inputs.cpp and test_cli.cpp check: "<option> <value> applies to <what>
// only (this run: ...)".
#include "app/applies_to.h"

#include <algorithm>
#include <optional>

#include "app/options_internal.h"
#include "core/errors.h"
#include "core/param_table.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "dist/launch.h"

namespace murmur::app {

using core::UsageError;

namespace {

// A parameter that serves only the forces of one kind of rule (core/rule_table.h), some
// pipelines, an integrator or an engine. An empty list (or no value) is no condition.
struct ParamRule {
  const char* key;  // a parameter-table key, or a group ("boids.") that covers every key under it
  std::optional<core::RuleKind> kind;  // the kind of rule its forces run: local (boids) or field (gravity)
  std::vector<core::Pipeline> pipelines;
  std::optional<core::Integrator> integrator;
  std::optional<core::EngineKind> engine;
  std::string what;  // what it applies to, as the message says it: "boids only"
  bool inSweeps;     // checked against a sweep's lists too
  bool atParse;      // checked while parsing (every mode), not when the run's defaults are known
};

std::vector<core::Pipeline> pipelinesWhere(bool (*has)(const core::PipelineInfo&)) {
  std::vector<core::Pipeline> out;
  for (const core::PipelineInfo& r : core::pipelineTable())
    if (has(r)) out.push_back(r.id);
  return out;
}

// The rules, in the order a parameter's are checked (its group's first).
const std::vector<ParamRule>& paramRules() {
  static const std::vector<ParamRule> rules = [] {
    // The grid pipelines: those with a uniform grid of cells (the boids cell width; gravity's
    // grid of cell monopoles). The tree's parameters: pipelines whose gravity runs the tree.
    const auto grid = pipelinesWhere([](const core::PipelineInfo& r) { return r.cellWidth; });
    const auto tree = pipelinesWhere([](const core::PipelineInfo& r) { return core::gravityWalksTree(r.id); });
    const auto lists = pipelinesWhere([](const core::PipelineInfo& r) { return r.lists; });
    const std::string gridNames = " (" + core::joinNames(grid, ", ") + ")";
    const std::string onTree = "--pipeline " + core::joinNames(tree) + " only";
    const core::Integrator euler = core::Integrator::DampedEuler;
    const core::EngineKind cuda = core::EngineKind::Cuda;
    const core::RuleKind local = core::RuleKind::Local, field = core::RuleKind::Field;
    return std::vector<ParamRule>{
        {"boids.", local, {}, {}, {}, "boids only", true, false},
        {"gravity.", field, {}, {}, {}, "gravity only", true, false},
        {"boundary", local, {}, {}, {}, "boids only (gravity is open)", true, false},
        {"gravity.theta", {}, tree, {}, {}, onTree, true, false},
        {"gravity.treeLeafSize", {}, tree, {}, {}, onTree, true, false},
        {"gravity.gridDim", {}, grid, {}, {}, "the grid pipelines only" + gridNames, false, false},
        {"gravity.gridSpread", {}, grid, {}, {}, "the grid pipelines only" + gridNames, false, false},
        {"gravity.damping", {}, {}, euler, {}, std::string("--integrator ") + core::toString(euler) + " only", false,
         false},
        {"cellWidthFactor", local, grid, {}, {}, "boids on the grid pipelines only" + gridNames, false,
         false},
        {"blockSize", {}, {}, {}, cuda, std::string("the ") + core::toString(cuda) + " engine only", false, false},
        {"listSteps", {}, lists, {}, {}, "--pipeline " + core::joinNames(lists) + " only", true, true},
    };
  }();
  return rules;
}

bool covers(const ParamRule& r, const std::string& key) {
  const std::string k = r.key;
  return k.back() == '.' ? key.rfind(k, 0) == 0 : key == k;
}

template <typename T>
bool contains(const std::vector<T>& list, T v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Some of the target's forces run the rule's kind of rule (pipelines: are the rule's); no kind,
// or an empty list on either side, is any.
bool forcesMet(const ParamRule& r, const RunTarget& t) {
  if (!r.kind) return true;
  for (core::ForceMode f : t.forces)
    if (core::ruleKind(f) == *r.kind) return true;
  return false;
}
bool pipelinesMet(const ParamRule& r, const RunTarget& t) {
  if (r.pipelines.empty() || t.pipelines.empty()) return true;
  for (core::Pipeline p : t.pipelines)
    if (contains(r.pipelines, p)) return true;
  return false;
}

template <size_t N>
bool isOneOf(const std::string& name, const char* const (&names)[N]) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

// The frame options, which a sweep does not render; and every option that only a rendered
// frame reads.
const char* const kFrameOptions[] = {"--frames", "--steps-per-frame", "--record-every"};
const char* const kRenderOptions[] = {"--width", "--height",      "--zoom",   "--draw",         "--colour",
                                      "--slab",  "--fog",         "--edl",    "--warp-reduce",  "--frames",
                                      "--steps-per-frame", "--record-every", "--box", "--legend"};
// The options murmur accuracy takes besides the gravity parameters (and --force gravity).
const char* const kAccuracyOptions[] = {"--n",         "--scenario",   "--seed",      "--engine",
                                        "--params",    "--half-size",  "--neighbours", "--block-size"};
const char* const kNotInBench = " does not apply to murmur bench (it writes the rows of --csv; headless runs take it)";

// The sweep's own options: the cuda engine's block sizes, the cpu baseline, NVIDIA's kernel.
void checkBenchOptions(const Options& o, const std::vector<core::ForceMode>& forces, const std::string& forceList) {
  const bool cuda = o.engine == core::EngineKind::Cuda;
  const bool gravity = contains(forces, core::ForceMode::Gravity);
  for (const auto& [name, value] : o.benchTyped) {
    if (name == "--block-size" && !cuda)
      throw UsageError(name + " " + value + " applies to the cuda engine only (this sweep runs the cpu engine)");
    if (name == "--cpu-baseline" && !cuda)
      throw UsageError("--cpu-baseline adds cpu engine rows beside the cuda engine's: this sweep runs the cpu engine");
    if (name == "--reference" && !(cuda && gravity))
      throw UsageError("--reference times NVIDIA's all-pairs gravity kernel: it needs the cuda engine and gravity in "
                       "the sweep (this sweep: " + forceList + " on the " + core::toString(o.engine) + " engine)");
  }
}

// What a headless run or a sweep runs, with the words its messages end in.
RunTarget targetOf(const Options& o, const std::vector<core::ForceMode>& forces, const std::string& forceList) {
  const core::SimParams& p = o.params;
  RunTarget t;
  t.integrator = p.gravity.integrator;
  // The local rule a boids step runs: its section's parameters apply, another local rule's do not.
  core::SimParams local = p;
  local.force = core::localRuleForce();
  t.rule = &core::activeRule(local);
  t.engine = o.engine;
  t.sweep = o.mode == Mode::Bench;
  if (t.sweep) {
    t.forces = forces;
    t.pipelines = o.bench.pipelines;
    t.forceContext = " (this sweep's forces: " + forceList + ")";
    t.otherContext = " (not in the sweep)";
    return t;
  }
  // Over several ranks a run without --pipeline takes the decomposition's (runHeadless).
  const core::Pipeline pipe =
      dist::launchedRanks() > 1 && !o.pipelineSet ? core::defaultRankPipeline(p.force) : p.pipeline;
  t.forces = {p.force};
  t.pipelines = {pipe};
  t.forceContext = t.otherContext = std::string(" (this run: ") + core::toString(p.force) + ", pipeline " +
                                    core::toString(pipe) + (o.engine == core::EngineKind::Cpu ? ", cpu engine)" : ")");
  return t;
}

}  // namespace

namespace {

// A local rule's own parameters (its section of the rule table: "boids.", "vicsek.") apply to
// the rules of that section only; --rule, which picks the rule, applies to them all.
void checkRuleSection(const core::ParamDesc& d, const std::string& given, const RunTarget& t) {
  if (!t.rule || std::string(d.key) == "boids.rules") return;
  const std::string key = d.key;
  const std::string section = key.substr(0, key.find('.'));
  if (section == key || section == t.rule->section) return;
  std::string rules;
  for (const core::RuleInfo& r : core::ruleTable())
    if (r.kind == core::RuleKind::Local && section == r.section) rules += std::string(rules.empty() ? "" : " and ") + r.name;
  if (rules.empty()) return;  // not a local rule's section (gravity's: the force's check)
  const bool runsBoids =
      std::any_of(t.forces.begin(), t.forces.end(), [](core::ForceMode f) { return core::runsLocalRule(f); });
  if (!runsBoids) return;  // the force's check has said what it applies to
  throw UsageError(given + " applies to the " + rules + " rule" + (rules.find(" and ") != std::string::npos ? "s" : "") +
                   " only (this run: --rule " + t.rule->name + ")");
}

}  // namespace

void checkParamApplies(const std::string& option, const std::string& value, const RunTarget& t, bool atParse) {
  const core::ParamDesc* d = core::findParamByOption(option);
  if (!d) return;
  const std::string given = option + " " + value;
  for (const ParamRule& r : paramRules()) {
    if (!covers(r, d->key) || r.atParse != atParse || (t.sweep && !r.inSweeps)) continue;
    if (!forcesMet(r, t)) throw UsageError(given + " applies to " + r.what + t.forceContext);
    const bool met = pipelinesMet(r, t) && (!r.integrator || *r.integrator == t.integrator) &&
                     (!r.engine || *r.engine == t.engine);
    if (!met) throw UsageError(given + " applies to " + r.what + t.otherContext);
  }
  checkRuleSection(*d, given, t);
}

namespace {

// The observables and trajectory options (docs/observables.md): each needs the file it shapes,
// and the flock count needs boids.
void checkObserveOptions(const Options& o, const RunTarget& t) {
  const bool bench = o.mode == Mode::Bench;
  const bool boids =
      std::any_of(t.forces.begin(), t.forces.end(), [](core::ForceMode f) { return core::runsLocalRule(f); });
  if (bench) {
    if (o.observeFlocks) throw UsageError(std::string("--observables-flocks") + kNotInBench + "; its sweep takes --observe-flocks");
    if (o.bench.observeFlocks && !o.bench.observe) throw UsageError("--observe-flocks applies with --observe only");
    if (o.bench.observeFlocks && !boids) throw UsageError("--observe-flocks applies to boids only" + t.forceContext);
    for (const auto& [name, value] : o.typed) {
      if (name == "--observe-every")
        throw UsageError(name + " " + value + kNotInBench + "; its --observe samples after every timed step");
      if (name == "--trajectory-every" || name == "--checksum") throw UsageError(name + " " + value + kNotInBench);
    }
    return;
  }
  for (const auto& [name, value] : o.typed) {
    if (name == "--observe-every" && o.observables.empty())
      throw UsageError(name + " " + value + " applies with --observables only (headless; the viewer's panel takes it too)");
    if (name == "--trajectory-every" && o.trajectory.empty())
      throw UsageError(name + " " + value + " applies with --trajectory only");
  }
  if (o.observeFlocks && !boids) throw UsageError("--observables-flocks applies to boids only" + t.forceContext);
  if (o.observeFlocks && o.observables.empty())
    throw UsageError("--observables-flocks applies with --observables only (headless; the viewer's panel takes it too)");
}

}  // namespace

void checkOptionsApply(const Options& o) {
  if (o.mode == Mode::Viewer) {
    if (!o.observables.empty()) throw UsageError("--observables " + o.observables + " applies to headless runs only (--headless)");
    if (!o.trajectory.empty()) throw UsageError("--trajectory " + o.trajectory + " applies to headless runs only (--headless)");
    if (!o.out.empty()) throw UsageError("--out " + o.out + " applies to headless runs only (--headless)");
    // The window takes --steps (it closes after them), --frames, --record (a video from the
    // start), --csv (its FPS log from the start) and --screenshot; the rest shape headless runs.
    for (const auto& [name, value] : o.typed)
      if (name == "--checksum" || name == "--warmup" || name == "--steps-per-frame" || name == "--record-every")
        throw UsageError(name + " " + value + " applies to headless runs only (--headless)");
    if (!o.record.empty() && o.record.find('%') != std::string::npos)
      throw UsageError("--record " + o.record + ": the window records a video (F.mp4); numbered PNG frames need --headless");
  }
  if (o.mode != Mode::Headless && o.mode != Mode::Bench) return;
  const bool bench = o.mode == Mode::Bench;
  const bool renders = bench ? o.bench.render : o.render;
  // The headless outputs and frame options, which a sweep does not write or render.
  if (bench)
    for (const auto& [name, path] : cli::namedOutputs(o))
      if (!path.empty() && name != "--csv") throw UsageError(name + " " + path + kNotInBench);
  const std::vector<core::ForceMode> forces =
      o.bench.forces.empty() ? std::vector<core::ForceMode>{core::localRuleForce()} : o.bench.forces;
  std::string forceList;
  for (core::ForceMode f : forces) forceList += (forceList.empty() ? "" : ",") + std::string(core::toString(f));
  if (bench) checkBenchOptions(o, forces, forceList);
  const RunTarget target = targetOf(o, forces, forceList);
  for (const auto& [name, value] : o.typed) {
    const std::string given = name + " " + value;
    if (bench && isOneOf(name, kFrameOptions)) throw UsageError(given + kNotInBench);
    if (!renders && isOneOf(name, kRenderOptions))
      throw UsageError(given + " needs rendering (" + (bench ? "add --render" : "drop --no-render") + ")");
    if (!bench && name == "--record-every" && o.record.empty())
      throw UsageError(given + " applies with --record only");
    if (name == "--checksum" && !o.checksum && !o.out.empty())
      throw UsageError(given + " skips the final state, which --out " + o.out + " writes: drop one of them");
    checkParamApplies(name, value, target, false);
  }
  checkObserveOptions(o, target);
}

void checkAccuracyOptions(const Options& o, const std::vector<std::pair<std::string, std::string>>& outputs) {
  // (The drift run is leapfrog at the gravity dt; --force gravity keeps a uniform world.)
  const auto applies = [](const std::string& name, const std::string& value) {
    if (isOneOf(name, kAccuracyOptions)) return true;
    if (name == "--force") return value == "gravity";
    if (name == "--integrator" || name == "--damping") return false;
    const core::ParamDesc* d = core::findParamByOption(name);
    return d && std::string(d->key).rfind("gravity.", 0) == 0;
  };
  std::vector<std::pair<std::string, std::string>> typed = o.typed;
  for (const auto& [name, path] : outputs)
    if (!path.empty()) typed.emplace_back(name, path);
  for (const auto& [name, value] : typed)
    if (!applies(name, value))
      throw UsageError(name + " " + value + " does not apply to murmur accuracy: it compares every gravity "
                       "pipeline's forces on one state (options: --n, --scenario, --seed, --engine and the gravity "
                       "parameters)");
}

}  // namespace murmur::app
