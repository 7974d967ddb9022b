// The pipeline table: one row per pipeline, the one description that options, --help, validation,
// the viewer's number keys, the benchmark's lists, the plots and the tests' parameterised lists
// read. Each engine implements a row in its own file(s) behind one small interface (the CPU
// engine: core/cpu_pipeline.h; the CUDA engine: cuda/cuda_pipeline.h). How to add a pipeline:
// docs/design.md#the-pipeline-table-and-how-to-add-a-pipeline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.h"
#include "core/stages.h"

namespace murmur::core {

// Where a pipeline runs. A pipeline the CPU engine runs is the reference of the CUDA one in tests.
enum RunsOn : unsigned {
  kOnCpu = 1u << 0,
  kOnCuda = 1u << 1,
  // Several ranks (src/dist), per force: the decomposition implements these rows.
  kOnRanksBoids = 1u << 2,
  kOnRanksGravity = 1u << 3,
  // The pipeline several ranks run for that force when no --pipeline is given (one row per force
  // carries it, and only a row that runs the force over ranks; the table checks both).
  kRankDefaultBoids = 1u << 4,
  kRankDefaultGravity = 1u << 5,
};

// The default world (the viewer's and headless runs' with no --scenario, --pipeline or --params)
// runs the kDefaultWorldSmall row below this many boids and the kDefaultWorldLarge row from here
// on (docs/performance.md#the-default-worlds-pipeline).
constexpr size_t kDefaultWorldLargeFromN = 1000000;

// The parts a row plays in the defaults and the benchmark. Each kDefault* / kTextbookGrid /
// kBesideReference bit is carried by exactly one row (the table checks at start-up).
enum Role : unsigned {
  kDefaultPipeline = 1u << 0,    // the --pipeline default (defaultParams), a boids pipeline
  kDefaultWorldSmall = 1u << 1,  // the default world's pipeline below kDefaultWorldLargeFromN boids
  kDefaultWorldLarge = 1u << 2,  // the default world's pipeline from kDefaultWorldLargeFromN boids on
  kTextbookGrid = 1u << 3,       // the grid the benchmark's textbook baseline is (its rows' pipeline)
  kBesideReference = 1u << 4,    // --reference times NVIDIA's all-pairs gravity kernel beside this row's gravity
  kWalksTree = 1u << 5,          // its gravity walks a Barnes-Hut tree (--theta, --tree-leaf-size)
  kGravityWorld = 1u << 6,       // the pipeline of the gravity default world (--force gravity, no --scenario)
};

struct PipelineInfo {
  Pipeline id;
  const char* name;         // the one spelling: command line, JSON, CSV, panel
  char key;                 // the viewer's number key
  bool boids;               // serves the boids force itself
  bool gravity;             // serves gravity (gravityAs says which method runs)
  Pipeline gravityAs;       // the gravity method a gravity step on this pipeline runs
  unsigned stages;          // bit (1 << Stage) per stage a boids step (or, gravity only, a gravity step) has
  bool sorts;               // sorts the bodies by cell (or key) every step or list build
  bool reorders;            // keeps the state in cell order (id order is a gather away)
  bool lists;               // keeps neighbour lists across steps (stepsPerCycle may exceed 1)
  bool cellWidth;           // has a boids grid whose cell width --cell-width sets
  bool rowGrid;             // its boids grid has finer cells searched by rows (core/row_search.h)
  unsigned runsOn;          // RunsOn bits
  bool allPairs;            // visits every pair: its cost grows as N^2 (size limits, progress estimates)
  unsigned roles;           // Role bits
  const char* summary;      // one line for --help and the docs
};

// Every row, in enum order (row i describes Pipeline(i)).
const std::vector<PipelineInfo>& pipelineTable();
const PipelineInfo& pipelineInfo(Pipeline p);

// Whether p serves force f itself (gravity on rows and verlet runs gravityAs).
bool serves(Pipeline p, ForceMode f);
// The method a step of force f runs on pipeline p: p itself, or gravityAs for gravity.
Pipeline effectivePipeline(Pipeline p, ForceMode f);
// Whether a step of force f on pipeline p has a grid of the boids cell width (--cell-width).
bool hasCellWidth(Pipeline p, ForceMode f);
// Whether a step of force f on pipeline p has the stage s.
bool hasStage(Pipeline p, ForceMode f, Stage s);
// The pipelines that serve force f (gravity: those with a method of their own, so that reports
// and sweeps that cover gravity measure each method once).
std::vector<Pipeline> pipelinesFor(ForceMode f);
// The pipelines several ranks run for force f.
std::vector<Pipeline> rankPipelines(ForceMode f);
// Whether several ranks run force f on pipeline p.
bool runsOnRanks(Pipeline p, ForceMode f);
// The default pipeline of force f over several ranks: the row marked kRankDefault* for f.
Pipeline defaultRankPipeline(ForceMode f);
// The --pipeline default, which defaultParams sets: the row marked kDefaultPipeline.
Pipeline defaultPipeline();
// The default world's pipeline for n boids: the row marked kDefaultWorldSmall below
// kDefaultWorldLargeFromN, kDefaultWorldLarge from there on.
Pipeline defaultWorldPipeline(size_t n);
// The pipeline the benchmark's textbook baseline is listed as: the row marked kTextbookGrid.
Pipeline textbookGridPipeline();
// The pipeline whose gravity rows --reference times NVIDIA's kernel beside: the row marked
// kBesideReference.
Pipeline referencePipeline();
// The pipeline of the gravity default world (--force gravity with no --scenario: two galaxies
// colliding): the row marked kGravityWorld, a gravity method of its own.
Pipeline gravityWorldPipeline();
// Whether a gravity step on p walks a Barnes-Hut tree (its gravityAs row is marked kWalksTree).
bool gravityWalksTree(Pipeline p);
// Why a gravity-only pipeline (tree) refuses boids: what a tree buys is a far field summarised by
// multipoles, and boids have none (every rule is a short-range neighbour sum, which the grids find
// exactly). Names the pipelines that serve boids.
std::string gravityOnlyMessage();
// "naive, scattered, coherent, rows, tree or verlet" (names of `list`, joined for messages).
std::string joinNames(const std::vector<Pipeline>& list, const char* lastJoin = " or ");

}  // namespace murmur::core
