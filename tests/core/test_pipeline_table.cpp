// The pipeline table (core/pipeline_table.h) and the CPU engine's pipelines behind it
// (core/cpu_pipeline.h): the rows are in enum order and spelled as the enum, the engine registers
// exactly the rows marked kOnCpu, each registered pipeline serves what its row says, a step has
// only the stages its row lists, the functions that read the table agree with it, and each
// default part (Role) is one row.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "core/cpu_engine.h"
#include "core/cpu_pipeline.h"
#include "core/pipeline_table.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::randomBodies;

TEST(PipelineTable, RowsAreInEnumOrder) {
  const std::vector<PipelineInfo>& t = pipelineTable();
  ASSERT_EQ(t.size(), static_cast<size_t>(enumCount<Pipeline>()));
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(t[i].id), i) << t[i].name;
    EXPECT_EQ(&pipelineInfo(t[i].id), &t[i]) << t[i].name;
  }
  EXPECT_THROW(pipelineInfo(static_cast<Pipeline>(enumCount<Pipeline>())), std::invalid_argument);
}

TEST(PipelineTable, NamesAndKeysParseBackAndAreUnique) {
  std::set<std::string> names;
  std::set<char> keys;
  for (const PipelineInfo& row : pipelineTable()) {
    Pipeline parsed = row.id == Pipeline::Naive ? Pipeline::Scattered : Pipeline::Naive;
    ASSERT_TRUE(parse(std::string(row.name), parsed)) << row.name;
    EXPECT_EQ(parsed, row.id) << row.name;
    EXPECT_STREQ(toString(row.id), row.name);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_TRUE(keys.insert(row.key).second) << row.name << " key " << row.key;
    EXPECT_GE(row.key, '1');
    EXPECT_LE(row.key, '9');
    EXPECT_NE(std::string(row.summary), "") << row.name;
  }
}

// Every row serves at least one force; gravityAs names a pipeline with a gravity method of its
// own; the functions that filter the table return the rows that say so, in table order.
TEST(PipelineTable, QueriesReadTheRows) {
  for (const PipelineInfo& row : pipelineTable()) {
    EXPECT_TRUE(row.boids || row.gravity) << row.name;
    if (row.gravity) {
      EXPECT_TRUE(serves(row.gravityAs, ForceMode::Gravity)) << row.name;
      EXPECT_EQ(effectivePipeline(row.id, ForceMode::Gravity), row.gravityAs) << row.name;
    }
    EXPECT_EQ(effectivePipeline(row.id, ForceMode::Boids), row.id) << row.name;
    EXPECT_EQ(serves(row.id, ForceMode::Boids), row.boids) << row.name;
    EXPECT_EQ(hasCellWidth(row.id, ForceMode::Gravity), false) << row.name;
    EXPECT_EQ(hasCellWidth(row.id, ForceMode::Boids), row.cellWidth) << row.name;
  }
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity}) {
    std::vector<Pipeline> serving, ranks;
    for (const PipelineInfo& row : pipelineTable()) {
      if (serves(row.id, f)) serving.push_back(row.id);
      if (runsOnRanks(row.id, f)) ranks.push_back(row.id);
    }
    EXPECT_EQ(pipelinesFor(f), serving) << toString(f);
    EXPECT_EQ(rankPipelines(f), ranks) << toString(f);
    ASSERT_FALSE(ranks.empty()) << toString(f);
    EXPECT_TRUE(runsOnRanks(defaultRankPipeline(f), f)) << toString(f);
  }
  // The pipelines with a gravity method of their own are params.h's gravityPipelines().
  EXPECT_EQ(pipelinesFor(ForceMode::Gravity), gravityPipelines());
  EXPECT_EQ(joinNames({Pipeline::Naive, Pipeline::Rows, Pipeline::Tree}), "naive, rows or tree");
  EXPECT_EQ(joinNames({Pipeline::Coherent}), "coherent");
  EXPECT_EQ(joinNames({Pipeline::Naive, Pipeline::Verlet}, " and "), "naive and verlet");
}

// Each default part is played by exactly one row, and the queries return that row: the --pipeline
// default (defaultParams) is rows, the default world runs verlet below kDefaultWorldLargeFromN
// boids and rows from there on, the textbook baseline is coherent's grid, --reference stands
// beside naive's gravity, and only the tree walks a tree.
TEST(PipelineTable, EachDefaultIsOneRow) {
  for (const Role role : {kDefaultPipeline, kDefaultWorldSmall, kDefaultWorldLarge, kTextbookGrid, kBesideReference}) {
    int rows = 0;
    for (const PipelineInfo& row : pipelineTable()) rows += (row.roles & role) != 0;
    EXPECT_EQ(rows, 1) << "role bit " << role;
  }
  EXPECT_EQ(defaultPipeline(), Pipeline::Rows);
  EXPECT_EQ(defaultParams().pipeline, defaultPipeline());
  EXPECT_NE(pipelineInfo(defaultPipeline()).roles & kDefaultPipeline, 0u);
  EXPECT_EQ(textbookGridPipeline(), Pipeline::Coherent);
  EXPECT_EQ(referencePipeline(), Pipeline::Naive);
  EXPECT_TRUE(pipelineInfo(referencePipeline()).allPairs);
  for (const PipelineInfo& row : pipelineTable())
    EXPECT_EQ(gravityWalksTree(row.id), row.id == Pipeline::Tree) << row.name;
}

TEST(PipelineTable, DefaultWorldSwitchesAtTheThreshold) {
  EXPECT_EQ(kDefaultWorldLargeFromN, 1000000u);
  EXPECT_EQ(defaultWorldPipeline(0), Pipeline::Verlet);
  EXPECT_EQ(defaultWorldPipeline(100000), Pipeline::Verlet);
  EXPECT_EQ(defaultWorldPipeline(kDefaultWorldLargeFromN - 1), Pipeline::Verlet);
  EXPECT_EQ(defaultWorldPipeline(kDefaultWorldLargeFromN), Pipeline::Rows);
  EXPECT_EQ(defaultWorldPipeline(10000000), Pipeline::Rows);
  for (const size_t n : {size_t{0}, kDefaultWorldLargeFromN}) {
    const PipelineInfo& row = pipelineInfo(defaultWorldPipeline(n));
    EXPECT_NE(row.roles & (n < kDefaultWorldLargeFromN ? kDefaultWorldSmall : kDefaultWorldLarge), 0u) << n;
    EXPECT_TRUE(row.boids) << n;
  }
}

// The CPU engine registers a pipeline for every row marked kOnCpu, and only for those, once each.
TEST(PipelineTable, CpuEngineRegistersExactlyTheCpuRows) {
  std::set<Pipeline> registered;
  for (const CpuPipelineEntry& e : cpuPipelineRegistry()) {
    EXPECT_TRUE(registered.insert(e.id).second) << toString(e.id) << " registered twice";
    EXPECT_NE(pipelineInfo(e.id).runsOn & kOnCpu, 0u) << toString(e.id) << " registered but not marked kOnCpu";
    const std::unique_ptr<CpuPipeline> made = e.make();
    ASSERT_NE(made, nullptr) << toString(e.id);
    EXPECT_EQ(made->id(), e.id);
    EXPECT_EQ(createCpuPipeline(e.id)->id(), e.id);
  }
  for (const PipelineInfo& row : pipelineTable())
    if (row.runsOn & kOnCpu) {
      EXPECT_EQ(registered.count(row.id), 1u) << row.name << " marked kOnCpu, not registered";
    }
}

// A registered pipeline refuses the forces its row says it does not serve itself: boids on tree,
// gravity on the pipelines whose gravity runs gravityAs (the engine never asks them).
TEST(PipelineTable, CpuPipelinesServeWhatTheirRowsSay) {
  for (const CpuPipelineEntry& e : cpuPipelineRegistry()) {
    const std::unique_ptr<CpuPipeline> pl = e.make();
    CpuState s;
    s.params = defaultParams();
    if (!serves(e.id, ForceMode::Boids)) {
      EXPECT_THROW(pl->boidsForces(s), std::logic_error) << toString(e.id);
    }
    if (!serves(e.id, ForceMode::Gravity)) {
      EXPECT_THROW(pl->gravityForces(s), std::logic_error) << toString(e.id);
    }
  }
}

// A step has the stages its row lists and no other (core::hasStage): a stage a pipeline does not
// have stays exactly 0 in the profile; the force and integrate stages are always there. Only
// lists keep a cycle of several steps.
TEST(PipelineTable, CpuStepsHaveTheStagesOfTheirRows) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (const PipelineInfo& row : pipelineTable()) {
      if (!(row.runsOn & kOnCpu)) continue;
      SimParams p = defaultParams();
      p.force = f;
      p.pipeline = row.id;
      p.halfSize = 20.0f;
      p.listSteps = 3;
      if (!validateParams(p).empty()) {
        EXPECT_FALSE(serves(row.id, f)) << row.name << " serves " << toString(f) << " but its parameters are refused";
        continue;
      }
      CpuEngine e(p);
      e.reset(randomBodies(800, 20.0f, f == ForceMode::Boids ? 1.0f : 0.1f, 3));
      e.setProfiling(true);
      StepProfile seen;
      for (int k = 0; k < 3; ++k) {  // verlet builds its lists in the first of these steps
        e.step(1);
        seen += e.lastProfile();
      }
      const std::string what = std::string(row.name) + " " + toString(f);
      for (int st = 0; st < kStageCount; ++st) {
        const Stage stage = static_cast<Stage>(st);
        if (!hasStage(row.id, f, stage)) {
          EXPECT_EQ(seen.at(stage), 0.0) << what << ": stage " << kStageNames[st];
        }
      }
      EXPECT_TRUE(hasStage(row.id, f, Stage::Force)) << what;
      EXPECT_TRUE(hasStage(row.id, f, Stage::Integrate)) << what;
      EXPECT_GT(seen.forceMs, 0.0) << what;
      EXPECT_EQ(e.stepsPerCycle() > 1, f == ForceMode::Boids && row.lists) << what;
    }
}

// The CPU engine's memory model (core::cpuEngineBytes, which the app's memory check asks): 100
// bytes per body; the grid's counts, starts and ends per cell, gravity a monopole per cell too;
// no grid on naive.
TEST(PipelineTable, CpuEngineBytesCountBodiesAndGrid) {
  SimParams p = defaultParams();
  uint64_t cells = 1;
  size_t grid = 1;
  p.pipeline = Pipeline::Naive;
  EXPECT_EQ(cpuEngineBytes(1000, p, &cells, &grid), 100000u);
  EXPECT_EQ(cells, 0u);
  EXPECT_EQ(grid, 0u);
  p.pipeline = Pipeline::Coherent;  // half-size 100, radius 5: 40^3 cells
  EXPECT_EQ(cpuEngineBytes(10000, p, &cells, &grid), 1000000u + (64000u + 1) * 12);
  EXPECT_EQ(cells, 64000u);
  EXPECT_EQ(grid, (64000u + 1) * 12);
  // 1000 bodies would leave 64 cells a body: the cells widen to 20^3 (core::boidGridCellCap).
  EXPECT_EQ(cpuEngineBytes(1000, p, &cells, &grid), 100000u + (8000u + 1) * 12);
  EXPECT_EQ(cells, 8000u);
  p.force = ForceMode::Gravity;
  p.gravity.gridDim = 16;
  EXPECT_EQ(cpuEngineBytes(10, p), 1000u + (4096u + 1) * 28);
  EXPECT_EQ(cpuEngineBytes(10, p, &cells, nullptr), 1000u + (4096u + 1) * 28);
  EXPECT_EQ(cells, 4096u);
}

// Engines that run on one process have no ranks.
TEST(PipelineTable, CpuEngineHasNoRanksAndNoDevice) {
  CpuEngine e(defaultParams());
  EXPECT_EQ(e.rankAccess(), nullptr);
  EXPECT_EQ(e.deviceAccess(), nullptr);
}

// The gravity default world's pipeline is one row, a gravity method of its own: the tree.
TEST(PipelineTable, TheGravityWorldRunsTheTree) {
  const Pipeline p = gravityWorldPipeline();
  EXPECT_EQ(p, Pipeline::Tree);
  EXPECT_TRUE(pipelineInfo(p).gravity);
  EXPECT_EQ(pipelineInfo(p).gravityAs, p);
  int rows = 0;
  for (const PipelineInfo& r : pipelineTable()) rows += (r.roles & kGravityWorld) ? 1 : 0;
  EXPECT_EQ(rows, 1);
}
