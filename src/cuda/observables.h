// Observables on the GPU (core/observables.h; docs/observables.md): reductions over the state in
// place on the engine's stream. Only the sums (a few dozen doubles) come back to the host, never
// the state. Boids: the observables' own grid of the world at cell width = the largest rule
// radius (label, radix sort, cell bounds, a gather into cell order), neighbour counts and the
// nearest neighbour through it, flocks by connected components (min-label hooking with pointer
// jumping over the grid's neighbours); under the periodic boundary every distance and flock
// centre by the minimum image, as the CPU reference (core/observables.h); the group columns
// (core::groupObservablesApply) by two reductions, the centroid then the sums about it. Gravity:
// cuda/gravity_observables.h.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/engine.h"
#include "core/observables.h"
#include "cuda/gravity_observables.h"

namespace murmur::cuda {

// The scalar boids observables as sums over the boids (doubles, in this order): the unit
// velocity (x, y, z), the speed, the nearest other boid's distance, the other boids within the
// cohesion, separation and alignment radii. DeviceObserver's boids kernel adds them up, and so does
// a pipeline whose force pass samples the state it starts from (CudaPipeline::sampleStep).
enum BoidSum : int { kPolX, kPolY, kPolZ, kSpeed, kNearest, kCount1, kCount2, kCount3, kNumBoidSums };

// Where a force pass puts its sample (DeviceObserver::beginBoidSample): the sums on the device;
// a list with room for every boid, for the boids whose nearest other boid the pass could not
// settle (none of its candidates lies inside its search radius): their slots in
// beyond[0, *beyondCount) and the squared distance of their nearest candidate (an upper bound;
// infinity without one) in beyondNearest2; and a count of finished blocks. The sums and both
// counts are zero when a pass starts: launchRowsNearestBeyond settles the list, adds its distances
// to sums[kNearest], copies the totals to `host` (pinned host memory the device writes) and
// zeroes the sums and counts for the next sample. `hint`, by id: the distance each listed boid's
// search settled and the stamp of the sample that settled it; a boid listed again in the next
// sample (`stamp`, one more) starts its search from there (a hint only: each search stays exact).
struct BoidSampleSums {
  double* sums = nullptr;
  uint32_t* beyond = nullptr;
  float* beyondNearest2 = nullptr;
  uint32_t* beyondCount = nullptr;
  uint32_t* blocksDone = nullptr;
  double* host = nullptr;
  uint2* hint = nullptr;
  uint32_t stamp = 0;
};

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

  // A sample taken by a force pass: where the pass over n boids puts its sums and list, then,
  // once the pass is queued, the observables from the sums (waits for the stream).
  BoidSampleSums beginBoidSample(size_t n);
  core::Observables finishBoidSample(size_t n, cudaStream_t stream);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buf_;  // the boids'
  GravityObserver gravity_;
};

}  // namespace murmur::cuda
