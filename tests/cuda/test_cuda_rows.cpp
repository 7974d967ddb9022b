// The rows pipeline and the rows grids' sort (row_grid_sort.h): rows against naive across steps
// and wraps, the counting and radix sorts giving the same run bit for bit, the crowded cell that
// turns the counting sort off, the flat loop past its table, and the finer cells against the CPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include "core/metrics.h"
#include "core/params.h"
#include "core/row_search.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda/rows_kernels.h"
#include "cuda_test_helpers.h"
#include "engine_cases.h"

using namespace murmur;
using core::Bodies;
using core::ForceMode;
using core::Integrator;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

using namespace test;

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
    const size_t wraps = expectMatchesNaiveAtCheckpoints(
        p, bodiesFor(c, p), 40, 20, "width " + std::to_string(width) + " neighbours " + std::to_string(neighbours));
    EXPECT_GT(wraps, 100u) << "width " << width;
    }
  }
}

// The rows grids' two sorts (cuda_engine.h, GridSort) give the same permutation, so forcing one
// or the other must not change a single bit of a run: rows and verlet, sparse and crowded cells,
// 30 steps with wraps and list rebuilds.
TEST_F(CudaEngineTest, CountingAndRadixSortsGiveTheSameRun) {
  // The two pipelines that sort by a rows grid (row_grid_sort.h); the table has no column for it.
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
// gets without asking). The radix sort: the counting sort's order inside the clump's cell (over
// kStableCellMax bodies) is the atomics' order, which changes the summation order from run to run,
// and in the clump the sums cancel enough for that to exceed the tolerance against naive now and
// then; this test is about the loop, not the sort.
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
      rows.debugSetGridSort(cuda::CudaEngine::GridSort::Radix);
      rows.reset(start);
      rows.step(1);
      std::string report;
      EXPECT_EQ(test::countStateMismatches(rows.readBodies(), ref, kRel, kAbsFloor, kAbsFloor, &report), 0u)
          << "block " << block << " table cap " << cap << report;
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
      expectOneStepMatches(p, bodiesFor(c, p), "rows fine cells " + nameOf(c));
    }
}

// findCellFirst on keys that occupy a small middle part of a large grid, as a rank's local set
// does (its slab's planes of the whole grid): every entry is the first slot whose key is >= c,
// the long empty runs before the first key, after the last key and inside included.
TEST_F(CudaTest, FindCellFirstFillsLongEmptyRunsAtEveryEnd) {
  const uint32_t cells = 3000000;
  std::vector<uint32_t> keys;
  for (uint32_t c = 1200000; c < 1200040; c += 3) keys.insert(keys.end(), 1 + c % 2, c);  // repeats, gaps
  keys.push_back(1900000);  // a long run of empty cells inside
  const uint32_t n = static_cast<uint32_t>(keys.size());
  cuda::DeviceBuffer<uint32_t> dKeys, dFirst;
  dKeys.allocate(n);
  dFirst.allocate(size_t(cells) + 1);
  ASSERT_EQ(cudaMemcpy(dKeys.get(), keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(dFirst.get(), 0xff, (size_t(cells) + 1) * sizeof(uint32_t)), cudaSuccess);
  cuda::launchFindCellFirst(dKeys.get(), n, cells, dFirst.get(), cuda::LaunchConfig{128, nullptr});
  std::vector<uint32_t> first(size_t(cells) + 1);
  ASSERT_EQ(cudaMemcpy(first.data(), dFirst.get(), first.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost),
            cudaSuccess);
  size_t wrong = 0, firstWrong = first.size();
  for (uint32_t c = 0; c <= cells; ++c) {
    const auto want = static_cast<uint32_t>(std::lower_bound(keys.begin(), keys.end(), c) - keys.begin());
    if (first[c] != want && wrong++ == 0) firstWrong = c;
  }
  EXPECT_EQ(wrong, 0u) << "first wrong cell " << firstWrong;
}

}  // namespace
