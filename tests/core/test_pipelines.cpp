// The pipelines find the same neighbours: after one step from the same random state, the
// per-id results agree up to summation order. The lists of pipelines are the table's
// (core/pipeline_table.h), so a new pipeline is held to the same checks by being a new row.
#include <gtest/gtest.h>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/pipeline_table.h"
#include "sparse_world.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;
using murmur::test::randomBodies;

namespace {
Bodies stepWith(SimParams p, Pipeline pipe, const Bodies& start, int steps) {
  p.pipeline = pipe;
  CpuEngine e(p);
  e.reset(start);
  e.step(steps);
  return e.readBodies();
}

// The gravity methods on a uniform grid (near cells exact, far cells as monopoles): the table's
// gravity pipelines less naive (all pairs, no grid) and tree (its own approximation, held to
// test_tree.cpp's bounds).
std::vector<Pipeline> gravityGridPipelines() {
  std::vector<Pipeline> out;
  for (Pipeline pipe : pipelinesFor(ForceMode::Gravity))
    if (pipe != Pipeline::Naive && pipe != Pipeline::Tree) out.push_back(pipe);
  return out;
}

// Every pipeline the parameters accept for force f: the table's rows, less tree for boids (it
// refuses them: boids have no far field). Rows and verlet take gravity, running the coherent grid.
std::vector<Pipeline> acceptedPipelines(ForceMode f) {
  std::vector<Pipeline> out;
  for (const PipelineInfo& row : pipelineTable())
    if (f == ForceMode::Gravity || row.boids) out.push_back(row.id);
  return out;
}

SimParams boidsWorld(float halfSize, int factor, RuleSet rules) {
  SimParams p = defaultParams();
  p.halfSize = halfSize;
  p.cellWidthFactor = factor;
  p.boids.rules = rules;
  return p;
}
}  // namespace

TEST(Pipelines, BoidsAgreeAfterOneStep) {
  for (int factor : {1, 2}) {
    for (RuleSet rules : {RuleSet::Cis565, RuleSet::Reynolds}) {
      const SimParams p = boidsWorld(25.0f, factor, rules);
      const Bodies start = randomBodies(3000, 25.0f, 1.0f, 100 + factor);
      const Bodies naive = stepWith(p, Pipeline::Naive, start, 1);
      const std::string tag = "factor " + std::to_string(factor) + " rules " + toString(rules);
      for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
        if (pipe == Pipeline::Naive) continue;  // the reference
        expectStatesClose(naive, stepWith(p, pipe, start, 1), 1e-5f, 1e-6f,
                          std::string("naive vs ") + toString(pipe) + ", " + tag);
      }
      // The step did something: velocities changed for most boids.
      int changed = 0;
      for (size_t i = 0; i < start.size(); ++i) changed += naive.vel[i].x != start.vel[i].x;
      EXPECT_GT(changed, 2500);
    }
  }
}

// A sparse world (1000 boids in clumps in a box of half-size 3000, whose grid at the rule's cell
// width would hold 1.7 billion cells): every pipeline's grid widens its cells and still finds
// naive's neighbours, in the plane and in 3D, under every boundary.
TEST(Pipelines, BoidsAgreeInASparseWorld) {
  for (int dims : {2, 3})
    for (Boundary k : {Boundary::Wrap, Boundary::Periodic, Boundary::Reflect, Boundary::Open}) {
      SimParams p = boidsWorld(3000.0f, 1, RuleSet::Cis565);
      p.dims = dims;
      p.boundary = k;
      const Bodies start = murmur::test::sparseClumps(1000, 3000.0f, dims, 5 + dims);
      const Bodies naive = stepWith(p, Pipeline::Naive, start, 1);
      for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
        if (pipe == Pipeline::Naive) continue;
        // Positions near 3000 carry float steps of 2.4e-4, which the cohesion's sums of absolute
        // positions carry into the velocities (order-dependent, about 1e-6); a missed neighbour
        // would move a velocity by 1e-3 or more.
        expectStatesClose(naive, stepWith(p, pipe, start, 1), 1e-5f, 2e-5f,
                          std::string(toString(pipe)) + " " + std::to_string(dims) + "D " + toString(k));
      }
      // The clumps have neighbours: the step turned most boids (alone, one would keep its velocity).
      int changed = 0;
      for (size_t i = 0; i < start.size(); ++i) changed += naive.vel[i].x != start.vel[i].x;
      EXPECT_GT(changed, 900);
    }
}

TEST(Pipelines, BoidsAgreeNearTheWorldBoundary) {
  // Bodies packed against the faces: the search must not look across the wrap boundary in any
  // pipeline, and wrapped positions must agree.
  SimParams p = boidsWorld(10.0f, 1, RuleSet::Cis565);
  Bodies start = randomBodies(1500, 10.0f, 1.0f, 9);
  for (size_t i = 0; i < start.size(); i += 2) start.pos[i].x = (i % 4 ? 9.95f : -9.99f);
  const Bodies naive = stepWith(p, Pipeline::Naive, start, 1);
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids))
    if (pipe != Pipeline::Naive) expectStatesClose(naive, stepWith(p, pipe, start, 1), 1e-5f, 1e-6f, toString(pipe));
}

TEST(Pipelines, GravityGridPipelinesAgreeWithEachOther) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.gravity.gridDim = 8;
  const Bodies start = randomBodies(2000, 2.0f, 0.1f, 77);
  for (Integrator integ : {Integrator::Leapfrog, Integrator::DampedEuler}) {
    p.gravity.integrator = integ;
    const std::vector<Pipeline> grids = gravityGridPipelines();
    ASSERT_GE(grids.size(), 2u);
    const Bodies first = stepWith(p, grids[0], start, 1);
    for (size_t k = 1; k < grids.size(); ++k)
      expectStatesClose(first, stepWith(p, grids[k], start, 1), 1e-5f, 1e-6f,
                        std::string(toString(grids[0])) + " vs " + toString(grids[k]) + ", " + toString(integ));
  }
}

TEST(Pipelines, SwitchingPipelineMidRunKeepsIdentities) {
  const SimParams p = boidsWorld(25.0f, 1, RuleSet::Cis565);
  const Bodies start = randomBodies(2000, 25.0f, 1.0f, 5);
  SimParams q = p;
  q.pipeline = Pipeline::Coherent;
  CpuEngine e(q);
  e.reset(start);
  e.step(3);  // data now in cell order
  const Bodies mid = e.readBodies();
  q.pipeline = Pipeline::Naive;
  e.setParams(q);
  e.step(1);
  const Bodies switched = e.readBodies();
  const Bodies fresh = stepWith(p, Pipeline::Naive, mid, 1);
  expectStatesClose(fresh, switched, 1e-5f, 1e-6f, "switch coherent -> naive");
}

TEST(Pipelines, DeterministicForASeed) {
  SimParams p = boidsWorld(25.0f, 1, RuleSet::Cis565);
  const Bodies start = randomBodies(2000, 25.0f, 1.0f, 12);
  for (Pipeline pipe : pipelinesFor(ForceMode::Boids)) {
    const uint64_t a = stateChecksum(stepWith(p, pipe, start, 10));
    const uint64_t b = stateChecksum(stepWith(p, pipe, start, 10));
    EXPECT_EQ(a, b) << toString(pipe);
    EXPECT_NE(a, stateChecksum(start));
  }
}

TEST(Pipelines, NeighbourStatsCountCandidatesAndNeighbours) {
  SimParams p = boidsWorld(25.0f, 1, RuleSet::Cis565);
  const Bodies start = randomBodies(3000, 25.0f, 1.0f, 8);
  std::vector<double> neighbours;
  const std::vector<Pipeline> pipes = pipelinesFor(ForceMode::Boids);
  ASSERT_EQ(pipes.front(), Pipeline::Naive);  // the reference, first in the table
  for (Pipeline pipe : pipes) {
    p.pipeline = pipe;
    CpuEngine e(p);
    e.reset(start);
    const NeighbourStats st = e.neighbourStats();
    neighbours.push_back(st.meanNeighbours);
    EXPECT_GE(st.meanCandidates, st.meanNeighbours);
    if (pipe == Pipeline::Naive) EXPECT_DOUBLE_EQ(st.meanCandidates, 2999.0);
    else EXPECT_LT(st.meanCandidates, 400.0);
  }
  // Every boids pipeline finds the neighbours naive finds.
  for (size_t k = 1; k < pipes.size(); ++k) EXPECT_DOUBLE_EQ(neighbours[0], neighbours[k]) << toString(pipes[k]);
  // density 3000 / 50^3, sphere of radius 5: about 12.6 expected (fewer at the faces)
  EXPECT_GT(neighbours[0], 8.0);
  EXPECT_LT(neighbours[0], 14.0);
}

TEST(Pipelines, EmptyAndSingleBody) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity}) {
    for (Pipeline pipe : acceptedPipelines(f)) {
      SimParams p = defaultParams();
      p.pipeline = pipe;
      p.force = f;
      CpuEngine e(p);
      e.reset(Bodies{});
      e.step(2);
      EXPECT_EQ(e.readBodies().size(), 0u);
      Bodies one = randomBodies(1, 10.0f, 0.5f, 1);
      e.reset(one);
      e.step(1);
      const Bodies r = e.readBodies();
      ASSERT_EQ(r.size(), 1u);
      // Alone, a body keeps its velocity (no neighbours, no other mass).
      EXPECT_FLOAT_EQ(r.vel[0].x, one.vel[0].x);
    }
  }
}
