// The rows grids' sort by cell (the rows and verlet pipelines): the counting sort of
// rows_kernels.h, whose counts buffers are recycled on a side stream, and the radix sort it falls
// back to once a cell is crowded. Both give the permutation of a stable sort of the current order,
// so the choice changes timings, never results.
//
// Counts: numCells + 1 per rows grid, two buffers. A count goes into one while the other, read by
// the last scan, is zeroed on a side stream, where the zeroing overlaps the force kernel (which
// leaves the memory system mostly idle) instead of adding a pass over every cell to the step.
//
// Crowded: set on the device when a cell holds more than kStableCellMax bodies; it reaches the
// host through pinned memory after an event, and from then on until the next reset or setParams
// the radix sort runs instead.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/grid.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"

namespace murmur::cuda {

struct DeviceState;

struct RowGridSort {
  RowGridSort() = default;
  ~RowGridSort();
  RowGridSort(const RowGridSort&) = delete;
  RowGridSort& operator=(const RowGridSort&) = delete;

  // The side stream, its events and the crowded flag with its pinned copy; `stream` is the
  // engine's. Called once, by the engine's constructor.
  void create(cudaStream_t stream);
  // After a reset or setParams: the counting sort may run again.
  void restart();
  // Before the counts buffers are freed: no zeroing may still be running on them.
  void waitForSideStream();
  // Counts buffers for a rows grid of `cells` cells (or none), all dirty.
  void allocateCounts(uint32_t cells);
  void releaseCounts();
  size_t countsBytes() const { return cellCount[0].bytes() + cellCount[1].bytes(); }

  // Sorts the bodies by cell of the rows grid d_grid (`cells` cells), fills cellFirst and
  // gathers the bodies into that order: the counting sort unless a crowded cell turned it off, the
  // radix sort otherwise.
  void sort(DeviceState& s, const core::GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc);
  // Whether the next sort by a rows grid of `cells` cells is the counting sort; reads the crowded
  // flag once its copy has arrived.
  bool countingWanted(uint32_t cells);
  // The counts buffer the next count fills, zero on the engine's stream by the time it runs.
  uint32_t* countsToFill();
  // The counts of the last count have been scanned: zero them on the side stream, after what the
  // engine's stream has queued so far.
  void recycleCounts();
  // The counting sort from its counts (keys[0], index[0], the counts of the last count): offsets
  // into cellFirst, the bodies gathered into cell order; then the crowded flag on its way to the
  // host. The caller recycles the counts (recycleCounts) when the zeroing can overlap other work.
  void placeCounted(DeviceState& s, uint32_t cells, const LaunchConfig& lc);
  uint32_t* crowdedFlag() const { return crowded.get(); }

  // debugSetGridSort, debugLastSortCounted.
  CudaEngine::GridSort mode = CudaEngine::GridSort::Auto;
  bool lastCounted = false;
  // The rows step's force kernel counted the positions it wrote (keys[0], index[0], the counts):
  // the next step's counting sort starts at the scan.
  bool countsReady = false;

 private:
  enum class Counts { Dirty, Zeroing };
  cudaStream_t stream_ = nullptr;  // the engine's
  DeviceBuffer<uint32_t> cellCount[2];
  Counts countsState[2] = {Counts::Dirty, Counts::Dirty};
  int countInto = 0;   // the buffer the next count goes into
  int countedIn = -1;  // the buffer the last count went into, until a scan reads it
  int toRecycle = -1;  // the buffer the last scan read, until recycleCounts zeroes it
  cudaStream_t sideStream = nullptr;
  cudaEvent_t countsRead[2] = {nullptr, nullptr}, countsZeroed[2] = {nullptr, nullptr};

  DeviceBuffer<uint32_t> crowded;
  uint32_t* crowdedHost = nullptr;
  cudaEvent_t crowdedEvent = nullptr;
  bool crowdedPending = false;
  bool countingOff = false;
};

// The neighbour statistics' sort by the rows grid d_grid (`cells` cells): a sorted index of the
// current state and its offsets in cellFirst, without a reorder (the state stays untouched) and
// untimed. Returns which of keys/index holds the sorted order.
int sortIndexByRowGrid(DeviceState& s, const core::GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc);

}  // namespace murmur::cuda
