// The two classic uniform-grid pipelines: scattered (the bodies stay in place, the cells index
// them) and coherent (the bodies are reordered by cell). One class: they differ only in whether
// the grid build reorders the state, and the kernels take the same flag.
#include "core/params.h"
#include "core/rules/local_rules.h"
#include "core/rule_table.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/gravity_kernels.h"

namespace murmur::cuda {

namespace {

using core::ForceMode;
using core::Stage;

class GridPipeline final : public CudaPipeline {
 public:
  explicit GridPipeline(bool coherent) : coherent_(coherent) {}

  void boidsStep(DeviceState& s) override {
    LocalForcePass pass;
    pass.lc = s.launch();
    pass.grid = s.buildGrid(core::localRuleForce(), coherent_);  // may flip the buffers
    pass.params = &s.params;
    pass.n = s.n;
    pass.pos = s.pos[s.cur].get();
    pass.vel = s.vel[s.velCur].get();
    pass.keys = s.drawKeys();
    pass.velOut = s.vel[1 - s.velCur].get();
    s.timer.stage(Stage::Force, [&] { localForce(pass); });
    s.integrateBoids(pass.velOut, pass.lc);
  }

  // The grid kernel over a sorted set (coherent: the bodies in cell order; scattered: read
  // through the grid's index); the integration is a kernel of its own (localIntegrate).
  bool localForce(const LocalForcePass& p) const override {
    launchBoidsGrid(coherent_, p.pos, p.vel, p.n, p.grid, *p.params, core::searchRadius(*p.params), p.keys, p.velOut,
                    p.lc);
    return false;
  }
  void localIntegrate(const LocalForcePass& p) const override {
    launchBoidsIntegrate(p.pos, p.velOut, p.n, core::localDt(*p.params), p.params->halfSize, p.params->boundary, p.lc);
  }

  void gravityForces(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float eps2 = s.params.gravity.softening * s.params.gravity.softening;
    const float G = s.params.gravity.G;
    const DeviceGrid g = s.buildGrid(ForceMode::Gravity, coherent_);
    s.timer.stage(Stage::Force, [&] {
      launchGravityGrid(coherent_, s.pos[s.cur].get(), s.n, g, s.monopole.get(), eps2, G, s.acc.get(), lc);
    });
  }

  core::NeighbourStats neighbourStats(DeviceState& s) override { return s.classicGridStats(); }

 private:
  bool coherent_;
};

}  // namespace

std::unique_ptr<CudaPipeline> makeScatteredPipeline() { return std::make_unique<GridPipeline>(false); }
std::unique_ptr<CudaPipeline> makeCoherentPipeline() { return std::make_unique<GridPipeline>(true); }

}  // namespace murmur::cuda
