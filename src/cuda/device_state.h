// The CUDA engine's shared device state: the buffers every pipeline reads and writes, which of
// the ping-pong buffers is current, and the grid steps that several pipelines share (buildGrid,
// labelAndSort, reorderBodies). The engine (cuda_engine.cpp) owns one; the pipelines
// (cuda_pipeline.h) run their stages on it.
//
// Buffers (all allocated by reset(), never per step):
//   pos[2], vel[2], id[2], species[2]
//                          body state, every attribute of core/bodies.h; `cur`, `velCur` and
//                          `idCur` (id and the attributes that never change in a step) pick the
//                          current buffers. Boids ping-pong the velocities (every boid reads the
//                          old state); the grid pipelines gather every attribute into the other
//                          buffers (current() into other()), and the rows step writes the new
//                          positions into the other one (ids stay).
//   acc                    gravity accelerations in the current body order (leapfrog keeps them
//                          between steps while accValid).
//   keys[2], index[2]      labelCells output and the radix sort's double buffers.
//   sortTemp               CUB scratch, sized at reset for a full 32-bit key.
// Grid buffers (cellStart, cellEnd, monopole; cellFirst and the counts of the rows grids) depend
// on the cell count; they grow when a new parameter set needs more cells and are otherwise reused.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/engine.h"
#include "core/grid.h"
#include "core/params.h"
#include "core/random.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"
#include "cuda/row_grid_sort.h"
#include "cuda/stage_timer.h"

namespace murmur::cuda {

// Grid specs in device memory: the boids grid (from the parameters), the gravity grid (from the
// bounding box, written on the device each build), the rows grid and the verlet lists' grid.
constexpr int kBoidGridSlot = 0;
constexpr int kGravityGridSlot = 1;
constexpr int kRowGridSlot = 2;
constexpr int kVerletGridSlot = 3;
constexpr int kNumGridSlots = 4;

struct DeviceState {
  core::SimParams params{};
  std::string name;               // the GPU's, for messages
  cudaStream_t stream = nullptr;  // the default stream (see cuda_engine.h)
  uint32_t n = 0;
  float commonMass = 0;  // core::commonMass of the bodies of the last reset

  DeviceBuffer<core::Vec4> pos[2], vel[2], acc;
  DeviceBuffer<uint32_t> id[2], keys[2], index[2];
  DeviceBuffer<core::Species> species[2];
  DeviceBuffer<unsigned char> sortTemp;
  int cur = 0, velCur = 0, idCur = 0;
  uint64_t step = 0;  // the step being taken (the engine's count before it): it keys the draws
  bool accValid = false;

  DeviceBuffer<uint32_t> cellStart, cellEnd;
  DeviceBuffer<uint32_t> cellFirst;  // rows grids: numCells + 1 offsets (rows_kernels.h)
  DeviceBuffer<core::Vec4> monopole;
  DeviceBuffer<core::GridSpec> gridSpecs;  // [k...GridSlot]
  DeviceBuffer<core::Vec4> boundsPartials;
  DeviceBuffer<unsigned long long> counts;  // neighbour statistics: candidates, neighbours

  RowGridSort rowSort;      // the rows grids' sort (rows, verlet and clusters sort with it)
  int flatTableRowsCap = 0;  // debugSetFlatTableRows; 0: rowsFlatTableRows
  int periodicSplit = 0;     // debugSetPeriodicSplit: 0 as planned, 1 one kernel, 2 split
  // The rows pipeline in the plane: the reorders also write the bodies' plane records
  // (RowsStepOut::plane) to planeOut, where it is set (to plane's storage) around a rows sort;
  // with planeHeadings (the rule's kHeadingRecords) the records hold the unit velocities.
  DeviceBuffer<core::Vec4> plane;
  core::Vec4* planeOut = nullptr;
  bool planeHeadings = false;

  StageTimer timer;
  core::StepProfile profile;

  // A step whose force pass already ran, for a sample of the state it starts from
  // (CudaPipeline::sampleStep): its results wait in the other state buffers (and, with
  // countsNext, its counts for the next sort) until the next step commits them. Whatever changes
  // the state, the parameters or those buffers first drops it (dropPendingStep), and the next
  // step then runs whole.
  struct PendingStep {
    bool active = false;
    bool countsNext = false;     // the pass counted its positions for the next counting sort
    core::StepProfile profile;   // the pass's stage times, the committed step's profile
  } pending;
  void dropPendingStep() { pending.active = false; }

  // The device buffers that do not depend on N, the side stream and the events (the engine's
  // constructor).
  void create();
  LaunchConfig launch() const { return LaunchConfig{params.blockSize, stream}; }
  void releaseBodies();

  // Grows the grid buffers for `cells` cells (monopoles too for gravity). Allocates only when the
  // cell count exceeds what earlier parameters needed. rowGrid: the rows grids' offsets (cellFirst)
  // and counts instead of the classic buffers (ensureRowGrid). Throws core::UsageError when the
  // device lacks the memory (checkMemory false: the caller already checked).
  void ensureGrid(uint32_t cells, bool rowGrid, core::ForceMode mode, bool checkMemory = true);
  // The same for a finer grid that a local rule's search covers (rows, verlet, clusters): its
  // offsets (cellFirst) and counts, whatever the force.
  void ensureRowGrid(uint32_t cells, bool checkMemory = true);

  // labelCells -> sortByCell -> findCellBounds (-> reorderBodies) for the grid of `mode` on the
  // current positions; gravity first derives its grid from the bounding box and ends with the
  // monopoles (read contiguously when the bodies were just reordered).
  DeviceGrid buildGrid(core::ForceMode mode, bool reorder);
  // labelCells -> sortByCell on d_grid: returns which of keys/index holds the sorted order.
  int labelAndSort(const core::GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc);
  // The bodies (every attribute) gathered into sorted order in the other buffers, which become current.
  void reorderBodies(const uint32_t* sortedIndex, const LaunchConfig& lc);
  // The body arrays of the current state, and the other buffers (the gather target of a reorder).
  core::BodyPointers current() const {
    return core::BodyPointers{pos[cur].get(), vel[velCur].get(), id[idCur].get(), species[idCur].get()};
  }
  core::BodyPointers other() const {
    return core::BodyPointers{pos[1 - cur].get(), vel[1 - velCur].get(), id[1 - idCur].get(), species[1 - idCur].get()};
  }
  // Where the current step's draws come from: the ids in the current order, the step, the seed.
  core::DrawKeys drawKeys() const { return core::DrawKeys{id[idCur].get(), step, params.seed}; }
  void flipState() {
    cur = 1 - cur;
    velCur = 1 - velCur;
    idCur = 1 - idCur;
  }
  // The boids integration from the new velocities velNew (the other velocity buffer), which then
  // become current.
  void integrateBoids(core::Vec4* velNew, const LaunchConfig& lc);

  // Neighbour statistics: zero the two counts before the kernels add to them; then the means.
  void beginNeighbourCount();
  core::NeighbourStats neighbourMeans(bool countsCandidates);

  // The statistics over the classic grid of the current force mode, as the CPU engine counts
  // them; no reorder (the state stays untouched).
  core::NeighbourStats classicGridStats();

  // Synchronous copy to the host (outside steps only).
  template <typename T>
  static std::vector<T> download(const T* d_src, size_t count) {
    std::vector<T> out(count);
    if (count) MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), d_src, count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
};

}  // namespace murmur::cuda
