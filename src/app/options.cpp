#include "app/options.h"

#include <algorithm>
#include <cctype>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <utility>

#include "app/bench.h"
#include "app/engine_factory.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/atomic_file.h"
#include "core/body_io.h"
#include "core/errors.h"
#include "core/param_table.h"
#include "dist/launch.h"

namespace murmur::app {

using core::UsageError;

namespace {

// An option's text as typed. CLI11 only stores it; app/parse.h turns it into a value, so that
// every message has one shape. given() tells an empty value (an error) from an absent option.
struct Given {
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option && option->count() > 0; }
};
using GivenMap = std::map<std::string, Given>;

Given& addValue(CLI::App& app, GivenMap& given, const std::string& name, const std::string& help) {
  Given& g = given[name];
  g.option = app.add_option(name, g.text, help);
  return g;
}

std::string paramHelp(const core::ParamDesc& d) {
  std::string h = d.help;
  if (*d.unit) h += std::string(" [") + d.unit + "]";
  return h + "; " + core::allowedText(d.spec);
}

// One option per simulation parameter, straight from the parameter table.
void addParamOptions(CLI::App& app, GivenMap& given) {
  for (const core::ParamDesc& d : core::paramTable()) addValue(app, given, d.option, paramHelp(d));
}

void applyParamOptions(const GivenMap& given, core::SimParams& p) {
  for (const core::ParamDesc& d : core::paramTable()) {
    const Given& g = given.at(d.option);
    if (g.given()) d.set(p, parseOption(d.option, g.text, d.label, d.spec));
  }
}

// The options that set something other than a simulation parameter, as rows like the parameter
// table's: name, label for messages, help, allowed values and where the value goes. bench: the
// option belongs to the bench subcommand.
struct AppValue {
  const char* name;
  const char* label;
  const char* help;
  core::ValueSpec spec;
  void (*apply)(Options&, double);
  bool bench;
};

const char* const kDrawNames[] = {"boids", "points", "sprites", "splat"};
const char* const kOffOn[] = {"off", "on"};
const char* const kColourNames[] = {"velocity", "speed", "id"};

template <size_t N>
core::ValueSpec namesOf(const char* const (&names)[N]) {
  core::ValueSpec s;
  s.type = core::ValueType::Enum;
  s.names = names;
  s.numNames = static_cast<int>(N);
  return s;
}

const std::vector<AppValue>& appValues() {
  static const std::vector<AppValue> values = {
      {"--engine", "engine", "cpu | cuda (default: cuda when a GPU is present)", core::enumSpec<core::EngineKind>(),
       [](Options& o, double v) { o.engine = static_cast<core::EngineKind>(static_cast<int>(v)), o.engineSet = true; }, false},
      {"--n", "n", "Number of bodies, e.g. 100000, 100k, 1M", core::countRange(1, core::kMaxBodies),
       [](Options& o, double v) { o.scenario.n = static_cast<size_t>(v); }, false},
      {"--steps", "steps", "Steps to run headless (default 100)", core::intRange(0, 100000000),
       [](Options& o, double v) { o.steps = static_cast<int>(v); }, false},
      {"--warmup", "warm-up steps", "Headless: untimed steps before the timed --steps (default 0)",
       core::intRange(0, 100000000), [](Options& o, double v) { o.warmup = static_cast<int>(v); }, false},
      {"--dt", "dt", "Time step of the active force mode", core::floatAbove(0),
       [](Options& o, double v) { o.dt = static_cast<float>(v); }, false},
      {"--seed", "seed", "Random seed of the scenario", core::intRange(0, 1LL << 53),
       [](Options& o, double v) { o.scenario.seed = static_cast<uint64_t>(v); }, false},
      {"--frames", "frames", "Frames to render: headless (default --steps), or the window closes after K",
       core::intRange(1, 10000000), [](Options& o, double v) { o.frames = static_cast<int>(v); }, false},
      {"--steps-per-frame", "steps per frame", "Headless: simulation steps between two rendered frames (default 1)",
       core::intRange(1, 1000000), [](Options& o, double v) { o.stepsPerFrame = static_cast<int>(v); }, false},
      {"--width", "width", "Frame width in pixels", core::intRange(16, 8192),
       [](Options& o, double v) { o.width = static_cast<int>(v); }, false},
      {"--height", "height", "Frame height in pixels", core::intRange(16, 8192),
       [](Options& o, double v) { o.height = static_cast<int>(v); }, false},
      {"--zoom", "zoom", "Camera zoom over the fitted view (> 1 is closer)", core::floatAtLeast(0.01, 1000),
       [](Options& o, double v) { o.zoom = static_cast<float>(v); }, false},
      {"--draw", "draw mode", "Draw mode (default: boids splat from 250k bodies; gravity sprites)", namesOf(kDrawNames),
       [](Options& o, double v) { o.drawMode = kDrawNames[static_cast<int>(v)]; }, false},
      {"--colour", "colour mode", "Colour mode", namesOf(kColourNames),
       [](Options& o, double v) { o.colourMode = kColourNames[static_cast<int>(v)]; }, false},
      {"--slab", "slab", "Splat: draw only a slab this many world units thick through the target (0 = all)",
       core::floatAtLeast(0, 1e9), [](Options& o, double v) { o.slab = static_cast<float>(v); }, false},
      {"--fog", "fog", "Splat: how far the far side fades into the background (default 0.55)", core::floatAtLeast(0, 1),
       [](Options& o, double v) { o.fog = static_cast<float>(v); }, false},
      {"--edl", "eye-dome lighting", "Splat: eye-dome lighting strength, 0 = off (default 0.7)", core::floatAtLeast(0, 100),
       [](Options& o, double v) { o.edl = static_cast<float>(v); }, false},
      {"--warp-reduce", "warp reduce", "Splat on CUDA: combine a warp's bodies per pixel before the atomic (default off)",
       namesOf(kOffOn), [](Options& o, double v) { o.warpReduce = v != 0; }, false},
      {"--record-every", "record every", "Headless: record one frame every K steps (default 1)", core::intRange(1, 1000000),
       [](Options& o, double v) { o.recordEvery = static_cast<int>(v); }, false},
      {"--neighbours", "dense neighbours", "Scenario dense: mean boids within the largest rule radius, sets the world size (default 8; 4 with no --scenario)",
       core::floatAbove(0, 1000), [](Options& o, double v) { o.scenario.denseNeighbours = v; }, false},
      {"--steps", "steps", "Timed steps per repeat (default 30)", core::intRange(1, 100000000),
       [](Options& o, double v) { o.bench.steps = static_cast<int>(v); }, true},
      {"--warmup", "warm-up steps", "Warm-up steps per configuration (default 5)", core::intRange(0, 1000000),
       [](Options& o, double v) { o.bench.warmup = static_cast<int>(v); }, true},
      {"--repeats", "repeats", "Timed repeats per configuration; statistics pool their steps (default 3)",
       core::intRange(1, 1000), [](Options& o, double v) { o.bench.repeats = static_cast<int>(v); }, true},
      {"--max-seconds", "max seconds", "Time budget per configuration; slow ones run fewer steps (default 3)",
       core::floatAbove(0), [](Options& o, double v) { o.bench.maxSeconds = v; }, true},
  };
  return values;
}

void addAppValues(CLI::App& app, GivenMap& given, bool bench) {
  for (const AppValue& a : appValues())
    if (a.bench == bench) addValue(app, given, a.name, std::string(a.help) + "; " + core::allowedText(a.spec));
}

void applyAppValues(const GivenMap& given, bool bench, Options& o) {
  for (const AppValue& a : appValues()) {
    if (a.bench != bench) continue;
    const Given& g = given.at(a.name);
    if (g.given()) a.apply(o, parseOption(a.name, g.text, a.label, a.spec));
  }
}

// The bench subcommand's list-valued options, the sweep's dimensions: a list of what the
// parameter row (or --n) allows, each item checked by that row.
struct BenchList {
  const char* key;  // parameter-table row; nullptr for --n
  void (*apply)(BenchOptions&, const std::vector<double>&);
};

template <typename T>
std::vector<T> as(const std::vector<double>& v) {
  std::vector<T> out;
  for (double x : v) out.push_back(core::detail::fromDouble<T>(x));
  return out;
}

const BenchList kBenchLists[] = {
    {"force", [](BenchOptions& b, const std::vector<double>& v) { b.forces = as<core::ForceMode>(v); }},
    {"pipeline", [](BenchOptions& b, const std::vector<double>& v) { b.pipelines = as<core::Pipeline>(v); }},
    {"blockSize", [](BenchOptions& b, const std::vector<double>& v) { b.blockSizes = as<int>(v); }},
    {"cellWidthFactor", [](BenchOptions& b, const std::vector<double>& v) { b.cellWidths = as<int>(v); }},
    {nullptr, [](BenchOptions& b, const std::vector<double>& v) { b.counts = as<uint64_t>(v); }},
};

struct ListRow {
  std::string option, label, help;
  core::ValueSpec spec;
};
ListRow listRow(const BenchList& l) {
  if (!l.key) return {"--n", "n", "body counts (suffix k, M)", core::countRange(1, core::kMaxBodies)};
  const core::ParamDesc& d = *core::findParam(l.key);
  return {d.option, d.label, paramHelp(d), d.spec};
}

void addBenchOptions(CLI::App& bench, GivenMap& given, BenchOptions& b) {
  for (const BenchList& l : kBenchLists) {
    const ListRow r = listRow(l);
    const bool pipelines = r.option == "--pipeline";
    addValue(bench, given, r.option,
             "Comma-separated list: " + r.help +
                 (pipelines ? std::string("; also ") + kTextbookPipeline + ", the textbook baseline" : ""));
  }
  addAppValues(bench, given, true);
  std::string presets;
  for (const auto& p : benchPresets()) presets += (presets.empty() ? "" : " | ") + p.name;
  bench.add_option("--preset", b.preset, "Named sweep: " + presets);
  bench.add_option("--csv", b.csv, "CSV of the results (default bench.csv); the JSON sidecar is CSV.json");
  bench.add_flag("--render", b.render, "Also draw an offscreen frame per step (render_ms, frame_fps)");
  bench.add_flag("--append", b.append, "Append to the CSV instead of overwriting");
  bench.add_flag("--cpu-baseline", b.cpuBaseline, "Also run the configurations with N <= 50k on the CPU engine");
  bench.add_flag("--reference", b.reference,
                 "Also time all-pairs gravity as NVIDIA's nbody sample writes it (pipeline sample-reference)");
}

void applyBenchOptions(const GivenMap& given, Options& o) {
  for (const BenchList& l : kBenchLists) {
    const ListRow r = listRow(l);
    const Given& g = given.at(r.option);
    if (!g.given()) continue;
    std::vector<double> values;
    for (const std::string& item : splitList(r.option, g.text)) {
      // The textbook baseline is a bench-only name, not a value of the pipeline parameter.
      if (r.option == "--pipeline" && item == kTextbookPipeline) {
        o.bench.textbook = true;
        continue;
      }
      values.push_back(parseOption(r.option, item, r.label.c_str(), r.spec));
    }
    l.apply(o.bench, values);
  }
  applyAppValues(given, true, o);
}

// The extension of `path` in lower case ("" when none).
std::string extensionOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot + 1);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

// The files a run writes, as (option, path); an empty path is an option not given.
std::vector<std::pair<std::string, std::string>> namedOutputs(const Options& o) {
  return {{"--out", o.out}, {"--csv", o.csv}, {"--screenshot", o.screenshot}, {"--record", o.record}};
}

// The parameter-table row of a command-line option; nullptr for the options of the app itself.
const core::ParamDesc* paramOfOption(const std::string& name) {
  for (const core::ParamDesc& d : core::paramTable())
    if (name == d.option) return &d;
  return nullptr;
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

// Options a headless run or a sweep would silently ignore are refused, naming what they apply
// to. The viewer takes them all: its force, pipeline and drawing change while it runs.
void checkOptionsApply(const Options& o) {
  if (o.mode != Mode::Headless && o.mode != Mode::Bench) return;
  const bool bench = o.mode == Mode::Bench;
  const bool renders = bench ? o.bench.render : o.render;
  const core::SimParams& p = o.params;
  const bool boids = p.force == core::ForceMode::Boids;
  // Over several ranks a run without --pipeline takes the decomposition's (runHeadless).
  const core::Pipeline pipe = !bench && dist::launchedRanks() > 1 && !o.pipelineSet
                                  ? (boids ? core::Pipeline::Coherent : core::Pipeline::Naive)
                                  : p.pipeline;
  const bool gridPipeline = pipe != core::Pipeline::Naive && pipe != core::Pipeline::Tree;
  const auto is = [](const std::string& name, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (name == n) return true;
    return false;
  };
  // The headless outputs and frame options, which a sweep does not write or render.
  const char* const kNotInBench = " does not apply to murmur bench (it writes the rows of --csv; headless runs take it)";
  if (bench)
    for (const auto& [name, path] : namedOutputs(o))
      if (!path.empty() && name != "--csv") throw UsageError(name + " " + path + kNotInBench);
  const std::vector<core::ForceMode> forces =
      o.bench.forces.empty() ? std::vector<core::ForceMode>{core::ForceMode::Boids} : o.bench.forces;
  std::string forceList;
  for (core::ForceMode f : forces) forceList += (forceList.empty() ? "" : ",") + std::string(core::toString(f));
  if (bench) {
    const bool cuda = o.engine == core::EngineKind::Cuda;
    const bool gravity = std::find(forces.begin(), forces.end(), core::ForceMode::Gravity) != forces.end();
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
  for (const auto& [name, value] : o.typed) {
    const std::string given = name + " " + value;
    if (bench && is(name, {"--frames", "--steps-per-frame", "--record-every"})) throw UsageError(given + kNotInBench);
    if (!renders && is(name, {"--width", "--height", "--zoom", "--draw", "--colour", "--slab", "--fog", "--edl",
                              "--warp-reduce", "--frames", "--steps-per-frame", "--record-every"}))
      throw UsageError(given + " needs rendering (" + (bench ? "add --render" : "drop --no-render") + ")");
    if (!bench && name == "--record-every" && o.record.empty())
      throw UsageError(given + " applies with --record only");
    const core::ParamDesc* d = paramOfOption(name);
    if (!d) continue;
    const std::string key = d->key;
    if (bench) {
      // A sweep's forces and pipelines are lists: a parameter applies when some row uses it.
      const auto sweeps = [&](core::ForceMode f) {
        return std::find(forces.begin(), forces.end(), f) != forces.end();
      };
      const std::string sweep = " (this sweep's forces: " + forceList + ")";
      if (key.rfind("boids.", 0) == 0 && !sweeps(core::ForceMode::Boids))
        throw UsageError(given + " applies to boids only" + sweep);
      if (key.rfind("gravity.", 0) == 0 && !sweeps(core::ForceMode::Gravity))
        throw UsageError(given + " applies to gravity only" + sweep);
      const auto& pipes = o.bench.pipelines;
      if ((key == "gravity.theta" || key == "gravity.treeLeafSize") && !pipes.empty() &&
          std::find(pipes.begin(), pipes.end(), core::Pipeline::Tree) == pipes.end())
        throw UsageError(given + " applies to --pipeline tree only (not in the sweep)");
      continue;
    }
    const std::string run = std::string(" (this run: ") + core::toString(p.force) + ", pipeline " + core::toString(pipe) +
                            (o.engine == core::EngineKind::Cpu ? ", cpu engine)" : ")");
    if (key.rfind("boids.", 0) == 0 && !boids) throw UsageError(given + " applies to boids only" + run);
    if (key.rfind("gravity.", 0) == 0 && boids) throw UsageError(given + " applies to gravity only" + run);
    if ((key == "gravity.theta" || key == "gravity.treeLeafSize") && pipe != core::Pipeline::Tree)
      throw UsageError(given + " applies to --pipeline tree only" + run);
    if ((key == "gravity.gridDim" || key == "gravity.gridSpread") && !gridPipeline)
      throw UsageError(given + " applies to the grid pipelines only (scattered, coherent, rows, verlet)" + run);
    if (key == "gravity.damping" && p.gravity.integrator != core::Integrator::DampedEuler)
      throw UsageError(given + " applies to --integrator euler only" + run);
    if (key == "cellWidthFactor" && !(boids && gridPipeline))
      throw UsageError(given + " applies to boids on the grid pipelines only (scattered, coherent, rows, verlet)" + run);
    if (key == "blockSize" && o.engine != core::EngineKind::Cuda)
      throw UsageError(given + " applies to the cuda engine only" + run);
  }
}

}  // namespace

bool parseOptions(int argc, char** argv, Options& o) {
  CLI::App app{"Murmuration: real-time GPU flocking and n-body simulator"};
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  GivenMap given;
  bool headless = false, noRender = false;
  app.add_flag("--headless", headless, "Run without a window (EGL offscreen if rendering)");
  app.add_flag("--no-render", noRender, "With --headless: simulate only, no GL at all");
  addValue(app, given, "--scenario", "uniform | dense | plummer | galaxies | galaxy | file:PATH (default: dense, 4 neighbours; uniform with --half-size)");
  addValue(app, given, "--params", "JSON file with simulation parameters (options override it)");
  addAppValues(app, given, false);
  addParamOptions(app, given);
  app.add_option("--out", o.out, "Write the final state (mass x y z vx vy vz per line)");
  app.add_option("--screenshot", o.screenshot, "Write the last frame as PNG");
  app.add_option("--record", o.record, "Record frames to a video through ffmpeg, or to PNG files: a path with %d (frames/f%05d.png)");
  app.add_option("--csv", o.csv, "CSV output (benchmark rows; viewer FPS log)");
  app.add_flag("--profile", o.profile, "Print per-stage times");
  app.fallthrough();  // options of the main command are accepted after a subcommand too

  auto* accuracy = app.add_subcommand(
      "accuracy", "Force error and energy drift of each gravity pipeline against a double-precision direct sum");
  GivenMap accuracyGiven;
  addValue(*accuracy, accuracyGiven, "--drift-n",
           "Bodies of the 1000-step energy-drift run per pipeline (0 skips it; default 16k on a GPU, 1000 on the CPU)");
  auto* bench = app.add_subcommand("bench", "Benchmark sweeps over force, pipeline, N, block size and cell width");
  GivenMap benchGiven;
  addBenchOptions(*bench, benchGiven, o.bench);
  app.require_subcommand(0, 1);

  // "--n=" reaches CLI11 as a missing value, which it words in its own terms.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1)
      throw UsageError(a.substr(0, a.size() - 1) + " '' is invalid: expected a value");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (*accuracy) {
      // accuracy has no options of its own: the scenario, engine and gravity options pick what it measures.
      std::cout << accuracy->help() << "\nIt takes the simulation options of murmur (the scenario, --n, --engine, "
                << "--seed and the gravity parameters pick what it measures):\n\n"
                << app.get_formatter()->make_help(&app, argv[0], CLI::AppFormatMode::Normal);
    } else {
      std::cout << (*bench ? bench->help() : app.help());
    }
    return false;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::ParseError& e) {
    // An option given twice: CLI11 words it as counts ("--n: At Most 1 required but received 2").
    const std::string what = e.what();
    const size_t colon = what.find(": At Most 1 required but received");
    if (colon != std::string::npos && what.rfind("--", 0) == 0)
      throw UsageError(what.substr(0, colon) + " is given more than once (give it once; lists are comma-separated: "
                       "--n 1k,10k)");
    throw UsageError(what);
  }
  // An empty value ("--out ''", "--preset ''") is a slip, not a request for the default. The
  // table-driven options say so in their own parse; this covers the plain ones.
  for (const CLI::App* a : {static_cast<const CLI::App*>(&app), static_cast<const CLI::App*>(bench)}) {
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->get_type_size() == 0) continue;  // a flag takes no value
      for (const std::string& v : opt->results())
        if (v.empty()) throw UsageError(opt->get_name() + " '' is invalid: expected a value (" + opt->get_description() + ")");
    }
  }

  if (*bench)
    o.mode = Mode::Bench;
  else if (*accuracy)
    o.mode = Mode::Accuracy;
  else
    o.mode = headless ? Mode::Headless : Mode::Viewer;
  if (noRender && !headless && o.mode != Mode::Bench && o.mode != Mode::Accuracy)
    throw UsageError("--no-render needs --headless (the viewer always renders)");
  o.render = !noRender;

  // Parameters in rising precedence: a bench preset's, then the --params file, then the options.
  const BenchPreset* preset = nullptr;
  if (o.mode == Mode::Bench) {
    o.bench.commandLine = shellQuotedCommandLine(argc, argv);
    if (!o.bench.preset.empty()) {
      preset = &findBenchPreset(o.bench.preset);
      if (preset->applyParams) preset->applyParams(o.params);
    }
    if (!o.csv.empty()) o.bench.csv = o.csv;
  }
  const auto has = [&](const char* name) { return given.at(name).given(); };
  const auto text = [&](const char* name) -> const std::string& { return given.at(name).text; };
  for (const auto& [name, g] : given)
    if (g.given()) o.typed.emplace_back(name, g.text);
  for (const auto& [name, g] : benchGiven)
    if (g.given()) o.benchTyped.emplace_back(name, g.text);
  for (const char* flag : {"--render", "--append", "--cpu-baseline", "--reference"})
    if (bench->get_option(flag)->count() > 0) o.benchTyped.emplace_back(flag, "");
  // A saved state carries the parameters it ran with, below --params and the options.
  if (has("--scenario") && text("--scenario").rfind("file:", 0) == 0 && text("--scenario").size() > 5) {
    const core::StateHeader h = core::readStateHeader(text("--scenario").substr(5));
    if (!h.paramsJson.empty()) loadParamsText("--scenario " + text("--scenario") + ": params", h.paramsJson, o.params);
    if (h.halfSize > 0) o.params.halfSize = h.halfSize;
    o.fileForce = h.force;
    o.startStep = h.step;
  }
  bool paramsForce = false;  // a --params file's "force" beats the scenario's own force
  if (has("--params")) loadParamsFile(text("--params"), o.params, &paramsForce);
  applyParamOptions(given, o.params);
  applyAppValues(given, false, o);
  o.forceSet = has("--force") || benchGiven.at("--force").given() || paramsForce;
  o.nSet = has("--n") || benchGiven.at("--n").given();
  o.pipelineSet = has("--pipeline");
  if (o.mode == Mode::Bench) applyBenchOptions(benchGiven, o);
  if (accuracyGiven.at("--drift-n").given()) {
    o.driftBodies = static_cast<uint64_t>(parseOption("--drift-n", accuracyGiven.at("--drift-n").text, "drift bodies",
                                                      core::countRange(0, core::kMaxBodies)));
    o.driftSet = true;
  }
  if (has("--scenario")) {
    const std::string& s = text("--scenario");
    if (s.rfind("file:", 0) != 0) {
      std::vector<std::string> allowed = core::scenarioNames();
      allowed.push_back("file:PATH");  // any value starting with file: is a path, never checked here
      parseName("--scenario", s, allowed);
    }
    o.scenario.name = s;
    if (o.mode == Mode::Bench) o.bench.scenario = s;
  } else if ((o.mode == Mode::Viewer || o.mode == Mode::Headless) && !has("--half-size")) {
    // With no --scenario (and no world size asked for): a world in which flocks form within a
    // few hundred steps with space between them. At 8 neighbours per boid the flocks fill the
    // world and merge; at 4 they separate (README, "The viewer").
    o.scenario.name = "dense";
    if (!has("--neighbours")) o.scenario.denseNeighbours = kDefaultWorldNeighbours;
    // The fastest exact pipeline in that world: verlet, or rows from kRowsFromN boids on
    // (resolveDefaults, once N is known). --list-steps asks for verlet's lists.
    if (!has("--pipeline") && !has("--params")) {
      o.params.pipeline = core::Pipeline::Verlet;
      o.defaultWorld = !has("--list-steps");
    }
  }
  if (o.mode == Mode::Bench) {
    // A sweep drops boids x tree; one whose --pipeline names tree with no gravity in it would
    // silently measure less than asked. (Checked before the preset fills its own lists.)
    const auto& pipes = o.bench.pipelines;
    const auto& forces = o.bench.forces.empty() && preset ? preset->forces : o.bench.forces;
    const bool names = std::find(pipes.begin(), pipes.end(), core::Pipeline::Tree) != pipes.end();
    const bool gravity = std::find(forces.begin(), forces.end(), core::ForceMode::Gravity) != forces.end();
    if (names && !gravity) throw UsageError(std::string("--pipeline tree: ") + core::kTreeBoidsMessage + "; add --force gravity");
  }
  if (preset) fillFromPreset(*preset, o.bench);
  {
    // Options that only the dense scenario reads are refused with any other rather than ignored.
    const std::string& scen = o.mode == Mode::Bench ? o.bench.scenario : o.scenario.name;
    if (has("--neighbours") && scen != "dense")
      throw UsageError("--neighbours " + text("--neighbours") + " applies to --scenario dense only (the scenario is " +
                       (scen.empty() ? std::string("uniform") : scen) + ")");
    if (has("--half-size") && scen == "dense")
      throw UsageError("--half-size " + text("--half-size") +
                       " does not apply with --scenario dense: its world size follows from --n and --neighbours");
    // --list-steps: only the verlet pipeline has lists (a sweep: when it measures verlet at all).
    if (has("--list-steps")) {
      const auto& pipes = o.bench.pipelines;
      const bool verlet = o.mode == Mode::Bench
                              ? pipes.empty() || std::find(pipes.begin(), pipes.end(), core::Pipeline::Verlet) != pipes.end()
                              : o.params.pipeline == core::Pipeline::Verlet;
      if (!verlet)
        throw UsageError("--list-steps " + text("--list-steps") + " applies to --pipeline verlet only (the pipeline is " +
                         (o.mode == Mode::Bench ? std::string("not in the sweep") : core::toString(o.params.pipeline)) +
                         ")");
    }
  }
  // Options that cannot apply are refused rather than ignored.
  if (o.nSet && o.scenario.name.rfind("file:", 0) == 0)
    throw UsageError("--n " + (has("--n") ? text("--n") : benchGiven.at("--n").text) + " does not apply with --scenario " +
                     o.scenario.name + ": the file sets the number of bodies");
  if (o.mode == Mode::Accuracy) {
    // It compares the gravity pipelines' forces on one state (and a drift run per pipeline):
    // what picks the state, the engine and the gravity parameters apply, nothing else.
    // (The drift run is leapfrog at the gravity dt; --force gravity keeps a uniform world.)
    const auto applies = [](const std::string& name, const std::string& value) {
      for (const char* a : {"--n", "--scenario", "--seed", "--engine", "--params", "--half-size", "--neighbours",
                            "--block-size"})
        if (name == a) return true;
      if (name == "--force") return value == "gravity";
      if (name == "--integrator" || name == "--damping") return false;
      const core::ParamDesc* d = paramOfOption(name);
      return d && std::string(d->key).rfind("gravity.", 0) == 0;
    };
    std::vector<std::pair<std::string, std::string>> typed = o.typed;
    for (const auto& [name, path] : namedOutputs(o))
      if (!path.empty()) typed.emplace_back(name, path);
    for (const auto& [name, value] : typed)
      if (!applies(name, value))
        throw UsageError(name + " " + value + " does not apply to murmur accuracy: it compares every gravity "
                         "pipeline's forces on one state (options: --n, --scenario, --seed, --engine and the gravity "
                         "parameters)");
  }
  checkRunShape(o, has("--steps"), has("--frames"), noRender);
  checkOutputNames(o);
  core::checkDistinctOutputs(namedOutputs(o));
  // Without --force the scenario decides the force later, so tree is checked against boids only
  // then (resolveDefaults); every other rule is checked here, against the parameters as given.
  core::SimParams check = o.params;
  if (!o.forceSet && check.pipeline == core::Pipeline::Tree) check.force = core::ForceMode::Gravity;
  const std::string err = core::validateParams(check);
  if (!err.empty()) throw UsageError(err);
  return true;
}

void resolveDefaults(Options& o) {
  if (!o.engineSet) o.engine = defaultEngineKind();
  if (!o.nSet) o.scenario.n = o.engine == core::EngineKind::Cuda ? 100000 : 10000;
  // The fastest exact pipeline in the default world: on an H100 (100k / 1M / 10M boids, ms per
  // step, bench/results/h100/counting-default-world.csv) verlet 0.073 / 0.295 / 2.471, rows
  // 0.084 / 0.279 / 2.289.
  if (o.defaultWorld && o.scenario.n >= kRowsFromN) o.params.pipeline = core::Pipeline::Rows;
  // A saved state says which force it was simulated with (a plain body file is gravity).
  if (!o.forceSet && o.mode != Mode::Bench &&
      (o.fileForce.empty() || !core::parse(o.fileForce, o.params.force)))
    o.params.force = core::naturalForce(o.scenario.name);
  if (o.mode != Mode::Bench && o.params.force == core::ForceMode::Boids && o.params.pipeline == core::Pipeline::Tree)
    throw UsageError(std::string("--pipeline tree: ") + core::kTreeBoidsMessage);
  if (o.dt > 0) core::activeDt(o.params) = o.dt;
  checkOptionsApply(o);
}

}  // namespace murmur::app
