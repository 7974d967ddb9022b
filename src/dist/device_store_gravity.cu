// The GPU store's gravity (device_store_impl.h): all pairs against every gathered position, the
// integrators, the tree over ranks (every rank builds the whole tree and walks its share of the
// groups; docs/design.md#the-decomposition-over-ranks), the frame over ranks and the accelerations
// read back.
#include "dist/device_store_impl.h"

#include <chrono>
#include <utility>
#include <vector>

#include "core/format.h"
#include "cuda/cuda_check.h"
#include "cuda/gravity_kernels.h"
#include "cuda/splat_kernels.h"
#include "cuda/tree_build.h"

namespace murmur::dist {

namespace {

using core::Vec4;
using core::msSince;

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

}  // namespace

void DeviceStore::gravityForces(size_t n, float eps2, float G, float commonMass, core::StepProfile& prof) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t own = numOwned();
  ensure(acc_, own);
  cuda::launchGravityNaive({all_.get(), static_cast<uint32_t>(n), pos_.get() + ownedBegin_,
                            static_cast<uint32_t>(own), eps2, G, commonMass, acc_.get()},
                           launch());
  if (profile_) synchronize(), prof.forceMs = msSince(t0);
}

void DeviceStore::leapfrogKickDrift(float dt) {
  if (n_) cuda::launchLeapfrogKickDrift(pos_.get(), vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, launch());
}

void DeviceStore::leapfrogKick(float dt) {
  if (n_) cuda::launchLeapfrogKick(vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, launch());
}

void DeviceStore::dampedEuler(float dt, float damping) {
  if (n_)
    cuda::launchDampedEuler(pos_.get(), vel_.get(), acc_.get(), static_cast<uint32_t>(n_), dt, damping, launch());
}

std::vector<size_t> DeviceStore::treeWalkShare(size_t total, const core::GravityParams& gp, int me, int k,
                                               core::StepProfile& prof) {
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

void DeviceStore::takeTreeAcc(size_t firstId, size_t lastId) {
  const cuda::LaunchConfig lc = launch();
  const uint32_t n = static_cast<uint32_t>(treeOrderFor_);
  ensure(acc_, lastId - firstId);
  takeTreeAccKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(treeSorted_.get(), treeOrder_[0].get(), n,
                                                                static_cast<uint32_t>(firstId),
                                                                static_cast<uint32_t>(lastId), acc_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
}

uint64_t* DeviceStore::splatOwned(const core::SplatView& view) {
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

void DeviceStore::readSplat(std::vector<uint64_t>& keys) {
  keys.resize(splatPixels_);
  download(keys.data(), splat_.get(), splatPixels_);
}

std::vector<Vec4> DeviceStore::readOwnedAcc() {
  std::vector<Vec4> a(numOwned());
  download(a.data(), acc_.get(), a.size());
  return a;
}

}  // namespace murmur::dist
