#include "app/options.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "app/bench.h"
#include "app/engine_factory.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/errors.h"

namespace murmur::app {

using core::UsageError;

namespace {
// Option values arrive as strings and are validated by app/parse.h, so every message has the
// same shape: option, value, what is allowed.
struct Raw {
  std::string engine, force, pipeline, n, steps, dt, blockSize, cellWidth, scenario, seed, params,
      rules, integrator, softening, gravityG, damping, gridDim, frames, width, height, halfSize;
};
}  // namespace

bool parseOptions(int argc, char** argv, Options& o) {
  CLI::App app{"Murmuration: real-time GPU flocking and n-body simulator"};
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  Raw r;
  bool headless = false, noRender = false;
  app.add_flag("--headless", headless, "Run without a window (EGL offscreen if rendering)");
  app.add_flag("--no-render", noRender, "With --headless: simulate only, no GL at all");
  app.add_option("--engine", r.engine, "cpu | cuda (default: cuda when a GPU is present)");
  app.add_option("--force", r.force, "boids | gravity (default: the scenario's)");
  app.add_option("--pipeline", r.pipeline, "naive | scattered | coherent | tree (tree: gravity only; default coherent)");
  app.add_option("--n", r.n, "Number of bodies, e.g. 100000, 100k, 1M (bench: a list)");
  app.add_option("--steps", r.steps, "Steps to run headless (default 100)");
  app.add_option("--dt", r.dt, "Time step of the active force mode");
  app.add_option("--block-size", r.blockSize, "CUDA threads per block: 32..1024, multiple of 32");
  app.add_option("--cell-width", r.cellWidth, "Grid cell width in rule radii: 1 (27 cells) or 2 (8)");
  app.add_option("--scenario", r.scenario, "uniform | dense | plummer | galaxies | file:PATH");
  app.add_option("--seed", r.seed, "Random seed of the scenario");
  app.add_option("--params", r.params, "JSON file with simulation parameters");
  app.add_option("--rules", r.rules, "Boid rule set: cis565 | reynolds");
  app.add_option("--integrator", r.integrator, "Gravity integrator: leapfrog | euler");
  app.add_option("--softening", r.softening, "Gravity softening length");
  app.add_option("--G", r.gravityG, "Gravitational constant");
  app.add_option("--damping", r.damping, "Velocity damping per step (euler integrator), (0, 1]");
  app.add_option("--grid-dim", r.gridDim, "Gravity grid cells per axis (grid pipelines), 1..128");
  std::string gridSpread;
  app.add_option("--grid-spread", gridSpread,
                 "Gravity grid half-side in mean distances from the centre of mass (0 = bounding cube)");
  std::string theta, leafSize;
  app.add_option("--theta", theta, "Tree opening angle, (0, 1] (default 0.45; smaller is more accurate and slower)");
  app.add_option("--tree-leaf-size", leafSize, "Tree: bodies per node summed directly when opened, 1..64 (default 16)");
  app.add_option("--half-size", r.halfSize, "Boids world half-size (cube [-h, h))");
  app.add_option("--out", o.out, "Write the final state (mass x y z vx vy vz per line)");
  app.add_option("--screenshot", o.screenshot, "Write the last frame as PNG");
  app.add_option("--record", o.record, "Record frames to a video through ffmpeg");
  app.add_option("--csv", o.csv, "CSV output (benchmark rows; viewer FPS log)");
  app.add_option("--frames", r.frames, "Frames to render: headless (default --steps), or the window closes after K");
  app.add_option("--width", r.width, "Frame width in pixels");
  app.add_option("--height", r.height, "Frame height in pixels");
  std::string zoom;
  app.add_option("--zoom", zoom, "Camera zoom over the fitted view (> 1 is closer)");
  app.add_option("--draw", o.drawMode, "Draw mode: boids | points | sprites");
  app.add_option("--colour", o.colourMode, "Colour mode: velocity | speed | id");
  app.add_flag("--profile", o.profile, "Print per-stage times");
  app.fallthrough();

  auto* accuracy = app.add_subcommand("accuracy", "Force error of each gravity pipeline against a double-precision direct sum");
  auto* bench = app.add_subcommand("bench", "Benchmark sweeps over force, pipeline, N and block size");
  bench->add_option("--preset", o.bench.preset, "Named sweep: cis565 | constant-density | gravity");
  std::string warmup, repeats;
  bench->add_option("--warmup", warmup, "Warm-up steps per configuration");
  bench->add_option("--repeats", repeats, "Timed repeats per configuration (median reported)");
  std::string maxSeconds;
  bench->add_option("--max-seconds", maxSeconds, "Time budget per configuration; slow ones run fewer steps (default 3)");
  bench->add_flag("--render", o.bench.render, "Also draw an offscreen frame per step (render_ms, frame_fps)");
  bench->add_flag("--append", o.bench.append, "Append to the CSV instead of overwriting");
  bench->add_flag("--cpu-baseline", o.bench.cpuBaseline, "Also run the configurations with N <= 50k on the CPU engine");
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }

  if (*bench) {
    o.mode = Mode::Bench;
  } else if (*accuracy) {
    o.mode = Mode::Accuracy;
  } else {
    o.mode = headless ? Mode::Headless : Mode::Viewer;
  }
  if (noRender && !headless && o.mode != Mode::Bench && o.mode != Mode::Accuracy)
    throw UsageError("--no-render needs --headless (the viewer always renders)");
  o.render = !noRender;

  const bool benchMode = o.mode == Mode::Bench;
  // A bench preset sets lists and a few parameters; the --params file and the options override
  // it, so its parameters go first.
  const BenchPreset* preset = nullptr;
  if (benchMode) {
    o.bench.commandLine = shellQuotedCommandLine(argc, argv);
    if (!o.bench.preset.empty()) {
      preset = &findBenchPreset(o.bench.preset);
      if (preset->applyParams) preset->applyParams(o.params);
    }
    if (!o.csv.empty()) o.bench.csv = o.csv;
  }
  // --params first: command-line options override the file.
  if (!r.params.empty()) loadParamsFile(r.params, o.params);
  core::SimParams& p = o.params;
  if (!r.engine.empty()) {
    core::parse(parseName("--engine", r.engine, {"cpu", "cuda"}), o.engine);
    o.engineSet = true;
  }
  if (!r.force.empty()) {
    if (benchMode) {
      for (const auto& f : splitList("--force", r.force)) o.bench.forces.push_back(parseName("--force", f, {"boids", "gravity"}));
    } else {
      core::parse(parseName("--force", r.force, {"boids", "gravity"}), p.force);
    }
    o.forceSet = true;
  }
  if (!r.pipeline.empty()) {
    if (benchMode) {
      for (const auto& s : splitList("--pipeline", r.pipeline))
        o.bench.pipelines.push_back(parseName("--pipeline", s, {"naive", "scattered", "coherent", "tree"}));
    } else {
      core::parse(parseName("--pipeline", r.pipeline, {"naive", "scattered", "coherent", "tree"}), p.pipeline);
    }
  }
  if (!r.n.empty()) {
    if (benchMode) {
      for (const auto& s : splitList("--n", r.n)) o.bench.counts.push_back(parseCount("--n", s, 1, core::kMaxBodies));
    } else {
      o.scenario.n = parseCount("--n", r.n, 1, core::kMaxBodies);
    }
    o.nSet = true;
  }
  if (!r.steps.empty()) o.steps = static_cast<int>(parseInt("--steps", r.steps, benchMode ? 1 : 0, 100000000));
  if (benchMode && !r.steps.empty()) o.bench.steps = o.steps;
  if (!warmup.empty()) o.bench.warmup = static_cast<int>(parseInt("--warmup", warmup, 0, 1000000));
  if (!maxSeconds.empty()) o.bench.maxSeconds = parseFloat("--max-seconds", maxSeconds, true);
  if (!repeats.empty()) o.bench.repeats = static_cast<int>(parseInt("--repeats", repeats, 1, 1000));
  if (!r.blockSize.empty()) {
    if (benchMode) {
      for (const auto& s : splitList("--block-size", r.blockSize))
        o.bench.blockSizes.push_back(parseBlockSize("--block-size", s));
    } else {
      p.blockSize = parseBlockSize("--block-size", r.blockSize);
    }
  }
  if (!r.cellWidth.empty()) {
    const std::vector<std::string> items = splitList("--cell-width", r.cellWidth);
    if (!benchMode && items.size() > 1)
      throw UsageError("--cell-width " + r.cellWidth + " is invalid: one value (1 or 2) outside bench");
    for (const auto& s : items) {
      const int w = static_cast<int>(parseInt("--cell-width", s, 1, 2));
      if (benchMode)
        o.bench.cellWidths.push_back(w);
      else
        p.cellWidthFactor = w;
    }
  }
  if (!r.scenario.empty()) {
    o.scenario.name = r.scenario;
    if (r.scenario.rfind("file:", 0) != 0) parseName("--scenario", r.scenario, core::scenarioNames());
    if (benchMode) o.bench.scenario = r.scenario;
  }
  if (preset) fillFromPreset(*preset, o.bench);
  if (!r.seed.empty()) o.scenario.seed = static_cast<uint64_t>(parseInt("--seed", r.seed, 0, (1LL << 53)));
  if (!r.rules.empty()) core::parse(parseName("--rules", r.rules, {"cis565", "reynolds"}), p.boids.rules);
  if (!r.integrator.empty())
    core::parse(parseName("--integrator", r.integrator, {"leapfrog", "euler"}), p.gravity.integrator);
  if (!r.softening.empty()) p.gravity.softening = parseFloat("--softening", r.softening, true);
  if (!r.gravityG.empty()) p.gravity.G = parseFloat("--G", r.gravityG, false);
  if (!r.damping.empty()) {
    p.gravity.damping = parseFloat("--damping", r.damping, true);
    if (p.gravity.damping > 1.0f) throw UsageError("--damping " + r.damping + " is invalid: allowed range is (0, 1]");
  }
  if (!r.gridDim.empty()) p.gravity.gridDim = static_cast<int>(parseInt("--grid-dim", r.gridDim, 1, core::kMaxGravityGridDim));
  if (!gridSpread.empty()) p.gravity.gridSpread = parseFloat("--grid-spread", gridSpread, false);
  if (!theta.empty()) {
    p.gravity.theta = parseFloat("--theta", theta, true);
    if (p.gravity.theta > 1.0f) throw UsageError("--theta " + theta + " is invalid: allowed range is (0, 1]");
  }
  if (!leafSize.empty())
    p.gravity.treeLeafSize = static_cast<int>(parseInt("--tree-leaf-size", leafSize, 1, core::kMaxTreeLeafSize));
  if (!r.halfSize.empty()) p.halfSize = parseFloat("--half-size", r.halfSize, true);
  if (!r.frames.empty()) o.frames = static_cast<int>(parseInt("--frames", r.frames, 1, 10000000));
  if (!r.width.empty()) o.width = static_cast<int>(parseInt("--width", r.width, 16, 8192));
  if (!r.height.empty()) o.height = static_cast<int>(parseInt("--height", r.height, 16, 8192));
  if (!zoom.empty()) {
    o.zoom = parseFloat("--zoom", zoom, true);
    if (o.zoom < 0.01f || o.zoom > 1000.0f) throw UsageError("--zoom " + zoom + " is invalid: allowed range is 0.01 to 1000");
  }
  if (!o.drawMode.empty()) parseName("--draw", o.drawMode, {"boids", "points", "sprites"});
  if (!o.colourMode.empty()) parseName("--colour", o.colourMode, {"velocity", "speed", "id"});
  // --dt applies to the force mode in use, known only after resolveDefaults.
  if (!r.dt.empty()) o.dt = parseFloat("--dt", r.dt, true);
  // Without --force the scenario decides the force later (resolveDefaults checks again then).
  core::SimParams check = p;
  if (!o.forceSet) check.force = core::ForceMode::Gravity;
  const std::string err = core::validateParams(check);
  if (!err.empty()) throw UsageError(err);
  return true;
}

void resolveDefaults(Options& o) {
  if (!o.engineSet) o.engine = defaultEngineKind();
  if (!o.nSet) o.scenario.n = o.engine == core::EngineKind::Cuda ? 100000 : 10000;
  if (!o.forceSet && o.mode != Mode::Bench) {
    const std::string& s = o.scenario.name;
    o.params.force = s.rfind("file:", 0) == 0 ? core::ForceMode::Gravity : core::naturalForce(s);
  }
  if (o.mode != Mode::Bench && o.params.force == core::ForceMode::Boids && o.params.pipeline == core::Pipeline::Tree)
    throw UsageError(std::string("--pipeline tree: ") + core::kTreeBoidsMessage);
  if (o.dt > 0) (o.params.force == core::ForceMode::Boids ? o.params.boids.dt : o.params.gravity.dt) = o.dt;
}

}  // namespace murmur::app
