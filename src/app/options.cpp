#include "app/options.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "app/bench.h"
#include "app/engine_factory.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/errors.h"
#include "core/param_table.h"

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

// The bench subcommand's list-valued options: the sweep's dimensions. Each item is checked by the
// same row of the parameter table as the single-valued option.
struct BenchLists {
  GivenMap given;
  static constexpr const char* kListed[] = {"force", "pipeline", "blockSize", "cellWidthFactor"};
};

template <typename T>
std::vector<T> parseList(const Given& g, const char* option, const char* label, const core::ValueSpec& spec) {
  std::vector<T> out;
  for (const std::string& item : splitList(option, g.text))
    out.push_back(core::detail::fromDouble<T>(parseOption(option, item, label, spec)));
  return out;
}

void addBenchOptions(CLI::App& bench, BenchOptions& b, BenchLists& lists) {
  for (const char* key : BenchLists::kListed) {
    const core::ParamDesc& d = *core::findParam(key);
    addValue(bench, lists.given, d.option, "Comma-separated list: " + paramHelp(d));
  }
  addValue(bench, lists.given, "--n", "Comma-separated list of body counts (suffix k, M)");
  addValue(bench, lists.given, "--steps", "Timed steps per repeat (default 30)");
  addValue(bench, lists.given, "--warmup", "Warm-up steps per configuration (default 5)");
  addValue(bench, lists.given, "--repeats", "Timed repeats per configuration; statistics pool their steps (default 3)");
  addValue(bench, lists.given, "--max-seconds", "Time budget per configuration; slow ones run fewer steps (default 3)");
  std::string presets;
  for (const auto& p : benchPresets()) presets += (presets.empty() ? "" : " | ") + p.name;
  bench.add_option("--preset", b.preset, "Named sweep: " + presets);
  bench.add_flag("--render", b.render, "Also draw an offscreen frame per step (render_ms, frame_fps)");
  bench.add_flag("--append", b.append, "Append to the CSV instead of overwriting");
  bench.add_flag("--cpu-baseline", b.cpuBaseline, "Also run the configurations with N <= 50k on the CPU engine");
}

void applyBenchOptions(const BenchLists& lists, BenchOptions& b) {
  const GivenMap& g = lists.given;
  const auto listOf = [&](const char* key) -> const Given& { return g.at(core::findParam(key)->option); };
  const auto rowOf = [](const char* key) -> const core::ParamDesc& { return *core::findParam(key); };
  if (listOf("force").given()) b.forces = parseList<core::ForceMode>(listOf("force"), "--force", "force", rowOf("force").spec);
  if (listOf("pipeline").given())
    b.pipelines = parseList<core::Pipeline>(listOf("pipeline"), "--pipeline", "pipeline", rowOf("pipeline").spec);
  if (listOf("blockSize").given())
    b.blockSizes = parseList<int>(listOf("blockSize"), "--block-size", "block size", rowOf("blockSize").spec);
  if (listOf("cellWidthFactor").given())
    b.cellWidths = parseList<int>(listOf("cellWidthFactor"), "--cell-width", "cell width", rowOf("cellWidthFactor").spec);
  if (g.at("--n").given()) b.counts = parseList<uint64_t>(g.at("--n"), "--n", "n", core::countRange(1, core::kMaxBodies));
  if (g.at("--steps").given()) b.steps = static_cast<int>(parseInt("--steps", g.at("--steps").text, 1, 100000000));
  if (g.at("--warmup").given()) b.warmup = static_cast<int>(parseInt("--warmup", g.at("--warmup").text, 0, 1000000));
  if (g.at("--repeats").given()) b.repeats = static_cast<int>(parseInt("--repeats", g.at("--repeats").text, 1, 1000));
  if (g.at("--max-seconds").given()) b.maxSeconds = parseFloat("--max-seconds", g.at("--max-seconds").text, true);
}

}  // namespace

bool parseOptions(int argc, char** argv, Options& o) {
  CLI::App app{"Murmuration: real-time GPU flocking and n-body simulator"};
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  GivenMap given;
  bool headless = false, noRender = false;
  app.add_flag("--headless", headless, "Run without a window (EGL offscreen if rendering)");
  app.add_flag("--no-render", noRender, "With --headless: simulate only, no GL at all");
  addValue(app, given, "--engine", "cpu | cuda (default: cuda when a GPU is present)");
  addValue(app, given, "--n", "Number of bodies, e.g. 100000, 100k, 1M");
  addValue(app, given, "--steps", "Steps to run headless (default 100)");
  addValue(app, given, "--dt", "Time step of the active force mode");
  addValue(app, given, "--scenario", "uniform | dense | plummer | galaxies | file:PATH");
  addValue(app, given, "--seed", "Random seed of the scenario");
  addValue(app, given, "--params", "JSON file with simulation parameters (options override it)");
  addParamOptions(app, given);
  app.add_option("--out", o.out, "Write the final state (mass x y z vx vy vz per line)");
  app.add_option("--screenshot", o.screenshot, "Write the last frame as PNG");
  app.add_option("--record", o.record, "Record frames to a video through ffmpeg");
  app.add_option("--csv", o.csv, "CSV output (benchmark rows; viewer FPS log)");
  addValue(app, given, "--frames", "Frames to render: headless (default --steps), or the window closes after K");
  addValue(app, given, "--width", "Frame width in pixels");
  addValue(app, given, "--height", "Frame height in pixels");
  addValue(app, given, "--zoom", "Camera zoom over the fitted view (> 1 is closer)");
  addValue(app, given, "--draw", "Draw mode: boids | points | sprites");
  addValue(app, given, "--colour", "Colour mode: velocity | speed | id");
  app.add_flag("--profile", o.profile, "Print per-stage times");
  app.fallthrough();  // options of the main command are accepted after a subcommand too

  auto* accuracy = app.add_subcommand("accuracy", "Force error of each gravity pipeline against a double-precision direct sum");
  auto* bench = app.add_subcommand("bench", "Benchmark sweeps over force, pipeline, N, block size and cell width");
  BenchLists benchLists;
  addBenchOptions(*bench, o.bench, benchLists);
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << (*bench ? bench->help() : app.help());
    return false;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
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
  if (has("--params")) loadParamsFile(text("--params"), o.params);
  applyParamOptions(given, o.params);
  o.forceSet = has("--force") || benchLists.given.at("--force").given();
  if (o.mode == Mode::Bench) applyBenchOptions(benchLists, o.bench);

  if (has("--engine")) {
    o.engine = static_cast<core::EngineKind>(parseOption("--engine", text("--engine"), "engine",
                                                         core::enumSpec<core::EngineKind>()));
    o.engineSet = true;
  }
  if (has("--n")) o.scenario.n = parseCount("--n", text("--n"), 1, core::kMaxBodies);
  o.nSet = has("--n") || benchLists.given.at("--n").given();
  if (has("--steps")) o.steps = static_cast<int>(parseInt("--steps", text("--steps"), 0, 100000000));
  if (has("--scenario")) {
    const std::string& s = text("--scenario");
    if (s.rfind("file:", 0) != 0) parseName("--scenario", s, core::scenarioNames());
    o.scenario.name = s;
    if (o.mode == Mode::Bench) o.bench.scenario = s;
  }
  if (preset) fillFromPreset(*preset, o.bench);
  if (has("--seed")) o.scenario.seed = static_cast<uint64_t>(parseInt("--seed", text("--seed"), 0, 1LL << 53));
  if (has("--frames")) o.frames = static_cast<int>(parseInt("--frames", text("--frames"), 1, 10000000));
  if (has("--width")) o.width = static_cast<int>(parseInt("--width", text("--width"), 16, 8192));
  if (has("--height")) o.height = static_cast<int>(parseInt("--height", text("--height"), 16, 8192));
  if (has("--zoom"))
    o.zoom = static_cast<float>(parseOption("--zoom", text("--zoom"), "zoom", core::floatAtLeast(0.01, 1000)));
  if (has("--draw")) o.drawMode = parseName("--draw", text("--draw"), {"boids", "points", "sprites"});
  if (has("--colour")) o.colourMode = parseName("--colour", text("--colour"), {"velocity", "speed", "id"});
  // --dt applies to the force mode in use, known only after resolveDefaults.
  if (has("--dt")) o.dt = parseFloat("--dt", text("--dt"), true);
  const std::string err = core::validateParams(o.params);
  if (!err.empty()) throw UsageError(err);
  return true;
}

void resolveDefaults(Options& o) {
  if (!o.engineSet) o.engine = defaultEngineKind();
  if (!o.nSet) o.scenario.n = o.engine == core::EngineKind::Cuda ? 100000 : 10000;
  if (!o.forceSet && o.mode != Mode::Bench) o.params.force = core::naturalForce(o.scenario.name);
  if (o.dt > 0) core::activeDt(o.params) = o.dt;
}

}  // namespace murmur::app
