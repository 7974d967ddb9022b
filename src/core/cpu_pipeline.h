// The CPU engine's pipelines behind one small interface. The engine (core/cpu_engine.cpp) owns
// the state and the parts every pipeline shares: the grid stages, the reorder into cell order,
// the boids integration and the gravity integrators (leapfrog, damped Euler), the read-back in id
// order. A pipeline (one file per pipeline under core/cpu_pipelines/) supplies what differs: its
// boids search and force loop, its gravity method, its cycle, its neighbour statistics.
// core/cpu_pipelines/registry.cpp maps each core::Pipeline the CPU engine runs (kOnCpu in
// core/pipeline_table.h) to its factory. Adding a pipeline:
// docs/design.md#the-pipeline-table-and-how-to-add-a-pipeline.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/engine.h"
#include "core/format.h"
#include "core/boundary.h"
#include "core/grid.h"
#include "core/physics.h"
#include "core/row_search.h"
#include "core/rules/local_rules.h"

namespace murmur::core {

// The grid stages as free functions, so that a step times them and the grid views run the same
// code untimed (and the host store of several ranks runs them too). sortByCell is a stable
// counting sort: keys are bounded by the cell count, so it is O(N + cells), and ties keep
// ascending body index, which makes the CPU engine deterministic (the pinned checksums of
// test_determinism.cpp rely on it). On return counts[c] is the end of cell c in the sorted order
// (the start of cell c + 1), for c < numCells, and counts[numCells] is n.
void labelCells(const GridSpec& g, const std::vector<Vec4>& pos, std::vector<uint32_t>& keys);
void sortByCell(const GridSpec& g, const std::vector<uint32_t>& keys, std::vector<uint32_t>& counts,
                std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& sortedIndex);
// Per cell [start, end) into the sorted order; kEmptyCell for both when the cell is empty.
void findCellBounds(const GridSpec& g, const std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& cellStart,
                    std::vector<uint32_t>& cellEnd);
// The rows and verlet pipelines' per-cell offsets: first[c] = first sorted slot with key >= c,
// for c in [0, numCells]; cell c holds [first[c], first[c + 1]).
void findCellFirst(const GridSpec& g, const std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& first);

// A grid built for the current positions without touching the state: keys and body indices in
// sorted order, and per-cell [start, end) into that order (kEmptyCell when empty).
struct CpuGridView {
  GridSpec grid;
  std::vector<uint32_t> sortedKeys, sortedIndex, cellStart, cellEnd;
  std::vector<uint32_t> first;  // rowsGridView only: findCellFirst's offsets
};

// Mean candidates and neighbours per body from the totals over n bodies (0 for none).
inline NeighbourStats neighbourMeans(double candidates, double neighbours, long n) {
  NeighbourStats st;
  st.meanCandidates = n > 0 ? candidates / double(n) : 0.0;
  st.meanNeighbours = n > 0 ? neighbours / double(n) : 0.0;
  return st;
}

// Everything a step reads and writes, shared by the engine and its pipelines.
struct CpuState {
  SimParams params{};
  StepProfile profile;
  // Body state in its current order (cell order after a pipeline that reorders), every attribute
  // of core/bodies.h; pos, vel and id name its arrays for the physics. alt: the reorder's gather
  // target (reorderBySortedIndex swaps the two), and velAlt the boids' velocity ping-pong.
  Bodies body, alt;
  std::vector<Vec4>& pos = body.pos;
  std::vector<Vec4>& vel = body.vel;
  std::vector<uint32_t>& id = body.id;
  std::vector<Vec4>& velAlt = alt.vel;
  std::vector<Vec4> acc;
  // Grid buffers of the last grid build.
  GridSpec grid{};
  std::vector<uint32_t> keys, sortedKeys, sortedIndex, cellStart, cellEnd, counts;
  std::vector<uint32_t> cellFirst;  // rows and verlet: first sorted slot of every cell, and n at the end
  // Gravity on a grid: per cell the centre of mass xyz, w = mass; the keys of the cells with mass.
  std::vector<Vec4> monopole;
  std::vector<uint32_t> occupiedCells;
  // The step being taken (the engine's count before it) and the keys of its draws.
  uint64_t step = 0;
  DrawKeys drawKeys() const { return DrawKeys{id.data(), step, params.seed}; }
  // True while a step runs with profiling on: the stage slots are filled only then.
  bool timing = false;

  long count() const { return static_cast<long>(pos.size()); }

  // Runs f; while timing, writes its time in milliseconds into slot.
  template <typename F>
  void timed(double& slot, F&& f) {
    if (!timing) {
      f();
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    f();
    slot = msSince(t0);
  }

  // labelCells + sortByCell + findCellBounds on the current positions into the grid buffers;
  // with reorder, the state then moves into cell order (reorderBySortedIndex) and stays there.
  void buildGrid(const GridSpec& g, bool reorder);
  // The state moves into sortedIndex order; ids move with it, which is what the read-back uses to
  // hand the state back in id order.
  void reorderBySortedIndex();
  // The gravity grid of the current positions (core/grid.h gravityGridForBodies).
  GridSpec gravityGrid() const;
  // The grid g of the current positions, built untimed into a view; the state is untouched.
  CpuGridView gridView(const GridSpec& g) const;
  // The same with the rows grids' offsets (findCellFirst), for the rows, verlet and clusters
  // pipelines' statistics.
  CpuGridView rowsGridView(const GridSpec& g) const;
};

// The local rule's force loop over a state (positions and velocities in the same order): for
// each body i that skip(i) does not exclude, visit(i, c, add) calls add(j) for each of the
// pipeline's candidates around c (j != i) in the pipeline's order, where c is p_i and, under the
// periodic boundary, each of its images (core/boundary.h), each candidate measured from c; the active rule
// (core/rules/local_rules.h) adds j to i's sums, and its new velocity goes into velOut[i] (the
// bodies after i must still read the old velocity of i). Dynamic chunks: boids in dense cells
// have many more neighbours than the rest. Each body's sum runs on one thread in a fixed order,
// so the result does not depend on the schedule. The CPU engine's pipelines and the host store of
// several ranks both run it.
// keys: where the rule's draws come from (core/random.h; keys.id in the order of pos).
template <typename Skip, typename Visit>
void localRuleLoop(const SimParams& p, const DrawKeys& keys, const std::vector<Vec4>& pos,
                   const std::vector<Vec4>& vel, std::vector<Vec4>& velOut, Skip&& skip, Visit&& visit) {
  withLocalRule(p, [&](auto rule) {
    using Rule = decltype(rule);
    const long n = static_cast<long>(pos.size());
    const typename Rule::Params& rp = Rule::params(p);
    const typename Rule::Setup su = Rule::setup(rp);
    const float radius = Rule::radius(rp);
    const bool periodic = p.boundary == Boundary::Periodic;
    // Named here: clang's OpenMP does not let a lambda inside the loop reach the enclosing
    // function's forwarding-reference parameter.
    auto& visitCandidates = visit;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      if (skip(i)) continue;
      const Vec4 pi = pos[i];
      typename Rule::Sum acc = Rule::zero([&] { return vel[i]; });
      bool image = false;  // the first centre is p_i itself
      forEachImage(xyz(pi), radius, p.halfSize, periodic, [&](const Vec3& c) {
        visitCandidates(i, make4(c, pi.w), [&](long j) {
          const Vec3 d = xyz(pos[j]) - c;
          // A neighbour found near an image is where it is seen from i: p_i + d (imageOf).
          Rule::add(acc, image ? imageOf(pi, d, pos[j]) : pos[j], d, distance2(d), [&] { return vel[j]; }, su);
        });
        image = true;
      });
      velOut[i] = make4(Rule::velocity(acc, pi, vel[i], rp, drawsOf<Rule>(keys, static_cast<uint32_t>(i))), 0.0f);
    }
  });
}

// The force stage over topological neighbours (--topological K; core/topological.h), new
// velocities into s.velAlt; and the K nearest of every body (slot order), ids in order (d^2, id).
void topologicalForces(CpuState& s);
std::vector<std::vector<uint32_t>> topologicalNeighbourIds(const CpuState& s);

// The CPU engine's force stage: localRuleLoop over every body of s, new velocities into s.velAlt.
template <typename Visit>
void boidsForceLoop(CpuState& s, Visit&& visit) {
  s.timed(s.profile.forceMs,
          [&] { localRuleLoop(s.params, s.drawKeys(), s.pos, s.vel, s.velAlt, [](long) { return false; }, visit); });
}

// The candidates of body i (position pi) in the grid's order (cells z, y, x over the radius'
// range, then slots; Coherent: the state in cell order, else read through sortedIndex), and in
// the rows search's (the rows of core::forEachRow, each a run of slots from first[]): add(j) for
// each j != i. The pipelines and the host store of several ranks visit through these.
template <bool Coherent, typename Add>
void gridCandidates(const GridSpec& g, const uint32_t* cellStart, const uint32_t* cellEnd,
                    const uint32_t* sortedIndex, float radius, long i, const Vec4& pi, Add&& add) {
  const CellRange cr = cellRangeForRadius(g, xyz(pi), radius);
  forEachInCells<Coherent>(g, cr, cellStart, cellEnd, sortedIndex, [&](uint32_t j) {
    if (static_cast<long>(j) != i) add(static_cast<long>(j));
  });
}
template <typename Add>
void rowCandidates(const GridSpec& g, const uint32_t* first, float radius, long i, const Vec4& pi, Add&& add) {
  forEachRow(g, xyz(pi), radius, [&](uint32_t lo, uint32_t hi) {
    for (long j = first[lo]; j < static_cast<long>(first[hi + 1]); ++j)
      if (j != i) add(j);
  });
}

class CpuPipeline {
 public:
  virtual ~CpuPipeline() = default;
  virtual Pipeline id() const = 0;

  // Boids: what the pipeline builds first (grid, reorder, lists), then the new velocities of the
  // current state into s.velAlt (boidsForceLoop); the engine integrates. The default throws: the
  // pipeline does not serve boids (core::serves).
  virtual void boidsForces(CpuState& s);
  // Gravity accelerations (G applied, w = 0) of the current state into s.acc, in the order the
  // state has afterwards (a grid may reorder it). The engine asks the pipeline the table names
  // (core::effectivePipeline); the default throws: the pipeline has no gravity method of its own.
  virtual void gravityForces(CpuState& s);
  // Boids steps of the pipeline's cycle (Engine::stepsPerCycle).
  virtual int stepsPerCycle(const SimParams&) const { return 1; }
  // The grid a boids step of n bodies builds (CpuEngine::debugBuildGrid).
  virtual GridSpec boidsGrid(const SimParams& p, size_t n) const { return boidGrid(p, n); }
  // Neighbour statistics of the current state. The default counts the candidates of the cells
  // within the largest rule radius, on the grid of the active force (gravity: the gravity grid).
  virtual NeighbourStats neighbourStats(const CpuState& s);
  // The state or the parameters changed: drop what the pipeline keeps across steps.
  virtual void invalidate() {}
};

// The pipelines the CPU engine runs, one line each in core/cpu_pipelines/registry.cpp.
using CpuPipelineFactory = std::unique_ptr<CpuPipeline> (*)();
struct CpuPipelineEntry {
  Pipeline id;
  CpuPipelineFactory make;
};
const std::vector<CpuPipelineEntry>& cpuPipelineRegistry();
// A new instance of pipeline p; throws std::invalid_argument when the CPU engine has none.
std::unique_ptr<CpuPipeline> createCpuPipeline(Pipeline p);

// The factories, one per file of core/cpu_pipelines/.
std::unique_ptr<CpuPipeline> makeNaivePipeline();
std::unique_ptr<CpuPipeline> makeScatteredPipeline();
std::unique_ptr<CpuPipeline> makeCoherentPipeline();
std::unique_ptr<CpuPipeline> makeRowsPipeline();
std::unique_ptr<CpuPipeline> makeTreePipeline();
std::unique_ptr<CpuPipeline> makeVerletPipeline();
std::unique_ptr<CpuPipeline> makeClustersPipeline();

}  // namespace murmur::core
