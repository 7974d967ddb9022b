// The naive pipeline: all pairs, tiled in shared memory; no grid.
#include "core/params.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/gravity_kernels.h"

namespace murmur::cuda {

namespace {

using core::Stage;
using core::Vec4;

class NaivePipeline final : public CudaPipeline {
 public:
  void boidsStep(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    Vec4* velNew = s.vel[1 - s.velCur].get();
    s.timer.stage(Stage::Force,
                  [&] {
                    launchBoidsNaive(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.n, s.params, s.drawKeys(), velNew,
                                     lc);
                  });
    s.integrateBoids(velNew, lc);
  }

  void gravityForces(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float eps2 = s.params.gravity.softening * s.params.gravity.softening;
    const float G = s.params.gravity.G;
    s.timer.stage(Stage::Force, [&] {
      launchGravityNaive({s.pos[s.cur].get(), s.n, s.pos[s.cur].get(), s.n, eps2, G, s.commonMass, s.acc.get()}, lc);
    });
  }

  // Every boid examines all others: the candidates are n - 1, only the neighbours are counted.
  core::NeighbourStats neighbourStats(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float radius = core::searchRadius(s.params);
    launchBoidsStatsNaive(s.pos[s.cur].get(), s.n, radius * radius, s.counts.get(), lc);
    return s.neighbourMeans(false);
  }
};

}  // namespace

std::unique_ptr<CudaPipeline> makeNaivePipeline() { return std::make_unique<NaivePipeline>(); }

}  // namespace murmur::cuda
