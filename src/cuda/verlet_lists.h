// The verlet pipeline's neighbour lists (verlet_kernels.h): their buffers, how many entries per
// body they get, their build on the list grid, and the statistics of a build that reach the host
// through pinned memory after an event, for the next build to size the lists from.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/grid.h"
#include "core/verlet.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"
#include "cuda/verlet_kernels.h"

namespace murmur::cuda {

struct DeviceState;

struct VerletListState {
  VerletListState() = default;
  ~VerletListState();
  VerletListState(const VerletListState&) = delete;
  VerletListState& operator=(const VerletListState&) = delete;

  // The scalars, their pinned copy and the stats event. Called once, by the verlet pipeline.
  void create();
  // The per-body buffers (reset): the next build sizes the lists again and lists for one step.
  void release();
  // The lists must be built again before the next force (setParams).
  void invalidate() {
    valid = false;
    fresh = true;
  }
  // debugSetListCapacity: room for `entries` per body from the next step on, kept.
  void fixCapacity(uint32_t entries, uint32_t n);
  // The buffers as the kernels take them.
  VerletLists view() const;

  // Entries, lengths, the overflow queue, and scalars: [0] overflow count, [1] longest list,
  // [2, 3] all entries (64 bits) of the last build.
  DeviceBuffer<uint32_t> entries, count, overflow, scalars;
  uint32_t capacity = 0;  // 0: not sized since the last reset
  core::VerletPlan plan{};
  int age = 0;
  bool valid = false;
  bool fresh = true;  // reset() or setParams() since the last build: list for one step
  uint32_t* statsHost = nullptr;  // the 4 words of scalars, pinned
  cudaEvent_t event = nullptr;
  bool eventPending = false;
  core::GridSpec gridStored{};
  bool gridKnown = false;
  bool fixed = false;  // debugSetListCapacity: the room stays as set
};

// Entries per body for this build's lists: the first build of a reset counts first (one list
// pass with no room, then a wait for its statistics); later builds take the statistics of an
// earlier build once its event has passed. The room is the longest list and a quarter, but no
// more than three times the mean (and 32): one clump must not size the lists of every body. A
// list longer than the room sends its body to the overflow queue, whose bodies search the
// build's grid again (verlet_kernels.h), exactly and without lists.
void sizeLists(DeviceState& s, VerletListState& L, const core::GridSpec* d_grid, const LaunchConfig& lc);

// A verlet build: labelCells -> sortByCell -> findCellFirst -> reorderBodies on the list grid
// (row_grid_sort.h), then the lists of the current positions.
void buildLists(DeviceState& s, VerletListState& L);

}  // namespace murmur::cuda
