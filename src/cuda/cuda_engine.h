// The CUDA engine: the same physics and pipelines as the CPU engine (core/cpu_engine.h), run on
// the GPU. Plain C++ header (no CUDA includes) so that code compiled by the host compiler can
// create and drive it; kernels and launchers sit behind the other headers of src/cuda.
//
// All work is enqueued on one stream (the default stream, so the renderer's interop map/unmap
// calls are ordered with it) and a step never waits for the device, except to read the stage
// events when profiling is on (Engine::setProfiling). readBodies, computeAccelerations and neighbourStats copy
// results to the host and therefore synchronise.
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.h"

namespace murmur::cuda {

// True when a CUDA driver and device are present and this build has code the device can run.
// Otherwise false, with the reason in *why. Never throws.
bool deviceAvailable(std::string* why = nullptr);

// The current device as the benchmark records it (core::DeviceInfo). Throws CudaError when no
// device can be queried.
core::DeviceInfo deviceInfo();

// Throws std::invalid_argument for invalid parameters and CudaError when no device can be used.
std::unique_ptr<core::Engine> createCudaEngine(const core::SimParams& p);

// Device bytes that reset() allocates for numBodies bodies with these parameters: the body
// arrays (double-buffered), the accelerations, the sort keys/indices and the sort's scratch, and
// the grid buffers of p's pipeline. Without a usable device the sort scratch is estimated.
size_t bytesNeeded(size_t numBodies, const core::SimParams& p);

// Throws core::UsageError ("--n N: needs X of GPU memory, <GPU> has Y free") when bytesNeeded
// exceeds the current device's free memory. reset() calls it; callers may call it before they
// build the bodies, to fail before any work.
void checkDeviceFits(size_t numBodies, const core::SimParams& p);

struct GridSnapshot;  // cuda/debug_api.h
class CudaEngine;
GridSnapshot snapshotGrid(CudaEngine& engine);

class CudaEngine final : public core::Engine, public core::DeviceAccess {
 public:
  // Uses the current CUDA device. Throws like createCudaEngine.
  explicit CudaEngine(const core::SimParams& p);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  core::EngineKind kind() const override { return core::EngineKind::Cuda; }
  // The GPU's name (cudaDeviceProp::name).
  std::string deviceName() const override;
  core::DeviceInfo deviceInfo() const override;
  void setParams(const core::SimParams& p) override;
  const core::SimParams& params() const override;
  // Throws core::UsageError when the device has less free memory than bytesNeeded().
  void reset(const core::Bodies& bodies) override;
  size_t numBodies() const override;
  void step(int numSteps = 1) override;
  // Waits for everything queued on the engine's stream (steps are asynchronous).
  void synchronize() override;
  core::StepProfile lastProfile() const override;
  core::Bodies readBodies() override;
  std::vector<core::Vec4> computeAccelerations() override;
  core::NeighbourStats neighbourStats() override;
  int stepsPerCycle() const override;
  // On the device, in place (cuda/observables.h).
  core::Observables observe(const core::ObserveRequest& r) override;

  // Tests only: the verlet lists get room for `entries` per body (rounded up to whole quads) from
  // the next step on, and keep it (longer lists take the overflow path). Call after reset().
  void debugSetListCapacity(uint32_t entries);

  // Tests only: how the rows and verlet pipelines sort by cell. Auto: the counting sort until a
  // cell holds more than kStableCellMax bodies (rows_kernels.h), then the radix sort until the next
  // reset or setParams; Radix and Counting force one. debugLastSortCounted: whether the last
  // sort by a rows grid was the counting sort.
  enum class GridSort { Auto, Radix, Counting };
  void debugSetGridSort(GridSort mode);
  bool debugLastSortCounted() const;

  // Tests only: the rows pipeline's flat loop (core::RowLoop::Flat, rows_kernels.h) lists at
  // most `rows` rows per boid in its table from the next step on, and walks the others at once;
  // 0 restores the table rowsFlatTableRows sizes.
  void debugSetFlatTableRows(int rows);

  // Tests only: under the periodic boundary the rows pipeline walks the images' rows in its one
  // kernel (Whole) or in a second kernel over the boids near a face (Split), whatever
  // periodicRowsSplit (rows_kernels.h) chose for the device (Planned).
  enum class PeriodicSplit { Planned = 0, Whole = 1, Split = 2 };
  void debugSetPeriodicSplit(PeriodicSplit mode);
  // Under --topological K: every body's K nearest, indexed by id (ids 0..N-1), each list in order
  // (d^2, id): the sets the step sums over (the CPU engine's topologicalNeighbours).
  std::vector<std::vector<uint32_t>> topologicalNeighbours();

  // The state on the device (core::DeviceAccess): the engine hands out itself.
  core::DeviceAccess* deviceAccess() override { return this; }
  // The DeviceAccess functions (core/engine.h): the copy into the renderer's buffers (the mapped
  // CUDA-GL interop buffers, see gl_interop.h, on the engine's stream, which is the stream they
  // are mapped on), the state in place, and the state in id order (kernels in id_order.h).
  void writeDrawBuffers(const core::BodyPointers& out) override;
  core::DeviceAccess::Bodies deviceBodies() const override;
  void gatherById(const core::BodyPointers& out) override;
  void scatterById(const core::ConstBodyPointers& in) override;
  using core::DeviceAccess::gatherById;
  using core::DeviceAccess::scatterById;
  using core::DeviceAccess::writeDrawBuffers;

 private:
  friend GridSnapshot snapshotGrid(CudaEngine& engine);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace murmur::cuda
