// The rows pipeline (boids): an exact search over pruned rows of a finer grid (rows_kernels.h),
// sorted by the counting sort of row_grid_sort.h. Gravity on rows runs coherent's method
// (core::effectivePipeline).
#include <algorithm>

#include "core/params.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_buffer.h"
#include "cuda/device_state.h"
#include "cuda/memory_plan.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

namespace {

using core::GridSpec;
using core::Stage;

// The flat loop's table rows for the world's count (0 for the other loops).
int flatTableRowsFor(const core::SimParams& p, size_t total, core::RowLoop loop) {
  return loop == core::RowLoop::Flat ? rowsFlatTableRows(core::rowGrid(p, total), core::searchRadius(p)) : 0;
}
// Whether the periodic boundary's step splits (periodicRowsSplit); never under wrap.
bool splitsFor(const core::SimParams& p, core::RowLoop loop, int flatRows) {
  return p.boundary == core::Boundary::Periodic && periodicRowsSplit(p, loop, flatRows, p.blockSize);
}
// Room in the split's lists for a set of n boids (a rank's set changes size from step to step).
size_t imagedRoom(size_t n) { return n + n / 4; }

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
  // Not under the periodic boundary: the force then also searches around the boids' images, and
  // the observables are the observer's to define across the faces (DeviceObserver samples).
  bool samplesInStep() const override { return plan_.wrap; }
  void sampleStep(DeviceState& s, const BoidSampleSums& sample) override {
    forcePass(s, sample);
    s.pending.active = true;
  }

  // The grid, the reach and the loop of the world's count: the loop (and the flat loop's table)
  // the density of the whole world asks for (core::rowLoop), the same on one GPU and on every rank.
  void plan(const core::SimParams& p, size_t total) override {
    plan_ = Plan{};
    plan_.periodic = p.boundary == core::Boundary::Periodic;
    plan_.wrap = p.boundary == core::Boundary::Wrap;
    if (total == 0) return;  // no step runs on an empty world
    plan_.cells = rowGridCells(p, total);
    plan_.radius = core::searchRadius(p);
    plan_.loop = core::rowLoop(p, total);
    plan_.flatRows = flatTableRowsFor(p, total, plan_.loop);
    plan_.dt = core::localDt(p);
    plan_.sumBytes = rowsImagedSumBytes(p);
    plan_.plane = p.dims == 2;
    plan_.headings = core::headingRecords(p);
    plan_.split = splitsFor(p, plan_.loop, plan_.flatRows);
    imaged_.release();  // sized for the rule's sums at the next pass
  }

  // The force kernel over a sorted set (of the planned world), integrating into posOut as it goes.
  bool localForce(const LocalForcePass& p) const override {
    int flatRows = plan_.flatRows;
    if (flatRows > 0 && p.flatTableRowsCap > 0) flatRows = std::min(flatRows, p.flatTableRowsCap);
    RowsStepOut out = p.rows;
    out.posOut = p.posOut;
    out.dt = plan_.dt;
    out.halfSize = p.params->halfSize;
    out.draws = p.keys;
    out.imagedSplit = p.periodicSplit == 0 ? plan_.split : p.periodicSplit == 2;
    if (plan_.periodic && out.imagedSplit) {
      // The list of boids near a face (RowsStepOut::imaged), their sums and their count, grown
      // with the set (a rank's set changes size from step to step).
      if (imaged_.size() < size_t(p.n) + 1) {
        const size_t room = imagedRoom(p.n);
        imaged_.allocate(room + 1);
        imagedSums_.allocate(room * ((plan_.sumBytes + 15) / 16));
      }
      out.imagedCount = imaged_.get();
      out.imaged = imaged_.get() + 1;
      out.imagedSums = imagedSums_.get();
    }
    launchBoidsRows(p.pos, p.vel, p.n, p.d_rowGrid, p.cellFirst, *p.params, plan_.radius, plan_.loop, flatRows,
                    p.velOut, out, p.lc);
    return true;
  }

  // The rows search over a sorted index of the current state (no reorder: state untouched).
  core::NeighbourStats neighbourStats(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const float radius = plan_.radius;
    const uint32_t cells = plan_.cells;
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
  void forcePass(DeviceState& s, const BoidSampleSums& sample) {
    RowGridSort& sort = s.rowSort;
    const LaunchConfig lc = s.launch();
    const uint32_t cells = plan_.cells;
    s.ensureRowGrid(cells);
    const GridSpec* d_grid = s.gridSpecs.get() + kRowGridSlot;
    const bool countNext = sort.countingWanted(cells);  // this step's sort and the next one's count
    if (plan_.plane) {
      if (s.plane.size() < s.n) s.plane.allocate(s.n);
      s.planeOut = s.plane.get();  // the sort's reorder also writes the plane records
      s.planeHeadings = plan_.headings;
    }
    if (sort.countsReady && countNext)
      sort.placeCounted(s, cells, lc);
    else
      sort.sort(s, d_grid, cells, lc);
    s.planeOut = nullptr;
    s.planeHeadings = false;
    sort.countsReady = false;
    LocalForcePass pass;
    pass.params = &s.params;
    pass.n = s.n;
    pass.pos = s.pos[s.cur].get();
    pass.vel = s.vel[s.velCur].get();
    pass.keys = s.drawKeys();
    pass.velOut = s.vel[1 - s.velCur].get();
    pass.posOut = s.pos[1 - s.cur].get();
    pass.d_rowGrid = d_grid;
    pass.cellFirst = s.cellFirst.get();
    if (countNext) {
      pass.rows.keys = s.keys[0].get();
      pass.rows.rank = s.index[0].get();
      pass.rows.counts = sort.countsToFill();
      pass.rows.crowded = sort.crowdedFlag();
    }
    pass.rows.sample = sample;
    if (plan_.plane) pass.rows.plane = s.plane.get();
    pass.flatTableRowsCap = s.flatTableRowsCap;
    pass.periodicSplit = s.periodicSplit;
    pass.lc = lc;
    sort.recycleCounts();  // the zeroing overlaps the force kernel
    s.timer.stage(Stage::Force, [&] { localForce(pass); });
    if (sample.sums)
      launchRowsNearestBeyond(s.pos[s.cur].get(), s.id[s.idCur].get(), s.n, d_grid, s.cellFirst.get(), plan_.radius,
                              sample, lc);
    s.pending.countsNext = countNext;
  }

  // What plan() worked out for the parameters and count of the last setParams or reset.
  struct Plan {
    uint32_t cells = 0;   // the rows grid's cells
    float radius = 0;     // the local rule's reach
    core::RowLoop loop{};  // the loop for the world's density
    int flatRows = 0;     // the flat loop's table rows (0 for the other loops)
    float dt = 0;         // the rule's time step, for the integration in the kernel
    bool periodic = false;  // the periodic boundary
    bool wrap = false;      // the wrap boundary: the only one whose steps sample (samplesInStep)
    size_t sumBytes = 0;    // a boid's partial sums (rowsImagedSumBytes)
    bool split = false;     // the periodic boundary's images in a second kernel (periodicRowsSplit)
    bool plane = false;     // candidates from the plane records (RowsStepOut::plane)
    bool headings = false;  // the records hold unit velocities (core::headingRecords)
  } plan_;
  // The periodic boundary's split: the count, then room for the listed boids
  // (RowsStepOut::imaged), and their sums (16-byte units, aligned for any rule's sums).
  mutable DeviceBuffer<uint32_t> imaged_;
  mutable DeviceBuffer<float4> imagedSums_;
};

}  // namespace

std::unique_ptr<CudaPipeline> makeRowsPipeline() { return std::make_unique<RowsPipeline>(); }

size_t rowsPipelineBytes(const core::SimParams& p, size_t n) {
  if (n == 0 || !core::runsLocalRule(p)) return 0;
  size_t bytes = p.dims == 2 ? n * sizeof(core::Vec4) : 0;  // the plane records (DeviceState::plane)
  const core::RowLoop loop = core::rowLoop(p, n);
  if (splitsFor(p, loop, flatTableRowsFor(p, n, loop))) {
    const size_t room = imagedRoom(n);
    bytes += (room + 1) * sizeof(uint32_t) + room * ((rowsImagedSumBytes(p) + 15) / 16) * 16;
  }
  return bytes;
}

}  // namespace murmur::cuda
