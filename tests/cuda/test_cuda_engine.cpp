// The CUDA engine against the CPU reference: one step from the same state, per id, for every
// force x pipeline x grid width at edge sizes (1, 31, 32, 33, 1000) and a large one (2^17 + 3),
// every block size, parameter switches mid-run, long runs, and the engine's edges (N = 0, too
// many bodies, profiling, draw buffers).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <iostream>
#include <stdexcept>

#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/metrics.h"
#include "core/row_search.h"
#include "core/verlet.h"
#include "cuda/cuda_engine.h"
#include "cuda/debug_api.h"
#include "cuda/rows_kernels.h"
#include "cuda_test_helpers.h"

using namespace murmur;
using core::Bodies;
using core::ForceMode;
using core::Integrator;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

using test::kAccFloor;
using test::kLargeN;
// Per-id tolerance (docs/design.md#exactness-rules): relative 1e-5 with an absolute floor for components near 0.
constexpr double kRel = 1e-5;
constexpr double kAbsFloor = 1e-5;
// Accelerations: relative error of the vector, floored at kAccFloor of the rms acceleration.
constexpr double kAccRel = 1e-4;

struct Case {
  ForceMode force;
  Pipeline pipeline;
  int width;  // boids: cell width factor; gravity: 1 -> gridDim 16 around the mass, 2 -> gridDim 8 bounding cube
  size_t n;
  Integrator integrator;
};

SimParams paramsFor(const Case& c) {
  SimParams p = core::defaultParams();
  p.force = c.force;
  p.pipeline = c.pipeline;
  p.cellWidthFactor = c.width;
  if (c.force == ForceMode::Boids) {
    p.halfSize = test::denseHalfSize(c.n, p);
  } else {
    p.gravity.integrator = c.integrator;
    p.gravity.gridDim = c.width == 1 ? 16 : 8;
    // Both ways of sizing the gravity grid: around the mass (default) and the bounding cube.
    p.gravity.gridSpread = c.width == 1 ? 2.5f : 0.0f;
  }
  return p;
}

Bodies bodiesFor(const Case& c, const SimParams& p) {
  if (c.force == ForceMode::Boids) return test::boidBodies(c.n, p, 1000 + c.n);
  return c.width == 1 ? test::ballBodies(c.n, 2000 + c.n) : test::plummerBodies(c.n, 3000 + c.n);
}

// Bodies allowed outside the tolerance after one step. Only the grid gravity leapfrog has any:
// its second force evaluation runs on drifted positions that differ from the CPU's in the last
// bit, so the bounding-box grid can differ by an ulp and a body lying on a cell face may change
// cell (near field <-> monopole), which moves its force by the approximation error. That is
// expected to touch about one body in 10^5; everything else must match.
size_t allowedOutliers(const SimParams& p, size_t n) {
  if (p.force == ForceMode::Gravity && p.pipeline != Pipeline::Naive &&
      p.gravity.integrator == Integrator::Leapfrog)
    return n / 1000 + 1;
  return 0;
}

void expectOneStepMatches(const SimParams& p, const Bodies& start, const std::string& what) {
  auto gpu = cuda::createCudaEngine(p);
  auto cpu = core::createCpuEngine(p);
  gpu->reset(start);
  cpu->reset(start);
  gpu->step(1);
  cpu->step(1);
  const Bodies g = gpu->readBodies();
  const Bodies r = cpu->readBodies();
  ASSERT_EQ(g.size(), start.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g.id[i], i) << what;
  std::string report;
  const size_t bad = test::countStateMismatches(g, r, kRel, kAbsFloor, kAbsFloor, &report);
  EXPECT_LE(bad, allowedOutliers(p, start.size())) << what << ": " << bad << " of " << start.size()
                                                   << " bodies differ from the CPU engine" << report;
}

void expectAccelerationsMatch(const SimParams& p, const Bodies& start, const std::string& what) {
  auto gpu = cuda::createCudaEngine(p);
  auto cpu = core::createCpuEngine(p);
  gpu->reset(start);
  cpu->reset(start);
  const std::vector<Vec4> a = gpu->computeAccelerations();
  const std::vector<Vec4> ref = cpu->computeAccelerations();
  ASSERT_EQ(a.size(), ref.size()) << what;
  const test::AccError e = test::accelerationError(a, ref, kAccFloor);
  EXPECT_LE(e.max, kAccRel) << what << ": worst body " << e.worst << " (" << a[e.worst].x << ", " << a[e.worst].y
                            << ", " << a[e.worst].z << ") vs (" << ref[e.worst].x << ", " << ref[e.worst].y << ", "
                            << ref[e.worst].z << ")";
  for (const Vec4& v : a) ASSERT_EQ(v.w, 0.0f) << what;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = std::string(core::toString(c.force)) + "_" + core::toString(c.pipeline) + "_w" +
                  std::to_string(c.width) + "_n" + std::to_string(c.n);
  if (c.force == ForceMode::Gravity) s += std::string("_") + core::toString(c.integrator);
  return s;
}

std::vector<Case> smallCases() {
  std::vector<Case> cases;
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet})
      for (int width : {1, 2})
        for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(33), size_t(1000)}) {
          if (f == ForceMode::Boids) {
            cases.push_back(Case{f, pipe, width, n, Integrator::Leapfrog});
          } else {
            for (Integrator in : {Integrator::Leapfrog, Integrator::DampedEuler})
              cases.push_back(Case{f, pipe, width, n, in});
          }
        }
  return cases;
}

class GpuMatchesCpu : public test::CudaParamTest<Case> {};

TEST_P(GpuMatchesCpu, OneStep) {
  const Case c = GetParam();
  const SimParams p = paramsFor(c);
  const Bodies start = bodiesFor(c, p);
  expectOneStepMatches(p, start, caseName(::testing::TestParamInfo<Case>(c, 0)));
  if (c.force == ForceMode::Gravity) expectAccelerationsMatch(p, start, "accelerations");
}

INSTANTIATE_TEST_SUITE_P(EdgeSizes, GpuMatchesCpu, ::testing::ValuesIn(smallCases()), caseName);

class CudaEngineTest : public test::CudaTest {};

// 2^17 + 3 bodies: the grid pipelines against the CPU (whose grid pipelines are fast enough);
// naive boids against the GPU's own coherent pipeline, which finds the same neighbours.
TEST_F(CudaEngineTest, LargeBoidsGridMatchesCpu) {
  for (Pipeline pipe : {Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet})
    for (int width : {1, 2}) {
      const Case c{ForceMode::Boids, pipe, width, kLargeN, Integrator::Leapfrog};
      const SimParams p = paramsFor(c);
      expectOneStepMatches(p, bodiesFor(c, p), caseName(::testing::TestParamInfo<Case>(c, 0)));
    }
}

TEST_F(CudaEngineTest, LargeBoidsNaiveMatchesCoherent) {
  const Case c{ForceMode::Boids, Pipeline::Naive, 1, kLargeN, Integrator::Leapfrog};
  SimParams p = paramsFor(c);
  const Bodies start = bodiesFor(c, p);
  auto naive = cuda::createCudaEngine(p);
  p.pipeline = Pipeline::Coherent;
  auto coherent = cuda::createCudaEngine(p);
  naive->reset(start);
  coherent->reset(start);
  naive->step(1);
  coherent->step(1);
  std::string report;
  const size_t bad = test::countStateMismatches(naive->readBodies(), coherent->readBodies(), kRel, kAbsFloor,
                                                kAbsFloor, &report);
  EXPECT_EQ(bad, 0u) << report;
}

// Rows on the GPU against naive on the GPU at 2^17 + 3 bodies, at checkpoints of a 40-step run
// in a world small enough that thousands of boids wrap: every checkpoint state is stepped once
// by both, so a neighbour the rows search misses anywhere shows as a per-id mismatch.
TEST_F(CudaEngineTest, RowsMatchesNaiveAcrossStepsAndWraps) {
  // 10 and 30 neighbours per boid: classic-width cells; 60: cells of half the width
  // (rowCellsPerRadius).
  for (double neighbours : {10.0, 30.0, 60.0}) {
    for (int width : {1, 2}) {
    const Case c{ForceMode::Boids, Pipeline::Rows, width, kLargeN, Integrator::Leapfrog};
    SimParams p = paramsFor(c);
    p.halfSize = test::denseHalfSize(c.n, p, neighbours);
    // Every force loop runs (core::rowLoop): flat at 30 neighbours (7 per cell), batched at 60
    // and width 2 (14 per cell), short elsewhere (about 2).
    const core::RowLoop want = neighbours == 30.0                     ? core::RowLoop::Flat
                               : neighbours == 60.0 && width == 2 ? core::RowLoop::Batched
                                                                  : core::RowLoop::Short;
    EXPECT_EQ(core::rowLoop(p, c.n), want) << "neighbours " << neighbours << " width " << width;
    auto rows = cuda::createCudaEngine(p);
    rows->reset(bodiesFor(c, p));
    SimParams q = p;
    q.pipeline = Pipeline::Naive;
    auto naive = cuda::createCudaEngine(q);
    auto rowsCheck = cuda::createCudaEngine(p);
    size_t wraps = 0;
    Bodies prev = rows->readBodies();
    for (int step = 1; step <= 40; ++step) {
      rows->step(1);
      const Bodies now = rows->readBodies();
      wraps += core::countWrapped(prev, now, p.halfSize);
      prev = now;
      if (step % 20 != 0) continue;
      naive->reset(now);
      rowsCheck->reset(now);
      naive->step(1);
      rowsCheck->step(1);
      std::string report;
      const size_t bad = test::countStateMismatches(rowsCheck->readBodies(), naive->readBodies(), kRel, kAbsFloor,
                                                    kAbsFloor, &report);
      EXPECT_EQ(bad, 0u) << "width " << width << " neighbours " << neighbours << " step " << step << report;
    }
    EXPECT_GT(wraps, 100u) << "width " << width;
    }
  }
}

// The rows grids' two sorts (cuda_engine.h, GridSort) give the same permutation, so forcing one
// or the other must not change a single bit of a run: rows and verlet, sparse and crowded cells,
// 30 steps with wraps and list rebuilds.
bool bitwiseEqual(const Bodies& a, const Bodies& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Vec4 &p = a.pos[i], &q = b.pos[i], &u = a.vel[i], &v = b.vel[i];
    if (std::memcmp(&p, &q, sizeof p) != 0 || std::memcmp(&u, &v, sizeof u) != 0 || a.id[i] != b.id[i]) return false;
  }
  return true;
}

TEST_F(CudaEngineTest, CountingAndRadixSortsGiveTheSameRun) {
  for (Pipeline pipe : {Pipeline::Rows, Pipeline::Verlet})
    for (double neighbours : {10.0, 60.0}) {
      const Case c{ForceMode::Boids, pipe, 1, kLargeN, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.halfSize = test::denseHalfSize(c.n, p, neighbours);
      const std::string what = std::string(core::toString(pipe)) + " neighbours " + std::to_string(neighbours);
      auto counting = std::make_unique<cuda::CudaEngine>(p);
      auto radix = std::make_unique<cuda::CudaEngine>(p);
      auto automatic = std::make_unique<cuda::CudaEngine>(p);
      counting->debugSetGridSort(cuda::CudaEngine::GridSort::Counting);
      radix->debugSetGridSort(cuda::CudaEngine::GridSort::Radix);
      const Bodies start = bodiesFor(c, p);
      for (auto* e : {counting.get(), radix.get(), automatic.get()}) e->reset(start);
      for (int step = 1; step <= 30; ++step) {
        for (auto* e : {counting.get(), radix.get(), automatic.get()}) e->step(1);
        if (step == 1) {
          EXPECT_TRUE(counting->debugLastSortCounted()) << what;
          EXPECT_FALSE(radix->debugLastSortCounted()) << what;
          EXPECT_TRUE(automatic->debugLastSortCounted()) << what;
        }
        if (step % 10 != 0) continue;
        const Bodies a = counting->readBodies(), b = radix->readBodies(), d = automatic->readBodies();
        EXPECT_TRUE(bitwiseEqual(a, b)) << what << " step " << step;
        EXPECT_TRUE(bitwiseEqual(d, b)) << what << " step " << step;
      }
    }
}

// A cell of more than kStableCellMax bodies: the counting sort keeps the atomics' order there (the
// neighbour sets stay exact), flags it, and the engine turns to the radix sort until a reset.
TEST_F(CudaEngineTest, CrowdedCellTurnsTheCountingSortOff) {
  const Case c{ForceMode::Boids, Pipeline::Rows, 1, 20000, Integrator::Leapfrog};
  SimParams p = paramsFor(c);
  Bodies start = bodiesFor(c, p);
  const uint32_t crowd = 2 * cuda::kStableCellMax;
  for (uint32_t i = 0; i < crowd; ++i) {  // a clump of 512 boids in a cube of side 0.05
    start.pos[i].x = 1.0f + 0.05f * float(i % 8) / 8.0f;
    start.pos[i].y = 1.0f + 0.05f * float((i / 8) % 8) / 8.0f;
    start.pos[i].z = 1.0f + 0.05f * float(i / 64) / 8.0f;
  }
  cuda::CudaEngine engine(p);
  engine.reset(start);
  engine.step(1);
  EXPECT_TRUE(engine.debugLastSortCounted());
  engine.synchronize();
  engine.step(1);
  EXPECT_FALSE(engine.debugLastSortCounted());
  // Exact either way: one more step of this state against naive.
  const Bodies now = engine.readBodies();
  SimParams q = p;
  q.pipeline = Pipeline::Naive;
  auto naive = cuda::createCudaEngine(q);
  cuda::CudaEngine counted(p);
  counted.debugSetGridSort(cuda::CudaEngine::GridSort::Counting);
  naive->reset(now);
  counted.reset(now);
  naive->step(1);
  counted.step(1);
  EXPECT_TRUE(counted.debugLastSortCounted());
  std::string report;
  EXPECT_EQ(test::countStateMismatches(counted.readBodies(), naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report),
            0u)
      << report;
  // A reset lets the counting sort run again.
  engine.reset(now);
  engine.step(1);
  EXPECT_TRUE(engine.debugLastSortCounted());
}

// The rows pipeline's flat loop (core::RowLoop::Flat) walks at once the rows its table cannot
// hold: rows past a table capped at 3 entries, and a row of more than 1023 candidates (a clump of
// 1100 boids in one cell; an entry holds 10 bits of length). One step of that state against
// naive, at block sizes 32, 128 and 1024 (a table of 64 KiB per block: past the 48 KiB a kernel
// gets without asking).
TEST_F(CudaEngineTest, FlatRowLoopWalksRowsPastItsTableExactly) {
  const Case c{ForceMode::Boids, Pipeline::Rows, 1, 20000, Integrator::Leapfrog};
  SimParams p = paramsFor(c);
  p.halfSize = test::denseHalfSize(c.n, p, 30.0);
  ASSERT_EQ(core::rowLoop(p, c.n), core::RowLoop::Flat);
  Bodies start = bodiesFor(c, p);
  for (uint32_t i = 0; i < 1100; ++i) {
    start.pos[i].x = 1.0f + 0.05f * float(i % 11) / 11.0f;
    start.pos[i].y = 1.0f + 0.05f * float((i / 11) % 10) / 10.0f;
    start.pos[i].z = 1.0f + 0.05f * float(i / 110) / 10.0f;
  }
  SimParams q = p;
  q.pipeline = Pipeline::Naive;
  auto naive = cuda::createCudaEngine(q);
  naive->reset(start);
  naive->step(1);
  const Bodies ref = naive->readBodies();
  for (int block : {32, 128, 1024})
    for (int cap : {0, 3}) {
      SimParams b = p;
      b.blockSize = block;
      cuda::CudaEngine rows(b);
      rows.debugSetFlatTableRows(cap);
      rows.reset(start);
      rows.step(1);
      std::string report;
      EXPECT_EQ(test::countStateMismatches(rows.readBodies(), ref, kRel, kAbsFloor, kAbsFloor, &report), 0u)
          << "block " << block << " table cap " << cap << report;
    }
}

// Verlet on the GPU against naive on the GPU at 2^17 + 3 bodies in a world where thousands of
// boids wrap: the verlet engine runs on, reusing and rebuilding its lists, and before every step
// its state is also stepped once by naive; a neighbour missing from a reused list shows as a
// per-id mismatch. List steps 0 (the cost model), 1 (no reuse) and 6; both cell widths.
TEST_F(CudaEngineTest, VerletMatchesNaiveAtEveryStepAcrossRebuildsAndWraps) {
  for (int k : {0, 1, 6})
    for (int width : {1, 2}) {
      const Case c{ForceMode::Boids, Pipeline::Verlet, width, kLargeN, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.halfSize = test::denseHalfSize(c.n, p, 30.0);
      p.listSteps = k;
      auto verlet = cuda::createCudaEngine(p);
      verlet->reset(bodiesFor(c, p));
      SimParams q = p;
      q.pipeline = Pipeline::Naive;
      auto naive = cuda::createCudaEngine(q);
      size_t wraps = 0;
      for (int step = 1; step <= 14; ++step) {
        const Bodies before = verlet->readBodies();
        naive->reset(before);
        naive->step(1);
        verlet->step(1);
        const Bodies after = verlet->readBodies();
        wraps += core::countWrapped(before, after, p.halfSize);
        std::string report;
        const size_t bad =
            test::countStateMismatches(after, naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
        ASSERT_EQ(bad, 0u) << "list steps " << k << " width " << width << " step " << step << report;
      }
      EXPECT_GT(wraps, 100u) << "list steps " << k << " width " << width;
      EXPECT_EQ(verlet->stepsPerCycle(), core::verletPlan(p).steps);
      if (k == 6) {
        EXPECT_EQ(verlet->stepsPerCycle(), 6);
      }
    }
}

// Lists with room for 4 entries: most bodies overflow and are summed by a search of the build's
// grid around them and their images; the result still matches naive at every step across the
// reuse and the wrap, and bodies whose list fits take the list path.
TEST_F(CudaEngineTest, VerletOverflowMatchesNaive) {
  for (size_t n : {size_t(33), size_t(5000)}) {
    const Case c{ForceMode::Boids, Pipeline::Verlet, 1, n, Integrator::Leapfrog};
    SimParams p = paramsFor(c);
    p.halfSize = test::denseHalfSize(n, p, 6.0);
    // 5000 bodies: lists serve 3 steps, with images; 33: a world too narrow for images, where the
    // plan rebuilds every step (and --list-steps 3 would be refused).
    p.listSteps = n == 5000 ? 3 : 0;
    EXPECT_EQ(core::verletPlan(p).periodic, n == 5000);
    cuda::CudaEngine verlet(p);
    verlet.reset(bodiesFor(c, p));
    verlet.debugSetListCapacity(4);
    SimParams q = p;
    q.pipeline = Pipeline::Naive;
    auto naive = cuda::createCudaEngine(q);
    size_t wraps = 0;
    for (int step = 1; step <= 15; ++step) {
      const Bodies before = verlet.readBodies();
      naive->reset(before);
      naive->step(1);
      verlet.step(1);
      const Bodies after = verlet.readBodies();
      wraps += core::countWrapped(before, after, p.halfSize);
      std::string report;
      const size_t bad =
          test::countStateMismatches(after, naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
      ASSERT_EQ(bad, 0u) << "n " << n << " step " << step << report;
    }
    if (n == 5000) {
      EXPECT_GT(wraps, 50u);
    }
  }
}

// The crowded world that switches the rows pipeline to cells of half the width, GPU against CPU.
TEST_F(CudaEngineTest, RowsFineCellsMatchCpu) {
  for (size_t n : {size_t(1000), kLargeN})
    for (int width : {1, 2}) {
      const Case c{ForceMode::Boids, Pipeline::Rows, width, n, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      p.halfSize = test::denseHalfSize(n, p, 60.0);
      ASSERT_EQ(core::rowCellsPerRadius(p, n), core::kRowCellsPerRadius);
      expectOneStepMatches(p, bodiesFor(c, p), "rows fine cells " + caseName(::testing::TestParamInfo<Case>(c, 0)));
    }
}

TEST_F(CudaEngineTest, LargeGravityGridMatchesCpu) {
  for (Pipeline pipe : {Pipeline::Scattered, Pipeline::Coherent}) {
    const Case c{ForceMode::Gravity, pipe, 1, kLargeN, Integrator::Leapfrog};
    const SimParams p = paramsFor(c);
    const Bodies start = bodiesFor(c, p);
    const std::string name = caseName(::testing::TestParamInfo<Case>(c, 0));
    expectAccelerationsMatch(p, start, name);
    expectOneStepMatches(p, start, name);
  }
}

TEST_F(CudaEngineTest, EveryBlockSizeMatchesCpu) {
  constexpr size_t n = 2003;  // several full tiles and a partial one for every block size
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
      const Case c{f, pipe, 1, n, Integrator::Leapfrog};
      SimParams p = paramsFor(c);
      const Bodies start = bodiesFor(c, p);
      auto cpu = core::createCpuEngine(p);
      cpu->reset(start);
      cpu->step(1);
      const Bodies ref = cpu->readBodies();
      auto gpu = cuda::createCudaEngine(p);
      for (int block = core::kMinBlockSize; block <= core::kMaxBlockSize; block += 32) {
        p.blockSize = block;
        gpu->setParams(p);
        gpu->reset(start);
        gpu->step(1);
        std::string report;
        const size_t bad = test::countStateMismatches(gpu->readBodies(), ref, kRel, kAbsFloor, kAbsFloor, &report);
        EXPECT_LE(bad, allowedOutliers(p, n))
            << core::toString(f) << " " << core::toString(pipe) << " block " << block << report;
      }
    }
}

TEST_F(CudaEngineTest, ReynoldsRulesMatchCpu) {
  for (Pipeline pipe : {Pipeline::Naive, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
    const Case c{ForceMode::Boids, pipe, 1, 1000, Integrator::Leapfrog};
    SimParams p = paramsFor(c);
    p.boids.rules = core::RuleSet::Reynolds;
    expectOneStepMatches(p, bodiesFor(c, p), std::string("reynolds ") + core::toString(pipe));
  }
}

// Boids packed against the faces: wrapping and the no-search-across-the-boundary rule.
TEST_F(CudaEngineTest, BoidsAtTheWorldBoundaryMatchCpu) {
  for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
    SimParams p = core::defaultParams();
    p.pipeline = pipe;
    p.halfSize = 10.0f;
    Bodies start = test::boidBodies(1500, p, 9);
    for (size_t i = 0; i < start.size(); i += 2) start.pos[i].x = (i % 4 ? 9.95f : -9.99f);
    expectOneStepMatches(p, start, std::string("boundary ") + core::toString(pipe));
  }
}

TEST_F(CudaEngineTest, NeighbourStatsMatchCpu) {
  for (size_t n : {size_t(1), size_t(1000), kLargeN})
    for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet})
      for (int width : {1, 2}) {
        if (n == kLargeN && pipe == Pipeline::Naive) continue;  // CPU all pairs is too slow here
        const Case c{ForceMode::Boids, pipe, width, n, Integrator::Leapfrog};
        const SimParams p = paramsFor(c);
        const Bodies start = bodiesFor(c, p);
        auto gpu = cuda::createCudaEngine(p);
        auto cpu = core::createCpuEngine(p);
        gpu->reset(start);
        cpu->reset(start);
        const core::NeighbourStats g = gpu->neighbourStats(), r = cpu->neighbourStats();
        // Integer counts over identical neighbour decisions: exact.
        EXPECT_EQ(g.meanCandidates, r.meanCandidates) << caseName(::testing::TestParamInfo<Case>(c, 0));
        EXPECT_EQ(g.meanNeighbours, r.meanNeighbours) << caseName(::testing::TestParamInfo<Case>(c, 0));
        if (n == 1000) {
          EXPECT_GT(g.meanNeighbours, 3.0);  // the dense test world does have neighbours
        }
      }
}

// Switching pipeline, cell width, block size and force without reset: after every switch, one
// step from the GPU's current state matches the CPU engine started from that same state.
TEST_F(CudaEngineTest, SwitchingParametersMidRunWorks) {
  struct Switch {
    ForceMode force;
    Pipeline pipeline;
    int width;
    int block;
  };
  const Switch sequence[] = {
      {ForceMode::Boids, Pipeline::Naive, 1, 256},      {ForceMode::Boids, Pipeline::Coherent, 1, 128},
      {ForceMode::Boids, Pipeline::Scattered, 2, 96},   {ForceMode::Boids, Pipeline::Coherent, 2, 1024},
      {ForceMode::Gravity, Pipeline::Coherent, 1, 256}, {ForceMode::Gravity, Pipeline::Naive, 1, 64},
      {ForceMode::Gravity, Pipeline::Scattered, 1, 512}, {ForceMode::Boids, Pipeline::Scattered, 1, 32},
      {ForceMode::Boids, Pipeline::Naive, 2, 160},      {ForceMode::Boids, Pipeline::Rows, 2, 224},
      {ForceMode::Gravity, Pipeline::Rows, 1, 128},     {ForceMode::Boids, Pipeline::Rows, 1, 64},
  };
  constexpr size_t n = 3000;
  SimParams p = core::defaultParams();
  p.halfSize = test::denseHalfSize(n, p);
  p.gravity.G = 1e-3f;  // the boids have unit mass; keep their gravity gentle
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(test::boidBodies(n, p, 77));
  for (const Switch& s : sequence) {
    p.force = s.force;
    p.pipeline = s.pipeline;
    p.cellWidthFactor = s.width;
    p.blockSize = s.block;
    gpu->setParams(p);
    ASSERT_EQ(gpu->params().pipeline, s.pipeline);
    const Bodies before = gpu->readBodies();
    auto cpu = core::createCpuEngine(p);
    cpu->reset(before);
    gpu->step(1);
    cpu->step(1);
    std::string report;
    const size_t bad =
        test::countStateMismatches(gpu->readBodies(), cpu->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
    EXPECT_LE(bad, allowedOutliers(p, n)) << core::toString(s.force) << " " << core::toString(s.pipeline) << " w"
                                          << s.width << " block " << s.block << report;
    gpu->step(3);  // and keeps running
    ASSERT_TRUE(test::allFinite(gpu->readBodies()));
  }
}

TEST_F(CudaEngineTest, LongBoidRunStaysFiniteAndInside) {
  constexpr size_t n = 10000;
  for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
    SimParams p = core::defaultParams();
    p.pipeline = pipe;
    p.halfSize = test::denseHalfSize(n, p);
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(test::boidBodies(n, p, 5));
    gpu->step(2000);
    const Bodies b = gpu->readBodies();
    ASSERT_TRUE(test::allFinite(b)) << core::toString(pipe);
    size_t outside = 0, tooFast = 0;
    for (size_t i = 0; i < n; ++i) {
      const Vec4& q = b.pos[i];
      outside += !(q.x >= -p.halfSize && q.x < p.halfSize && q.y >= -p.halfSize && q.y < p.halfSize &&
                   q.z >= -p.halfSize && q.z < p.halfSize);
      const Vec4& v = b.vel[i];
      tooFast += std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z) > p.boids.maxSpeed * 1.0001;
    }
    EXPECT_EQ(outside, 0u) << core::toString(pipe);
    EXPECT_EQ(tooFast, 0u) << core::toString(pipe);
  }
}

TEST_F(CudaEngineTest, LongGravityRunStaysFinite) {
  constexpr size_t n = 10000;
  for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet})
    for (Integrator in : {Integrator::Leapfrog, Integrator::DampedEuler}) {
      SimParams p = core::defaultParams();
      p.force = ForceMode::Gravity;
      p.pipeline = pipe;
      p.gravity.integrator = in;
      p.gravity.damping = in == Integrator::DampedEuler ? 0.999f : 1.0f;
      auto gpu = cuda::createCudaEngine(p);
      gpu->reset(test::plummerBodies(n, 11));
      gpu->step(500);
      EXPECT_TRUE(test::allFinite(gpu->readBodies())) << core::toString(pipe) << " " << core::toString(in);
    }
}

TEST_F(CudaEngineTest, ZeroBodies) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity})
    for (Pipeline pipe : {Pipeline::Naive, Pipeline::Scattered, Pipeline::Coherent, Pipeline::Rows, Pipeline::Verlet}) {
      SimParams p = core::defaultParams();
      p.force = f;
      p.pipeline = pipe;
      auto gpu = std::make_unique<cuda::CudaEngine>(p);
      gpu->setProfiling(true);
      gpu->reset(Bodies{});
      EXPECT_EQ(gpu->numBodies(), 0u);
      gpu->step(3);
      EXPECT_EQ(gpu->readBodies().size(), 0u);
      EXPECT_TRUE(gpu->computeAccelerations().empty());
      const core::NeighbourStats st = gpu->neighbourStats();
      EXPECT_EQ(st.meanCandidates, 0.0);
      EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
      gpu->writeDrawBuffers(nullptr, nullptr, nullptr);
      p.pipeline = Pipeline::Coherent;
      gpu->setParams(p);
      gpu->step(1);
      // And it comes back to life.
      gpu->reset(test::ballBodies(5, 1));
      gpu->step(1);
      EXPECT_EQ(gpu->readBodies().size(), 5u);
    }
}

TEST_F(CudaEngineTest, TooManyBodiesThrowsUsageError) {
  SimParams p = core::defaultParams();
  auto gpu = cuda::createCudaEngine(p);
  // Leave about 256 MiB free, then ask for about 4 M bodies (over 400 MiB).
  constexpr size_t kLeave = size_t(256) << 20;
  const size_t freeBytes = cuda::deviceFreeBytes();
  ASSERT_GT(freeBytes, kLeave);
  constexpr size_t n = size_t(4) << 20;
  ASSERT_GT(cuda::bytesNeeded(n, p), kLeave + (size_t(64) << 20));
  {
    cuda::DeviceReservation hog(freeBytes - kLeave);
    Bodies big;
    big.resize(n);
    for (size_t i = 0; i < n; ++i) big.id[i] = static_cast<uint32_t>(i);  // engines keep the ids given
    try {
      gpu->reset(big);
      FAIL() << "reset with too little free memory did not throw";
    } catch (const core::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--n " + std::to_string(n)), std::string::npos) << what;
      EXPECT_NE(what.find("needs"), std::string::npos) << what;
      EXPECT_NE(what.find(gpu->deviceName()), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      std::cout << "[ message  ] " << what << "\n";
    }
    EXPECT_EQ(gpu->numBodies(), 0u);
  }
  // With the memory back the same engine works.
  gpu->reset(test::boidBodies(1000, p, 3));
  gpu->step(1);
  EXPECT_EQ(gpu->readBodies().size(), 1000u);
}

TEST_F(CudaEngineTest, BytesNeededCoversBodiesAndGrid) {
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Naive;
  const size_t naive = cuda::bytesNeeded(1000000, p);
  EXPECT_GE(naive, size_t(1000000) * 104);
  p.pipeline = Pipeline::Coherent;
  const size_t grid = cuda::bytesNeeded(1000000, p);
  EXPECT_GE(grid, naive + size_t(core::boidGrid(p).numCells) * 8);
  EXPECT_EQ(cuda::bytesNeeded(0, p), 0u);
}

TEST_F(CudaEngineTest, InvalidParamsAreRejected) {
  SimParams p = core::defaultParams();
  p.blockSize = 100;
  EXPECT_THROW(cuda::createCudaEngine(p), std::invalid_argument);
  p = core::defaultParams();
  auto gpu = cuda::createCudaEngine(p);
  SimParams bad = p;
  bad.cellWidthFactor = 3;
  EXPECT_THROW(gpu->setParams(bad), std::invalid_argument);
  EXPECT_EQ(gpu->params().cellWidthFactor, 1);  // unchanged
}

TEST_F(CudaEngineTest, ProfileFillsStagesOnlyWhenOn) {
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Coherent;
  p.halfSize = test::denseHalfSize(20000, p);
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(test::boidBodies(20000, p, 8));
  gpu->step(2);
  EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
  gpu->setProfiling(true);
  gpu->step(2);
  core::StepProfile s = gpu->lastProfile();
  EXPECT_GT(s.labelMs, 0.0);
  EXPECT_GT(s.sortMs, 0.0);
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_GT(s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  EXPECT_GT(s.integrateMs, 0.0);
  // Rows: the first step counts its cells (label); later steps start from the counts the force
  // kernel made while it integrated, so label and integrate are part of the force stage.
  p.pipeline = Pipeline::Rows;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_GT(s.labelMs, 0.0);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_EQ(s.labelMs + s.integrateMs, 0.0);
  EXPECT_GT(s.sortMs, 0.0);
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_GT(s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  // Gravity naive: no grid stages.
  p.force = ForceMode::Gravity;
  p.pipeline = Pipeline::Naive;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_EQ(s.labelMs + s.sortMs + s.boundsMs + s.reorderMs, 0.0);
  EXPECT_GT(s.forceMs, 0.0);
  EXPECT_GT(s.integrateMs, 0.0);
  // Gravity grid: bounds covers the bounding box and the monopoles.
  p.pipeline = Pipeline::Scattered;
  gpu->setParams(p);
  gpu->step(1);
  s = gpu->lastProfile();
  EXPECT_GT(s.boundsMs, 0.0);
  EXPECT_EQ(s.reorderMs, 0.0);
  gpu->setProfiling(false);
  gpu->step(1);
  EXPECT_EQ(gpu->lastProfile().totalMs(), 0.0);
}

TEST_F(CudaEngineTest, DrawBuffersHoldTheCurrentState) {
  constexpr size_t n = 5000;
  SimParams p = core::defaultParams();
  p.halfSize = test::denseHalfSize(n, p);
  auto engine = cuda::createCudaEngine(p);
  auto& gpu = dynamic_cast<cuda::CudaEngine&>(*engine);
  gpu.reset(test::boidBodies(n, p, 4));
  gpu.step(2);  // coherent: the state is now in cell order
  void *dPos = nullptr, *dVel = nullptr, *dId = nullptr;
  ASSERT_EQ(cudaMalloc(&dPos, n * sizeof(Vec4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dVel, n * sizeof(Vec4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dId, n * sizeof(uint32_t)), cudaSuccess);
  gpu.writeDrawBuffers(dPos, dVel, dId);
  std::vector<Vec4> pos(n), vel(n);
  std::vector<uint32_t> id(n);
  ASSERT_EQ(cudaMemcpy(pos.data(), dPos, n * sizeof(Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(vel.data(), dVel, n * sizeof(Vec4), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(id.data(), dId, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dPos);
  cudaFree(dVel);
  cudaFree(dId);
  const Bodies b = gpu.readBodies();
  std::vector<bool> seen(n, false);
  size_t permuted = 0;
  for (size_t k = 0; k < n; ++k) {
    ASSERT_LT(id[k], n);
    ASSERT_FALSE(seen[id[k]]);
    seen[id[k]] = true;
    permuted += id[k] != k;
    EXPECT_EQ(pos[k].x, b.pos[id[k]].x);
    EXPECT_EQ(pos[k].w, b.pos[id[k]].w);
    EXPECT_EQ(vel[k].z, b.vel[id[k]].z);
  }
  EXPECT_GT(permuted, n / 2);  // the coherent order really is a permutation
  EXPECT_FALSE(gpu.deviceName().empty());
}

}  // namespace
