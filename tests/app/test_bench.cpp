// `murmur bench` on the CPU engine: list validation, the sweep plan (presets, defaults, limits,
// collapsed dimensions), the CSV rows and the JSON sidecar of real tiny sweeps, and the plot
// script on a committed CSV and on one the bench wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "app/bench.h"
#include "app/bench_output.h"
#include "app/options.h"
#include "app/run.h"
#include "app/summary.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/pipeline_table.h"
#include "run_command.h"

using namespace murmur;

namespace {

using test::Result;
using test::lineCount;
const auto run = test::runCommand;

Result bench(const std::string& args) { return run(test::murmurExe() + " bench --engine cpu " + args); }

std::string tempPath(const std::string& name) {
  const std::string p = ::testing::TempDir() + "murmur_bench_" + name;
  std::filesystem::remove_all(p);
  std::filesystem::remove(p + ".json");
  return p;
}


// One CSV record per line, quoted cells unquoted (the gpu column holds commas).
std::vector<std::vector<std::string>> readCsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += c;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

// Rows as column -> value maps; the header must be the schema's.
std::vector<std::map<std::string, std::string>> readRows(const std::string& path) {
  const auto raw = readCsv(path);
  std::vector<std::map<std::string, std::string>> rows;
  if (raw.empty()) return rows;
  EXPECT_EQ(raw[0], core::benchCsvColumns());
  for (size_t i = 1; i < raw.size(); ++i) {
    EXPECT_EQ(raw[i].size(), core::benchCsvColumns().size()) << "row " << i;
    std::map<std::string, std::string> r;
    for (size_t c = 0; c < raw[i].size() && c < raw[0].size(); ++c) r[raw[0][c]] = raw[i][c];
    rows.push_back(r);
  }
  return rows;
}

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);  // throws (failing the test) when it does not parse
}

app::Options parsed(std::vector<std::string> args) {
  args.insert(args.begin(), "murmur");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  app::Options o;
  EXPECT_TRUE(app::parseOptions(static_cast<int>(argv.size()), argv.data(), o));
  app::resolveDefaults(o);
  return o;
}

const std::string kTiny = "--n 500,1000 --pipeline naive,coherent --steps 3 --repeats 2 --warmup 1 --csv ";

}  // namespace

TEST(BenchOptions, BadListsExitTwoWithOneLine) {
  struct Case {
    std::string args, mention;
  };
  const Case cases[] = {
      {"--n 1k,,2k", "--n 1k,,2k"},
      {"--n 1k,", "--n"},
      {"--n 1k,0", "--n 0"},
      {"--block-size 32,48", "--block-size 48"},
      {"--pipeline naive,fast", "--pipeline fast"},
      {"--force boids,magnetism", "--force magnetism"},
      {"--cell-width 1,3", "--cell-width 3"},
      {"--preset nope", "--preset nope"},
      {"--repeats 0", "--repeats 0"},
      {"--steps 0", "--steps 0"},
      {"--warmup -1", "--warmup -1"},
  };
  const std::string csv = tempPath("bad.csv");
  for (const Case& c : cases) {
    const Result r = bench(c.args + " --csv " + csv);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.mention), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(lineCount(r.out), 1) << c.args << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(csv)) << c.args;
  }
  // The preset error names the presets there are.
  EXPECT_NE(bench("--preset nope").out.find("cis565, constant-density, gravity"), std::string::npos);
}

TEST(BenchPlan, DefaultsPerEngine) {
  // Without --pipeline a sweep runs every pipeline that serves the force, in table order.
  const auto boidsPipes = core::pipelinesFor(core::ForceMode::Boids);
  const auto gravityPipes = core::pipelinesFor(core::ForceMode::Gravity);
  const auto cpu = app::planBench(parsed({"bench", "--engine", "cpu"}));
  ASSERT_EQ(cpu.size(), boidsPipes.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    const auto& c = cpu[i];
    EXPECT_EQ(c.force, core::ForceMode::Boids);
    EXPECT_EQ(c.pipeline, boidsPipes[i]);
    EXPECT_EQ(c.n, 10000u);
    // The viewer's world: dense at 4 neighbours per boid.
    EXPECT_EQ(c.scenario, "dense");
    EXPECT_EQ(c.denseNeighbours, 4.0);
    EXPECT_EQ(c.blockSize, 0) << "the CPU engine has no block size";
    EXPECT_EQ(c.cellWidth, core::hasCellWidth(c.pipeline, c.force) ? 1 : 0) << app::describe(c);
    EXPECT_TRUE(c.skipReason.empty());
  }
  // The table as it stands: tree serves gravity only.
  EXPECT_EQ(cpu[0].pipeline, core::Pipeline::Naive);
  EXPECT_EQ(cpu[2].pipeline, core::Pipeline::Coherent);
  EXPECT_EQ(cpu[3].pipeline, core::Pipeline::Rows);
  EXPECT_EQ(cpu[4].pipeline, core::Pipeline::Verlet);
  // Planning creates no engine, so a cuda plan is checkable without a GPU.
  const auto gpu = app::planBench(parsed({"bench", "--engine", "cuda", "--force", "boids,gravity"}));
  // Boids: every pipeline but tree (gravity only); gravity skips rows, verlet and clusters, which
  // run the coherent grid for gravity.
  ASSERT_EQ(gpu.size(), boidsPipes.size() + gravityPipes.size());
  ASSERT_EQ(gpu.size(), 10u);
  for (size_t i = 0; i < gravityPipes.size(); ++i) EXPECT_EQ(gpu[boidsPipes.size() + i].pipeline, gravityPipes[i]);
  EXPECT_EQ(gpu[0].n, 100000u);
  EXPECT_EQ(gpu[0].blockSize, core::defaultParams().blockSize);
  EXPECT_EQ(gpu[6].force, core::ForceMode::Gravity);
  EXPECT_EQ(gpu[6].scenario, "plummer");
  EXPECT_EQ(app::describe(gpu[2]), "cuda boids coherent n=100000 block=256 cw=1");
  EXPECT_EQ(app::describe(gpu[3]), "cuda boids rows n=100000 block=256 cw=1");
  EXPECT_EQ(app::describe(gpu[4]), "cuda boids verlet n=100000 block=256 cw=1");
  EXPECT_EQ(app::describe(gpu[5]), "cuda boids clusters n=100000 block=256 cw=-");
  EXPECT_EQ(app::describe(gpu[6]), "cuda gravity naive n=100000 block=256 cw=-");
}

// The row builder fills a stage's column exactly when the pipeline table says the step has it.
TEST(BenchRow, StageColumnsFollowThePipelineTable) {
  for (const core::ForceMode force : {core::ForceMode::Boids, core::ForceMode::Gravity}) {
    for (const core::PipelineInfo& info : core::pipelineTable()) {
      if (force == core::ForceMode::Boids && !info.boids) continue;
      app::BenchConfig c;
      c.engine = core::EngineKind::Cpu;
      c.force = force;
      c.pipeline = info.id;
      c.n = 100;
      app::Measurement m;
      m.n = 100;
      m.params = core::defaultParams();
      m.params.force = force;
      m.params.pipeline = info.id;
      for (int k = 0; k < core::kStageCount; ++k) m.stageMean.at(static_cast<core::Stage>(k)) = 1.0 + k;
      const core::CsvRow row = app::makeRow(c, "cpu", core::DeviceInfo{}, m, app::StepStats{1, 1, 1});
      for (int k = 0; k < core::kStageCount; ++k) {
        const auto stage = static_cast<core::Stage>(k);
        if (stage == core::Stage::Comm) continue;  // no column
        const bool has = core::hasStage(info.id, force, stage);
        EXPECT_EQ(row.get(core::kStageColumns[k]).empty(), !has)
            << core::toString(force) << " " << info.name << " " << core::kStageNames[k];
        if (has) {
          EXPECT_EQ(std::stod(row.get(core::kStageColumns[k])), 1.0 + k);
        }
      }
      // Unprofiled (a headless run without --profile): no stage column at all.
      m.profiled = false;
      const core::CsvRow bare = app::makeRow(c, "cpu", core::DeviceInfo{}, m, app::StepStats{1, 1, 1});
      for (int k = 0; k < core::kStageCount; ++k) EXPECT_TRUE(bare.get(core::kStageColumns[k]).empty());
    }
  }
}

// A boids sweep's default world is the viewer's (dense:4); --scenario dense is dense:8, a
// --neighbours count is taken by either, and a --half-size asks for the uniform cube.
TEST(BenchPlan, DefaultWorldIsTheViewers) {
  const auto scen = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"bench", "--engine", "cpu", "--pipeline", "naive"});
    const auto plan = app::planBench(parsed(args));
    return plan.at(0).scenario + ":" + std::to_string(int(plan.at(0).denseNeighbours));
  };
  EXPECT_EQ(scen({}), "dense:4");
  EXPECT_EQ(scen({"--scenario", "dense"}), "dense:8");
  EXPECT_EQ(scen({"--neighbours", "6"}), "dense:6");
  EXPECT_EQ(scen({"--scenario", "dense", "--neighbours", "6"}), "dense:6");
  EXPECT_EQ(scen({"--half-size", "20"}).rfind("uniform:", 0), 0u);
  EXPECT_EQ(scen({"--preset", "constant-density"}), "dense:8");
  EXPECT_EQ(app::scenarioLabel("dense", 4), "dense:4");
  EXPECT_EQ(app::scenarioLabel("dense", 2.5), "dense:2.5");
  EXPECT_EQ(app::scenarioLabel("uniform", 4), "uniform");
}

TEST(BenchPlan, PresetsAndCommandLineOverrides) {
  const auto cis = app::planBench(parsed({"bench", "--engine", "cuda", "--preset", "cis565"}));
  ASSERT_EQ(cis.size(), 70u);  // 10 sizes x (6 pipelines + the textbook baseline) at block 128
  std::set<uint64_t> sizes;
  for (const auto& c : cis) {
    EXPECT_EQ(c.blockSize, 128);
    EXPECT_EQ(c.scenario, "uniform");
    sizes.insert(c.n);
    // Naive above the GPU limit is planned as skipped, with the reason.
    const bool over = c.pipeline == core::Pipeline::Naive && c.n > app::kCudaNaiveBoidsMaxN;
    EXPECT_EQ(!c.skipReason.empty(), over) << app::describe(c);
  }
  EXPECT_EQ(sizes.size(), 10u);
  EXPECT_EQ(*sizes.rbegin(), 5000000u);

  // Lists on the command line replace the preset's; the rest of the preset stays.
  const auto grav = app::planBench(parsed({"bench", "--engine", "cuda", "--preset", "gravity", "--n", "2k"}));
  ASSERT_EQ(grav.size(), 20u);  // 4 pipelines x 5 block sizes
  for (const auto& c : grav) {
    EXPECT_EQ(c.force, core::ForceMode::Gravity);
    EXPECT_EQ(c.scenario, "plummer");
    EXPECT_EQ(c.n, 2000u);
  }
}

TEST(BenchPlan, TreeIsPlannedForGravityOnly) {
  const auto both = app::planBench(parsed({"bench", "--engine", "cuda", "--force", "boids,gravity", "--pipeline", "tree"}));
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].force, core::ForceMode::Gravity);
  EXPECT_THROW(parsed({"bench", "--engine", "cuda", "--pipeline", "tree"}), core::UsageError);
}

// The textbook coherent grid is a bench-only yardstick: boids on the CUDA engine, its own label,
// never repeated on the CPU engine, and not a pipeline the simulator accepts.
TEST(BenchPlan, TextbookBaselineIsABenchOnlyCudaBoidsConfiguration) {
  const auto plan = app::planBench(parsed({"bench", "--engine", "cuda", "--force", "boids,gravity", "--pipeline",
                                           "coherent,textbook-coherent", "--n", "1k", "--cpu-baseline"}));
  std::map<std::string, std::string> skip;  // describe -> reason
  for (const auto& c : plan) skip[app::describe(c)] = c.skipReason;
  EXPECT_EQ(plan.size(), 6u) << "cuda x {boids, gravity} x 2, cpu baseline x {boids, gravity} x coherent only";
  EXPECT_EQ(skip.count("cuda boids textbook-coherent n=1000 block=256 cw=1"), 1u);
  EXPECT_EQ(skip["cuda boids textbook-coherent n=1000 block=256 cw=1"], "");
  EXPECT_NE(skip["cuda gravity textbook-coherent n=1000 block=256 cw=-"].find("boids baseline"), std::string::npos);
  for (const auto& c : plan) {
    EXPECT_EQ(c.textbook, app::pipelineName(c) == "textbook-coherent");
    if (c.textbook) {
      EXPECT_EQ(c.engine, core::EngineKind::Cuda);
    }
  }
  const auto cpu = app::planBench(parsed({"bench", "--engine", "cpu", "--pipeline", "textbook-coherent"}));
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_NE(cpu[0].skipReason.find("CUDA engine only"), std::string::npos);
  EXPECT_THROW(parsed({"--pipeline", "textbook-coherent"}), core::UsageError);
}

TEST(BenchPlan, PresetParametersYieldToOptions) {
  const app::Options o = parsed({"bench", "--engine", "cpu", "--preset", "cis565", "--half-size", "50"});
  EXPECT_FLOAT_EQ(o.params.halfSize, 50.0f);
  EXPECT_FLOAT_EQ(o.params.boids.separationRadius, 3.0f);
  const app::Options d = parsed({"bench", "--engine", "cpu", "--preset", "constant-density", "--scenario", "uniform"});
  EXPECT_EQ(d.bench.scenario, "uniform");
  EXPECT_EQ(d.bench.counts.size(), 7u);
}

TEST(BenchPlan, CollapsesDimensionsThatDoNotApplyAndAddsTheCpuBaseline) {
  // Cell width means nothing to naive (no grid) or gravity (its own grid): one configuration each.
  const auto p = app::planBench(
      parsed({"bench", "--engine", "cpu", "--force", "boids,gravity", "--cell-width", "1,2", "--n", "1k"}));
  // Clusters has no cell width either (its cells follow the density).
  EXPECT_EQ(p.size(), 1u + 2u + 2u + 2u + 2u + 1u + 4u);
  const auto b = app::planBench(parsed({"bench", "--engine", "cuda", "--n", "10k,100k", "--cpu-baseline"}));
  ASSERT_EQ(b.size(), 12u + 6u);
  for (size_t i = 12; i < b.size(); ++i) {
    EXPECT_EQ(b[i].engine, core::EngineKind::Cpu);
    EXPECT_LE(b[i].n, app::kCpuBaselineMaxN);
  }
}

TEST(BenchStats, MedianMinP90) {
  const app::StepStats odd = app::stepStats({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.p90, 5);
  const app::StepStats even = app::stepStats({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(app::stepStats(hundred).p90, 90);
}

TEST(BenchRun, TinySweepWritesOneRowPerConfiguration) {
  const std::string csv = tempPath("tiny.csv");
  const Result r = bench(kTiny + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("[1/4] cpu boids naive n=500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("steps/s"), std::string::npos) << r.out;
  const auto rows = readRows(csv);
  ASSERT_EQ(rows.size(), 4u);
  std::multiset<std::string> ns;
  for (const auto& row : rows) {
    ns.insert(row.at("n"));
    EXPECT_EQ(row.at("engine"), "cpu");
    EXPECT_EQ(row.at("force"), "boids");
    EXPECT_EQ(row.at("scenario"), "dense:4");
    EXPECT_FALSE(row.at("gpu").empty());
    EXPECT_EQ(row.at("timestamp").size(), 20u) << row.at("timestamp");  // 2025-01-01T00:00:00Z
    EXPECT_EQ(row.at("steps"), "6");
    EXPECT_EQ(row.at("warmup_steps"), "1");
    EXPECT_EQ(row.at("cut"), "") << "nothing was cut: the warm-up and the steps ran as asked";
    EXPECT_EQ(row.at("render"), "0");
    const double med = std::stod(row.at("sim_ms_median"));
    const double mn = std::stod(row.at("sim_ms_min"));
    const double p90 = std::stod(row.at("sim_ms_p90"));
    EXPECT_GT(med, 0);
    EXPECT_LE(mn, med);
    EXPECT_LE(med, p90);
    EXPECT_NEAR(std::stod(row.at("steps_per_s")), 1000.0 / med, 1e-3 * 1000.0 / med);
    EXPECT_FALSE(row.at("neighbours_mean").empty());
    EXPECT_FALSE(row.at("force_ms").empty());
    EXPECT_TRUE(row.at("interactions_per_s").empty()) << "boids rows have no interaction rate";
    EXPECT_TRUE(row.at("block_size").empty()) << "the CPU engine has no block size";
    if (row.at("pipeline") == "naive") {
      EXPECT_TRUE(row.at("reorder_ms").empty());
      EXPECT_TRUE(row.at("sort_ms").empty());
      EXPECT_TRUE(row.at("cell_width_factor").empty());
    } else {
      EXPECT_EQ(row.at("pipeline"), "coherent");
      EXPECT_FALSE(row.at("reorder_ms").empty());
      EXPECT_EQ(row.at("cell_width_factor"), "1");
    }
  }
  EXPECT_EQ(ns, (std::multiset<std::string>{"500", "500", "1000", "1000"}));
  EXPECT_EQ(r.out.find(" cut to "), std::string::npos) << r.out;

  const nlohmann::json side = readJson(csv + ".json");
  ASSERT_EQ(side["runs"].size(), 1u);
  const auto& run0 = side["runs"][0];
  EXPECT_NE(run0["command_line"].get<std::string>().find("--pipeline naive,coherent"), std::string::npos);
  EXPECT_TRUE(run0["params"].contains("boids"));
  EXPECT_TRUE(run0["devices"].contains("cpu"));
  EXPECT_TRUE(run0.contains("git_sha"));
  ASSERT_EQ(run0["configurations"].size(), 4u);
  for (const auto& c : run0["configurations"]) {
    EXPECT_EQ(c["status"], "measured");
    EXPECT_GT(c["candidates_mean"].get<double>(), 0);
    EXPECT_TRUE(c.contains("neighbours_mean"));
  }
}

// The sweep in the calling process (the Python module's bench): every measured row goes to the
// sink, in plan order, and neither the CSV nor its sidecar is written.
TEST(BenchRun, RowsGoToASinkWithoutFiles) {
  const std::string csv = tempPath("sink.csv");
  const app::Options o = parsed({"bench", "--engine", "cpu", "--pipeline", "coherent,rows", "--n", "800", "--steps",
                                 "2", "--warmup", "1", "--repeats", "1", "--csv", csv});
  std::vector<core::CsvRow> rows;
  EXPECT_EQ(app::runBench(o, [&](const core::CsvRow& r) { rows.push_back(r); }), 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].get("pipeline"), "coherent");
  EXPECT_EQ(rows[1].get("pipeline"), "rows");
  for (const core::CsvRow& r : rows) {
    EXPECT_EQ(r.get("n"), "800");
    EXPECT_EQ(r.get("engine"), "cpu");
    EXPECT_FALSE(r.get("sim_ms_median").empty());
  }
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_FALSE(std::filesystem::exists(csv + ".json"));
}

TEST(BenchRun, AWarmUpOrRunCutByMaxSecondsSaysSo) {
  // A warm-up of 100000 steps cannot fit in a quarter of 0.2 s: the row says how many ran and
  // that they were cut, and so does the progress line.
  struct Case {
    std::string args, cut;
    bool warmupCut, stepsCut;
  };
  const Case cases[] = {
      {"--warmup 100000 --steps 3 --repeats 1", "warmup", true, false},
      {"--warmup 1 --steps 100000 --repeats 2", "steps", false, true},
      {"--warmup 100000 --steps 100000 --repeats 1", "warmup+steps", true, true},
  };
  for (const Case& c : cases) {
    const std::string csv = tempPath("cut.csv");
    const Result r = bench("--n 3000 --pipeline coherent --max-seconds 0.2 " + c.args + " --csv " + csv);
    ASSERT_EQ(r.status, 0) << c.args << "\n" << r.out;
    const auto rows = readRows(csv);
    ASSERT_EQ(rows.size(), 1u) << c.args;
    const auto& row = rows[0];
    EXPECT_EQ(row.at("cut"), c.cut) << c.args << "\n" << r.out;
    const int warmup = std::stoi(row.at("warmup_steps"));
    if (c.warmupCut) {
      EXPECT_GE(warmup, 1) << c.args;
      EXPECT_LT(warmup, 100000) << c.args;
      EXPECT_NE(r.out.find("warm-up cut to " + std::to_string(warmup) + " of 100000"), std::string::npos)
          << c.args << "\n" << r.out;
    } else {
      EXPECT_EQ(warmup, 1) << c.args;
      EXPECT_EQ(r.out.find("warm-up cut"), std::string::npos) << c.args << "\n" << r.out;
    }
    const int steps = std::stoi(row.at("steps"));
    if (c.stepsCut) {
      const int repeats = c.args.find("--repeats 2") != std::string::npos ? 2 : 1;
      EXPECT_EQ(steps % repeats, 0) << c.args;
      EXPECT_GE(steps / repeats, 2) << c.args;
      EXPECT_LT(steps / repeats, 100000) << c.args;
      const std::string said = "steps" + std::string(c.warmupCut ? "" : " cut") + " to " + std::to_string(steps / repeats) +
                               " of 100000" + (repeats > 1 ? " per repeat" : "");
      EXPECT_NE(r.out.find(said), std::string::npos) << said << "\n" << r.out;
    } else {
      EXPECT_EQ(steps, 3) << c.args;
      EXPECT_EQ(r.out.find("steps cut"), std::string::npos) << c.args << "\n" << r.out;
    }
    EXPECT_NE(r.out.find(" by --max-seconds 0.2  ["), std::string::npos) << c.args << "\n" << r.out;
    const auto configs = readJson(csv + ".json")["runs"][0]["configurations"];
    ASSERT_EQ(configs.size(), 1u);
    EXPECT_EQ(configs[0].value("cut", std::string()), c.cut) << c.args;
  }
}

namespace {
// 300 warm-up steps, 3 repeats of 30 steps, 3 s a configuration.
app::BenchOptions budgetOptions() {
  app::BenchOptions b;
  b.warmup = 300;
  b.steps = 30;
  b.repeats = 3;
  b.maxSeconds = 3;
  return b;
}
}  // namespace

TEST(BenchBudget, WarmUpAndStepsFollowMaxSeconds) {
  app::BenchOptions b = budgetOptions();
  // 1 ms a step: 300 warm-up steps (0.3 s) and 3 x 30 steps (90 ms) fit.
  EXPECT_EQ(app::budgetedWarmup(b, 1.0), 300);
  EXPECT_EQ(app::stepsWithinBudget(b, 1.0), 30);
  // 10 ms: the warm-up stops after the step that passes 0.75 s; 30 steps a repeat (0.3 s) fit in 1 s.
  EXPECT_EQ(app::budgetedWarmup(b, 10.0), 76);
  EXPECT_EQ(app::stepsWithinBudget(b, 10.0), 30);
  // 100 ms: 8 warm-up steps; 1 s a repeat holds 10 steps.
  EXPECT_EQ(app::budgetedWarmup(b, 100.0), 8);
  EXPECT_EQ(app::stepsWithinBudget(b, 100.0), 10);
  // 2 s: one warm-up step, and 2 steps a repeat for a median.
  EXPECT_EQ(app::budgetedWarmup(b, 2000.0), 1);
  EXPECT_EQ(app::stepsWithinBudget(b, 2000.0), 2);
  // Never more than asked, however slow.
  b.steps = 1;
  EXPECT_EQ(app::stepsWithinBudget(b, 2000.0), 1);
  b.warmup = 0;
  EXPECT_EQ(app::budgetedWarmup(b, 1.0), 1) << "one warm-up step runs even with --warmup 0";
}

namespace {
app::BenchConfig naiveBoids(uint64_t n) {
  app::BenchConfig c;
  c.engine = core::EngineKind::Cpu;
  c.force = core::ForceMode::Boids;
  c.pipeline = core::Pipeline::Naive;
  c.scenario = "dense";
  c.n = n;
  return c;
}
}  // namespace

TEST(BenchEstimate, TimeLeftFollowsTheMeasuredTimePerStepWithinTheBudget) {
  const app::BenchOptions b = budgetOptions();
  const std::vector<app::BenchConfig> plan = {naiveBoids(1000), naiveBoids(10000), naiveBoids(100000)};
  app::SweepEstimate est(b, 16);
  EXPECT_LT(est.remaining(plan, 1), 0) << "nothing measured yet";
  // 1k all pairs at 0.1 ms a step; 0.5 s spent outside the steps (the scenario, the reset).
  const double ms1k = 0.1;
  const long steps1k = 300 + 90;
  est.add(plan[0], 1000, 0.5 + steps1k * ms1k / 1000.0, steps1k, ms1k);
  // A sweep whose steps take what the N^2 work says: 10 ms at 10k (76 warm-up steps, 3 x 30
  // timed), 1 s at 100k (1 warm-up step, 3 x 2 timed): what the bench's own rules run.
  const double at10k = (76 + 90) * 0.010, at100k = (1 + 6) * 1.0;
  EXPECT_NEAR(est.stepSeconds(10.0), at10k, 1e-9);
  EXPECT_NEAR(est.stepSeconds(1000.0), at100k, 1e-9);
  const double truth = at10k + at100k + 2 * 0.5;
  EXPECT_NEAR(est.remaining(plan, 1), truth, 1e-6 * truth);
  // Not the whole configuration's time scaled by the work (10000 x 0.539 s at 100k: over 5000 s),
  // which ignores the budget: a warm-up of a quarter of it and one step more, timed steps of all
  // of it or 2 a repeat (at 1 s a step), and the time outside the steps.
  const double step100k = 1.0;
  EXPECT_LE(est.remaining(plan, 2),
            0.25 * b.maxSeconds + step100k + std::max(b.maxSeconds, 2 * b.repeats * step100k) + 0.5 + 1e-9);
  // Once 10k is measured (slower than the work says: 20 ms), the last configuration scales from
  // it, the nearer N, rather than from 1k.
  est.add(plan[1], 10000, 0.5 + (76 + 90) * 0.020, 76 + 90, 20.0);
  EXPECT_NEAR(est.remaining(plan, 2), est.stepSeconds(2000.0) + 0.5, 1e-9);
  // Skipped configurations take no time; a pipeline not measured yet takes the mean configuration.
  std::vector<app::BenchConfig> more = plan;
  more[2].skipReason = "too large";
  EXPECT_DOUBLE_EQ(est.remaining(more, 2), 0.0);
  app::BenchConfig coherent = naiveBoids(1000);
  coherent.pipeline = core::Pipeline::Coherent;
  const double mean = ((0.5 + steps1k * ms1k / 1000.0) + (0.5 + (76 + 90) * 0.020)) / 2;
  EXPECT_NEAR(est.remaining({coherent}, 0), mean, 1e-9);
}

TEST(BenchRun, AppendAddsRowsWithoutASecondHeader) {
  const std::string csv = tempPath("append.csv");
  ASSERT_EQ(bench(kTiny + csv).status, 0);
  const Result r = bench("--n 700 --pipeline scattered --steps 2 --repeats 1 --warmup 0 --append --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto raw = readCsv(csv);
  ASSERT_EQ(raw.size(), 1u + 4u + 1u);
  int headers = 0;
  for (const auto& row : raw) headers += row[0] == "timestamp";
  EXPECT_EQ(headers, 1);
  EXPECT_EQ(readRows(csv).back().at("n"), "700");
  EXPECT_EQ(readJson(csv + ".json")["runs"].size(), 2u);
  // Without --append the file starts over.
  ASSERT_EQ(bench("--n 700 --pipeline scattered --steps 2 --repeats 1 --warmup 0 --csv " + csv).status, 0);
  EXPECT_EQ(readCsv(csv).size(), 2u);
  EXPECT_EQ(readJson(csv + ".json")["runs"].size(), 1u);
}

TEST(BenchRun, ConfigurationAboveTheCpuNaiveLimitIsSkipped) {
  const std::string csv = tempPath("skip.csv");
  const std::string big = std::to_string(app::kCpuNaiveMaxN + 1);
  const Result r = bench("--n 1k," + big + ",2k --pipeline naive --steps 2 --repeats 1 --warmup 0 --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("n=" + big + " block=- cw=- ... skipped: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("naive limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[3/3] cpu boids naive n=2000"), std::string::npos) << "the sweep goes on\n" << r.out;
  const auto rows = readRows(csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("n"), "1000");
  EXPECT_EQ(rows[1].at("n"), "2000");
  const auto configs = readJson(csv + ".json")["runs"][0]["configurations"];
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[1]["status"], "skipped");
  EXPECT_NE(configs[1]["reason"].get<std::string>().find("naive limit"), std::string::npos);
}

TEST(BenchRun, GravityRowsReportInteractions) {
  const std::string csv = tempPath("gravity.csv");
  const Result r = bench("--force gravity --n 600 --pipeline naive --steps 2 --repeats 1 --warmup 1 --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto rows = readRows(csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("scenario"), "plummer");
  EXPECT_TRUE(rows[0].at("neighbours_mean").empty());
  const double ips = std::stod(rows[0].at("interactions_per_s"));
  EXPECT_NEAR(ips, 600.0 * 600.0 / (std::stod(rows[0].at("sim_ms_median")) / 1000.0), 1e-4 * ips);
  EXPECT_NEAR(std::stod(rows[0].at("gflops")), 20.0 * ips / 1e9, 1e-4 * 20.0 * ips / 1e9);
}

namespace {
// Runs bench/plot.py; status -2 means it cannot run here (no Python 3 or no matplotlib): skip.
Result plot(const std::string& args) {
  const std::string python = MURMUR_PYTHON3;
  if (python.empty()) return Result{-2, "no Python 3 interpreter was found at configure time"};
  Result r = run("'" + python + "' '" + test::fromEnvOr("MURMUR_PLOT_SCRIPT", MURMUR_PLOT_SCRIPT) + "' " + args);
  if (r.out.find("needs matplotlib") != std::string::npos) r.status = -2;
  return r;
}

bool isPng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 8> sig{};
  in.read(sig.data(), sig.size());
  return in.gcount() == 8 && std::string(sig.data(), 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

std::vector<std::string> pngLines(const std::string& out) {
  std::vector<std::string> files;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    if (line.size() > 4 && line.compare(line.size() - 4, 4, ".png") == 0 && line.rfind("skipped", 0) != 0)
      files.push_back(line);
    start = end + 1;
  }
  return files;
}
}  // namespace

TEST(BenchPlot, WritesEveryPlotFromASmallCsv) {
  const std::string dir = tempPath("plots");
  const Result r = plot(test::testDataDir() + "/bench_small.csv --out " + dir + " --prefix small");
  if (r.status == -2) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  const auto files = pngLines(r.out);
  ASSERT_EQ(files.size(), 5u) << r.out;
  for (const char* name : {"steps_vs_n", "steps_vs_block_size", "stages", "gravity_ms_vs_n", "gravity_interactions"})
    EXPECT_TRUE(isPng(dir + "/small_" + name + ".png")) << name << "\n" << r.out;
  // No rendered rows: the frame-rate plots say so.
  EXPECT_NE(r.out.find("skipped fps_vs_n: no rendered rows"), std::string::npos) << r.out;
}

// A density sweep (rows, clusters and verlet at five `dense --neighbours` worlds of one N, an H100
// run): time per step against neighbours per boid; a CSV without one skips that plot.
TEST(BenchPlot, DensitySweepPlotsTimeAgainstNeighbours) {
  const std::string dir = tempPath("plots_density");
  const Result r = plot(test::testDataDir() + "/bench_density.csv --out " + dir + " --prefix density");
  if (r.status == -2) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(isPng(dir + "/density_ms_vs_neighbours.png")) << r.out;
  const Result small = plot(test::testDataDir() + "/bench_small.csv --out " + dir + " --prefix small");
  ASSERT_EQ(small.status, 0) << small.out;
  EXPECT_NE(small.out.find("skipped ms_vs_neighbours: no density sweep"), std::string::npos) << small.out;
  EXPECT_FALSE(isPng(dir + "/small_ms_vs_neighbours.png"));
}

TEST(BenchPlot, SkipsPlotsTheBenchCsvHasNoDataFor) {
  const std::string csv = tempPath("for_plot.csv");
  ASSERT_EQ(bench(kTiny + csv).status, 0);
  const std::string dir = tempPath("plots_cpu");
  const Result r = plot(csv + " --out " + dir);
  if (r.status == -2) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("skipped steps_vs_block_size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped gravity_interactions"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped gravity_ms_vs_n"), std::string::npos) << r.out;
  const auto files = pngLines(r.out);
  ASSERT_EQ(files.size(), 2u) << r.out;
  for (const auto& f : files) EXPECT_TRUE(isPng(f)) << f;
}

// The frame-rate plots: from a rendered CPU sweep (EGL, Mesa here) frame and step rate against N;
// against the block size only where the CUDA engine measured more than one.
TEST(BenchPlot, FrameRatePlotsFromARenderedCpuSweep) {
  const std::string csv = tempPath("fps_cpu.csv");
  const Result b = bench("--render --n 5k,10k --pipeline coherent,rows --steps 3 --repeats 1 --warmup 1 --width 64 "
                         "--height 48 --csv " + csv);
  if (b.out.find("OpenGL") != std::string::npos || b.out.find("rendering off") != std::string::npos)
    GTEST_SKIP() << "no offscreen OpenGL context here\n" << b.out;
  ASSERT_EQ(b.status, 0) << b.out;
  const std::string dir = tempPath("plots_fps_cpu");
  const Result r = plot(csv + " --out " + dir + " --prefix cpu");
  if (r.status == -2) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(isPng(dir + "/cpu_fps_vs_n.png")) << r.out;
  EXPECT_NE(r.out.find("skipped fps_vs_block: no rendered rows with a block size"), std::string::npos) << r.out;
}

TEST(BenchPlot, FrameRatePlotsFromASmallCudaCsv) {
  const std::string data = test::testDataDir() + "/bench_render_small.csv";
  const std::string dir = tempPath("plots_fps");
  const Result r = plot(data + " --out " + dir + " --prefix r");
  if (r.status == -2) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(isPng(dir + "/r_fps_vs_n.png")) << r.out;
  EXPECT_TRUE(isPng(dir + "/r_fps_vs_block.png")) << r.out;
  // A chosen block size and N; ones the CSV lacks are named in the skip.
  const Result chosen = plot(data + " --out " + dir + " --prefix c --block-size 128 --fps-n 100k");
  ASSERT_EQ(chosen.status, 0) << chosen.out;
  EXPECT_TRUE(isPng(dir + "/c_fps_vs_n.png")) << chosen.out;
  EXPECT_TRUE(isPng(dir + "/c_fps_vs_block.png")) << chosen.out;
  const Result missing = plot(data + " --out " + dir + " --prefix m --block-size 96 --fps-n 5k");
  EXPECT_NE(missing.out.find("skipped fps_vs_n: no rendered rows at block size 96"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("skipped fps_vs_block: no rendered rows at N=5k"), std::string::npos) << missing.out;
}

// The default world (no --scenario, --pipeline or --params) runs the fastest exact pipeline for
// its N (the pipeline table's): verlet below core::kDefaultWorldLargeFromN boids, rows from there
// on; --list-steps keeps verlet, and a pipeline or world asked for is kept.
TEST(DefaultWorld, PicksThePipelineByN) {
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu"}).params.pipeline, core::Pipeline::Verlet);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--n", "999999"}).params.pipeline, core::Pipeline::Verlet);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--n", "1M"}).params.pipeline, core::Pipeline::Rows);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--n", "1M", "--list-steps", "2"}).params.pipeline,
            core::Pipeline::Verlet);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--n", "1M", "--pipeline", "coherent"}).params.pipeline,
            core::Pipeline::Coherent);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--n", "1M", "--scenario", "dense"}).params.pipeline,
            core::Pipeline::Rows);
  EXPECT_EQ(parsed({"--headless", "--engine", "cpu", "--scenario", "dense"}).params.pipeline, core::Pipeline::Rows);
}
