// The GPU store's boids local step (device_store_impl.h). The local set of the next step is read
// in place where the exchange left it (see device_store.cu), labelled with its cells and sorted
// stably by cell (on the coherent grid: labelLocalKernel and the radix sort), and the forces run on
// it.
//
// Rows: the same, on the rows grid, with the one-GPU rows force kernel (cuda/rows_kernels.h, the
// loop core::rowLoop picks for the whole count). The local set is sorted by a counting sort over
// the rank's own run of cells (the slab, its halo and the planes the halo's searches reach: local
// cell keys, so the counts are a rank's share of the grid, not the whole world's; the whole grid
// for a slab whose halo wraps around z under the periodic boundary): one atomic per
// body after the exchange, a scan of the local counts straight into the cell offsets (the counts
// are then zeroed on a side stream, where that overlaps the force kernel), a placement and a
// gather that puts the bodies of each cell back in their local-set order. That is the
// permutation of a stable sort by cell, the one the radix sort gives; a cell of more than
// kStableCellMax bodies (seen before anything is placed) makes that step and the later ones take
// the radix sort. The kernel's sums depend only on the slots of each row relative to the boid's
// own slot, and the halo holds every plane a row can reach (slabs.h), so they are the one-GPU
// sums.
#include "dist/device_store_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "core/format.h"
#include "core/physics.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/grid_build.h"
#include "cuda/rows_kernels.h"

namespace murmur::dist {

// The local set of the next step, read in place: recv[0, numLow), then the owned slots
// [ownedBegin, ownedBegin + numOwn) of the current arrays, then recv[numLow, numLow + numHigh).
// In this order it is the global cell order of the last step restricted to this rank.
struct LocalSet {
  const BodyRecord* recv;
  core::ConstBodyPointers cur;  // the current arrays, every attribute
  uint32_t numLow, ownedBegin, numOwn;

  // Slot of element v in recv (true) or in the current arrays (false).
  __device__ bool inRecv(uint32_t v, uint32_t& at) const {
    if (v < numLow) return at = v, true;
    if (v < numLow + numOwn) return at = ownedBegin + (v - numLow), false;
    return at = v - numOwn, true;
  }
  // The cell of g that element v's position lies in.
  __device__ core::Int3 cellOfElement(uint32_t v, const core::GridSpec& g) const {
    uint32_t at = 0;
    const core::Vec4 p = inRecv(v, at) ? recv[at].pos : cur.pos[at];
    return core::cellOf(g, core::xyz(p));
  }
  // Element v, every attribute, into slot k of the output arrays.
  __device__ void copyElement(uint32_t v, uint32_t k, const core::BodyPointers& out) const {
    uint32_t at = 0;
    if (inRecv(v, at))
      storeRecord(recv[at], out, k);
    else
      cuda::moveBody(out, k, cur, at);
  }
};

namespace {

using core::Vec4;
using core::msSince;

// Local cell key of a body this rank no longer needs: past every cell.
constexpr uint32_t kGone = 0xffffffffu;

// labelCells over the local set: the cell key, or numCells for a body this rank no longer needs
// (it moved beyond the halo planes), which the stable sort puts after every cell.
__global__ void labelLocalKernel(LocalSet s, uint32_t m, SlabLayout l, int me, core::GridSpec g,
                                 uint32_t* __restrict__ keys, uint32_t* __restrict__ index) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= m) return;
  const core::Int3 c = s.cellOfElement(v, g);
  keys[v] = rankNeeds(l, me, c.z) ? core::cellKey(g, c.x, c.y, c.z) : g.numCells;
  index[v] = v;
}

// reorderBodies over the local set: out[k] = element sortedIndex[k].
__global__ void reorderLocalKernel(LocalSet s, const uint32_t* __restrict__ sortedIndex, uint32_t n,
                                   const core::BodyPointers out) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  s.copyElement(sortedIndex[k], k, out);
}

// The owned slots, the sorted keys of this rank's slab [bound[0], bound[3]), and the slots where
// the keys reach bound[1] and bound[2] (the edges the next selection reads): for each bound the
// first slot whose key is at least it.
struct SlotBounds {
  uint32_t key[4];
};
__global__ void ownedRangeKernel(const uint32_t* __restrict__ sortedKeys, uint32_t n, SlotBounds b,
                                 Control* __restrict__ ctl) {
  uint32_t* const out[4] = {&ctl->ownedBegin, &ctl->edgeLow, &ctl->edgeHigh, &ctl->ownedEnd};
  *out[threadIdx.x] = cuda::lowerBound(sortedKeys, n, b.key[threadIdx.x]);
}

// The counting sort of the local set (see the top). Body v of the local set takes the next free
// rank of its local cell (key - base), or kGone when this rank no longer needs it.
__global__ void countLocalKernel(LocalSet s, uint32_t m, SlabLayout l, int me, core::GridSpec g, uint32_t base,
                                 uint32_t* __restrict__ keys, uint32_t* __restrict__ rank,
                                 uint32_t* __restrict__ counts, Control* __restrict__ ctl) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= m) return;
  const core::Int3 c = s.cellOfElement(v, g);
  if (!rankNeeds(l, me, c.z)) {
    keys[v] = kGone;
    return;
  }
  const uint32_t key = core::cellKey(g, c.x, c.y, c.z) - base;
  const uint32_t r = atomicAdd(counts + key, 1u);
  keys[v] = key;
  rank[v] = r;
  if (r == cuda::kStableCellMax) ctl->crowded = 1u;
}

// placed[cellFirst[key] + rank] = v (cellFirst: the local cells' offsets).
__global__ void placeLocalKernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ rank, uint32_t m,
                                 const uint32_t* __restrict__ cellFirst, uint32_t* __restrict__ placed) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= m) return;
  const uint32_t key = keys[v];
  if (key == kGone) return;
  placed[cellFirst[key] + rank[v]] = v;
}

// Slot p's body goes to the slot of its cell that the number of the cell's bodies before it in
// the local set gives (no cell holds more than kStableCellMax here); its global key goes with it.
__global__ void reorderCountedKernel(LocalSet s, const uint32_t* __restrict__ keys,
                                     const uint32_t* __restrict__ placed, uint32_t n,
                                     const uint32_t* __restrict__ cellFirst, uint32_t base,
                                     const core::BodyPointers out, uint32_t* __restrict__ oKey) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t v = placed[k], key = keys[v];
  const uint32_t first = cellFirst[key], end = cellFirst[key + 1];
  uint32_t dst = first;
  for (uint32_t t = first; t < end; ++t) dst += placed[t] < v ? 1u : 0u;
  s.copyElement(v, dst, out);
  oKey[dst] = key + base;
}

}  // namespace

template <typename Lap>
bool DeviceStore::countedSort(const LocalSet& set, uint32_t m, uint32_t n, const SlabLayout& l,
                              const core::GridSpec& g, int me, uint32_t fromCell, uint32_t endCell, Lap& lap,
                              core::StepProfile& prof) {
  lastCounted_ = false;
  const uint32_t cells = endCell - fromCell;
  if (!rows(params_) || crowded_ || !cuda::countingSortFits(cells)) return false;
  const cuda::LaunchConfig lc = launch();
  if (zeroing_) {
    // The counts are zero once the side stream has cleared them after the last scan.
    MURMUR_CUDA_CHECK(cudaStreamWaitEvent(stream_, zeroed_, 0));
    zeroing_ = false;
  }
  if (counts_.size() < size_t(cells) + 1) {
    MURMUR_CUDA_CHECK(cudaStreamSynchronize(side_));
    counts_.allocate(size_t(cells) + cells / 4 + 1024);
    MURMUR_CUDA_CHECK(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), stream_));
    scanTemp_.allocate(cuda::cellScanTempBytes(static_cast<uint32_t>(counts_.size() - 1)));
  }
  MURMUR_CUDA_CHECK(cudaMemsetAsync(&ctl_.get()->crowded, 0, sizeof(uint32_t), stream_));
  countLocalKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(set, m, l, me, g, fromCell, keys_[0].get(),
                                                              idx_[0].get(), counts_.get(), ctl_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  readControl();
  lap(prof.labelMs);
  if (host_.crowded) {
    // The radix sort from here on; the counts go back to zero.
    crowded_ = true;
    MURMUR_CUDA_CHECK(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), stream_));
    return false;
  }
  uint32_t* cellFirst = cellFirst_.get() + fromCell;  // the local cells' offsets are the global ones
  cuda::launchScanCellCounts(counts_.get(), cells, cellFirst, scanTemp_.get(), scanTemp_.size(), lc);
  // The scan read the counts: they go back to zero on the side stream for the next step.
  MURMUR_CUDA_CHECK(cudaEventRecord(scanned_, stream_));
  MURMUR_CUDA_CHECK(cudaStreamWaitEvent(side_, scanned_, 0));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(counts_.get(), 0, (size_t(cells) + 1) * sizeof(uint32_t), side_));
  MURMUR_CUDA_CHECK(cudaEventRecord(zeroed_, side_));
  zeroing_ = true;
  lap(prof.boundsMs);
  placeLocalKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(keys_[0].get(), idx_[0].get(), m, cellFirst,
                                                              idx_[1].get());
  MURMUR_CUDA_LAUNCH_CHECK();
  lap(prof.sortMs);
  reorderCountedKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(set, keys_[0].get(), idx_[1].get(), n, cellFirst,
                                                                  fromCell, gatherTarget(), keys_[1].get());
  MURMUR_CUDA_LAUNCH_CHECK();
  sorted_ = 1;  // keys_[1]: the sorted global keys (idx_[1] is no sorted index: nothing reads it)
  lastCounted_ = true;
  lap(prof.reorderMs);
  return true;
}

void DeviceStore::boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, uint64_t step,
                                 core::StepProfile& prof) {
  const size_t numOwn = numOwned();
  const uint32_t m = static_cast<uint32_t>(numLow_ + numOwn + numHigh_);
  const uint32_t n = static_cast<uint32_t>(m - numGone_);  // the bodies this rank needs
  const LocalSet set{recv_.get(), core::readOnly(current()), static_cast<uint32_t>(numLow_),
                     static_cast<uint32_t>(ownedBegin_), static_cast<uint32_t>(numOwn)};
  numLow_ = numHigh_ = numGone_ = 0;
  edgesFor_.valid = false;
  if (n == 0) {
    n_ = ownedBegin_ = ownedEnd_ = 0;
    return;
  }
  const cuda::LaunchConfig lc = launch();
  const bool timing = profile_;
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](double& slot) {
    if (!timing) return;
    synchronize();
    slot = msSince(t0);
    t0 = std::chrono::steady_clock::now();
  };
  // Only scratch buffers grow here: the current arrays and the arrivals are still read.
  ensureWork(m);
  ensureGrid(g.numCells);
  if (timing) synchronize(), t0 = std::chrono::steady_clock::now();
  cuda::launchStoreGrid(gridSpec_.get(), g, lc);
  // The cells of the local set's planes (the slab and its halo) and of those its halo bodies'
  // searches reach: the whole grid's cells are many times more (every other rank's slab). Where
  // the halo wraps around z (the periodic boundary) and these planes come near a face, the local
  // set holds planes at both ends of the grid and the searches around its bodies' images read
  // cells at both: every cell. Away from the faces no body of the local set has an image along z.
  const int reach = 2 * std::max(l.halo, l.wrapHalo);
  const bool wraps = l.wrapHalo > 0 && (l.start[me] - reach < 0 || l.start[me + 1] + reach > g.dims.z);
  const uint32_t fromCell = wraps ? 0u : firstKeyOfPlane(g, std::max(0, l.start[me] - reach));
  const uint32_t endCell = wraps ? g.numCells : firstKeyOfPlane(g, std::min(g.dims.z, l.start[me + 1] + reach));
  if (!countedSort(set, m, n, l, g, me, fromCell, endCell, lap, prof)) {
    labelLocalKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(set, m, l, me, g, keys_[0].get(), idx_[0].get());
    MURMUR_CUDA_LAUNCH_CHECK();
    lap(prof.labelMs);
    // One more key value than cells: the bodies that left sort after every cell.
    sorted_ = cuda::sortByCell(sortBuffers(), m, cuda::keyBitsFor(g.numCells + 1), lc);
    lap(prof.sortMs);
    findCellBegins(keys_[sorted_].get(), n, fromCell, endCell, lc);
    lap(prof.boundsMs);
    reorderLocalKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(set, idx_[sorted_].get(), n, gatherTarget());
    MURMUR_CUDA_LAUNCH_CHECK();
    lap(prof.reorderMs);
  }
  const cuda::DeviceGrid dg{gridSpec_.get(), keys_[sorted_].get(), idx_[sorted_].get(), cellStart_.get(),
                            cellEnd_.get(), g.numCells};
  // The owned slots, and the edges of the slab the next selection reads: a body moves at most
  // maxSpeed dt (plus a plane for rounding) from the plane it was sorted in, and the planes other
  // ranks read lie within the halo of a face of the slab (the halo across the z faces included).
  const double jump = std::ceil(double(core::localMaxSpeed(params_)) * double(core::localDt(params_)) * double(g.invCellWidth));
  const int edge = std::max(l.halo, l.wrapHalo) + 1 + static_cast<int>(std::min(jump, double(g.dims.z)));
  const int lowPlane = std::min(l.start[me + 1], l.start[me] + edge);
  const int highPlane = std::max(lowPlane, l.start[me + 1] - edge);
  const SlotBounds bounds{{firstKeyOfPlane(g, l.start[me]), firstKeyOfPlane(g, lowPlane),
                           firstKeyOfPlane(g, highPlane), firstKeyOfPlane(g, l.start[me + 1])}};
  ownedRangeKernel<<<1, 4, 0, stream_>>>(keys_[sorted_].get(), n, bounds, ctl_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  // Forces for every body in the local set; the halo's results are dropped (it is a few planes
  // of many, and skipping them would cost a branch per thread in the hot kernel). The pipeline's
  // own force pass, the one a single GPU runs (CudaPipeline::localForce): its kernel, loop and
  // arguments planned in its file for the whole world's count, over the local set.
  cuda::LocalForcePass pass;
  pass.params = &params_;
  pass.n = n;
  pass.pos = aPos_.get();
  pass.vel = aVel_.get();
  pass.keys = core::DrawKeys{aId_.get(), step, params_.seed};
  pass.velOut = velNew_.get();
  pass.posOut = rPos_.get();
  pass.grid = dg;
  pass.d_rowGrid = gridSpec_.get();
  pass.cellFirst = cellFirst_.get();
  pass.lc = lc;
  const cuda::CudaPipeline& pipeline = this->pipeline();
  if (pipeline.localForce(pass)) {
    std::swap(aPos_, rPos_);  // the integrated positions are the new state below
    lap(prof.forceMs);
  } else {
    lap(prof.forceMs);
    pipeline.localIntegrate(pass);
  }
  // The new state is the local set in cell order; its owned slots are one range, the halo
  // around it stays until the next step reads only that range.
  std::swap(pos_, aPos_);
  std::swap(vel_, velNew_);
  std::swap(id_, aId_);
  std::swap(species_, aSpecies_);
  n_ = n;
  readControl();
  ownedBegin_ = host_.ownedBegin, ownedEnd_ = host_.ownedEnd;
  edgeLow_ = host_.edgeLow, edgeHigh_ = host_.edgeHigh;
  edgesFor_ = EdgesFor{true, l.start[me], l.start[me + 1], l.halo, l.wrapHalo};
  lap(prof.integrateMs);
}

void DeviceStore::findCellBegins(const uint32_t* sortedKeys, uint32_t n, uint32_t fromCell, uint32_t endCell,
                                 const cuda::LaunchConfig& lc) {
  if (rows(params_))
    cuda::launchFindCellFirstIn(sortedKeys, n, fromCell, endCell, cellFirst_.get(), lc);
  else
    cuda::launchFindCellBoundsIn(sortedKeys, n, fromCell, endCell, cellStart_.get(), cellEnd_.get(), lc);
}

void DeviceStore::ensureWork(size_t m) {
  ensure(aPos_, m), ensure(aVel_, m), ensure(aId_, m), ensure(aSpecies_, m), ensure(velNew_, m);
  if (rows(params_)) ensure(rPos_, m);
  for (int k = 0; k < 2; ++k) ensure(keys_[k], m), ensure(idx_[k], m);
  if (sortTempFor_ < keys_[0].size()) {
    // Sized for the capacity the key buffers just got, so it grows as rarely as they do.
    const size_t cap = keys_[0].size();
    sortTemp_.allocate(cuda::sortTempBytes(static_cast<uint32_t>(cap), 32));
    sortTempFor_ = cap;
  }
}

void DeviceStore::ensureGrid(uint32_t cells) {
  if (rows(params_)) {
    if (cellFirst_.size() < size_t(cells) + 1) cellFirst_.allocate(size_t(cells) + 1);
  } else if (cellStart_.size() < cells) {
    cellStart_.allocate(cells);
    cellEnd_.allocate(cells);
  }
}

}  // namespace murmur::dist
