// The command line's definition: every option, subcommand and help line, built from the
// parameter table (core/param_table.h), the app's own value rows below and the bench lists; and
// CLI11's parse, with its errors worded as murmur words every other message.
#include <algorithm>
#include <iostream>

#include "app/options_internal.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/errors.h"
#include "core/param_table.h"
#include "core/rule_table.h"
#include "core/trajectory.h"

namespace murmur::app::cli {

using core::UsageError;

namespace {

Given& addValue(CLI::App& app, GivenMap& given, const std::string& name, const std::string& help,
                const std::string& valueName) {
  Given& g = given[name];
  g.option = app.add_option(name, g.text, help);
  g.option->type_name(valueName);
  return g;
}

// The value's name in --help: N (a whole number), X (a number), NAME (one of a list).
std::string valueName(const core::ValueSpec& spec) {
  switch (spec.type) {
    case core::ValueType::Int:
    case core::ValueType::Count:
      return "N";
    case core::ValueType::Enum:
      return "NAME";
    case core::ValueType::Float:
      break;
  }
  return "X";
}

std::string paramHelp(const core::ParamDesc& d) {
  std::string h = d.help;
  if (*d.unit) h += std::string(" [") + d.unit + "]";
  return h + "; " + core::allowedText(d.spec);
}

// One option per simulation parameter, straight from the parameter table, and each old spelling
// of one (core::optionAliases).
void addParamOptions(CLI::App& app, GivenMap& given) {
  for (const core::ParamDesc& d : core::paramTable()) addValue(app, given, d.option, paramHelp(d), valueName(d.spec));
  for (const core::OptionAlias& a : core::optionAliases())
    addValue(app, given, a.alias, std::string("The old name of ") + a.option, "NAME");
  for (const core::SharedOption& s : core::sharedOptions()) addValue(app, given, s.option, s.help, "X");
}

}  // namespace

void applyParamOptions(const GivenMap& given, core::SimParams& p) {
  for (const core::ParamDesc& d : core::paramTable()) {
    const Given& g = given.at(d.option);
    if (g.given()) d.set(p, parseOption(d.option, g.text, d.label, d.spec));
  }
  for (const core::OptionAlias& a : core::optionAliases()) {
    const Given& g = given.at(a.alias);
    if (!g.given()) continue;
    if (given.at(a.option).given())
      throw UsageError(std::string(a.alias) + " " + g.text + " and " + a.option + " " + given.at(a.option).text +
                       " set the same parameter (" + a.alias + " is the old name of " + a.option + "): give one");
    const core::ParamDesc& d = *core::findParamByOption(a.option);
    d.set(p, parseOption(a.alias, g.text, d.label, d.spec));
  }
  // A rule chosen here brings its boundary unless --boundary names one.
  if (given.at("--rule").given() || given.at("--rules").given()) {
    if (!given.at("--boundary").given()) p.boundary = core::activeRule(p).boundary;
  }
  // The shared options set the active rule's parameter (after --rule and --force above chose it).
  for (const core::SharedOption& s : core::sharedOptions()) {
    const Given& g = given.at(s.option);
    if (!g.given()) continue;
    if (p.topological > 0 && std::string(s.option) == "--radius") {
      // Over topological neighbours --radius is the cutoff: the K nearest within it.
      const core::ParamDesc& cut = *core::findParam("topologicalRadius");
      if (given.at(cut.option).given())
        throw UsageError("--radius " + g.text + " and " + cut.option + " " + given.at(cut.option).text +
                         " set the same parameter (the topological cutoff): give one");
      cut.set(p, parseOption(s.option, g.text, cut.label, cut.spec));
      continue;
    }
    std::string why;
    const core::ParamDesc* d = core::sharedOptionTarget(s, p, &why);
    if (!d) throw UsageError(std::string(s.option) + " " + g.text + ": " + why);
    if (given.at(d->option).given())
      throw UsageError(std::string(s.option) + " " + g.text + " and " + d->option + " " + given.at(d->option).text +
                       " set the same parameter (the " + core::activeRule(p).name + " rule's " + s.what + "): give one");
    d->set(p, parseOption(s.option, g.text, d->label, d->spec));
  }
}

namespace {

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
      {"--n", "n", "Number of bodies, e.g. 100000, 100k, 1M (past 1073741824 only for boids over several ranks)",
       core::countRange(1, core::kMaxBodiesOverRanks),
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
      {"--fog", "fog", "How far the far side of the scene fades into the background, every draw mode (default 0.55)", core::floatAtLeast(0, 1),
       [](Options& o, double v) { o.fog = static_cast<float>(v); }, false},
      {"--edl", "eye-dome lighting", "Splat: eye-dome lighting strength, 0 = off (default 0.7)", core::floatAtLeast(0, 100),
       [](Options& o, double v) { o.edl = static_cast<float>(v); }, false},
      {"--warp-reduce", "warp reduce", "Splat on CUDA: combine a warp's bodies per pixel before the atomic (default off)",
       namesOf(kOffOn), [](Options& o, double v) { o.warpReduce = v != 0; }, false},
      {"--box", "world box", "Draw the boids' world box over the frame, thin and dim, in every draw mode (default on)",
       namesOf(kOffOn), [](Options& o, double v) { o.box = v != 0; }, false},
      {"--legend", "legend", "Draw the colour mode's legend in the frame's bottom-right corner (default on)",
       namesOf(kOffOn), [](Options& o, double v) { o.legend = v != 0; }, false},
      {"--checksum", "checksum",
       "Headless: gather the final state and print its checksum (default on; off skips the gather, for worlds too "
       "large to gather on one host)",
       namesOf(kOffOn), [](Options& o, double v) { o.checksum = v != 0; }, false},
      {"--record-every", "record every", "Headless: record every K-th frame: K steps apart, K * --steps-per-frame with it (default 1)", core::intRange(1, 1000000),
       [](Options& o, double v) { o.recordEvery = static_cast<int>(v); }, false},
      {"--observe-every", "observe every", "Sample the observables every K steps: --observables, the viewer's panel (default 10)",
       core::intRange(1, 100000000), [](Options& o, double v) { o.observeEvery = static_cast<int>(v); }, false},
      {"--trajectory-every", "trajectory every", "Headless: write a trajectory frame every K steps (default 10)",
       core::intRange(1, 100000000), [](Options& o, double v) { o.trajectoryEvery = static_cast<int>(v); }, false},
      {"--scale-length", "length scale", "With --scenario file: multiply positions by this (units)",
       core::floatAbove(0, 1e30), [](Options& o, double v) { o.scenario.scaleLength = v; }, false},
      {"--scale-velocity", "velocity scale", "With --scenario file: multiply velocities by this (units)",
       core::floatAbove(0, 1e30), [](Options& o, double v) { o.scenario.scaleVelocity = v; }, false},
      {"--scale-mass", "mass scale", "With --scenario file: multiply masses by this (units)", core::floatAbove(0, 1e30),
       [](Options& o, double v) { o.scenario.scaleMass = v; }, false},
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
    if (a.bench == bench)
      addValue(app, given, a.name, std::string(a.help) + "; " + core::allowedText(a.spec), valueName(a.spec));
}

}  // namespace

void applyAppValues(const GivenMap& given, bool bench, Options& o) {
  for (const AppValue& a : appValues()) {
    if (a.bench != bench) continue;
    const Given& g = given.at(a.name);
    if (g.given()) a.apply(o, parseOption(a.name, g.text, a.label, a.spec));
  }
}

namespace {

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
                 (pipelines ? std::string("; also ") + kTextbookPipeline + ", the textbook baseline" : ""),
             "LIST");
  }
  addAppValues(bench, given, true);
  std::string presets;
  for (const auto& p : benchPresets()) presets += (presets.empty() ? "" : " | ") + p.name;
  bench.add_option("--preset", b.preset, "Named sweep: " + presets)->type_name("NAME");
  bench.add_option("--csv", b.csv, "CSV of the results (default bench.csv); the JSON sidecar is CSV.json")
      ->type_name("FILE");
  bench.add_flag("--render", b.render, "Also draw an offscreen frame per step (render_ms, frame_fps)");
  bench.add_flag("--append", b.append, "Append to the CSV instead of overwriting");
  bench.add_flag("--cpu-baseline", b.cpuBaseline, "Also run the configurations with N <= 50k on the CPU engine");
  bench.add_flag("--observe", b.observe,
                 "Also time as many steps again, each with a sample of the observables; observe_ms: what a sample adds to a step (one rank only)");
  bench.add_flag("--observe-flocks", b.observeFlocks, "With --observe: the flock count too (boids)");
  bench.add_flag("--reference", b.reference,
                 "Also time all-pairs gravity as NVIDIA's nbody sample writes it (pipeline sample-reference)");
}

}  // namespace

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

namespace {

// The options of the main command; fallthrough: they are accepted after a subcommand too.
void defineMainOptions(CommandLine& cl, Options& o) {
  CLI::App& app = cl.app;
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  app.add_flag("--headless", cl.headless, "Run without a window (EGL offscreen if rendering)");
  app.add_flag("--no-render", cl.noRender, "With --headless: simulate only, no GL at all");
  addValue(app, cl.given, "--scenario", "uniform | dense | plummer | galaxies | galaxy | file:PATH | file:RUN.h5@last or @K (default: dense, 4 neighbours; uniform with --half-size)",
           "NAME");
  addValue(app, cl.given, "--select",
           "With --scenario file: keep these bodies, in file order (0-based ranges, e.g. 0-16383,32768-40959); "
           "--n then takes an even subset of them",
           "RANGES");
  addValue(app, cl.given, "--params", "JSON file with simulation parameters (options override it)", "FILE");
  addAppValues(app, cl.given, false);
  addParamOptions(app, cl.given);
  app.add_option("--out", o.out, "Write the final state (mass x y z vx vy vz per line, then species where a body has one other than 0)")->type_name("FILE");
  app.add_option("--screenshot", o.screenshot, "Write the last frame as PNG")->type_name("FILE");
  app.add_option("--record", o.record, "Record frames to a video through ffmpeg, or to PNG files: a path with %d (frames/f%05d.png)")->type_name("FILE");
  app.add_option("--csv", o.csv, "CSV output (benchmark rows; viewer FPS log)")->type_name("FILE");
  app.add_flag("--profile", o.profile, "Print per-stage times");
  app.add_option("--observables", o.observables,
                 "Headless: write the observables (polarization, flocks, energies...) every --observe-every steps "
                 "to this CSV (docs/observables.md); over several ranks each sample gathers on rank 0 and is "
                 "computed there on the CPU")
      ->type_name("FILE");
  app.add_flag("--observables-flocks", o.observeFlocks,
               "Boids: also count flocks (connected components within the cohesion radius) and their milling");
  app.add_option("--trajectory", o.trajectory,
                 "Headless: write positions and velocities every --trajectory-every steps to this HDF5 file, with "
                 "an XDMF index beside it for ParaView (FILE.xdmf); --scenario file:FILE.h5@last restarts")
      ->type_name("FILE");
  app.fallthrough();
}

// Help: a subcommand's, or the main command's; accuracy's lists the main options it takes.
void printHelp(const CommandLine& cl, const char* argv0) {
  if (*cl.accuracy) {
    // accuracy has no options of its own: the scenario, engine and gravity options pick what it measures.
    std::cout << cl.accuracy->help() << "\nIt takes the simulation options of murmur (the scenario, --n, --engine, "
              << "--seed and the gravity parameters pick what it measures):\n\n"
              << cl.app.get_formatter()->make_help(&cl.app, argv0, CLI::AppFormatMode::Normal);
  } else if (*cl.bench) {
    // bench takes murmur's options too (fallthrough): those a sweep reads are listed after its own;
    // the headless outputs and frame options, which a sweep refuses, and its own lists are not.
    static const char* const kNotListed[] = {"--help-all",          "--out",        "--screenshot",
                                             "--record",            "--observables", "--observables-flocks",
                                             "--trajectory",        "--trajectory-every", "--observe-every",
                                             "--frames",            "--steps-per-frame",  "--record-every",
                                             "--checksum"};
    std::string shared;
    const CLI::Formatter format;
    for (const CLI::Option* opt : cl.app.get_options()) {
      const std::string name = opt->get_name();
      if (name.rfind("--", 0) != 0 || cl.bench->get_option_no_throw(name) != nullptr) continue;
      if (std::find(std::begin(kNotListed), std::end(kNotListed), name) != std::end(kNotListed)) continue;
      shared += format.make_option(opt, false);
    }
    std::cout << cl.bench->help() << "\nOptions of murmur that a sweep takes too (--scenario default: "
              << "boids in the viewer's world, dense at 4 neighbours (dense:4; uniform with --half-size), "
              << "gravity plummer):\n" << shared;
  } else {
    std::cout << cl.app.help();
  }
}

// An empty value ("--out ''", "--preset ''") is a slip, not a request for the default. The
// table-driven options say so in their own parse; this covers the plain ones.
void refuseEmptyValues(const CommandLine& cl) {
  for (const CLI::App* a : {static_cast<const CLI::App*>(&cl.app), static_cast<const CLI::App*>(cl.bench)}) {
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->get_type_size() == 0) continue;  // a flag takes no value
      for (const std::string& v : opt->results())
        if (v.empty()) throw UsageError(opt->get_name() + " '' is invalid: expected a value (" + opt->get_description() + ")");
    }
  }
}

// Edit distance (insertions, deletions, substitutions) between two option names.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// An option nobody defines ("--pipline rows"): named, with the closest option murmur has when
// one is near enough to be the one meant.
[[noreturn]] void refuseUnknownOption(const CommandLine& cl, int argc, char** argv, const std::string& what) {
  std::vector<std::string> known;
  for (const CLI::App* a : {static_cast<const CLI::App*>(&cl.app), static_cast<const CLI::App*>(cl.bench),
                            static_cast<const CLI::App*>(cl.accuracy)})
    for (const CLI::Option* opt : a->get_options())
      for (const std::string& l : opt->get_lnames()) known.push_back("--" + l);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() < 3) continue;
    a = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), a) != known.end()) continue;
    std::string best;
    size_t bestDistance = std::string::npos;
    for (const std::string& k : known) {
      const size_t d = editDistance(a, k);
      if (d < bestDistance) bestDistance = d, best = k;
    }
    // Near enough: a slip of a letter or two, not a different word.
    const size_t near = std::max<size_t>(2, (a.size() - 2) / 3);
    throw UsageError(a + ": no such option" +
                     (bestDistance <= near ? "; did you mean " + best + "?" : std::string(" (murmur --help lists them)")));
  }
  throw UsageError(what);
}

}  // namespace

void defineCommandLine(CommandLine& cl, Options& o) {
  defineMainOptions(cl, o);
  cl.accuracy = cl.app.add_subcommand(
      "accuracy", "Force error and energy drift of each gravity pipeline against a double-precision direct sum");
  addValue(*cl.accuracy, cl.accuracyGiven, "--drift-n",
           "Bodies of the 1000-step energy-drift run per pipeline (0 skips it; default 16k on a GPU, 1000 on the CPU)", "N");
  cl.bench = cl.app.add_subcommand("bench", "Benchmark sweeps over force, pipeline, N, block size and cell width");
  addBenchOptions(*cl.bench, cl.benchGiven, o.bench);
  cl.app.require_subcommand(0, 1);
}

bool parseCommandLine(CommandLine& cl, int argc, char** argv) {
  // "--n=" reaches CLI11 as a missing value, which it words in its own terms.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1)
      throw UsageError(a.substr(0, a.size() - 1) + " '' is invalid: expected a value");
  }
  try {
    cl.app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    printHelp(cl, argv[0]);
    return false;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << cl.app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::ExtrasError& e) {
    refuseUnknownOption(cl, argc, argv, e.what());
  } catch (const CLI::ParseError& e) {
    // An option given twice: CLI11 words it as counts ("--n: At Most 1 required but received 2").
    const std::string what = e.what();
    const size_t colon = what.find(": At Most 1 required but received");
    if (colon != std::string::npos && what.rfind("--", 0) == 0)
      throw UsageError(what.substr(0, colon) + " is given more than once (give it once; lists are comma-separated: "
                       "--n 1k,10k)");
    throw UsageError(what);
  }
  refuseEmptyValues(cl);
  return true;
}

std::vector<std::pair<std::string, std::string>> namedOutputs(const Options& o) {
  return {{"--out", o.out},         {"--csv", o.csv},
          {"--screenshot", o.screenshot}, {"--record", o.record},
          {"--observables", o.observables}, {"--trajectory", o.trajectory},
          {"--trajectory (its XDMF index)", o.trajectory.empty() ? std::string() : core::trajectory::xdmfPathFor(o.trajectory)}};
}

}  // namespace murmur::app::cli
