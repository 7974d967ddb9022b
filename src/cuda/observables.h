// Observables on the GPU (core/observables.h; docs/observables.md): reductions over the state in
// place on the engine's stream. Only the sums (a few dozen doubles) come back to the host, never
// the state. Boids: the observables' own grid of the world at cell width = the largest rule
// radius (label, radix sort, cell bounds, a gather into cell order), neighbour counts and the
// nearest neighbour through it, flocks by connected components (min-label hooking with pointer
// jumping over the grid's neighbours). Gravity: sums, the exact all-pairs potential tiled through
// shared memory up to ObserveRequest::potentialMaxN bodies, Lagrangian radii by a radix sort of
// the distances from the centre of mass and a scan of the masses.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "core/engine.h"
#include "core/observables.h"

namespace murmur::cuda {

// The scratch buffers of the observables, kept between samples (allocated on the first sample and
// when N grows; freed with the engine).
class DeviceObserver {
 public:
  DeviceObserver();
  ~DeviceObserver();
  DeviceObserver(const DeviceObserver&) = delete;
  DeviceObserver& operator=(const DeviceObserver&) = delete;

  // The observables of the state `b` (any order) with parameters p, queued on `stream`; waits
  // for the sums. Derived columns are left to core::ObservablesSeries.
  core::Observables observe(const core::DeviceAccess::Bodies& b, const core::SimParams& p,
                            const core::ObserveRequest& r, cudaStream_t stream);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buf_;
};

}  // namespace murmur::cuda
