// The memory plan (memory_plan.h): what bytesNeeded counts, and the refusal of a reset that does
// not fit the device's free memory, after which the same engine still works.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include "core/errors.h"
#include "core/grid.h"
#include "core/params.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "cuda/cuda_engine.h"
#include "cuda/debug_api.h"
#include "cuda/memory_plan.h"
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
  EXPECT_GE(grid, naive + size_t(core::boidGrid(p, 1000000).numCells) * 8);
  EXPECT_EQ(cuda::bytesNeeded(0, p), 0u);
}

// The rows pipeline's own buffers are in the plan: the plane's packed records (16 bytes a body in
// 2D, none in 3D), and, where the device's plan splits the periodic step, its lists.
TEST_F(CudaEngineTest, BytesNeededCoversTheRowsPipelinesBuffers) {
  const size_t n = 1000000;
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Rows;
  EXPECT_EQ(cuda::rowsPipelineBytes(p, n), 0u);  // 3D, wrap
  EXPECT_GE(cuda::bytesNeeded(n, p), n * cuda::kBytesPerBody);
  p.dims = 2;
  EXPECT_GE(cuda::rowsPipelineBytes(p, n), n * sizeof(Vec4));
  EXPECT_GE(cuda::bytesNeeded(n, p), n * cuda::kBytesPerBody + cuda::rowsPipelineBytes(p, n));
  // Vicsek in 3D at density 4 a cell takes the flat loop, whose image walk costs occupancy: split.
  SimParams v = core::defaultParams();
  core::selectRule(v, *core::findRule("vicsek"));
  v.pipeline = Pipeline::Rows;
  v.halfSize = 0.5f * std::cbrt(float(n) / 4.0f);
  v.boundary = core::Boundary::Periodic;
  ASSERT_EQ(core::rowLoop(v, n), core::RowLoop::Flat);
  const int rows = cuda::rowsFlatTableRows(core::rowGrid(v, n), core::searchRadius(v));
  if (cuda::periodicRowsSplit(v, core::RowLoop::Flat, rows, v.blockSize))
    EXPECT_GE(cuda::rowsPipelineBytes(v, n), n * (sizeof(uint32_t) + cuda::rowsImagedSumBytes(v)));
  else
    std::cout << "[ note     ] this device's plan walks Vicsek's images in one kernel\n";
  v.boundary = core::Boundary::Wrap;
  EXPECT_EQ(cuda::rowsPipelineBytes(v, n), 0u);
}

}  // namespace
