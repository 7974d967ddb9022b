// The clusters pipeline (boids): the cluster-pair search of core/cluster_search.h, one warp per
// cluster (cluster_kernels.h), the bodies sorted on the cluster grid by the rows grids' sort
// (row_grid_sort.h) every step. Gravity on clusters runs coherent's method
// (core::effectivePipeline).
#include "core/params.h"
#include "cuda/cluster_kernels.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/memory_plan.h"

namespace murmur::cuda {

namespace {

using core::GridSpec;
using core::Stage;

class ClustersPipeline final : public CudaPipeline {
 public:
  void boidsStep(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const uint32_t cells = rowGridCells(s.params, s.n);
    s.ensureRowGrid(cells);
    const GridSpec* d_grid = s.gridSpecs.get() + kRowGridSlot;  // the cluster grid (cuda_engine.cpp)
    s.rowSort.sort(s, d_grid, cells, lc);
    // One kernel for the forces and the integration, into the other state buffers (the force
    // stage's time includes the integration).
    s.timer.stage(Stage::Force, [&] {
      launchClusterForce(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.n, d_grid, s.cellFirst.get(), s.params,
                         s.params.halfSize, s.drawKeys(), s.vel[1 - s.velCur].get(), s.pos[1 - s.cur].get(), lc);
    });
    s.cur = 1 - s.cur;  // the ids stay where they are: the kernel kept the order
    s.velCur = 1 - s.velCur;
  }

  // The cluster search over a sorted index of the current state (no reorder: state untouched).
  core::NeighbourStats neighbourStats(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const uint32_t cells = rowGridCells(s.params, s.n);
    s.ensureRowGrid(cells);
    const GridSpec* d_grid = s.gridSpecs.get() + kRowGridSlot;
    const int sel = sortIndexByRowGrid(s, d_grid, cells, lc);
    launchClusterStats(s.pos[s.cur].get(), s.n, d_grid, s.cellFirst.get(), s.index[sel].get(), s.params,
                       s.counts.get(), lc);
    return s.neighbourMeans(true);
  }
};

}  // namespace

std::unique_ptr<CudaPipeline> makeClustersPipeline() { return std::make_unique<ClustersPipeline>(); }

}  // namespace murmur::cuda
