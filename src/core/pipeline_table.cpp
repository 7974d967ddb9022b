#include "core/pipeline_table.h"

#include <stdexcept>
#include <tuple>
#include <utility>

#include "core/rule_table.h"

namespace murmur::core {

namespace {

constexpr unsigned kGridStages = stageBit(Stage::Label) | stageBit(Stage::Sort) | stageBit(Stage::Bounds);
constexpr unsigned kStepStages = stageBit(Stage::Force) | stageBit(Stage::Integrate);
constexpr unsigned kReorder = stageBit(Stage::Reorder);
constexpr unsigned kList = stageBit(Stage::List);

// One row per pipeline, in enum order.
std::vector<PipelineInfo> makeTable() {
  // clang-format off
  std::vector<PipelineInfo> t = {
  //  id                   name         key  boids  gravity gravityAs            stages
  //    sorts  reorders lists  cellWidth rowGrid runsOn                                                              allPairs
  //    roles
  //    summary
      {Pipeline::Naive,     "naive",     '1', true,  true,  Pipeline::Naive,     kStepStages,
        false, false,   false, false,    false,  kOnCpu | kOnCuda | kOnRanksGravity | kRankDefaultGravity,           true,
        kBesideReference,
        "all pairs, tiled in shared memory"},
      {Pipeline::Scattered, "scattered", '2', true,  true,  Pipeline::Scattered, kGridStages | kStepStages,
        true,  false,   false, true,     false,  kOnCpu | kOnCuda,                                                   false,
        0,
        "uniform grid; bodies stay in place, cells index them"},
      {Pipeline::Coherent,  "coherent",  '3', true,  true,  Pipeline::Coherent,  kGridStages | kReorder | kStepStages,
        true,  true,    false, true,     false,  kOnCpu | kOnCuda | kOnRanksBoids,                                   false,
        kTextbookGrid,
        "uniform grid; the bodies are reordered by cell"},
      {Pipeline::Rows,      "rows",      '4', true,  true,  Pipeline::Coherent,  kGridStages | kReorder | kStepStages,
        true,  true,    false, true,     true,   kOnCpu | kOnCuda | kOnRanksBoids | kRankDefaultBoids,               false,
        kDefaultPipeline | kDefaultWorldLarge,
        "exact boids search over pruned rows of finer cells (gravity: coherent)"},
      {Pipeline::Tree,      "tree",      '5', false, true,  Pipeline::Tree,      kGridStages | kReorder | kStepStages,
        true,  true,    false, false,    false,  kOnCpu | kOnCuda | kOnRanksGravity,                                 false,
        kWalksTree | kGravityWorld,
        "Barnes-Hut over a radix tree built every step (gravity only)"},
      {Pipeline::Verlet,    "verlet",    '6', true,  true,  Pipeline::Coherent,  kGridStages | kReorder | kList | kStepStages,
        true,  true,    true,  true,     true,   kOnCpu | kOnCuda,                                                   false,
        kDefaultWorldSmall,
        "exact per-boid neighbour lists with a skin, rebuilt every few steps (gravity: coherent)"},
      {Pipeline::Clusters,  "clusters",  '7', true,  true,  Pipeline::Coherent,  kGridStages | kReorder | kStepStages,
        true,  true,    false, false,    true,   kOnCpu | kOnCuda,                                                   false,
        0,
        "exact cluster pairs: a warp tests 16 boids against 4 candidates at a time (gravity: coherent)"},
  };
  // clang-format on

  for (size_t i = 0; i < t.size(); ++i)
    if (static_cast<size_t>(t[i].id) != i || std::string(t[i].name) != toString(t[i].id))
      throw std::logic_error("pipeline table: row " + std::to_string(i) + " is out of enum order");
  // Exactly one default over ranks per force, and it runs that force over ranks.
  for (const auto& [ranks, dflt, force] : {std::tuple{kOnRanksBoids, kRankDefaultBoids, "boids"},
                                           std::tuple{kOnRanksGravity, kRankDefaultGravity, "gravity"}}) {
    int defaults = 0;
    for (const PipelineInfo& r : t) {
      if (!(r.runsOn & dflt)) continue;
      ++defaults;
      if (!(r.runsOn & ranks))
        throw std::logic_error(std::string("pipeline table: ") + r.name + " is the default for " + force +
                               " over ranks but does not run it there");
    }
    if (defaults != 1)
      throw std::logic_error(std::string("pipeline table: ") + std::to_string(defaults) + " defaults for " + force +
                             " over ranks (want one)");
  }
  // Exactly one row plays each default part, and can play it: the boids defaults serve boids,
  // the reference's row is all-pairs gravity of its own, a tree row is a gravity method.
  for (const auto& [role, what] : {std::pair{kDefaultPipeline, "the --pipeline default"},
                                   std::pair{kDefaultWorldSmall, "the small default world's pipeline"},
                                   std::pair{kDefaultWorldLarge, "the large default world's pipeline"},
                                   std::pair{kTextbookGrid, "the textbook baseline's grid"},
                                   std::pair{kBesideReference, "the reference kernel's pipeline"},
                                   std::pair{kGravityWorld, "the gravity default world's pipeline"}}) {
    int rows = 0;
    for (const PipelineInfo& r : t) {
      if (!(r.roles & role)) continue;
      ++rows;
      const bool ownGravity = r.gravity && r.gravityAs == r.id;
      const bool can = role == kBesideReference ? ownGravity && r.allPairs : role == kGravityWorld ? ownGravity : r.boids;
      if (!can) throw std::logic_error(std::string("pipeline table: ") + r.name + " is " + what + " but cannot be");
    }
    if (rows != 1)
      throw std::logic_error(std::string("pipeline table: ") + std::to_string(rows) + " rows are " + what +
                             " (want one)");
  }
  for (const PipelineInfo& r : t)
    if ((r.roles & kWalksTree) && !(r.gravity && r.gravityAs == r.id))
      throw std::logic_error(std::string("pipeline table: ") + r.name + " walks the tree but is no gravity method");
  return t;
}

// The one row that carries role (makeTable checks that there is one).
Pipeline rowWith(Role role) {
  for (const PipelineInfo& r : pipelineTable())
    if (r.roles & role) return r.id;
  throw std::logic_error("pipeline table: no row has role " + std::to_string(role));  // makeTable rules it out
}

// The columns of a row that answer for force f: a local rule (core/rule_table.h) reads the boids
// ones, a field rule the gravity ones.
struct ForceColumns {
  bool serves;           // the row serves f itself (gravity: with a method of its own)
  bool cellWidth;        // a step of f on it has a grid of the boids cell width
  unsigned onRanks;      // the RunsOn bit: several ranks run f on it
  unsigned rankDefault;  // the RunsOn bit: the default for f over ranks
};

ForceColumns columnsFor(const PipelineInfo& r, ForceMode f) {
  if (runsLocalRule(f)) return {r.boids, r.cellWidth, kOnRanksBoids, kRankDefaultBoids};
  return {r.gravity && r.gravityAs == r.id, false, kOnRanksGravity, kRankDefaultGravity};
}

}  // namespace

const std::vector<PipelineInfo>& pipelineTable() {
  static const std::vector<PipelineInfo> table = makeTable();
  return table;
}

const PipelineInfo& pipelineInfo(Pipeline p) {
  const auto& t = pipelineTable();
  const auto i = static_cast<size_t>(p);
  if (i >= t.size()) throw std::invalid_argument("pipeline " + std::to_string(int(p)) + " is not in the table");
  return t[i];
}

std::vector<Pipeline> gravityPipelines() { return pipelinesFor(ForceMode::Gravity); }

bool serves(Pipeline p, ForceMode f) { return columnsFor(pipelineInfo(p), f).serves; }

Pipeline effectivePipeline(Pipeline p, ForceMode f) {
  return f == ForceMode::Gravity ? pipelineInfo(p).gravityAs : p;
}

bool hasCellWidth(Pipeline p, ForceMode f) { return columnsFor(pipelineInfo(p), f).cellWidth; }

bool hasStage(Pipeline p, ForceMode f, Stage s) {
  return (pipelineInfo(effectivePipeline(p, f)).stages & stageBit(s)) != 0;
}

std::vector<Pipeline> pipelinesFor(ForceMode f) {
  std::vector<Pipeline> out;
  for (const PipelineInfo& r : pipelineTable())
    if (serves(r.id, f)) out.push_back(r.id);
  return out;
}

bool runsOnRanks(Pipeline p, ForceMode f) {
  const PipelineInfo& r = pipelineInfo(p);
  return (r.runsOn & columnsFor(r, f).onRanks) != 0;
}

std::vector<Pipeline> rankPipelines(ForceMode f) {
  std::vector<Pipeline> out;
  for (const PipelineInfo& r : pipelineTable())
    if (runsOnRanks(r.id, f)) out.push_back(r.id);
  return out;
}

Pipeline defaultRankPipeline(ForceMode f) {
  for (const PipelineInfo& r : pipelineTable())
    if (r.runsOn & columnsFor(r, f).rankDefault) return r.id;
  throw std::logic_error(std::string("no pipeline runs ") + toString(f) + " over ranks");  // makeTable rules it out
}

Pipeline defaultPipeline() { return rowWith(kDefaultPipeline); }

Pipeline defaultWorldPipeline(size_t n) {
  return rowWith(n >= kDefaultWorldLargeFromN ? kDefaultWorldLarge : kDefaultWorldSmall);
}

Pipeline textbookGridPipeline() { return rowWith(kTextbookGrid); }

Pipeline referencePipeline() { return rowWith(kBesideReference); }
Pipeline gravityWorldPipeline() { return rowWith(kGravityWorld); }

bool gravityWalksTree(Pipeline p) { return (pipelineInfo(pipelineInfo(p).gravityAs).roles & kWalksTree) != 0; }

std::string gravityOnlyMessage() {
  return "gravity only: boids have no far field to approximate (use " + joinNames(pipelinesFor(localRuleForce())) +
         ")";
}

std::string joinNames(const std::vector<Pipeline>& list, const char* lastJoin) {
  std::string s;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) s += i + 1 == list.size() ? lastJoin : ", ";
    s += toString(list[i]);
  }
  return s;
}

}  // namespace murmur::core
