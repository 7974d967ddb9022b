// The gravity observables on the GPU (cuda/observables.h, which holds one): the sums of mass,
// kinetic energy, centre of mass, momentum and angular momentum, the exact all-pairs potential
// tiled through shared memory up to ObserveRequest::potentialMaxN bodies, and the Lagrangian radii
// by a radix sort of the distances from the centre of mass and a scan of the masses.
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>

#include "core/engine.h"
#include "core/observables.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"

namespace murmur::cuda {

class GravityObserver {
 public:
  // The gravity columns of the state `b` into `out`, queued on lc.stream; waits for the sums.
  void observe(const core::DeviceAccess::Bodies& b, const core::SimParams& p, const core::ObserveRequest& req,
               const LaunchConfig& lc, core::Observables& out);

 private:
  // Allocated on the first sample and when N grows: 32 bytes per body.
  void ensure(size_t n);
  void ensureTemp(size_t bytes) {
    if (bytes > temp_.size()) temp_.allocate(bytes);
  }
  size_t n_ = 0;
  DeviceBuffer<double> sums_, massIn_, cum_;
  DeviceBuffer<float> radius_[2], mass_[2];
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace murmur::cuda
