// The periodic boundary (--boundary periodic) on the CUDA engine: a torus whose searches cross the
// faces by the minimum image (docs/design.md#the-boundary-rule). Every boids pipeline agrees per
// id with the CPU engine's naive pipeline (the reference that tests/core/test_boundary.cpp holds
// to a brute-force minimum-image step) after one step, in 3D and in the plane, at both cell
// widths, with half the bodies packed within a radius of a face, and in a sparse world whose
// clusters reach both faces of an axis; the same step under the wrap boundary differs, so a
// kernel that ignored the boundary would fail. The rows pipeline in each of its three loops (the
// flat one past its table too), verlet over several steps with lists that serve more than one
// step and with lists too short for most bodies (the overflow kernel), the rows pipeline's
// observables, which take the observer's passes under this boundary instead of the step's sample,
// and the benchmark's textbook baseline, which refuses the boundary. Reflecting walls (--boundary
// reflect): every pipeline agrees with the CPU engine's naive step, and over 30 fast steps no body
// leaves the box. An open world (--boundary open): a flock flies out of its start box on every
// pipeline as on the CPU, and two clusters a million units apart run in memory that follows N.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/params.h"
#include "core/row_search.h"
#include "core/scenarios.h"
#include "core/verlet.h"
#include "cuda/cuda_engine.h"
#include "cuda/textbook_coherent.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"
#include "../core/sparse_world.h"
#include "core/rule_table.h"

using namespace murmur;
using core::Bodies;
using core::Boundary;
using core::Pipeline;
using core::SimParams;

namespace {

using namespace test;

// Boids uniform in the world, half of them pushed within a rule radius of some face (the low or
// the high one of x, y or z in turn; x or y in the plane), as tests/core/test_boundary.cpp packs
// them. dims 2: every body at z = 0 with vz = 0.
Bodies packedAgainstFaces(size_t n, const SimParams& p, uint64_t seed) {
  Bodies b = boidBodies(n, p, seed);
  const float h = p.halfSize, r = core::searchRadius(p);
  for (size_t i = 0; i < n; i += 2) {
    float* c = i % 6 == 0 ? &b.pos[i].x : (i % 6 == 2 ? &b.pos[i].y : &b.pos[i].z);
    if (p.dims == 2 && c == &b.pos[i].z) c = &b.pos[i].x;
    const float inside = std::fmod(std::fabs(*c), r);
    *c = (i % 4 == 0) ? -h + inside : h - r + inside;
    if (*c >= h) *c = std::nextafter(h, 0.0f);  // inside the world [-h, h)
  }
  if (p.dims == 2)
    for (size_t i = 0; i < n; ++i) b.pos[i].z = 0.0f, b.vel[i].z = 0.0f;
  return b;
}

// The periodic parameters of a test world: p's pipeline, the plane or the cube, cell width factor.
SimParams periodicParams(Pipeline pipe, int dims, int width, float halfSize) {
  SimParams p = core::defaultParams();
  p.boundary = Boundary::Periodic;
  p.pipeline = pipe;
  p.dims = dims;
  p.cellWidthFactor = width;
  p.halfSize = halfSize;
  return p;
}

// One step of `start` on an engine of p.
Bodies stepOnce(core::Engine& e, const Bodies& start) {
  e.reset(start);
  e.step(1);
  return e.readBodies();
}

// The CPU engine's naive pipeline, one step of `start` under p's parameters and boundary.
Bodies cpuNaiveStep(SimParams p, const Bodies& start) {
  p.pipeline = Pipeline::Naive;
  auto cpu = core::createCpuEngine(p);
  return stepOnce(*cpu, start);
}

// The same step under the wrap boundary: what the faces change is the difference.
Bodies cpuNaiveWrapStep(SimParams p, const Bodies& start) {
  p.boundary = Boundary::Wrap;
  return cpuNaiveStep(p, start);
}

// Bodies of `got` outside the per-id tolerance of `want` (docs/design.md#exactness-rules).
size_t mismatches(const Bodies& got, const Bodies& want, std::string* report) {
  return countStateMismatches(got, want, kRel, kAbsFloor, kAbsFloor, report);
}

// One GPU step of p's pipeline from `start` against `want` (the CPU naive step); every id in place.
void expectGpuStepMatches(const SimParams& p, const Bodies& start, const Bodies& want, const std::string& what,
                          Bodies* got = nullptr) {
  auto gpu = cuda::createCudaEngine(p);
  const Bodies g = stepOnce(*gpu, start);
  ASSERT_EQ(g.size(), start.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g.id[i], i) << what;
  std::string report;
  EXPECT_EQ(mismatches(g, want, &report), 0u) << what << ": bodies differ from the CPU engine's naive step" << report;
  if (got) *got = g;
}

struct World {
  int dims;
  float halfSize;
  size_t n;
  const char* name;
};

// The worlds of the one-step tests: about 20 neighbours a boid in the cube (h 20) and 11 in the
// plane (h 60), and sparse worlds a little more than three reaches wide (h 8, radius 5), where
// most boids lie near a face and a row of the cluster grid holds about 16 boids (3 by 3 rows of
// 140 boids in the cube, 2 rows of 30 in the plane), so that a cluster's box spans most of the
// world's width and reaches both faces of the axis (three shifts along it).
const World kWorlds[] = {
    {3, 20.0f, 2500, "cube"},
    {2, 60.0f, 2000, "plane"},
    {3, 8.0f, 140, "sparse cube"},
    {2, 8.0f, 30, "sparse plane"},
};

class CudaBoundary : public CudaEngineTest {};

TEST_F(CudaBoundary, EveryPipelineMatchesCpuNaiveOnATorus) {
  for (const World& w : kWorlds)
    for (int width : {1, 2}) {
      const SimParams p = periodicParams(Pipeline::Naive, w.dims, width, w.halfSize);
      ASSERT_EQ(core::validateParams(p), "") << w.name;
      const Bodies start = packedAgainstFaces(w.n, p, 70 + w.n + width);
      const Bodies want = cpuNaiveStep(p, start);
      const Bodies walled = cpuNaiveWrapStep(p, start);
      for (Pipeline pipe : boidsPipelines()) {
        SimParams q = p;
        q.pipeline = pipe;
        const std::string what =
            std::string(core::toString(pipe)) + ", " + w.name + ", cell width " + std::to_string(width);
        Bodies got;
        expectGpuStepMatches(q, start, want, what, &got);
        // The faces matter here: the wrap boundary's step is another one.
        EXPECT_GT(mismatches(got, walled, nullptr), w.n / 10) << what << ": the same step as under the wrap boundary";
        // The statistics count the search without images on both engines.
        auto gpu = cuda::createCudaEngine(q);
        auto cpu = core::createCpuEngine(q);
        gpu->reset(start);
        cpu->reset(start);
        const core::NeighbourStats g = gpu->neighbourStats(), r = cpu->neighbourStats();
        EXPECT_EQ(g.meanCandidates, r.meanCandidates) << what;
        EXPECT_EQ(g.meanNeighbours, r.meanNeighbours) << what;
      }
    }
}

// The Reynolds rule set and the block sizes of the naive kernel's tiles (its unrolled sizes and
// the generic one), in the cube.
TEST_F(CudaBoundary, ReynoldsRulesAndEveryNaiveBlockMatchCpuNaive) {
  SimParams p = periodicParams(Pipeline::Naive, 3, 1, 20.0f);
  p.boids.rules = core::RuleSet::Reynolds;
  const Bodies start = packedAgainstFaces(2500, p, 11);
  const Bodies want = cpuNaiveStep(p, start);
  for (Pipeline pipe : boidsPipelines()) {
    SimParams q = p;
    q.pipeline = pipe;
    expectGpuStepMatches(q, start, want, std::string("reynolds ") + core::toString(pipe));
  }
  for (int block : {32, 64, 128, 256, 512, 1024}) {
    SimParams q = p;
    q.blockSize = block;
    expectGpuStepMatches(q, start, want, "naive, block " + std::to_string(block));
  }
}

// The rows pipeline's three loops (core::rowLoop, by the cells' mean occupancy: about 2, 7 and 14
// boids a cell at 10, 30 and 60 neighbours), in the cube and in the plane, each with the images'
// rows walked in its one kernel and in the second kernel of the split (whichever the device's plan
// takes); the flat loop also with a table of 3 rows, the rest of a boid's rows walked at once.
TEST_F(CudaBoundary, RowsMatchesCpuNaiveInEveryLoop) {
  struct LoopCase {
    double neighbours;
    int width;
    core::RowLoop loop;
    const char* name;
  };
  const LoopCase cases[] = {
      {10.0, 1, core::RowLoop::Short, "short"},
      {30.0, 1, core::RowLoop::Flat, "flat"},
      {60.0, 2, core::RowLoop::Batched, "batched"},
  };
  for (int dims : {3, 2})
    for (const LoopCase& c : cases) {
      const size_t n = dims == 3 ? 4000 : 3000;
      SimParams p = periodicParams(Pipeline::Rows, dims, c.width, 0.0f);
      p.halfSize = core::denseHalfSize(n, p, c.neighbours);
      const std::string what = std::string("rows ") + c.name + ", " + std::to_string(dims) + "D";
      ASSERT_EQ(core::validateParams(p), "") << what;
      // The plane takes the batched loop where the cube takes the flat one (core::rowLoop).
      const core::RowLoop loop = dims == 2 && c.loop == core::RowLoop::Flat ? core::RowLoop::Batched : c.loop;
      ASSERT_EQ(core::rowLoop(p, n), loop) << what;
      const Bodies start = packedAgainstFaces(n, p, 300 + dims);
      const Bodies want = cpuNaiveStep(p, start);
      using Split = cuda::CudaEngine::PeriodicSplit;
      for (Split split : {Split::Whole, Split::Split})
        for (int cap : {0, 3}) {
          if (cap > 0 && loop != core::RowLoop::Flat) continue;
          cuda::CudaEngine gpu(p);
          gpu.debugSetFlatTableRows(cap);
          gpu.debugSetPeriodicSplit(split);
          const Bodies got = stepOnce(gpu, start);
          std::string report;
          EXPECT_EQ(mismatches(got, want, &report), 0u)
              << what << (split == Split::Split ? ", split" : ", one kernel") << ", table cap " << cap << report;
        }
    }
}

// Verlet over several steps: lists built around the bodies' images serve several steps while
// bodies cross the faces (fast bodies in a small world), and lists with room for 4 entries send
// most bodies to the overflow kernel, which searches the build's grid around their images (lists
// of one step and of several). Before every step the GPU's state is also stepped once by the CPU
// engine's naive pipeline, so a neighbour missing anywhere shows as a per-id mismatch.
TEST_F(CudaBoundary, VerletMatchesCpuNaiveAtEveryStepAcrossTheFaces) {
  for (int dims : {3, 2})
    for (int listSteps : {1, 3})
      for (uint32_t capacity : {0u, 4u}) {
        SimParams p = periodicParams(Pipeline::Verlet, dims, 1, dims == 3 ? 16.0f : 40.0f);
        p.listSteps = listSteps;
        p.boids.dt = 0.5f;  // fast bodies: many cross a face
        const std::string what = std::to_string(dims) + "D, list steps " + std::to_string(listSteps) +
                                 ", capacity " + std::to_string(capacity);
        ASSERT_EQ(core::validateParams(p), "") << what;
        ASSERT_EQ(core::verletPlan(p).steps, listSteps) << what;
        ASSERT_TRUE(core::verletPlan(p).periodic) << what;
        cuda::CudaEngine verlet(p);
        verlet.reset(packedAgainstFaces(dims == 3 ? 2500 : 2000, p, 500 + dims + listSteps));
        if (capacity > 0) verlet.debugSetListCapacity(capacity);
        size_t wraps = 0;
        for (int step = 1; step <= 9; ++step) {
          const Bodies before = verlet.readBodies();
          const Bodies want = cpuNaiveStep(p, before);
          verlet.step(1);
          const Bodies after = verlet.readBodies();
          wraps += core::countWrapped(before, after, p.halfSize);
          std::string report;
          ASSERT_EQ(mismatches(after, want, &report), 0u) << what << ", step " << step << report;
        }
        EXPECT_GT(wraps, 50u) << what;
      }
}

// The rows pipeline samples no observables in its step under the periodic boundary (its force
// searches around the images; the observer defines the observables across the faces): observing
// takes the observer's passes, and the steps after it are the steps of an engine that never
// observes, to the bit.
TEST_F(CudaBoundary, RowsObservesWithoutChangingItsSteps) {
  const SimParams p = periodicParams(Pipeline::Rows, 3, 1, 20.0f);
  const Bodies start = packedAgainstFaces(2500, p, 9);
  cuda::CudaEngine observed(p), plain(p);
  observed.reset(start);
  plain.reset(start);
  for (int step = 0; step < 3; ++step) {
    const core::Observables o = observed.observe(core::ObserveRequest{});
    EXPECT_TRUE(o.has(core::Obs::MeanSpeed)) << "step " << step;
    observed.step(1);
    plain.step(1);
  }
  EXPECT_TRUE(bitwiseEqual(observed.readBodies(), plain.readBodies()));
  const Bodies now = plain.readBodies();
  std::string report;
  EXPECT_EQ(mismatches(stepOnce(plain, now), cpuNaiveStep(p, now), &report), 0u) << report;
}

// The benchmark's textbook baseline searches the world's cells only: it refuses the periodic
// boundary rather than time another physics.
TEST_F(CudaBoundary, UnderWallsEveryPipelineMatchesCpuNaiveAndNoBodyLeaves) {
  for (const World& w : kWorlds) {
    SimParams p = periodicParams(Pipeline::Naive, w.dims, 1, w.halfSize);
    p.boundary = Boundary::Reflect;
    p.boids.dt = 1.0f;  // fast bodies: many meet a wall each step
    const Bodies start = packedAgainstFaces(w.n, p, 90 + w.n);
    const Bodies want = cpuNaiveStep(p, start);
    const Bodies wrapped = cpuNaiveWrapStep(p, start);
    for (Pipeline pipe : boidsPipelines()) {
      SimParams q = p;
      q.pipeline = pipe;
      const std::string what = std::string(core::toString(pipe)) + ", " + w.name;
      Bodies got;
      expectGpuStepMatches(q, start, want, what, &got);
      EXPECT_GT(mismatches(got, wrapped, nullptr), 0u) << what << ": the same step as under the wrap boundary";
      auto gpu = cuda::createCudaEngine(q);
      gpu->reset(start);
      for (int s = 0; s < 30; ++s) {
        gpu->step(1);
        const Bodies b = gpu->readBodies();
        const float h = w.halfSize;
        for (size_t i = 0; i < b.size(); ++i) {
          const core::Vec4& x = b.pos[i];
          ASSERT_TRUE(x.x >= -h && x.x < h && x.y >= -h && x.y < h && x.z >= -h && x.z < h)
              << what << " step " << s << " body " << i << " at " << x.x << " " << x.y << " " << x.z;
        }
      }
    }
  }
}

TEST_F(CudaBoundary, TextbookBaselineRefusesThePeriodicBoundary) {
  SimParams p = periodicParams(Pipeline::Coherent, 3, 1, 20.0f);
  try {
    cuda::createTextbookCoherentEngine(p);
    FAIL() << "the textbook baseline took --boundary periodic";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--boundary periodic"), std::string::npos) << e.what();
  }
  p.boundary = Boundary::Wrap;
  EXPECT_NE(cuda::createTextbookCoherentEngine(p), nullptr);
}

}  // namespace

namespace {

// An open world (--boundary open) on the CUDA engine after `steps` steps from `start`.
Bodies openRun(SimParams p, Pipeline pipe, const Bodies& start, int steps, bool cuda) {
  p.pipeline = pipe;
  auto e = cuda ? cuda::createCudaEngine(p) : core::createCpuEngine(p);
  e->reset(start);
  e->step(steps);
  return e->readBodies();
}

}  // namespace

// An open world has no faces: a Vicsek flock flying +x out of a box of half-size 5 for 1000 steps
// (30 units, its box grown around it) gives the CPU engine's naive state on every pipeline, every
// body where its straight flight takes it.
TEST_F(CudaBoundary, AnOpenWorldHasNoFacesOnEveryPipeline) {
  for (int dims : {2, 3}) {
    SimParams p = core::defaultParams();
    core::selectRule(p, *core::findRule("vicsek"));
    p.boundary = Boundary::Open;
    p.dims = dims;
    p.halfSize = 5.0f;
    p.vicsek.noise = 0.0f;
    Bodies start = test::boidBodies(dims == 2 ? 300 : 600, p, 4);
    for (size_t i = 0; i < start.size(); ++i) {
      start.vel[i] = core::Vec4{0.03f, 0, 0, 0};
      if (dims == 2) start.pos[i].z = 0;
    }
    const Bodies want = openRun(p, Pipeline::Naive, start, 1000, false);
    for (size_t i = 0; i < start.size(); ++i) ASSERT_NEAR(want.pos[i].x, start.pos[i].x + 30.0f, 5e-3) << i;
    for (Pipeline pipe : test::boidsPipelines()) {
      std::string report;
      EXPECT_EQ(test::countStateMismatches(openRun(p, pipe, start, 1000, true), want, 1e-6, 1e-5, 1e-6, &report), 0u)
          << core::toString(pipe) << " " << dims << "D" << report;
    }
  }
}

// Two clusters a million units apart under Couzin's zones: every pipeline agrees with the CPU
// engine's naive step (one: at 5e5 a float step is 0.03, so the engines' last bits of trigonometry
// can move a body by one step of position, and the offsets after it), and the engine's device
// memory after three steps follows N (a grid at the rule's reach over the box would hold 10^14
// cells).
TEST_F(CudaBoundary, TwoClustersAMillionApartRunInMemoryThatFollowsN) {
  for (int dims : {2, 3}) {
    SimParams p = core::defaultParams();
    core::selectRule(p, *core::findRule("couzin"));
    p.boundary = Boundary::Open;
    p.dims = dims;
    p.halfSize = 10.0f;
    p.couzin.noise = 0.2f;
    const Bodies start = test::twoFarClusters(2000, 1e6, p.couzin.speed, dims, 9);
    const Bodies want = openRun(p, Pipeline::Naive, start, 1, false);
    for (Pipeline pipe : test::boidsPipelines()) {
      const std::string what = std::string(core::toString(pipe)) + " " + std::to_string(dims) + "D";
      size_t freeBefore = 0, freeAfter = 0, total = 0;
      ASSERT_EQ(cudaMemGetInfo(&freeBefore, &total), cudaSuccess);
      SimParams q = p;
      q.pipeline = pipe;
      auto e = cuda::createCudaEngine(q);
      e->reset(start);
      e->step(1);
      std::string report;
      EXPECT_EQ(test::countStateMismatches(e->readBodies(), want, 1e-4, 1e-4, 1e-4, &report), 0u) << what << report;
      e->step(2);
      ASSERT_EQ(cudaMemGetInfo(&freeAfter, &total), cudaSuccess);
      EXPECT_LT(double(freeBefore) - double(freeAfter), 256.0 * (1 << 20)) << what;
    }
  }
}
