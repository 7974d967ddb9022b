// The CUDA engine's host side: buffers, the order of the stages, and the bookkeeping that the
// kernels need (which buffer is current, whether the leapfrog acceleration is still valid).
//
// Buffers (all allocated by reset(), never per step):
//   pos[2], vel[2], id[2]  body state; `cur`, `velCur` and `idCur` pick the current buffers.
//                          Boids ping-pong the velocities (every boid reads the old state); the
//                          grid pipelines gather pos/vel/id into the other buffers, and the rows
//                          step writes the new positions into the other one (ids stay).
//   acc                    gravity accelerations in the current body order (leapfrog keeps them
//                          between steps while accValid_).
//   keys[2], index[2]      labelCells output and the radix sort's double buffers.
//   sortTemp               CUB scratch, sized at reset for a full 32-bit key.
// Grid buffers (cellStart, cellEnd, monopole) depend on the cell count; they grow when a new
// parameter set needs more cells and are otherwise reused.
#include "cuda/cuda_engine.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/errors.h"
#include "core/grid.h"
#include "core/row_search.h"
#include "core/verlet.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_check.h"
#include "cuda/debug_api.h"
#include "cuda/device_buffer.h"
#include "cuda/draw_copy.h"
#include "cuda/gravity_kernels.h"
#include "cuda/grid_build.h"
#include "cuda/rows_kernels.h"
#include "cuda/stage_timer.h"
#include "cuda/tree_build.h"
#include "cuda/verlet_kernels.h"

namespace murmur::cuda {

using core::ForceMode;
using core::GridSpec;
using core::Pipeline;
using core::SimParams;
using core::Stage;
using core::Vec4;

namespace {

// Body arrays: pos[2], vel[2], acc (Vec4) and id[2], keys[2], index[2] (uint32): 104 bytes.
constexpr size_t kBytesPerBody = 5 * sizeof(Vec4) + 6 * sizeof(uint32_t);
// The sort scratch is sized for full 32-bit keys so that no grid ever needs more.
constexpr int kSortBitsAllocated = 32;
// Grid specs in device memory: the boids grid (from the parameters) and the gravity grid (from
// the bounding box, written on the device each build).
constexpr int kBoidGridSlot = 0;
constexpr int kGravityGridSlot = 1;
constexpr int kRowGridSlot = 2;
constexpr int kVerletGridSlot = 3;
constexpr int kNumGridSlots = 4;

// The rows and verlet pipelines search their own finer grid for boids (offsets only); for gravity
// it is the coherent grid.
bool usesRowGrid(const SimParams& p, ForceMode mode) {
  return mode == ForceMode::Boids && (p.pipeline == Pipeline::Rows || p.pipeline == Pipeline::Verlet);
}

bool usesLists(const SimParams& p) { return p.force == ForceMode::Boids && p.pipeline == Pipeline::Verlet; }

// Entries per body of the first lists of a reset, before their longest list is known: the mean for
// evenly spread bodies, with room for clumps. Later builds size from the previous build's
// longest list (CudaEngine::Impl::sizeLists).
uint32_t expectedListEntries(const SimParams& p, size_t n) {
  const double side = 2.0 * double(p.halfSize);
  const double R = core::verletPlan(p).radius;
  const double mean = double(n) / (side * side * side) * 4.18879020478639 * R * R * R;
  return static_cast<uint32_t>(std::min(2.0 * mean + 32.0, double(n)));
}

// Cells of the classic grid of `mode` (cellStart/cellEnd, monopoles).
uint32_t classicCells(const SimParams& p, ForceMode mode) {
  if (mode == ForceMode::Boids) return core::boidGrid(p).numCells;
  const uint32_t d = static_cast<uint32_t>(p.gravity.gridDim);
  return d * d * d;
}

// Cells of the grid that p's pipeline searches in `mode` for n bodies.
uint32_t gridCells(const SimParams& p, ForceMode mode, size_t n) {
  if (!usesRowGrid(p, mode)) return classicCells(p, mode);
  if (p.pipeline == Pipeline::Verlet) {
    // The first build of a reset lists for one step, later ones for k: the larger grid of the two.
    const uint32_t fresh = core::rowGridForRadius(p, n, core::verletPlanFor(p, 1).radius).numCells;
    return std::max(fresh, core::verletGrid(p, n).numCells);
  }
  return core::rowGrid(p, n).numCells;
}

size_t gridBytes(uint32_t cells, const SimParams& p, ForceMode mode) {
  if (usesRowGrid(p, mode)) return 3 * (size_t(cells) + 1) * sizeof(uint32_t);  // offsets, two counts
  return size_t(cells) * (2 * sizeof(uint32_t) + (mode == ForceMode::Gravity ? sizeof(Vec4) : 0));
}

std::string formatBytes(size_t bytes) {
  char buf[64];
  const double gib = double(bytes) / double(size_t(1) << 30);
  if (gib >= 0.1)
    std::snprintf(buf, sizeof buf, "%.1f GiB", gib);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(size_t(1) << 20));
  return buf;
}

// Sort scratch for n bodies; without a device CUB cannot be asked, so estimate generously
// (the scratch is a small fraction of the key arrays in practice).
size_t sortScratchBytes(size_t n) {
  try {
    return sortTempBytes(static_cast<uint32_t>(n), kSortBitsAllocated);
  } catch (const CudaError&) {
    cudaGetLastError();
    return n * sizeof(uint32_t) + (size_t(1) << 20);
  }
}

// Every pipeline but naive and tree builds a grid (rows a finer one).
bool usesGrid(Pipeline p) { return p != Pipeline::Naive && p != Pipeline::Tree; }

}  // namespace

size_t bytesNeeded(size_t numBodies, const SimParams& p) {
  if (numBodies == 0) return 0;
  size_t bytes = numBodies * kBytesPerBody + sortScratchBytes(numBodies);
  if (usesGrid(p.pipeline)) bytes += gridBytes(gridCells(p, p.force, numBodies), p, p.force);
  if (p.pipeline == Pipeline::Tree) bytes += TreeBuffers::bytesFor(numBodies);
  if (usesLists(p))
    bytes += (verletListWords(numBodies, expectedListEntries(p, numBodies)) + 2 * numBodies) * sizeof(uint32_t);
  return bytes;
}

struct CudaEngine::Impl {
  SimParams params{};
  std::string name;
  cudaStream_t stream = nullptr;  // the default stream (see the header)
  uint32_t n = 0;
  float commonMass = 0;  // core::commonMass of the bodies of the last reset

  DeviceBuffer<Vec4> pos[2], vel[2], acc;
  DeviceBuffer<uint32_t> id[2], keys[2], index[2];
  DeviceBuffer<unsigned char> sortTemp;
  int cur = 0, velCur = 0, idCur = 0;
  bool accValid = false;

  DeviceBuffer<uint32_t> cellStart, cellEnd;
  DeviceBuffer<uint32_t> cellFirst;  // rows pipeline: numCells + 1 offsets (rows_kernels.h)
  // Rows grids: numCells + 1 counts for the counting sort, two buffers. A count goes into one
  // while the other, read by the last scan, is zeroed on a side stream, where the zeroing
  // overlaps the force kernel (which leaves the memory system mostly idle) instead of adding a
  // pass over every cell to the step.
  enum class Counts { Dirty, Zeroing };
  DeviceBuffer<uint32_t> cellCount[2];
  Counts countsState[2] = {Counts::Dirty, Counts::Dirty};
  int countInto = 0;   // the buffer the next count goes into
  int countedIn = -1;  // the buffer the last count went into, until a scan reads it
  int toRecycle = -1;  // the buffer the last scan read, until recycleCounts zeroes it
  cudaStream_t sideStream = nullptr;
  cudaEvent_t countsRead[2] = {nullptr, nullptr}, countsZeroed[2] = {nullptr, nullptr};
  DeviceBuffer<Vec4> monopole;
  DeviceBuffer<GridSpec> gridSpecs;  // [kBoidGridSlot], [kGravityGridSlot], [kRowGridSlot]
  DeviceBuffer<Vec4> boundsPartials;
  DeviceBuffer<unsigned long long> counts;

  TreeBuffers tree;  // allocated while the pipeline is `tree`

  // The verlet pipeline's lists (verlet_kernels.h): entries, lengths, the overflow queue, and
  // [0] overflow count, [1] longest list, [2, 3] all entries (64 bits) of the last build. These
  // reach the host through pinned memory after an event, and the next build sizes the lists.
  DeviceBuffer<uint32_t> listEntries, listCount, listOverflow, listScalars;
  uint32_t listCapacity = 0;  // 0: not sized since the last reset
  core::VerletPlan listPlan{};
  int listAge = 0;
  bool listValid = false;
  bool listFresh = true;  // reset() or setParams() since the last build: list for one step
  uint32_t* listStatsHost = nullptr;  // the 4 words of listScalars, pinned
  cudaEvent_t listEvent = nullptr;
  bool listEventPending = false;
  core::GridSpec listGridStored{};
  bool listGridKnown = false;
  bool listFixed = false;  // debugSetListCapacity: the room stays as set

  // The rows grids' sort (sortRowGrid): `crowded` is set on the device when a cell holds more
  // than kStableCellMax bodies; it reaches the host through pinned memory after an event, and
  // from then on until the next reset or setParams the radix sort runs instead.
  DeviceBuffer<uint32_t> crowded;
  uint32_t* crowdedHost = nullptr;
  cudaEvent_t crowdedEvent = nullptr;
  bool crowdedPending = false;
  bool countingOff = false;
  CudaEngine::GridSort gridSort = CudaEngine::GridSort::Auto;
  int flatTableRowsCap = 0;  // debugSetFlatTableRows; 0: rowsFlatTableRows
  bool lastCounted = false;
  // The rows step's force kernel counted the positions it wrote (keys[0], index[0], cellCount):
  // the next step's counting sort starts at the scan.
  bool rowCountsReady = false;

  ~Impl() {
    if (listStatsHost) cudaFreeHost(listStatsHost);
    if (listEvent) cudaEventDestroy(listEvent);
    if (crowdedHost) cudaFreeHost(crowdedHost);
    if (crowdedEvent) cudaEventDestroy(crowdedEvent);
    for (int k = 0; k < 2; ++k) {
      if (countsRead[k]) cudaEventDestroy(countsRead[k]);
      if (countsZeroed[k]) cudaEventDestroy(countsZeroed[k]);
    }
    if (sideStream) {
      cudaStreamSynchronize(sideStream);
      cudaStreamDestroy(sideStream);
    }
  }

  // Before the counts buffers are freed: no zeroing may still be running on them.
  void waitForSideStream() {
    if (sideStream) MURMUR_CUDA_CHECK(cudaStreamSynchronize(sideStream));
  }

  // After a reset or setParams: the counting sort may run again.
  void resetGridSort() {
    rowCountsReady = false;
    countingOff = false;
    crowdedPending = false;
    MURMUR_CUDA_CHECK(cudaMemsetAsync(crowded.get(), 0, sizeof(uint32_t), stream));
  }

  StageTimer timer;
  core::StepProfile profile;

  LaunchConfig launch() const { return LaunchConfig{params.blockSize, stream}; }

  void releaseBodies() {
    for (int k = 0; k < 2; ++k) {
      pos[k].release();
      vel[k].release();
      id[k].release();
      keys[k].release();
      index[k].release();
    }
    acc.release();
    sortTemp.release();
    cellStart.release();
    cellEnd.release();
    cellFirst.release();
    waitForSideStream();
    for (int k = 0; k < 2; ++k) {
      cellCount[k].release();
      countsState[k] = Counts::Dirty;
    }
    countedIn = toRecycle = -1;
    rowCountsReady = false;
    monopole.release();
    tree.release();
    listEntries.release();
    listCount.release();
    listOverflow.release();
    listCapacity = 0;
    listFixed = false;
    listValid = false;
    listFresh = true;
    n = 0;
  }

  // Grows the grid buffers for `cells` cells (monopoles too for gravity). Allocates only when the
  // cell count exceeds what earlier parameters needed.
  // rowGrid: the rows pipeline's offsets (cellFirst) instead of the classic buffers.
  void ensureGrid(uint32_t cells, bool rowGrid, ForceMode mode, bool checkMemory = true) {
    if (rowGrid) {
      if (size_t(cells) + 1 <= cellFirst.size()) return;
      const size_t need = 3 * (size_t(cells) + 1) * sizeof(uint32_t);
      const size_t freeBytes =
          checkMemory ? deviceFreeBytes() + cellFirst.bytes() + cellCount[0].bytes() + cellCount[1].bytes() : need;
      if (need > freeBytes)
        throw core::UsageError("a grid of " + std::to_string(cells) + " cells: needs " + formatBytes(need) +
                               " of GPU memory, " + name + " has " + formatBytes(freeBytes) + " free");
      cellFirst.allocate(size_t(cells) + 1);
      // The counting sort's scan scratch: sized with the offsets, since fewer cells need less.
      if (countingSortFits(cells)) {
        const size_t scanBytes = cellScanTempBytes(cells);
        if (scanBytes > sortTemp.size()) sortTemp.allocate(scanBytes);
      }
      waitForSideStream();
      for (int k = 0; k < 2; ++k) {
        cellCount[k].allocate(size_t(cells) + 1);
        countsState[k] = Counts::Dirty;
      }
      countedIn = toRecycle = -1;
      rowCountsReady = false;
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
      throw core::UsageError("a grid of " + std::to_string(cells) + " cells: needs " + formatBytes(need) +
                             " of GPU memory, " + name + " has " + formatBytes(freeBytes) + " free");
    if (growCells) {
      cellStart.allocate(cells);
      cellEnd.allocate(cells);
    }
    if (growMono) monopole.allocate(cells);
  }

  // labelCells -> sortByCell -> findCellBounds (-> reorderBodies) for the grid of `mode` on the
  // current positions; gravity first derives its grid from the bounding box and ends with the
  // monopoles (read contiguously when the bodies were just reordered).
  DeviceGrid buildGrid(ForceMode mode, bool reorder) {
    const uint32_t cells = classicCells(params, mode);
    ensureGrid(cells, false, mode);
    const LaunchConfig lc = launch();
    GridSpec* d_grid = gridSpecs.get() + (mode == ForceMode::Boids ? kBoidGridSlot : kGravityGridSlot);
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

  // Sorts the bodies by cell of the rows grid d_grid (`cells` cells), fills cellFirst and
  // gathers the bodies into that order. The counting sort (rows_kernels.h) unless a crowded cell
  // turned it off, the radix sort otherwise: both give the permutation of a stable sort of the
  // current order, so the choice changes timings, never results.
  void sortRowGrid(const GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc) {
    if (countingWanted(cells)) {
      timer.stage(Stage::Label, [&] {
        launchCountCells(pos[cur].get(), n, d_grid, keys[0].get(), index[0].get(), countsToFill(), crowded.get(),
                         lc);
      });
      placeCounted(cells, lc);
      recycleCounts();
      return;
    }
    lastCounted = false;
    const int sel = labelAndSort(d_grid, cells, lc);
    timer.stage(Stage::Bounds, [&] { launchFindCellFirst(keys[sel].get(), n, cells, cellFirst.get(), lc); });
    reorderBodies(index[sel].get(), lc);
  }

  // Whether the next sort by a rows grid of `cells` cells is the counting sort; reads the crowded
  // flag once its copy has arrived.
  bool countingWanted(uint32_t cells) {
    if (crowdedPending && cudaEventQuery(crowdedEvent) == cudaSuccess) {
      crowdedPending = false;
      if (*crowdedHost != 0) countingOff = true;
    }
    return countingSortFits(cells) && (gridSort == CudaEngine::GridSort::Counting ||
                                       (gridSort == CudaEngine::GridSort::Auto && !countingOff));
  }

  // The counts buffer the next count fills, zero on the engine's stream by the time it runs.
  uint32_t* countsToFill() {
    const int k = countInto;
    if (countsState[k] == Counts::Dirty)
      MURMUR_CUDA_CHECK(cudaMemsetAsync(cellCount[k].get(), 0, cellCount[k].bytes(), stream));
    else if (countsState[k] == Counts::Zeroing)
      MURMUR_CUDA_CHECK(cudaStreamWaitEvent(stream, countsZeroed[k], 0));
    countsState[k] = Counts::Dirty;
    countedIn = k;
    countInto = 1 - k;
    return cellCount[k].get();
  }

  // The counts of the last count have been scanned: zero them on the side stream, after what the
  // engine's stream has queued so far.
  void recycleCounts() {
    if (toRecycle < 0) return;
    const int k = toRecycle;
    toRecycle = -1;
    MURMUR_CUDA_CHECK(cudaEventRecord(countsRead[k], stream));
    MURMUR_CUDA_CHECK(cudaStreamWaitEvent(sideStream, countsRead[k], 0));
    MURMUR_CUDA_CHECK(cudaMemsetAsync(cellCount[k].get(), 0, cellCount[k].bytes(), sideStream));
    MURMUR_CUDA_CHECK(cudaEventRecord(countsZeroed[k], sideStream));
    countsState[k] = Counts::Zeroing;
  }

  // The counting sort from its counts (keys[0], index[0], cellCount[countedIn]): offsets into
  // cellFirst, the bodies gathered into cell order; then the crowded flag on its way to the host.
  // The caller recycles the counts (recycleCounts) when the zeroing can overlap other work.
  void placeCounted(uint32_t cells, const LaunchConfig& lc) {
    lastCounted = true;
    const int k = countedIn;
    timer.stage(Stage::Bounds, [&] {
      launchScanCellCounts(cellCount[k].get(), cells, cellFirst.get(), sortTemp.get(), sortTemp.size(), lc);
    });
    countedIn = -1;
    toRecycle = k;
    timer.stage(Stage::Sort, [&] {
      launchPlaceByCell(keys[0].get(), index[0].get(), n, cellFirst.get(), index[1].get(), lc);
    });
    timer.stage(Stage::Reorder, [&] {
      launchReorderPlaced(keys[0].get(), index[1].get(), n, cellFirst.get(), pos[cur].get(), vel[velCur].get(),
                          id[idCur].get(), pos[1 - cur].get(), vel[1 - velCur].get(), id[1 - idCur].get(), lc);
    });
    flipState();
    if (!crowdedPending) {
      MURMUR_CUDA_CHECK(
          cudaMemcpyAsync(crowdedHost, crowded.get(), sizeof(uint32_t), cudaMemcpyDeviceToHost, stream));
      MURMUR_CUDA_CHECK(cudaEventRecord(crowdedEvent, stream));
      crowdedPending = true;
    }
  }

  // labelCells -> sortByCell on d_grid: returns which of keys/index holds the sorted order.
  int labelAndSort(const GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc) {
    timer.stage(Stage::Label, [&] { launchLabelCells(pos[cur].get(), n, d_grid, keys[0].get(), index[0].get(), lc); });
    int sel = 0;
    timer.stage(Stage::Sort, [&] {
      const SortBuffers sb{{keys[0].get(), keys[1].get()}, {index[0].get(), index[1].get()}, sortTemp.get(),
                           sortTemp.size()};
      sel = sortByCell(sb, n, keyBitsFor(cells), lc);
    });
    return sel;
  }

  // The bodies (pos, vel, id) gathered into sorted order in the other buffers, which become current.
  void reorderBodies(const uint32_t* sortedIndex, const LaunchConfig& lc) {
    timer.stage(Stage::Reorder, [&] {
      launchReorderBodies(sortedIndex, n, pos[cur].get(), vel[velCur].get(), id[idCur].get(), pos[1 - cur].get(),
                          vel[1 - velCur].get(), id[1 - idCur].get(), lc);
    });
    flipState();
  }
  void flipState() {
    cur = 1 - cur;
    velCur = 1 - velCur;
    idCur = 1 - idCur;
  }

  // A rows step: the grid (the counting sort starts from the counts the previous step's force
  // kernel made, when it made them), the reorder, then one kernel for the forces, the integration
  // into the other state buffers and the next step's counts. The force stage's time includes
  // the integration and the counting.
  void stepBoidsRows() {
    const LaunchConfig lc = launch();
    const uint32_t cells = gridCells(params, ForceMode::Boids, n);
    ensureGrid(cells, true, ForceMode::Boids);
    const GridSpec* d_grid = gridSpecs.get() + kRowGridSlot;
    const bool countNext = countingWanted(cells);  // this step's sort and the next one's count
    if (rowCountsReady && countNext)
      placeCounted(cells, lc);
    else
      sortRowGrid(d_grid, cells, lc);
    rowCountsReady = false;
    RowsStepOut out;
    out.posOut = pos[1 - cur].get();
    out.dt = params.boids.dt;
    out.halfSize = params.halfSize;
    if (countNext) {
      out.keys = keys[0].get();
      out.rank = index[0].get();
      out.counts = countsToFill();
      out.crowded = crowded.get();
    }
    recycleCounts();  // the zeroing overlaps the force kernel
    timer.stage(Stage::Force, [&] {
      const float radius = core::maxRuleRadius(params.boids);
      const core::RowLoop loop = core::rowLoop(params, n);
      int flatRows = loop == core::RowLoop::Flat ? rowsFlatTableRows(core::rowGrid(params, n), radius) : 0;
      if (flatRows > 0 && flatTableRowsCap > 0) flatRows = std::min(flatRows, flatTableRowsCap);
      launchBoidsRows(pos[cur].get(), vel[velCur].get(), n, d_grid, cellFirst.get(), params.boids, radius, loop,
                      flatRows, vel[1 - velCur].get(), out, lc);
    });
    cur = 1 - cur;  // the ids stay where they are: the kernel kept the order
    velCur = 1 - velCur;
    rowCountsReady = countNext;
  }

  VerletLists lists() const {
    return VerletLists{listEntries.get(), listCount.get(), listOverflow.get(), listScalars.get(),
                       listScalars.get() + 1, reinterpret_cast<unsigned long long*>(listScalars.get() + 2),
                       listCapacity};
  }

  // Entries per body for this build's lists: the first build of a reset counts first (one list
  // pass with no room, then a wait for its statistics); later builds take the statistics of an
  // earlier build once its event has passed. The room is the longest list and a quarter, but no
  // more than three times the mean (and 32): one clump must not size the lists of every body. A
  // list longer than the room sends its body to the overflow queue, whose bodies search the
  // build's grid again (verlet_kernels.h), exactly and without lists.
  void sizeLists(const GridSpec* d_grid, const LaunchConfig& lc) {
    if (listFixed) return;
    uint32_t want = listCapacity;
    const auto roomFor = [&](const uint32_t* stats) {
      const uint32_t longest = stats[1];
      const double total = double(stats[2]) + 4294967296.0 * double(stats[3]);
      const double byMean = 3.0 * total / double(n) + 32.0;
      return static_cast<uint32_t>(std::min(double(longest) + double(longest / 4) + 16.0, byMean));
    };
    if (listCapacity == 0) {
      MURMUR_CUDA_CHECK(cudaMemsetAsync(listScalars.get(), 0, 4 * sizeof(uint32_t), stream));
      launchVerletBuild(pos[cur].get(), n, d_grid, cellFirst.get(), listPlan, params.halfSize, lists(), lc);
      uint32_t stats[4] = {};
      MURMUR_CUDA_CHECK(cudaMemcpy(stats, listScalars.get(), sizeof stats, cudaMemcpyDeviceToHost));
      want = roomFor(stats);
      listEventPending = false;
    } else if (listEventPending && cudaEventQuery(listEvent) == cudaSuccess) {
      listEventPending = false;
      const uint32_t room = roomFor(listStatsHost);
      if (room > listCapacity) want = room;
    }
    if (want <= listCapacity && listEntries.get()) return;
    want = std::max((std::min(want, n) + kListQuad - 1) / kListQuad * kListQuad, kListQuad);
    const size_t need = verletListWords(n, want) * sizeof(uint32_t);
    const size_t freeBytes = deviceFreeBytes() + listEntries.bytes();
    if (need > freeBytes)
      throw core::UsageError("verlet lists of " + std::to_string(want) + " entries per body: need " +
                             formatBytes(need) + " of GPU memory, " + name + " has " + formatBytes(freeBytes) +
                             " free (--pipeline rows searches without lists)");
    listEntries.allocate(verletListWords(n, want));
    listCapacity = want;
  }

  // A verlet build: labelCells -> sortByCell -> findCellFirst -> reorderBodies on the list grid,
  // then the lists of the current positions.
  void buildLists() {
    const LaunchConfig lc = launch();
    listPlan = listFresh ? core::verletPlanFor(params, 1) : core::verletPlan(params);
    const GridSpec g = core::rowGridForRadius(params, n, listPlan.radius);
    GridSpec* d_grid = gridSpecs.get() + kVerletGridSlot;
    if (!listGridKnown || std::memcmp(&g, &listGridStored, sizeof g) != 0) {
      launchStoreGrid(d_grid, g, lc);
      listGridStored = g;
      listGridKnown = true;
    }
    ensureGrid(g.numCells, true, ForceMode::Boids);
    if (listCount.size() < n) {
      listCount.allocate(n);
      listOverflow.allocate(n);
    }
    sortRowGrid(d_grid, g.numCells, lc);
    sizeLists(d_grid, lc);
    timer.stage(Stage::List, [&] {
      MURMUR_CUDA_CHECK(cudaMemsetAsync(listScalars.get(), 0, 4 * sizeof(uint32_t), stream));
      launchVerletBuild(pos[cur].get(), n, d_grid, cellFirst.get(), listPlan, params.halfSize, lists(), lc);
    });
    if (!listEventPending) {
      MURMUR_CUDA_CHECK(cudaMemcpyAsync(listStatsHost, listScalars.get(), 4 * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, stream));
      MURMUR_CUDA_CHECK(cudaEventRecord(listEvent, stream));
      listEventPending = true;
    }
    listAge = 0;
    listValid = true;
    listFresh = false;
  }

  void stepBoidsVerlet() {
    const LaunchConfig lc = launch();
    if (!listValid || listAge >= listPlan.steps) buildLists();
    ++listAge;
    Vec4* velNew = vel[1 - velCur].get();
    timer.stage(Stage::Force, [&] {
      launchVerletForce(pos[cur].get(), vel[velCur].get(), n, lists(), params.boids, velNew, lc);
      launchVerletOverflow(pos[cur].get(), vel[velCur].get(), n, gridSpecs.get() + kVerletGridSlot, cellFirst.get(),
                           listPlan, params.halfSize, lists(), params.boids, velNew, lc);
    });
    timer.stage(Stage::Integrate,
                [&] { launchBoidsIntegrate(pos[cur].get(), velNew, n, params.boids.dt, params.halfSize, lc); });
    velCur = 1 - velCur;
  }

  void stepBoids() {
    if (params.pipeline == Pipeline::Rows) return stepBoidsRows();
    if (params.pipeline == Pipeline::Verlet) return stepBoidsVerlet();
    const LaunchConfig lc = launch();
    const Pipeline pipe = params.pipeline;
    const bool coherent = pipe == Pipeline::Coherent;
    DeviceGrid g{};
    if (pipe != Pipeline::Naive) g = buildGrid(ForceMode::Boids, coherent);  // may flip the buffers
    Vec4* velNew = vel[1 - velCur].get();
    timer.stage(Stage::Force, [&] {
      if (pipe == Pipeline::Naive)
        launchBoidsNaive(pos[cur].get(), vel[velCur].get(), n, params.boids, velNew, lc);
      else
        launchBoidsGrid(coherent, pos[cur].get(), vel[velCur].get(), n, g, params.boids,
                        core::maxRuleRadius(params.boids), velNew, lc);
    });
    timer.stage(Stage::Integrate,
                [&] { launchBoidsIntegrate(pos[cur].get(), velNew, n, params.boids.dt, params.halfSize, lc); });
    velCur = 1 - velCur;  // ping-pong: the new velocities become current
  }

  // Accelerations of the current state into acc (current order), G applied.
  void gravityForces() {
    const LaunchConfig lc = launch();
    const float eps2 = params.gravity.softening * params.gravity.softening;
    const float G = params.gravity.G;
    if (params.pipeline == Pipeline::Naive) {
      timer.stage(Stage::Force, [&] {
        launchGravityNaive({pos[cur].get(), n, pos[cur].get(), n, eps2, G, commonMass, acc.get()}, lc);
      });
      return;
    }
    if (params.pipeline == Pipeline::Tree) {
      treeForces();
      return;
    }
    const bool coherent = params.pipeline == Pipeline::Coherent || params.pipeline == Pipeline::Rows ||
                          params.pipeline == Pipeline::Verlet;
    const DeviceGrid g = buildGrid(ForceMode::Gravity, coherent);
    timer.stage(Stage::Force, [&] {
      launchGravityGrid(coherent, pos[cur].get(), n, g, monopole.get(), eps2, G, acc.get(), lc);
    });
  }

  // The tree pipeline (core/tree.h): bounds -> keys -> sort -> reorder (the state stays in key
  // order, as in the coherent pipeline) -> radix tree and moments -> group walk.
  void treeForces() {
    const LaunchConfig lc = launch();
    const core::GravityParams& gp = params.gravity;
    timer.stage(Stage::Bounds, [&] { launchTreeBounds(pos[cur].get(), n, tree, lc); });
    timer.stage(Stage::Label, [&] { launchTreeKeys(pos[cur].get(), n, tree, lc); });
    int sel = 0;
    timer.stage(Stage::Sort, [&] { sel = treeSort(n, tree, lc); });
    reorderBodies(tree.index[sel].get(), lc);
    timer.stage(Stage::Bounds, [&] { launchBuildTree(pos[cur].get(), tree.keys[sel].get(), n, gp.theta, tree, lc); });
    timer.stage(Stage::Force, [&] {
      launchTreeWalk(pos[cur].get(), n, tree, gp.softening * gp.softening, gp.G, gp.treeLeafSize, acc.get(), lc);
    });
  }

  void stepGravity() {
    const LaunchConfig lc = launch();
    const core::GravityParams& gp = params.gravity;
    if (gp.integrator == core::Integrator::Leapfrog) {
      if (!accValid) {
        gravityForces();
        timer.discard();  // the stage times report the step's own force evaluation
      }
      timer.stage(Stage::Integrate,
                  [&] { launchLeapfrogKickDrift(pos[cur].get(), vel[velCur].get(), acc.get(), n, gp.dt, lc); });
      gravityForces();  // on the drifted positions; a grid pipeline rebuilds (and reorders) here
      timer.stage(Stage::Integrate, [&] { launchLeapfrogKick(vel[velCur].get(), acc.get(), n, gp.dt, lc); });
      accValid = true;
    } else {
      gravityForces();
      timer.stage(Stage::Integrate, [&] {
        launchDampedEuler(pos[cur].get(), vel[velCur].get(), acc.get(), n, gp.dt, gp.damping, lc);
      });
      accValid = false;
    }
  }

  // Synchronous copy to the host (outside steps only).
  template <typename T>
  static std::vector<T> download(const T* d_src, size_t count) {
    std::vector<T> out(count);
    if (count) MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), d_src, count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
};

void checkDeviceFits(size_t numBodies, const SimParams& p) {
  const size_t need = bytesNeeded(numBodies, p);
  const size_t freeBytes = deviceFreeBytes();
  if (need > freeBytes) {
    throw core::UsageError("--n " + std::to_string(numBodies) + ": needs " + formatBytes(need) + " of GPU memory, " +
                           deviceInfo().name + " has " + formatBytes(freeBytes) + " free");
  }
}

CudaEngine::CudaEngine(const SimParams& p) : impl_(std::make_unique<Impl>()) {
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  std::string why;
  if (!deviceAvailable(&why)) throw std::runtime_error("the CUDA engine cannot start: " + why);
  impl_->name = cuda::deviceInfo().name;
  impl_->gridSpecs.allocate(kNumGridSlots);
  impl_->boundsPartials.allocate((gravityGridScratchBytes() + sizeof(Vec4) - 1) / sizeof(Vec4));
  impl_->counts.allocate(2);
  impl_->listScalars.allocate(4);
  MURMUR_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&impl_->listStatsHost), 4 * sizeof(uint32_t)));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->listEvent, cudaEventDisableTiming));
  impl_->crowded.allocate(1);
  MURMUR_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->sideStream, cudaStreamNonBlocking));
  for (int k = 0; k < 2; ++k) {
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->countsRead[k], cudaEventDisableTiming));
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->countsZeroed[k], cudaEventDisableTiming));
  }
  MURMUR_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&impl_->crowdedHost), sizeof(uint32_t)));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->crowdedEvent, cudaEventDisableTiming));
  setParams(p);
}

CudaEngine::~CudaEngine() = default;

std::string CudaEngine::deviceName() const { return impl_->name; }

core::DeviceInfo CudaEngine::deviceInfo() const { return cuda::deviceInfo(); }

const SimParams& CudaEngine::params() const { return impl_->params; }

size_t CudaEngine::numBodies() const { return impl_->n; }

core::StepProfile CudaEngine::lastProfile() const { return impl_->profile; }

int CudaEngine::stepsPerCycle() const {
  const Impl& m = *impl_;
  return usesLists(m.params) ? core::verletPlan(m.params).steps : 1;
}

void CudaEngine::debugSetListCapacity(uint32_t entries) {
  Impl& m = *impl_;
  m.listCapacity = std::max<uint32_t>((entries + kListQuad - 1) / kListQuad * kListQuad, kListQuad);
  m.listEntries.allocate(verletListWords(std::max<size_t>(m.n, 1), m.listCapacity));
  m.listEventPending = false;
  m.listValid = false;
  m.listFixed = true;
}

void CudaEngine::debugSetGridSort(GridSort mode) { impl_->gridSort = mode; }

void CudaEngine::debugSetFlatTableRows(int rows) { impl_->flatTableRowsCap = rows; }

bool CudaEngine::debugLastSortCounted() const { return impl_->lastCounted; }

void CudaEngine::setParams(const SimParams& p) {
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  Impl& m = *impl_;
  // Grow the grid buffers first (this may throw UsageError and must leave the engine as it was),
  // so that the next step does not allocate.
  if (m.n > 0 && usesGrid(p.pipeline))
    m.ensureGrid(gridCells(p, p.force, m.n), usesRowGrid(p, p.force), p.force);
  if (m.n > 0 && p.pipeline == Pipeline::Tree) m.tree.reserve(m.n);
  if (core::forceFieldChanged(m.params, p)) m.accValid = false;
  m.params = p;
  m.listValid = false;
  m.listFresh = true;
  m.resetGridSort();
  // The boids grid depends only on the parameters: store it once here, not every step.
  launchStoreGrid(m.gridSpecs.get() + kBoidGridSlot, core::boidGrid(p), m.launch());
  // The rows grid also depends on N (core::rowCellsPerRadius): stored again by reset().
  launchStoreGrid(m.gridSpecs.get() + kRowGridSlot, core::rowGrid(p, m.n), m.launch());
}

void CudaEngine::reset(const core::Bodies& bodies) {
  Impl& m = *impl_;
  const std::string bad = core::checkBodies(bodies);
  if (!bad.empty()) throw std::invalid_argument("reset: " + bad);
  const size_t n = bodies.size();
  // The radix sort counts items in an int.
  if (n > static_cast<size_t>(INT_MAX))
    throw core::UsageError("--n " + std::to_string(n) + ": the CUDA engine handles at most " +
                           std::to_string(INT_MAX) + " bodies");
  m.releaseBodies();
  m.resetGridSort();
  m.accValid = false;
  m.profile = core::StepProfile{};
  m.cur = m.velCur = m.idCur = 0;
  m.commonMass = core::commonMass(bodies.pos);
  if (n == 0) return;

  // The one memory check of a reset: it counts the grid buffers too, so ensureGrid below only
  // allocates.
  checkDeviceFits(n, m.params);

  for (int k = 0; k < 2; ++k) {
    m.pos[k].allocate(n);
    m.vel[k].allocate(n);
    m.id[k].allocate(n);
    m.keys[k].allocate(n);
    m.index[k].allocate(n);
  }
  m.acc.allocate(n);
  m.sortTemp.allocate(sortTempBytes(static_cast<uint32_t>(n), kSortBitsAllocated));
  m.n = static_cast<uint32_t>(n);
  if (usesGrid(m.params.pipeline))
    m.ensureGrid(gridCells(m.params, m.params.force, n), usesRowGrid(m.params, m.params.force), m.params.force,
                 false);
  launchStoreGrid(m.gridSpecs.get() + kRowGridSlot, core::rowGrid(m.params, n), m.launch());
  if (m.params.pipeline == Pipeline::Tree) m.tree.reserve(m.n);
  MURMUR_CUDA_CHECK(cudaMemcpy(m.pos[0].get(), bodies.pos.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice));
  MURMUR_CUDA_CHECK(cudaMemcpy(m.vel[0].get(), bodies.vel.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice));
  MURMUR_CUDA_CHECK(cudaMemcpy(m.id[0].get(), bodies.id.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
}

void CudaEngine::step(int numSteps) {
  Impl& m = *impl_;
  for (int s = 0; s < numSteps; ++s) {
    m.timer.beginStep(profiling_, m.stream);
    if (m.n > 0) {
      if (m.params.force == ForceMode::Boids)
        m.stepBoids();
      else
        m.stepGravity();
    }
    m.profile = m.timer.endStep();
  }
}

void CudaEngine::synchronize() { MURMUR_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

core::Bodies CudaEngine::readBodies() {
  Impl& m = *impl_;
  if (m.n == 0) return core::Bodies{};
  return core::bodiesInIdOrder(m.download(m.pos[m.cur].get(), m.n), m.download(m.vel[m.velCur].get(), m.n),
                               m.download(m.id[m.idCur].get(), m.n));
}

std::vector<Vec4> CudaEngine::computeAccelerations() {
  Impl& m = *impl_;
  if (m.n == 0) return {};
  m.timer.beginStep(false, m.stream);
  m.gravityForces();
  // acc now holds a(x) of the current state in the current order; the leapfrog may reuse it.
  m.accValid = m.params.force == ForceMode::Gravity && m.params.gravity.integrator == core::Integrator::Leapfrog;
  return core::inIdOrder(m.download(m.acc.get(), m.n), m.download(m.id[m.idCur].get(), m.n));
}

core::NeighbourStats CudaEngine::neighbourStats() {
  Impl& m = *impl_;
  core::NeighbourStats st;
  if (m.n == 0) return st;
  m.timer.beginStep(false, m.stream);
  const LaunchConfig lc = m.launch();
  const float radius = core::maxRuleRadius(m.params.boids);
  const float radius2 = radius * radius;
  MURMUR_CUDA_CHECK(cudaMemsetAsync(m.counts.get(), 0, 2 * sizeof(unsigned long long), m.stream));
  m.rowCountsReady = false;  // the statistics below overwrite the counting sort's keys and ranks
  const bool naive = m.params.pipeline == Pipeline::Naive;
  if (naive) {
    launchBoidsStatsNaive(m.pos[m.cur].get(), m.n, radius2, m.counts.get(), lc);
  } else if (usesRowGrid(m.params, m.params.force)) {
    // The rows search over a sorted index of the current state (no reorder: state untouched);
    // verlet: the lists that a build with the steady plan would make now.
    const bool verlet = m.params.pipeline == Pipeline::Verlet;
    const core::VerletPlan plan = core::verletPlan(m.params);
    const uint32_t cells = verlet ? core::verletGrid(m.params, m.n).numCells : gridCells(m.params, ForceMode::Boids, m.n);
    m.ensureGrid(cells, true, ForceMode::Boids);
    GridSpec* d_grid = m.gridSpecs.get() + (verlet ? kVerletGridSlot : kRowGridSlot);
    if (verlet) {
      launchStoreGrid(d_grid, core::verletGrid(m.params, m.n), lc);
      // The lists' grid and offsets are overwritten (the overflow path searches them): the next
      // step builds again.
      m.listGridKnown = false;
      m.listValid = false;
    }
    launchLabelCells(m.pos[m.cur].get(), m.n, d_grid, m.keys[0].get(), m.index[0].get(), lc);
    const SortBuffers sb{{m.keys[0].get(), m.keys[1].get()}, {m.index[0].get(), m.index[1].get()},
                         m.sortTemp.get(), m.sortTemp.size()};
    const int sel = sortByCell(sb, m.n, keyBitsFor(cells), lc);
    launchFindCellFirst(m.keys[sel].get(), m.n, cells, m.cellFirst.get(), lc);
    if (verlet)
      launchVerletStats(m.pos[m.cur].get(), m.n, d_grid, m.cellFirst.get(), m.index[sel].get(), plan,
                        m.params.halfSize, radius2, m.counts.get(), lc);
    else
      launchBoidsStatsRows(m.pos[m.cur].get(), m.n, d_grid, m.cellFirst.get(), m.index[sel].get(), radius,
                           radius2, m.counts.get(), lc);
  } else {
    // The grid of the current force mode, as the CPU engine does; no reorder (state untouched).
    const DeviceGrid g = m.buildGrid(m.params.force, false);
    launchBoidsStatsGrid(m.pos[m.cur].get(), m.n, g, radius, radius2, m.counts.get(), lc);
  }
  const std::vector<unsigned long long> counts = m.download(m.counts.get(), 2);
  st.meanCandidates = naive ? double(m.n) - 1.0 : double(counts[0]) / double(m.n);
  st.meanNeighbours = double(counts[1]) / double(m.n);
  return st;
}

void CudaEngine::writeDrawBuffers(void* d_pos, void* d_vel, void* d_id) {
  Impl& m = *impl_;
  launchDrawCopy(m.pos[m.cur].get(), m.vel[m.velCur].get(), m.id[m.idCur].get(), m.n, d_pos, d_vel, d_id, m.launch());
}

CudaEngine::DeviceBodies CudaEngine::deviceBodies() const {
  const Impl& m = *impl_;
  return DeviceBodies{m.pos[m.cur].get(), m.vel[m.velCur].get(), m.id[m.idCur].get(), m.n};
}

std::unique_ptr<core::Engine> createCudaEngine(const SimParams& p) { return std::make_unique<CudaEngine>(p); }

// Lives here rather than in debug_api.cpp because it needs the engine's internals.
GridSnapshot snapshotGrid(CudaEngine& engine) {
  CudaEngine::Impl& m = *engine.impl_;
  GridSnapshot s;
  if (m.n == 0) return s;
  m.timer.beginStep(false, m.stream);
  const ForceMode mode = m.params.force;
  m.rowCountsReady = false;  // buildGrid overwrites the counting sort's keys and ranks
  const DeviceGrid g = m.buildGrid(mode, false);
  MURMUR_CUDA_CHECK(cudaMemcpy(&s.grid, g.grid, sizeof(GridSpec), cudaMemcpyDeviceToHost));
  s.pos = m.download(m.pos[m.cur].get(), m.n);
  s.id = m.download(m.id[m.idCur].get(), m.n);
  s.sortedKeys = m.download(g.sortedKeys, m.n);
  s.sortedIndex = m.download(g.sortedIndex, m.n);
  s.cellStart = m.download(m.cellStart.get(), g.numCells);
  s.cellEnd = m.download(m.cellEnd.get(), g.numCells);
  if (mode == ForceMode::Gravity) s.monopole = m.download(m.monopole.get(), g.numCells);
  return s;
}

}  // namespace murmur::cuda
