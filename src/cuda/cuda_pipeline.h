// One pipeline of the CUDA engine (a row of core/pipeline_table.h): the stages it runs on the
// engine's device state. The engine owns the step loop and the integration order (leapfrog or
// damped Euler for gravity); a pipeline supplies the parts that differ. Each pipeline is one file
// under pipelines/, and pipelines/registry.cpp maps core::Pipeline to it. The state every pipeline
// shares (the bodies, the grid buffers, the rows grids' sort) lives in DeviceState; what only one
// pipeline uses (the tree's buffers, the verlet lists) it owns itself. The engine keeps one
// instance of each pipeline it has run, so switching pipelines with setParams keeps every buffer.
// How to add a pipeline: docs/design.md#the-pipeline-table-and-how-to-add-a-pipeline.
#pragma once

#include "cuda/module_guard.h"
#include "cuda/observables.h"

#include <memory>

#include "core/engine.h"
#include "core/params.h"
#include "core/random.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

struct DeviceState;

// A set of bodies sorted by the pipeline's grid that the local rule's force runs over: one
// engine's whole state (the pipelines' own boidsStep), or one rank's local set, its owned bodies
// and its halo (the GPU store over ranks, src/dist). Both run the pipeline's force through
// CudaPipeline::localForce, so the kernels, the loop they take and their arguments are chosen in
// one place, the pipeline's file.
struct LocalForcePass {
  const core::SimParams* params = nullptr;
  uint32_t n = 0;  // bodies of this set (the pipeline planned for the whole world's: CudaPipeline::plan)
  core::Vec4* pos = nullptr;  // this set's positions and velocities, in the grid's order
  const core::Vec4* vel = nullptr;
  core::DrawKeys keys{};         // the rule's draws: ids in this set's order, the step, the seed
  core::Vec4* velOut = nullptr;  // the new velocities
  core::Vec4* posOut = nullptr;  // where localForce integrates to (rows); the grids integrate pos in place
  DeviceGrid grid{};             // the grid pipelines: the cells over this set's order
  const core::GridSpec* d_rowGrid = nullptr;  // the rows grids: the grid and its cells' offsets
  const uint32_t* cellFirst = nullptr;
  RowsStepOut rows;              // rows: the next sort's counts and a sample, where the engine wants them
  int flatTableRowsCap = 0;      // rows: a cap on the flat loop's table (0: none; a debug hook)
  int periodicSplit = 0;         // rows: 0 the plan's choice (periodicRowsSplit), 1 one kernel, 2 split (a debug hook)
  LaunchConfig lc{};
};

class CudaPipeline {
 public:
  virtual ~CudaPipeline() = default;
  // One boids step: the forces into the other velocity buffer, then the integration (pipelines
  // that serve boids; core::serves).
  virtual void boidsStep(DeviceState&) {}
  // Gravity accelerations of the current state into acc (current order), G applied (pipelines
  // that have a gravity method; rows and verlet run coherent's, core::effectivePipeline).
  virtual void gravityForces(DeviceState&) {}
  // Steps of the pipeline's cycle (core::Engine::stepsPerCycle).
  virtual int stepsPerCycle(const DeviceState&) const { return 1; }
  // A boids step whose force pass also samples the scalar observables of the state it starts
  // from into `sample` (cuda/observables.h), left pending (DeviceState::PendingStep): the state
  // stays the current one, possibly reordered, until the next boidsStep commits the pass's
  // results instead of running it again. Only where samplesInStep(); the engine's DeviceObserver
  // samples for the other pipelines.
  virtual bool samplesInStep() const { return false; }
  virtual void sampleStep(DeviceState&, const BoidSampleSums&) {}
  // Neighbour statistics of the current state over this pipeline's candidate set, in the
  // current force mode: the search around each body itself, without the periodic boundary's
  // images, as the CPU engine counts them. The engine has zeroed the counts
  // (DeviceState::beginNeighbourCount).
  virtual core::NeighbourStats neighbourStats(DeviceState&) = 0;
  // The local rule's force over a sorted set (LocalForcePass): the new velocities into velOut;
  // returns true when the positions were integrated too (into posOut: rows integrates in the force
  // kernel), false when localIntegrate must follow. Pipelines that run over ranks implement it
  // (core::runsOnRanks); the default throws.
  virtual bool localForce(const LocalForcePass&) const;
  // The integration of a pass whose localForce did not integrate: pos in place, from velOut.
  virtual void localIntegrate(const LocalForcePass&) const;

  // What the pipeline's steps need that follows from the parameters and the world's body count
  // alone (its grid, its reach, its loop), worked out once here rather than in every stage: the
  // engine calls it for the selected pipeline on setParams and reset, the store over ranks when
  // its parameters or its world's count change.
  virtual void plan(const core::SimParams& /*p*/, size_t /*total*/) {}

  // The pipeline's own buffers. reserve: room for n bodies before the next step (setParams and
  // reset call it for the selected pipeline; it may throw core::UsageError, which leaves the
  // engine as it was). invalidate: the state or the parameters changed, so what the pipeline
  // keeps across steps (lists) must be made again. release: its per-body buffers (reset).
  virtual void reserve(uint32_t /*n*/) {}
  virtual void invalidate() {}
  virtual void release() {}
  // debugSetListCapacity: a pipeline with lists gives them room for `entries` per body from the
  // next step on; the others have none to fix.
  virtual void fixListCapacity(uint32_t /*entries*/, uint32_t /*n*/) {}
};

// The pipeline that runs method p on the CUDA engine (pipelines/registry.cpp). Throws
// std::logic_error for a row of the table the CUDA engine does not implement.
std::unique_ptr<CudaPipeline> makeCudaPipeline(core::Pipeline p);

// The factories, one per pipeline file.
std::unique_ptr<CudaPipeline> makeNaivePipeline();      // pipelines/naive.cpp
std::unique_ptr<CudaPipeline> makeScatteredPipeline();  // pipelines/grid.cpp
std::unique_ptr<CudaPipeline> makeCoherentPipeline();   // pipelines/grid.cpp
std::unique_ptr<CudaPipeline> makeRowsPipeline();       // pipelines/rows.cpp
std::unique_ptr<CudaPipeline> makeTreePipeline();       // pipelines/tree.cpp
std::unique_ptr<CudaPipeline> makeVerletPipeline();     // pipelines/verlet.cpp
std::unique_ptr<CudaPipeline> makeClustersPipeline();   // pipelines/clusters.cpp

}  // namespace murmur::cuda
