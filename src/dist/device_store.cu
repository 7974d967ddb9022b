// The GPU store. Slabs are runs of whole cell planes along z, the slowest axis of the cell key
// (slabs.h), so in the global cell order a rank's bodies form one contiguous piece: whatever it
// receives from lower ranks comes before its own bodies, whatever it receives from higher ranks
// after them, and each peer packs its records in its own cell order. The store therefore never
// merges: the next local step labels a virtual local set [records from lower ranks][own bodies
// still needed][records from higher ranks] in place, and the stable sort by cell does the rest.
// Bodies that left are labelled past the last cell, sort to the end and are dropped there.
// Per step, besides the stages the one-GPU pipeline runs, this costs one selection pass over the
// owned bodies near the slab's faces (who leaves or is someone's halo; see below), a few small
// passes over the selected ones (a handful of planes), and three small reads of counts.
//
// Rows: the same, on the rows grid, with the one-GPU rows force kernel (cuda/rows_kernels.h, the
// loop core::rowLoop picks for the whole count). The local set is sorted by a counting sort over
// the rank's own run of cells (the slab, its halo and the planes the halo's searches reach: local
// cell keys, so the counts are a rank's share of the grid, not the whole world's): one atomic per
// body after the exchange, a scan of the local counts straight into the cell offsets (the counts
// are then zeroed on a side stream, where that overlaps the force kernel), a placement and a
// gather that puts the bodies of each cell back in their local-set order. That is the
// permutation of a stable sort by cell, the one the radix sort gives; a cell of more than
// kStableCellMax bodies (seen before anything is placed) makes that step and the later ones take
// the radix sort. The kernel's sums depend only on the slots of each row relative to the boid's
// own slot, and the halo holds every plane a row can reach (slabs.h), so they are the one-GPU
// sums.
//
// The selection before the exchange reads only the owned bodies that can matter to another rank:
// a body moves at most maxSpeed dt a step, so one that was sorted deeper inside the slab than the
// halo plus that distance (and a plane for rounding) neither leaves nor is anyone's halo. Right
// after the slab moved, every owned body is read.
#include "dist/device_store.h"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "core/errors.h"
#include "core/format.h"
#include "core/physics.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda/device_utils.cuh"
#include "cuda/gravity_kernels.h"
#include "cuda/grid_build.h"
#include "cuda/rows_kernels.h"
#include "cuda/splat_kernels.h"
#include "cuda/tree_build.h"

namespace murmur::dist {

namespace {

using core::Vec4;
using cuda::DeviceBuffer;

// Counts the host reads back, in one small copy each time it needs them.
struct Control {
  uint32_t numSelected;          // owned bodies that leave or are another rank's halo
  uint32_t ownedBegin, ownedEnd;  // the owned slots of the local arrays (the rest is halo)
  // The owned slots the next selection reads ([ownedBegin, edgeLow) and [edgeHigh, ownedEnd)).
  uint32_t edgeLow, edgeHigh;
  uint32_t crowded;              // the counting sort met a cell of more than kStableCellMax bodies
  uint32_t perRank[kMaxRanks];   // selected bodies each rank needs (this rank: those it keeps)
};

// Local cell key of a body this rank no longer needs: past every cell.
constexpr uint32_t kGone = 0xffffffffu;

// An owned body some other rank needs next step, or that this rank no longer needs. Most bodies
// are needed by this rank alone; those stay where they are.
struct LeavesOrShared {
  const Vec4* pos;
  SlabLayout l;
  core::GridSpec g;
  int me;
  __device__ bool operator()(uint32_t i) const {
    int lo = 0, hi = 0;
    neededRanks(l, planeOf(g, pos[i].z), lo, hi);
    return lo != me || hi != me;
  }
};

// A selected body that `rank` needs next step.
struct NeededBy {
  const Vec4* pos;
  SlabLayout l;
  core::GridSpec g;
  int rank;
  __device__ bool operator()(uint32_t i) const { return rankNeeds(l, rank, planeOf(g, pos[i].z)); }
};

// The local set of the next step, read in place: recv[0, numLow), then the owned slots
// [ownedBegin, ownedBegin + numOwn) of the current arrays, then recv[numLow, numLow + numHigh).
// In this order it is the global cell order of the last step restricted to this rank.
struct LocalSet {
  const BodyRecord* recv;
  const Vec4* pos;
  const Vec4* vel;
  const uint32_t* id;
  uint32_t numLow, ownedBegin, numOwn;

  // Slot of element v in recv (true) or in the current arrays (false).
  __device__ bool inRecv(uint32_t v, uint32_t& at) const {
    if (v < numLow) return at = v, true;
    if (v < numLow + numOwn) return at = ownedBegin + (v - numLow), false;
    return at = v - numOwn, true;
  }
};

// labelCells over the local set: the cell key, or numCells for a body this rank no longer needs
// (it moved beyond the halo planes), which the stable sort puts after every cell.
__global__ void labelLocalKernel(LocalSet s, uint32_t m, SlabLayout l, int me, core::GridSpec g,
                                 uint32_t* __restrict__ keys, uint32_t* __restrict__ index) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= m) return;
  uint32_t at = 0;
  const Vec4 p = s.inRecv(v, at) ? s.recv[at].pos : s.pos[at];
  const core::Int3 c = core::cellOf(g, core::xyz(p));
  keys[v] = rankNeeds(l, me, c.z) ? core::cellKey(g, c.x, c.y, c.z) : g.numCells;
  index[v] = v;
}

// reorderBodies over the local set: out[k] = element sortedIndex[k].
__global__ void reorderLocalKernel(LocalSet s, const uint32_t* __restrict__ sortedIndex, uint32_t n,
                                   Vec4* __restrict__ oPos, Vec4* __restrict__ oVel, uint32_t* __restrict__ oId) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  uint32_t at = 0;
  if (s.inRecv(sortedIndex[k], at)) {
    const BodyRecord& r = s.recv[at];
    oPos[k] = r.pos, oVel[k] = r.vel, oId[k] = r.id;
  } else {
    oPos[k] = s.pos[at], oVel[k] = s.vel[at], oId[k] = s.id[at];
  }
}

// The records for `peer`, packed after those of the lower peers (counts from the selections).
// tag: the body's place in the last step's cell order, as the host store's records carry it
// (cellBegin: the first slot of every occupied cell, the coherent grid's cellStart or the rows
// grid's cellFirst).
__global__ void packRecordsKernel(const uint32_t* __restrict__ idx, const Control* __restrict__ ctl, int peer,
                                  int me, const Vec4* __restrict__ pos, const Vec4* __restrict__ vel,
                                  const uint32_t* __restrict__ id, const uint32_t* __restrict__ sortedKeys,
                                  const uint32_t* __restrict__ cellBegin, BodyRecord* __restrict__ send) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= ctl->perRank[peer]) return;
  uint32_t at = 0;
  for (int q = 0; q < peer; ++q)
    if (q != me) at += ctl->perRank[q];
  const uint32_t i = idx[k], key = sortedKeys[i];
  send[at + k] = BodyRecord{pos[i], vel[i], (static_cast<uint64_t>(key) << 32) | (i - cellBegin[key]), id[i], 0};
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

// The owned slots the selection reads: [begin, begin + numLow) and then [highBegin, ...).
struct EdgeSlot {
  uint32_t begin, numLow, highBegin;
  __host__ __device__ uint32_t operator()(uint32_t k) const {
    return k < numLow ? begin + k : highBegin + (k - numLow);
  }
};

// The counting sort of the local set (see the top). Body v of the local set takes the next free
// rank of its local cell (key - base), or kGone when this rank no longer needs it.
__global__ void countLocalKernel(LocalSet s, uint32_t m, SlabLayout l, int me, core::GridSpec g, uint32_t base,
                                 uint32_t* __restrict__ keys, uint32_t* __restrict__ rank,
                                 uint32_t* __restrict__ counts, Control* __restrict__ ctl) {
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= m) return;
  uint32_t at = 0;
  const Vec4 p = s.inRecv(v, at) ? s.recv[at].pos : s.pos[at];
  const core::Int3 c = core::cellOf(g, core::xyz(p));
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
                                     const uint32_t* __restrict__ cellFirst, uint32_t base, Vec4* __restrict__ oPos,
                                     Vec4* __restrict__ oVel, uint32_t* __restrict__ oId,
                                     uint32_t* __restrict__ oKey) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const uint32_t v = placed[k], key = keys[v];
  const uint32_t first = cellFirst[key], end = cellFirst[key + 1];
  uint32_t dst = first;
  for (uint32_t t = first; t < end; ++t) dst += placed[t] < v ? 1u : 0u;
  uint32_t at = 0;
  if (s.inRecv(v, at)) {
    const BodyRecord& r = s.recv[at];
    oPos[dst] = r.pos, oVel[dst] = r.vel, oId[dst] = r.id;
  } else {
    oPos[dst] = s.pos[at], oVel[dst] = s.vel[at], oId[dst] = s.id[at];
  }
  oKey[dst] = key + base;
}

__global__ void planeHistogramKernel(const Vec4* __restrict__ pos, uint32_t n, core::GridSpec g,
                                     unsigned long long* __restrict__ counts) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(counts + planeOf(g, pos[i].z), 1ull);
}

// The tree over ranks: order[i] is the id of body i of the order one engine's state is in.
__global__ void iotaKernel(uint32_t* __restrict__ v, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = i;
}
// Into key order: the positions (from the gathered ones, in id order), and the order (which id
// each sorted slot holds).
__global__ void treeReorderKernel(const Vec4* __restrict__ all, const uint32_t* __restrict__ order,
                                  const uint32_t* __restrict__ sortedIndex, uint32_t n, Vec4* __restrict__ sorted,
                                  uint32_t* __restrict__ sortedOrder) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t id = order[sortedIndex[i]];
  sorted[i] = all[id];
  sortedOrder[i] = id;
}
// The owned bodies (ids [first, last), kept in id order) take their sorted slot's acceleration.
__global__ void takeTreeAccKernel(const Vec4* __restrict__ gathered, const uint32_t* __restrict__ order, uint32_t n,
                                  uint32_t first, uint32_t last, Vec4* __restrict__ acc) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t id = order[i];
  if (id >= first && id < last) acc[id - first] = gathered[i];
}

template <typename T>
void ensure(DeviceBuffer<T>& b, size_t count) {
  // Room for the halo and for bodies drifting in: grow by a quarter more than asked.
  if (b.size() < count) b.allocate(count + count / 4 + 1024);
}

using core::msSince;

class DeviceStore final : public LocalStore {
 public:
  DeviceStore(const core::SimParams& p, cudaStream_t stream) : stream_(stream) {
    name_ = cuda::deviceInfo().name;
    gridSpec_.allocate(1);
    ctl_.allocate(1);
    MURMUR_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&scanned_, cudaEventDisableTiming));
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&zeroed_, cudaEventDisableTiming));
    setParams(p);
  }
  ~DeviceStore() override {
    cudaStreamSynchronize(side_);
    cudaEventDestroy(zeroed_);
    cudaEventDestroy(scanned_);
    cudaStreamDestroy(side_);
  }
  DeviceStore(const DeviceStore&) = delete;
  DeviceStore& operator=(const DeviceStore&) = delete;

  core::EngineKind kind() const override { return core::EngineKind::Cuda; }
  std::string deviceName() const override { return name_; }
  void setParams(const core::SimParams& p) override { params_ = p; }
  void setProfiling(bool on) override { profile_ = on; }
  core::DeviceInfo deviceInfo() const override { return cuda::deviceInfo(); }

  void checkFits(size_t owned, size_t total, const core::SimParams& p) override {
    // Boids: the local set twice (current and reordered: 36 B), the integrated and new
    // velocities, sort keys and indices twice, the selection; a quarter of room for halo and
    // drift; the grid's start/end. Gravity: owned state and accelerations plus every position.
    // Rows: the integrated positions too, and one offset per cell instead of two.
    size_t need = 0;
    if (p.force == core::ForceMode::Boids) {
      const core::GridSpec g = rankGrid(p, total);
      const size_t cells = g.numCells;
      // Rows: the counting sort's counts over the rank's share of the cells and the planes its
      // halo's searches reach, with a quarter of room.
      const size_t perPlane = size_t(g.dims.x) * size_t(g.dims.y);
      const size_t local = std::min(cells, size_t(double(cells) * double(owned) / double(std::max<size_t>(total, 1))) +
                                               4 * size_t(rankHaloPlanes(p, g)) * perPlane);
      need = rows(p) ? (owned + owned / 4) * (2 * 36 + 16 + 16 + 16 + 4) + (cells + 1) * 4 + (local + local / 4) * 4
                     : (owned + owned / 4) * (2 * 36 + 16 + 16 + 4) + cells * 8;
    } else {
      need = owned * 48 + total * 16;
      // The tree over ranks: every rank builds the whole tree; two more positions and two orders per
      // body.
      if (p.pipeline == core::Pipeline::Tree) need += total * (2 * 16 + 2 * 4) + cuda::TreeBuffers::bytesFor(total);
    }
    size_t freeBytes = 0, totalBytes = 0;
    MURMUR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (need > freeBytes)
      throw core::UsageError("--n " + std::to_string(total) + ": " + std::to_string(owned) + " bodies on this rank need " +
                             core::formatGiB(need) + " of GPU memory, " + name_ + " has " + core::formatGiB(freeBytes) +
                             " free");
  }

  // The bodies come in tag order (the order given); boids are put in cell order right away (a
  // stable sort), which is the order the first step of one rank gives them too.
  void setOwned(const core::Bodies& owned, const std::vector<uint64_t>& /*tags: the order given*/,
                const core::GridSpec& g, size_t total) override {
    const size_t n = owned.size();
    ensure(pos_, n), ensure(vel_, n), ensure(id_, n), ensure(acc_, n);
    upload(pos_.get(), owned.pos.data(), n);
    upload(vel_.get(), owned.vel.data(), n);
    upload(id_.get(), owned.id.data(), n);
    n_ = n;
    treeOrderFor_ = 0;  // one engine's state starts in the order given
    ownedBegin_ = 0, ownedEnd_ = n;
    numLow_ = numHigh_ = numGone_ = 0;
    total_ = total;
    crowded_ = lastCounted_ = false;
    edgesFor_.valid = false;
    if (params_.force != core::ForceMode::Boids || n == 0) return;
    const cuda::LaunchConfig lc = launch();
    ensureWork(n);
    ensureGrid(g.numCells);
    cuda::launchStoreGrid(gridSpec_.get(), g, lc);
    cuda::launchLabelCells(pos_.get(), static_cast<uint32_t>(n), gridSpec_.get(), keys_[0].get(), idx_[0].get(), lc);
    sorted_ = cuda::sortByCell(sortBuffers(), static_cast<uint32_t>(n), cuda::keyBitsFor(g.numCells), lc);
    findCellBegins(keys_[sorted_].get(), static_cast<uint32_t>(n), 0, g.numCells, lc);
    cuda::launchReorderBodies(idx_[sorted_].get(), static_cast<uint32_t>(n), pos_.get(), vel_.get(), id_.get(),
                              aPos_.get(), aVel_.get(), aId_.get(), lc);
    std::swap(pos_, aPos_);
    std::swap(vel_, aVel_);
    std::swap(id_, aId_);
    synchronize();
  }
  size_t numOwned() const override { return ownedEnd_ - ownedBegin_; }
  core::Bodies readOwned() override {
    const size_t n = numOwned();
    core::Bodies b;
    b.resize(n);
    download(b.pos.data(), pos_.get() + ownedBegin_, n);
    download(b.vel.data(), vel_.get() + ownedBegin_, n);
    download(b.id.data(), id_.get() + ownedBegin_, n);
    return b;
  }
  void synchronize() override { MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) override {
    std::vector<uint64_t> counts(static_cast<size_t>(l.numRanks), 0);
    me_ = me;
    numLow_ = numHigh_ = numGone_ = 0;
    const uint32_t numOwn = static_cast<uint32_t>(numOwned());
    if (numOwn == 0) return counts;
    // One pass over the owned bodies that can matter to another rank: those that stay with this
    // rank alone keep their place.
    ensure(selected_, numOwn);
    EdgeSlot edges{static_cast<uint32_t>(ownedBegin_), numOwn, 0};
    uint32_t numRead = numOwn;
    if (edgesFor_.valid && edgesFor_.start == l.start[me] && edgesFor_.end == l.start[me + 1] &&
        edgesFor_.halo == l.halo) {
      edges.numLow = static_cast<uint32_t>(edgeLow_ - ownedBegin_);
      edges.highBegin = static_cast<uint32_t>(edgeHigh_);
      numRead = static_cast<uint32_t>(edges.numLow + (ownedEnd_ - edgeHigh_));
    }
    lastEdgeRead_ = numRead;
    selectIf(thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0), edges), selected_.get(),
             &ctl_.get()->numSelected, numRead, LeavesOrShared{pos_.get(), l, g, me});
    readControl();
    const uint32_t selected = host_.numSelected;
    if (selected == 0) return counts;
    // Per rank, in slot order (which is cell order): the records for each peer, and how many this
    // rank keeps. A body goes to at most 2 halo other ranks (slabs.h ranksNeeding).
    const size_t peersPerBody = static_cast<size_t>(std::min(l.numRanks - 1, 2 * l.halo));
    ensure(peerIdx_, selected), ensure(send_, peersPerBody * selected);
    const cuda::LaunchConfig lc = launch();
    for (int p = 0; p < l.numRanks; ++p) {
      selectIf(selected_.get(), peerIdx_.get(), &ctl_.get()->perRank[p], selected,
               NeededBy{pos_.get(), l, g, p});
      if (p == me) continue;
      packRecordsKernel<<<lc.blocksFor(selected), lc.block, 0, stream_>>>(
          peerIdx_.get(), ctl_.get(), p, me, pos_.get(), vel_.get(), id_.get(), keys_[sorted_].get(),
          cellBegin(), send_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    readControl();
    for (int p = 0; p < l.numRanks; ++p)
      if (p != me) counts[static_cast<size_t>(p)] = host_.perRank[p];
    numGone_ = selected - host_.perRank[me];
    return counts;
  }
  const void* sendBuffer() const override { return send_.get(); }
  void* recvBuffer(size_t records) override {
    ensure(recv_, records);
    return recv_.get();
  }

  // Nothing to move: the next local step reads the arrivals where they are (see the top).
  void mergeReceived(const std::vector<uint64_t>& perPeer) override {
    for (size_t p = 0; p < perPeer.size(); ++p) {
      if (static_cast<int>(p) < me_) numLow_ += static_cast<size_t>(perPeer[p]);
      if (static_cast<int>(p) > me_) numHigh_ += static_cast<size_t>(perPeer[p]);
    }
  }

  void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, core::StepProfile& prof) override {
    const size_t numOwn = numOwned();
    const uint32_t m = static_cast<uint32_t>(numLow_ + numOwn + numHigh_);
    const uint32_t n = static_cast<uint32_t>(m - numGone_);  // the bodies this rank needs
    const LocalSet set{recv_.get(), pos_.get(), vel_.get(), id_.get(), static_cast<uint32_t>(numLow_),
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
    // searches reach: the whole grid's cells are many times more (every other rank's slab).
    const int reach = 2 * l.halo;
    const uint32_t fromCell = firstKeyOfPlane(g, std::max(0, l.start[me] - reach));
    const uint32_t endCell = firstKeyOfPlane(g, std::min(g.dims.z, l.start[me + 1] + reach));
    if (!countedSort(set, m, n, l, g, me, fromCell, endCell, lap, prof)) {
      labelLocalKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(set, m, l, me, g, keys_[0].get(), idx_[0].get());
      MURMUR_CUDA_LAUNCH_CHECK();
      lap(prof.labelMs);
      // One more key value than cells: the bodies that left sort after every cell.
      sorted_ = cuda::sortByCell(sortBuffers(), m, cuda::keyBitsFor(g.numCells + 1), lc);
      lap(prof.sortMs);
      findCellBegins(keys_[sorted_].get(), n, fromCell, endCell, lc);
      lap(prof.boundsMs);
      reorderLocalKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(set, idx_[sorted_].get(), n, aPos_.get(),
                                                                    aVel_.get(), aId_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
      lap(prof.reorderMs);
    }
    const cuda::DeviceGrid dg{gridSpec_.get(), keys_[sorted_].get(), idx_[sorted_].get(), cellStart_.get(),
                              cellEnd_.get(), g.numCells};
    // The owned slots, and the edges of the slab the next selection reads: a body moves at most
    // maxSpeed dt (plus a plane for rounding) from the plane it was sorted in.
    const double jump = std::ceil(double(core::localMaxSpeed(params_)) * double(core::localDt(params_)) * double(g.invCellWidth));
    const int edge = l.halo + 1 + static_cast<int>(std::min(jump, double(g.dims.z)));
    const int lowPlane = std::min(l.start[me + 1], l.start[me] + edge);
    const int highPlane = std::max(lowPlane, l.start[me + 1] - edge);
    const SlotBounds bounds{{firstKeyOfPlane(g, l.start[me]), firstKeyOfPlane(g, lowPlane),
                             firstKeyOfPlane(g, highPlane), firstKeyOfPlane(g, l.start[me + 1])}};
    ownedRangeKernel<<<1, 4, 0, stream_>>>(keys_[sorted_].get(), n, bounds, ctl_.get());
    MURMUR_CUDA_LAUNCH_CHECK();
    // Forces for every body in the local set; the halo's results are dropped (it is a few planes
    // of many, and skipping them would cost a branch per thread in the hot kernel).
    const float radius = core::searchRadius(params_);
    if (rows(params_)) {
      // The one-GPU rows kernel, integrating into rPos_; the loop and the flat loop's table as one
      // GPU picks them for the whole count (cuda/pipelines/rows.cpp).
      const core::RowLoop loop = core::rowLoop(params_, total_);
      const int flatRows = loop == core::RowLoop::Flat ? cuda::rowsFlatTableRows(g, radius) : 0;
      cuda::RowsStepOut out;
      out.posOut = rPos_.get();
      out.dt = core::localDt(params_);
      out.halfSize = params_.halfSize;
      cuda::launchBoidsRows(aPos_.get(), aVel_.get(), n, gridSpec_.get(), cellFirst_.get(), params_, radius,
                            loop, flatRows, velNew_.get(), out, lc);
      std::swap(aPos_, rPos_);  // the integrated positions are the new state below
      lap(prof.forceMs);
    } else {
      cuda::launchBoidsGrid(true, aPos_.get(), aVel_.get(), n, dg, params_, radius, velNew_.get(), lc);
      lap(prof.forceMs);
      cuda::launchBoidsIntegrate(aPos_.get(), velNew_.get(), n, core::localDt(params_), params_.halfSize, lc);
    }
    // The new state is the local set in cell order; its owned slots are one range, the halo
    // around it stays until the next step reads only that range.
    std::swap(pos_, aPos_);
    std::swap(vel_, velNew_);
    std::swap(id_, aId_);
    n_ = n;
    readControl();
    ownedBegin_ = host_.ownedBegin, ownedEnd_ = host_.ownedEnd;
    edgeLow_ = host_.edgeLow, edgeHigh_ = host_.edgeHigh;
    edgesFor_ = EdgesFor{true, l.start[me], l.start[me + 1], l.halo};
    lap(prof.integrateMs);
  }

  bool lastSortCounted() const override { return lastCounted_; }
  size_t lastSelectionRead() const override { return lastEdgeRead_; }

  std::vector<uint64_t> planeHistogram(const core::GridSpec& g) override {
    const size_t planes = static_cast<size_t>(g.dims.z);
    ensure(hist_, planes);
    MURMUR_CUDA_CHECK(cudaMemsetAsync(hist_.get(), 0, planes * sizeof(unsigned long long), stream_));
    const cuda::LaunchConfig lc = launch();
    const size_t n = numOwned();
    if (n) {
      planeHistogramKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(pos_.get() + ownedBegin_,
                                                                      static_cast<uint32_t>(n), g, hist_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    std::vector<unsigned long long> h(planes);
    download(h.data(), hist_.get(), planes);
    return std::vector<uint64_t>(h.begin(), h.end());
  }

  // Gravity keeps every body owned (ownedBegin_ = 0); boids read their owned range here too.
  const void* ownedPositions() override { return pos_.get() + ownedBegin_; }
  void* allPositions(size_t n) override {
    ensure(all_, n);
    return all_.get();
  }
  void gravityForces(size_t n, float eps2, float G, float commonMass, core::StepProfile& prof) override {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t own = numOwned();
    ensure(acc_, own);
    cuda::launchGravityNaive({all_.get(), static_cast<uint32_t>(n), pos_.get() + ownedBegin_,
                              static_cast<uint32_t>(own), eps2, G, commonMass, acc_.get()},
                             launch());
    if (profile_) synchronize(), prof.forceMs = msSince(t0);
  }
  void leapfrogKickDrift(float dt) override {
    if (n_) cuda::launchLeapfrogKickDrift(pos_.get(), vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, launch());
  }
  void leapfrogKick(float dt) override {
    if (n_) cuda::launchLeapfrogKick(vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, launch());
  }
  void dampedEuler(float dt, float damping) override {
    if (n_)
      cuda::launchDampedEuler(pos_.get(), vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, damping, launch());
  }

  std::vector<size_t> treeWalkShare(size_t total, const core::GravityParams& gp, int me, int k,
                                    core::StepProfile& prof) override {
    const uint32_t n = static_cast<uint32_t>(total);
    const cuda::LaunchConfig lc = launch();
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&](double& slot) {
      if (!profile_) return;
      synchronize();
      slot += msSince(t0);
      t0 = std::chrono::steady_clock::now();
    };
    tree_.reserve(n);
    ensure(treeSorted_, n), ensure(treeAcc_, n);
    ensure(treeOrder_[0], n), ensure(treeOrder_[1], n);
    if (bodyCut_.size() < size_t(k) + 1) bodyCut_.allocate(size_t(kMaxRanks) + 1);
    // One engine's state order: its tree pipeline sorts the state by key every evaluation (ties
    // keep the current order), so every rank replays that order and builds the very same tree.
    if (treeOrderFor_ != n) {
      iotaKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(treeOrder_[0].get(), n);
      MURMUR_CUDA_LAUNCH_CHECK();
      treeOrderFor_ = n;
    }
    // The box does not depend on the order; the keys are those of one engine's order.
    cuda::launchTreeBounds(all_.get(), n, tree_, lc);
    cuda::launchTreeKeys(all_.get(), n, tree_, lc, treeOrder_[0].get());
    lap(prof.labelMs);
    const int sel = cuda::treeSort(n, tree_, lc);
    lap(prof.sortMs);
    treeReorderKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(all_.get(), treeOrder_[0].get(),
                                                                  tree_.index[sel].get(), n, treeSorted_.get(),
                                                                  treeOrder_[1].get());
    MURMUR_CUDA_LAUNCH_CHECK();
    std::swap(treeOrder_[0], treeOrder_[1]);
    lap(prof.reorderMs);
    cuda::launchBuildTree(treeSorted_.get(), tree_.keys[sel].get(), n, gp.theta, tree_, lc);
    lap(prof.boundsMs);
    cuda::launchTreeShare(n, me, k, tree_, bodyCut_.get(), lc);
    std::vector<uint32_t> cut32(static_cast<size_t>(k) + 1);
    download(cut32.data(), bodyCut_.get(), cut32.size());
    const uint32_t mine = cut32[static_cast<size_t>(me) + 1] - cut32[static_cast<size_t>(me)];
    cuda::launchTreeWalkShare(treeSorted_.get(), n, mine, tree_, gp.softening * gp.softening, gp.G, gp.treeLeafSize,
                              treeAcc_.get(), lc);
    lap(prof.forceMs);
    return std::vector<size_t>(cut32.begin(), cut32.end());
  }
  const void* treeSortedAcc() override { return treeAcc_.get(); }
  // The positions in key order are not needed once walked: they receive every share.
  void* treeGatheredAcc() override { return treeSorted_.get(); }
  void takeTreeAcc(size_t firstId, size_t lastId) override {
    const cuda::LaunchConfig lc = launch();
    const uint32_t n = static_cast<uint32_t>(treeOrderFor_);
    ensure(acc_, lastId - firstId);
    takeTreeAccKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(treeSorted_.get(), treeOrder_[0].get(), n,
                                                                  static_cast<uint32_t>(firstId),
                                                                  static_cast<uint32_t>(lastId), acc_.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  }

  uint64_t* splatOwned(const core::SplatView& view) override {
    const size_t pixels = static_cast<size_t>(view.width) * static_cast<size_t>(view.height);
    if (splat_.size() < pixels) splat_.allocate(pixels);
    const cuda::LaunchConfig lc = launch();
    cuda::launchSplatClear(splat_.get(), pixels, lc);
    const uint32_t own = static_cast<uint32_t>(numOwned());
    if (own)
      cuda::launchSplat(pos_.get() + ownedBegin_, vel_.get() + ownedBegin_, id_.get() + ownedBegin_, own, view,
                        splat_.get(), false, lc);
    splatPixels_ = pixels;
    return splat_.get();
  }
  void readSplat(std::vector<uint64_t>& keys) override {
    keys.resize(splatPixels_);
    download(keys.data(), splat_.get(), splatPixels_);
  }
  std::vector<Vec4> readOwnedAcc() override {
    std::vector<Vec4> a(numOwned());
    download(a.data(), acc_.get(), a.size());
    return a;
  }

 private:
  cuda::LaunchConfig launch() const { return cuda::LaunchConfig{params_.blockSize, stream_}; }

  // The rows pipeline's counting sort of the local set over the local cells [fromCell, endCell)
  // (see the top), into the reordered arrays, the sorted keys and the cell offsets. Returns false,
  // having changed nothing the radix sort reads, when it does not run: another pipeline, more
  // local cells than the scan counts, or a crowded cell (this step and every later one until the
  // next setOwned).
  template <typename Lap>
  bool countedSort(const LocalSet& set, uint32_t m, uint32_t n, const SlabLayout& l, const core::GridSpec& g, int me,
                   uint32_t fromCell, uint32_t endCell, Lap& lap, core::StepProfile& prof) {
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
                                                                    fromCell, aPos_.get(), aVel_.get(), aId_.get(),
                                                                    keys_[1].get());
    MURMUR_CUDA_LAUNCH_CHECK();
    sorted_ = 1;  // keys_[1]: the sorted global keys (idx_[1] is no sorted index: nothing reads it)
    lastCounted_ = true;
    lap(prof.reorderMs);
    return true;
  }

  static bool rows(const core::SimParams& p) { return p.pipeline == core::Pipeline::Rows; }

  // The first slot of every cell from the sorted keys [0, n): cellStart/cellEnd on the coherent
  // grid, cellFirst on the rows grid.
  // Cells [fromCell, endCell) only (rows: with the end marker at endCell): every key of [0, n)
  // lies there, and no search reads outside.
  void findCellBegins(const uint32_t* sortedKeys, uint32_t n, uint32_t fromCell, uint32_t endCell,
                      const cuda::LaunchConfig& lc) {
    if (rows(params_))
      cuda::launchFindCellFirstIn(sortedKeys, n, fromCell, endCell, cellFirst_.get(), lc);
    else
      cuda::launchFindCellBoundsIn(sortedKeys, n, fromCell, endCell, cellStart_.get(), cellEnd_.get(), lc);
  }
  const uint32_t* cellBegin() const { return rows(params_) ? cellFirst_.get() : cellStart_.get(); }

  template <typename T>
  void upload(T* d, const T* h, size_t count) {
    if (count) MURMUR_CUDA_CHECK(cudaMemcpyAsync(d, h, count * sizeof(T), cudaMemcpyHostToDevice, stream_));
    synchronize();
  }
  template <typename T>
  void download(T* h, const T* d, size_t count) {
    if (count) MURMUR_CUDA_CHECK(cudaMemcpyAsync(h, d, count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }
  void readControl() { download(&host_, ctl_.get(), 1); }

  // Ordered selection of the items `op` accepts into out; the count lands in d_count.
  template <typename InT, typename OpT>
  void selectIf(InT in, uint32_t* out, uint32_t* d_count, uint32_t n, OpT op) {
    size_t bytes = 0;
    MURMUR_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, d_count, static_cast<int>(n), op, stream_));
    if (selectTemp_.size() < bytes) selectTemp_.allocate(bytes + bytes / 4);
    bytes = selectTemp_.size();
    MURMUR_CUDA_CHECK(
        cub::DeviceSelect::If(selectTemp_.get(), bytes, in, out, d_count, static_cast<int>(n), op, stream_));
    MURMUR_CUDA_LAUNCH_CHECK();
  }

  cuda::SortBuffers sortBuffers() {
    return cuda::SortBuffers{{keys_[0].get(), keys_[1].get()}, {idx_[0].get(), idx_[1].get()}, sortTemp_.get(),
                             sortTemp_.size()};
  }
  // The scratch buffers of a local step over m bodies.
  void ensureWork(size_t m) {
    ensure(aPos_, m), ensure(aVel_, m), ensure(aId_, m), ensure(velNew_, m);
    if (rows(params_)) ensure(rPos_, m);
    for (int k = 0; k < 2; ++k) ensure(keys_[k], m), ensure(idx_[k], m);
    if (sortTempFor_ < keys_[0].size()) {
      // Sized for the capacity the key buffers just got, so it grows as rarely as they do.
      const size_t cap = keys_[0].size();
      sortTemp_.allocate(cuda::sortTempBytes(static_cast<uint32_t>(cap), 32));
      sortTempFor_ = cap;
    }
  }
  void ensureGrid(uint32_t cells) {
    if (rows(params_)) {
      if (cellFirst_.size() < size_t(cells) + 1) cellFirst_.allocate(size_t(cells) + 1);
    } else if (cellStart_.size() < cells) {
      cellStart_.allocate(cells);
      cellEnd_.allocate(cells);
    }
  }

  cudaStream_t stream_;
  std::string name_;
  core::SimParams params_{};
  bool profile_ = false;
  int me_ = 0;
  // pos_/vel_/id_ hold n_ bodies; [ownedBegin_, ownedEnd_) are this rank's (gravity: all).
  size_t n_ = 0, ownedBegin_ = 0, ownedEnd_ = 0, sortTempFor_ = 0;
  size_t total_ = 0;  // bodies over all ranks (the rows loop is chosen for the whole count)
  // The next local step's arrivals from lower and higher ranks, and the owned bodies that left.
  size_t numLow_ = 0, numHigh_ = 0, numGone_ = 0;
  int sorted_ = 0;  // which keys_/idx_ buffer holds the last step's sorted keys
  // The counting sort: the local cells' counts (zero between steps), the scan's scratch; a cell
  // was crowded since the last setOwned; the last step's sort was the counting sort.
  DeviceBuffer<uint32_t> counts_;
  DeviceBuffer<unsigned char> scanTemp_;
  bool crowded_ = false, lastCounted_ = false;
  // The side stream that zeroes the counts after each scan (zeroing_: until the next count waits).
  cudaStream_t side_ = nullptr;
  cudaEvent_t scanned_ = nullptr, zeroed_ = nullptr;
  bool zeroing_ = false;
  // The slots of the last local step where the owned bodies the next selection reads end and
  // start again, for the slab (and halo) they were sorted for; how many the last selection read.
  struct EdgesFor {
    bool valid = false;
    int start = 0, end = 0, halo = 0;
  } edgesFor_;
  size_t edgeLow_ = 0, edgeHigh_ = 0, lastEdgeRead_ = 0;
  Control host_{};
  DeviceBuffer<Control> ctl_;
  DeviceBuffer<Vec4> pos_, vel_, acc_, all_, aPos_, aVel_, velNew_, rPos_;
  DeviceBuffer<uint32_t> id_, aId_, selected_, peerIdx_, keys_[2], idx_[2], cellStart_, cellEnd_, cellFirst_;
  DeviceBuffer<unsigned long long> hist_;
  DeviceBuffer<unsigned char> sortTemp_, selectTemp_;
  DeviceBuffer<BodyRecord> send_, recv_;
  DeviceBuffer<core::GridSpec> gridSpec_;
  // The tree over ranks (treeWalkShare): its buffers, the positions in key order (then every
  // share's accelerations), this share's accelerations, the order one engine's state is in (and
  // its next), for treeOrderFor_ bodies (0: the order given, not yet made).
  cuda::TreeBuffers tree_;
  DeviceBuffer<Vec4> treeSorted_, treeAcc_;
  DeviceBuffer<uint32_t> treeOrder_[2], bodyCut_;
  size_t treeOrderFor_ = 0;
  // The frame over ranks (splatOwned): this rank's keys.
  DeviceBuffer<uint64_t> splat_;
  size_t splatPixels_ = 0;
};

}  // namespace

std::unique_ptr<LocalStore> createDeviceStore(const core::SimParams& p, cudaStream_t stream) {
  return std::make_unique<DeviceStore>(p, stream);
}

}  // namespace murmur::dist
