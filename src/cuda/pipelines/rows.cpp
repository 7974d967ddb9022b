// The rows pipeline (boids): an exact search over pruned rows of a finer grid (rows_kernels.h),
// sorted by the counting sort of row_grid_sort.h. Gravity on rows runs coherent's method
// (core::effectivePipeline).
#include <algorithm>

#include "core/params.h"
#include "core/row_search.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/memory_plan.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

namespace {

using core::GridSpec;
using core::Stage;

class RowsPipeline final : public CudaPipeline {
 public:
  // A rows step: the grid (the counting sort starts from the counts the previous step's force
  // kernel made, when it made them), the reorder, then one kernel for the forces, the integration
  // into the other state buffers and the next step's counts. The force stage's time includes
  // the integration and the counting. A step whose pass a sample ran (sampleStep) only commits.
  void boidsStep(DeviceState& s) override {
    if (!s.pending.active) forcePass(s, BoidSampleSums{});
    s.pending.active = false;
    s.cur = 1 - s.cur;  // the ids stay where they are: the kernel kept the order
    s.velCur = 1 - s.velCur;
    s.rowSort.countsReady = s.pending.countsNext;
  }

  // The same pass with the sample of the state it reads (the state before the step), left pending.
  bool samplesInStep() const override { return true; }
  void sampleStep(DeviceState& s, const BoidSampleSums& sample) override {
    forcePass(s, sample);
    s.pending.active = true;
  }

  // The rows search over a sorted index of the current state (no reorder: state untouched).
  core::NeighbourStats neighbourStats(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float radius = core::searchRadius(s.params);
    const uint32_t cells = rowGridCells(s.params, s.n);
    s.ensureRowGrid(cells);
    const GridSpec* d_grid = s.gridSpecs.get() + kRowGridSlot;
    const int sel = sortIndexByRowGrid(s, d_grid, cells, lc);
    launchBoidsStatsRows(s.pos[s.cur].get(), s.n, d_grid, s.cellFirst.get(), s.index[sel].get(), radius,
                         radius * radius, s.counts.get(), lc);
    return s.neighbourMeans(true);
  }

 private:
  // Everything of a step up to its results in the other state buffers: the sort (which reorders
  // the current state), the force kernel and, sampled, the nearest distances the kernel could not
  // settle and the sample's end. The state the pass read stays current.
  static void forcePass(DeviceState& s, const BoidSampleSums& sample) {
    RowGridSort& sort = s.rowSort;
    const LaunchConfig lc = s.launch();
    const uint32_t cells = rowGridCells(s.params, s.n);
    s.ensureRowGrid(cells);
    const GridSpec* d_grid = s.gridSpecs.get() + kRowGridSlot;
    const bool countNext = sort.countingWanted(cells);  // this step's sort and the next one's count
    if (sort.countsReady && countNext)
      sort.placeCounted(s, cells, lc);
    else
      sort.sort(s, d_grid, cells, lc);
    sort.countsReady = false;
    RowsStepOut out;
    out.posOut = s.pos[1 - s.cur].get();
    out.dt = core::localDt(s.params);
    out.halfSize = s.params.halfSize;
    if (countNext) {
      out.keys = s.keys[0].get();
      out.rank = s.index[0].get();
      out.counts = sort.countsToFill();
      out.crowded = sort.crowdedFlag();
    }
    out.sample = sample;
    sort.recycleCounts();  // the zeroing overlaps the force kernel
    const float radius = core::searchRadius(s.params);
    s.timer.stage(Stage::Force, [&] {
      const core::RowLoop loop = core::rowLoop(s.params, s.n);
      int flatRows = loop == core::RowLoop::Flat ? rowsFlatTableRows(core::rowGrid(s.params, s.n), radius) : 0;
      if (flatRows > 0 && s.flatTableRowsCap > 0) flatRows = std::min(flatRows, s.flatTableRowsCap);
      launchBoidsRows(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.n, d_grid, s.cellFirst.get(), s.params,
                      radius, loop, flatRows, s.vel[1 - s.velCur].get(), out, lc);
    });
    if (sample.sums)
      launchRowsNearestBeyond(s.pos[s.cur].get(), s.id[s.idCur].get(), s.n, d_grid, s.cellFirst.get(), radius, sample,
                              lc);
    s.pending.countsNext = countNext;
  }
};

}  // namespace

std::unique_ptr<CudaPipeline> makeRowsPipeline() { return std::make_unique<RowsPipeline>(); }

}  // namespace murmur::cuda
