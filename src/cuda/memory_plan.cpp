#include "cuda/memory_plan.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "core/errors.h"
#include "core/format.h"
#include "core/grid.h"
#include "core/pipeline_table.h"
#include "core/cluster_search.h"
#include "core/row_search.h"
#include "cuda/rows_kernels.h"
#include "core/rule_table.h"
#include "core/verlet.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/debug_api.h"
#include "cuda/grid_build.h"
#include "cuda/tree_build.h"
#include "cuda/verlet_kernels.h"

namespace murmur::cuda {

using core::ForceMode;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

bool usesRowGrid(const SimParams& p, ForceMode mode) {
  return core::runsLocalRule(mode) && core::pipelineInfo(p.pipeline).rowGrid;
}

bool usesLists(const SimParams& p) { return core::runsLocalRule(p) && core::pipelineInfo(p.pipeline).lists; }

// A uniform grid in either force: the pipelines with a boids cell grid (gravity on them runs a grid
// of its own size).
bool usesGrid(Pipeline p) { return core::pipelineInfo(p).cellWidth || core::pipelineInfo(p).rowGrid; }

uint32_t expectedListEntries(const SimParams& p, size_t n) {
  const double mean = double(n) / core::worldMeasure(p) * core::ballMeasure(p, core::verletPlan(p).radius);
  return static_cast<uint32_t>(std::min(2.0 * mean + 32.0, double(n)));
}

uint32_t classicCells(const SimParams& p, ForceMode mode, size_t n) {
  if (core::runsLocalRule(mode)) return core::boidGrid(p, n).numCells;
  const uint32_t d = static_cast<uint32_t>(p.gravity.gridDim);
  return d * d * d;
}

uint32_t gridCells(const SimParams& p, ForceMode mode, size_t n) {
  return usesRowGrid(p, mode) ? rowGridCells(p, n) : classicCells(p, mode, n);
}

uint32_t rowGridCells(const SimParams& p, size_t n) {
  if (core::pipelineInfo(p.pipeline).lists) {
    // The first build of a reset lists for one step, later ones for k: the larger grid of the two.
    const uint32_t fresh = core::rowGridForRadius(p, n, core::verletPlanFor(p, 1).radius).numCells;
    return std::max(fresh, core::verletGrid(p, n).numCells);
  }
  return core::pipelineRowGrid(p, n).numCells;
}

size_t rowGridBytes(uint32_t cells) { return 3 * (size_t(cells) + 1) * sizeof(uint32_t); }

size_t gridBytes(uint32_t cells, const SimParams& p, ForceMode mode) {
  if (usesRowGrid(p, mode)) return rowGridBytes(cells);  // offsets, two counts
  return size_t(cells) * (2 * sizeof(uint32_t) + (mode == ForceMode::Gravity ? sizeof(Vec4) : 0));
}

size_t sortScratchBytes(size_t n) {
  try {
    return sortTempBytes(static_cast<uint32_t>(n), kSortBitsAllocated);
  } catch (const CudaError&) {
    cudaGetLastError();
    return n * sizeof(uint32_t) + (size_t(1) << 20);
  }
}

size_t bytesNeeded(size_t numBodies, const SimParams& p) {
  if (numBodies == 0) return 0;
  size_t bytes = numBodies * kBytesPerBody + sortScratchBytes(numBodies);
  if (usesGrid(p.pipeline)) bytes += gridBytes(gridCells(p, p.force, numBodies), p, p.force);
  if (p.pipeline == Pipeline::Tree) bytes += TreeBuffers::bytesFor(numBodies);
  if (usesLists(p))
    bytes += (verletListWords(numBodies, expectedListEntries(p, numBodies)) + 2 * numBodies) * sizeof(uint32_t);
  if (p.pipeline == Pipeline::Rows) bytes += rowsPipelineBytes(p, numBodies);
  return bytes;
}

void checkDeviceFits(size_t numBodies, const SimParams& p) {
  const size_t need = bytesNeeded(numBodies, p);
  const size_t freeBytes = deviceFreeBytes();
  if (need > freeBytes) {
    throw core::UsageError("--n " + std::to_string(numBodies) + ": needs " + core::formatBytes(need) +
                           " of GPU memory, " + deviceInfo().name + " has " + core::formatBytes(freeBytes) + " free");
  }
}

}  // namespace murmur::cuda
