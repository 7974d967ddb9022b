#include "cuda/device_state.h"

#include <string>

#include "core/errors.h"
#include "core/format.h"
#include "core/rule_table.h"
#include "cuda/boids_kernels.h"
#include "cuda/debug_api.h"
#include "cuda/memory_plan.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::ForceMode;
using core::GridSpec;
using core::Stage;
using core::Vec4;

void DeviceState::create() {
  gridSpecs.allocate(kNumGridSlots);
  boundsPartials.allocate((gravityGridScratchBytes() + sizeof(Vec4) - 1) / sizeof(Vec4));
  counts.allocate(2);
  rowSort.create(stream);
}

void DeviceState::releaseBodies() {
  for (int k = 0; k < 2; ++k) {
    pos[k].release();
    vel[k].release();
    id[k].release();
    species[k].release();
    keys[k].release();
    index[k].release();
  }
  acc.release();
  sortTemp.release();
  cellStart.release();
  cellEnd.release();
  cellFirst.release();
  rowSort.releaseCounts();
  monopole.release();
  n = 0;
}

void DeviceState::ensureRowGrid(uint32_t cells, bool checkMemory) {
  if (size_t(cells) + 1 <= cellFirst.size()) return;
  const size_t need = rowGridBytes(cells);
  const size_t freeBytes = checkMemory ? deviceFreeBytes() + cellFirst.bytes() + rowSort.countsBytes() : need;
  if (need > freeBytes)
    throw core::UsageError("a grid of " + std::to_string(cells) + " cells: needs " + core::formatBytes(need) +
                           " of GPU memory, " + name + " has " + core::formatBytes(freeBytes) + " free");
  cellFirst.allocate(size_t(cells) + 1);
  // The counting sort's scan scratch: sized with the offsets, since fewer cells need less.
  if (countingSortFits(cells)) {
    const size_t scanBytes = cellScanTempBytes(cells);
    if (scanBytes > sortTemp.size()) sortTemp.allocate(scanBytes);
  }
  rowSort.allocateCounts(cells);
}

void DeviceState::ensureGrid(uint32_t cells, bool rowGrid, ForceMode mode, bool checkMemory) {
  if (rowGrid) {
    ensureRowGrid(cells, checkMemory);
    return;
  }
  const bool growCells = cells > cellStart.size();
  const bool growMono = mode == ForceMode::Gravity && cells > monopole.size();
  if (!growCells && !growMono) return;
  const size_t need = (growCells ? 2 * size_t(cells) * sizeof(uint32_t) : 0) +
                      (growMono ? size_t(cells) * sizeof(Vec4) : 0);
  const size_t reusable = (growCells ? cellStart.bytes() + cellEnd.bytes() : 0) + (growMono ? monopole.bytes() : 0);
  const size_t freeBytes = checkMemory ? deviceFreeBytes() + reusable : need;
  if (need > freeBytes)
    throw core::UsageError("a grid of " + std::to_string(cells) + " cells: needs " + core::formatBytes(need) +
                           " of GPU memory, " + name + " has " + core::formatBytes(freeBytes) + " free");
  if (growCells) {
    cellStart.allocate(cells);
    cellEnd.allocate(cells);
  }
  if (growMono) monopole.allocate(cells);
}

DeviceGrid DeviceState::buildGrid(ForceMode mode, bool reorder) {
  const uint32_t cells = classicCells(params, mode, n);
  ensureGrid(cells, false, mode);
  const LaunchConfig lc = launch();
  GridSpec* d_grid = gridSpecs.get() + (core::runsLocalRule(mode) ? kBoidGridSlot : kGravityGridSlot);
  if (mode == ForceMode::Gravity) {
    timer.stage(Stage::Bounds, [&] {
      launchGravityGridFromBounds(pos[cur].get(), n, params.gravity.gridDim, params.gravity.gridSpread,
                                  boundsPartials.get(), d_grid, lc);
    });
  }
  const int sel = labelAndSort(d_grid, cells, lc);
  const DeviceGrid g{d_grid, keys[sel].get(), index[sel].get(), cellStart.get(), cellEnd.get(), cells};
  timer.stage(Stage::Bounds, [&] { launchFindCellBounds(g.sortedKeys, n, cells, cellStart.get(), cellEnd.get(), lc); });
  if (reorder) reorderBodies(g.sortedIndex, lc);
  if (mode == ForceMode::Gravity) {
    timer.stage(Stage::Bounds, [&] {
      launchCellMonopoles(pos[cur].get(), reorder ? nullptr : g.sortedIndex, cellStart.get(), cellEnd.get(), cells,
                          monopole.get(), lc);
    });
  }
  return g;
}

int DeviceState::labelAndSort(const GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc) {
  timer.stage(Stage::Label, [&] { launchLabelCells(pos[cur].get(), n, d_grid, keys[0].get(), index[0].get(), lc); });
  int sel = 0;
  timer.stage(Stage::Sort, [&] {
    const SortBuffers sb{{keys[0].get(), keys[1].get()}, {index[0].get(), index[1].get()}, sortTemp.get(),
                         sortTemp.size()};
    sel = sortByCell(sb, n, keyBitsFor(cells), lc);
  });
  return sel;
}

void DeviceState::reorderBodies(const uint32_t* sortedIndex, const LaunchConfig& lc) {
  timer.stage(Stage::Reorder, [&] {
    launchReorderBodies(sortedIndex, n, core::readOnly(current()), other(), lc, planeOut, planeHeadings);
  });
  flipState();
}

void DeviceState::integrateBoids(Vec4* velNew, const LaunchConfig& lc) {
  timer.stage(Stage::Integrate,
              [&] {
                launchBoidsIntegrate(pos[cur].get(), velNew, n, core::localDt(params), params.halfSize, params.boundary,
                                     lc);
              });
  velCur = 1 - velCur;  // ping-pong: the new velocities become current
}

void DeviceState::beginNeighbourCount() {
  MURMUR_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, 2 * sizeof(unsigned long long), stream));
  rowSort.countsReady = false;  // the statistics overwrite the counting sort's keys and ranks
}

core::NeighbourStats DeviceState::neighbourMeans(bool countsCandidates) {
  const std::vector<unsigned long long> c = download(counts.get(), 2);
  core::NeighbourStats st;
  st.meanCandidates = countsCandidates ? double(c[0]) / double(n) : double(n) - 1.0;
  st.meanNeighbours = double(c[1]) / double(n);
  return st;
}

core::NeighbourStats DeviceState::classicGridStats() {
  const LaunchConfig lc = launch();
  const float radius = core::searchRadius(params);
  const DeviceGrid g = buildGrid(params.force, false);
  launchBoidsStatsGrid(pos[cur].get(), n, g, radius, radius * radius, counts.get(), lc);
  return neighbourMeans(true);
}

}  // namespace murmur::cuda
