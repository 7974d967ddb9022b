// The verlet pipeline (boids): per-boid neighbour lists with a skin (verlet_lists.h), built on
// their own rows grid every few steps and reused in between; bodies whose list overflowed search
// the build's grid again. Gravity on verlet runs coherent's method (core::effectivePipeline).
#include "core/params.h"
#include "core/verlet.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/grid_build.h"
#include "cuda/verlet_kernels.h"
#include "cuda/verlet_lists.h"

namespace murmur::cuda {

namespace {

using core::GridSpec;
using core::Stage;
using core::Vec4;

class VerletPipeline final : public CudaPipeline {
 public:
  void boidsStep(DeviceState& s) override {
    VerletListState& L = lists();
    const LaunchConfig lc = s.launch();
    if (!L.valid || L.age >= L.plan.steps) buildLists(s, L);
    ++L.age;
    Vec4* velNew = s.vel[1 - s.velCur].get();
    s.timer.stage(Stage::Force, [&] {
      launchVerletForce(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.n, L.view(), s.params, s.drawKeys(), velNew, lc);
      launchVerletOverflow(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.n, s.gridSpecs.get() + kVerletGridSlot,
                           s.cellFirst.get(), L.plan, s.params.halfSize, L.view(), s.params, s.drawKeys(), velNew,
                           lc);
    });
    s.integrateBoids(velNew, lc);
  }

  int stepsPerCycle(const DeviceState& s) const override { return core::verletPlan(s.params).steps; }

  // The lists that a build with the steady plan would make now, counted over a sorted index of the
  // current state (no reorder: state untouched).
  core::NeighbourStats neighbourStats(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float radius = core::searchRadius(s.params);
    const core::VerletPlan plan = core::verletPlan(s.params);
    const uint32_t cells = core::verletGrid(s.params, s.n).numCells;
    s.ensureRowGrid(cells);
    GridSpec* d_grid = s.gridSpecs.get() + kVerletGridSlot;
    launchStoreGrid(d_grid, core::verletGrid(s.params, s.n), lc);
    // The lists' grid and offsets are overwritten (the overflow path searches them): the next
    // step builds again.
    lists().gridKnown = false;
    lists().valid = false;
    const int sel = sortIndexByRowGrid(s, d_grid, cells, lc);
    launchVerletStats(s.pos[s.cur].get(), s.n, d_grid, s.cellFirst.get(), s.index[sel].get(), plan,
                      s.params.halfSize, radius * radius, s.counts.get(), lc);
    return s.neighbourMeans(true);
  }

  void invalidate() override { lists_.invalidate(); }
  void release() override { lists_.release(); }
  void fixListCapacity(uint32_t entries, uint32_t n) override { lists().fixCapacity(entries, n); }

 private:
  // The lists, their scalars and event made on first use (a store over ranks makes pipelines it
  // never steps with lists).
  VerletListState& lists() {
    if (!created_) lists_.create(), created_ = true;
    return lists_;
  }
  VerletListState lists_;
  bool created_ = false;
};

}  // namespace

std::unique_ptr<CudaPipeline> makeVerletPipeline() { return std::make_unique<VerletPipeline>(); }

}  // namespace murmur::cuda
