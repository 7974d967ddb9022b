// The GPU store. Slabs are runs of whole cell planes along z, the slowest axis of the cell key
// (slabs.h), so in the global cell order a rank's bodies form one contiguous piece: whatever it
// receives from lower ranks comes before its own bodies, whatever it receives from higher ranks
// after them, and each peer packs its records in its own cell order. The store therefore never
// merges: the next local step (device_store_step.cu) labels a virtual local set [records from
// lower ranks][own bodies still needed][records from higher ranks] in place, and the stable sort
// by cell does the rest. Bodies that left are labelled past the last cell, sort to the end and are
// dropped there. Per step, besides the stages the one-GPU pipeline runs, this costs one selection
// pass over the owned bodies near the slab's faces (who leaves or is someone's halo; see below), a
// few small passes over the selected ones (a handful of planes), and three small reads of counts.
//
// The selection before the exchange reads only the owned bodies that can matter to another rank:
// a body moves at most maxSpeed dt a step, so one that was sorted deeper inside the slab than the
// halo plus that distance (and a plane for rounding) neither leaves nor is anyone's halo. Under
// the periodic boundary the halo across the z faces (SlabLayout::wrapHalo) counts too: the planes
// another rank reads across a face lie within it of the first or the last plane of this slab,
// and a body that wraps leaves through a face of it. Right after the slab (or its halo) changed,
// every owned body is read.
//
// The store's class is in device_store_impl.h. This file has its life, ownership and the exchange;
// device_store_step.cu the local step (with the rows pipeline's counting sort);
// device_store_gravity.cu gravity, the tree over ranks and the frame.
#include "dist/device_store.h"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/errors.h"
#include "core/format.h"
#include "core/rule_table.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/grid_build.h"
#include "cuda/tree_build.h"
#include "dist/device_store_impl.h"

namespace murmur::dist {

namespace {

using core::Vec4;

// An owned body some other rank needs next step (its halo, across the z faces too when the halo
// wraps), or that this rank no longer needs. Most bodies are needed by this rank alone; those stay
// where they are.
struct LeavesOrShared {
  const Vec4* pos;
  SlabLayout l;
  core::GridSpec g;
  int me;
  __device__ bool operator()(uint32_t i) const { return !neededOnlyBy(l, me, planeOf(g, pos[i].z)); }
};

// A selected body that `rank` needs next step.
struct NeededBy {
  const Vec4* pos;
  SlabLayout l;
  core::GridSpec g;
  int rank;
  __device__ bool operator()(uint32_t i) const { return rankNeeds(l, rank, planeOf(g, pos[i].z)); }
};

// The records for `peer`, packed after those of the lower peers (counts from the selections).
// tag: the body's place in the last step's cell order, as the host store's records carry it
// (cellBegin: the first slot of every occupied cell, the coherent grid's cellStart or the rows
// grid's cellFirst).
__global__ void packRecordsKernel(const uint32_t* __restrict__ idx, const Control* __restrict__ ctl, int peer,
                                  int me, const core::ConstBodyPointers cur, const uint32_t* __restrict__ sortedKeys,
                                  const uint32_t* __restrict__ cellBegin, BodyRecord* __restrict__ send) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= ctl->perRank[peer]) return;
  uint32_t at = 0;
  for (int q = 0; q < peer; ++q)
    if (q != me) at += ctl->perRank[q];
  const uint32_t i = idx[k], key = sortedKeys[i];
  send[at + k] = recordOf(cur, i, (static_cast<uint64_t>(key) << 32) | (i - cellBegin[key]));
}

// The owned slots the selection reads: [begin, begin + numLow) and then [highBegin, ...).
struct EdgeSlot {
  uint32_t begin, numLow, highBegin;
  __host__ __device__ uint32_t operator()(uint32_t k) const {
    return k < numLow ? begin + k : highBegin + (k - numLow);
  }
};

__global__ void planeHistogramKernel(const Vec4* __restrict__ pos, uint32_t n, core::GridSpec g,
                                     unsigned long long* __restrict__ counts) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(counts + planeOf(g, pos[i].z), 1ull);
}

}  // namespace

DeviceStore::DeviceStore(const core::SimParams& p, cudaStream_t stream) : stream_(stream) {
  name_ = cuda::deviceInfo().name;
  gridSpec_.allocate(1);
  ctl_.allocate(1);
  MURMUR_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&scanned_, cudaEventDisableTiming));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&zeroed_, cudaEventDisableTiming));
  setParams(p);
}

DeviceStore::~DeviceStore() {
  cudaStreamSynchronize(side_);
  cudaEventDestroy(zeroed_);
  cudaEventDestroy(scanned_);
  cudaStreamDestroy(side_);
}

void DeviceStore::checkFits(size_t owned, size_t total, const core::SimParams& p) {
  // Boids: the local set twice (current and reordered: 37 B, every attribute), the integrated and new
  // velocities, sort keys and indices twice, the selection; a quarter of room for halo and
  // drift; the grid's start/end. Gravity: owned state and accelerations plus every position.
  // Rows: the integrated positions too, and one offset per cell instead of two.
  size_t need = 0;
  if (core::runsLocalRule(p)) {
    const core::GridSpec g = rankGrid(p, total);
    const size_t cells = g.numCells;
    // Rows: the counting sort's counts over the rank's share of the cells and the planes its
    // halo's searches reach, with a quarter of room; every cell where the halo wraps around z (the
    // periodic boundary: the first and the last slabs count the whole grid).
    const size_t perPlane = size_t(g.dims.x) * size_t(g.dims.y);
    const size_t local =
        p.boundary == core::Boundary::Periodic
            ? cells
            : std::min(cells, size_t(double(cells) * double(owned) / double(std::max<size_t>(total, 1))) +
                                  4 * size_t(rankHaloPlanes(p, g)) * perPlane);
    need = rows(p) ? (owned + owned / 4) * (2 * 37 + 16 + 16 + 16 + 4) + (cells + 1) * 4 + (local + local / 4) * 4
                   : (owned + owned / 4) * (2 * 37 + 16 + 16 + 4) + cells * 8;
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

void DeviceStore::setOwned(const core::Bodies& owned, const std::vector<uint64_t>& /*tags: the order given*/,
                           const core::GridSpec& g, size_t total) {
  const size_t n = owned.size();
  ensure(pos_, n), ensure(vel_, n), ensure(id_, n), ensure(species_, n), ensure(acc_, n);
  current().forEachWith(owned, [&](const char*, auto* d, const auto& h) {
    if (h.empty())
      MURMUR_CUDA_CHECK(cudaMemsetAsync(d, 0, n * sizeof(*d), stream_));  // an optional attribute's default
    else
      upload(d, h.data(), n);
  });
  n_ = n;
  treeOrderFor_ = 0;  // one engine's state starts in the order given
  ownedBegin_ = 0, ownedEnd_ = n;
  numLow_ = numHigh_ = numGone_ = 0;
  total_ = total;
  if (pipeline_) pipeline_->plan(params_, total_);  // the loop follows the world's count
  crowded_ = lastCounted_ = false;
  edgesFor_.valid = false;
  if (!core::runsLocalRule(params_) || n == 0) return;
  const cuda::LaunchConfig lc = launch();
  ensureWork(n);
  ensureGrid(g.numCells);
  cuda::launchStoreGrid(gridSpec_.get(), g, lc);
  cuda::launchLabelCells(pos_.get(), static_cast<uint32_t>(n), gridSpec_.get(), keys_[0].get(), idx_[0].get(), lc);
  sorted_ = cuda::sortByCell(sortBuffers(), static_cast<uint32_t>(n), cuda::keyBitsFor(g.numCells), lc);
  findCellBegins(keys_[sorted_].get(), static_cast<uint32_t>(n), 0, g.numCells, lc);
  cuda::launchReorderBodies(idx_[sorted_].get(), static_cast<uint32_t>(n), core::readOnly(current()), gatherTarget(),
                            lc);
  swapWithGatherTarget();
  synchronize();
}

core::Bodies DeviceStore::readOwned() {
  const size_t n = numOwned();
  core::Bodies b;
  b.resize(n);
  b.forEachWith(current(), [&](const char*, auto& h, auto* d) { download(h.data(), d + ownedBegin_, n); });
  return b;
}

// Ordered selection of the items `op` accepts into out; the count lands in d_count.
template <typename InT, typename OpT>
void DeviceStore::selectIf(InT in, uint32_t* out, uint32_t* d_count, uint32_t n, OpT op) {
  size_t bytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, d_count, static_cast<int>(n), op, stream_));
  if (selectTemp_.size() < bytes) selectTemp_.allocate(bytes + bytes / 4);
  bytes = selectTemp_.size();
  MURMUR_CUDA_CHECK(
      cub::DeviceSelect::If(selectTemp_.get(), bytes, in, out, d_count, static_cast<int>(n), op, stream_));
  MURMUR_CUDA_LAUNCH_CHECK();
}

std::vector<uint64_t> DeviceStore::packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) {
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
      edgesFor_.halo == l.halo && edgesFor_.wrapHalo == l.wrapHalo) {
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
  // rank keeps. A body goes to at most maxRanksNeeding ranks (slabs.h ranksNeeding), all of them
  // others when it left this rank's reach, and never to more than the other ranks.
  const size_t peersPerBody = static_cast<size_t>(std::min(maxRanksNeeding(l), l.numRanks - 1));
  ensure(peerIdx_, selected), ensure(send_, peersPerBody * selected);
  const cuda::LaunchConfig lc = launch();
  for (int p = 0; p < l.numRanks; ++p) {
    selectIf(selected_.get(), peerIdx_.get(), &ctl_.get()->perRank[p], selected,
             NeededBy{pos_.get(), l, g, p});
    if (p == me) continue;
    packRecordsKernel<<<lc.blocksFor(selected), lc.block, 0, stream_>>>(
        peerIdx_.get(), ctl_.get(), p, me, core::readOnly(current()), keys_[sorted_].get(), cellBegin(), send_.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  }
  readControl();
  for (int p = 0; p < l.numRanks; ++p)
    if (p != me) counts[static_cast<size_t>(p)] = host_.perRank[p];
  numGone_ = selected - host_.perRank[me];
  return counts;
}

// Nothing to move: the next local step reads the arrivals where they are (see the top).
void DeviceStore::mergeReceived(const std::vector<uint64_t>& perPeer) {
  for (size_t p = 0; p < perPeer.size(); ++p) {
    if (static_cast<int>(p) < me_) numLow_ += static_cast<size_t>(perPeer[p]);
    if (static_cast<int>(p) > me_) numHigh_ += static_cast<size_t>(perPeer[p]);
  }
}

std::vector<uint64_t> DeviceStore::planeHistogram(const core::GridSpec& g) {
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

std::unique_ptr<LocalStore> createDeviceStore(const core::SimParams& p, cudaStream_t stream) {
  return std::make_unique<DeviceStore>(p, stream);
}

}  // namespace murmur::dist
