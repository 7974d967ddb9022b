#include "dist/device_store.h"

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/merge.h>
#include <thrust/sort.h>

#include <chrono>
#include <utility>
#include <cstdio>
#include <string>

#include "core/errors.h"
#include "core/physics.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda/gravity_kernels.h"
#include "cuda/grid_build.h"

namespace murmur::dist {

namespace {

using core::Vec4;
using cuda::DeviceBuffer;

// Merged permutation entries: the high bit says "from the received set".
constexpr uint32_t kFromReceived = 0x80000000u;

__device__ __forceinline__ int columnOfDev(const core::GridSpec& g, const Vec4& p) {
  return core::cellCoord(p.x, g.origin.x, g.invCellWidth, g.dims.x);
}

// Bit r set: rank r needs body i next step (slabs.h ranksNeeding). Halo bodies of the last step
// (not owned) are nobody's to send.
__global__ void needMaskKernel(const Vec4* __restrict__ pos, const unsigned char* __restrict__ owned, uint32_t n,
                               SlabLayout l, core::GridSpec g, unsigned long long* __restrict__ mask) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (!owned[i]) {
    mask[i] = 0;
    return;
  }
  int need[3];
  const int k = ranksNeeding(l, columnOfDev(g, pos[i]), need);
  unsigned long long m = 0;
  for (int j = 0; j < k; ++j) m |= 1ull << need[j];
  mask[i] = m;
}

struct HasBit {
  const unsigned long long* mask;
  unsigned long long bit;
  __host__ __device__ bool operator()(uint32_t i) const { return (mask[i] & bit) != 0; }
};

struct IsSet {
  __host__ __device__ bool operator()(unsigned char f) const { return f != 0; }
};

struct FromReceived {
  __host__ __device__ uint32_t operator()(uint32_t i) const { return i | kFromReceived; }
};

__global__ void packRecordsKernel(const uint32_t* __restrict__ idx, uint32_t m, const Vec4* __restrict__ pos,
                                  const Vec4* __restrict__ vel, const uint32_t* __restrict__ id,
                                  const uint64_t* __restrict__ tag, BodyRecord* __restrict__ out) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const uint32_t i = idx[k];
  out[k] = BodyRecord{pos[i], vel[i], tag[i], id[i], 0};
}

__global__ void gatherBodiesKernel(const uint32_t* __restrict__ idx, uint32_t m, const Vec4* __restrict__ pos,
                                   const Vec4* __restrict__ vel, const uint32_t* __restrict__ id,
                                   const uint64_t* __restrict__ tag, Vec4* __restrict__ oPos,
                                   Vec4* __restrict__ oVel, uint32_t* __restrict__ oId, uint64_t* __restrict__ oTag) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const uint32_t i = idx[k];
  oPos[k] = pos[i];
  oVel[k] = vel[i];
  oId[k] = id[i];
  oTag[k] = tag[i];
}

__global__ void recordTagsKernel(const BodyRecord* __restrict__ rec, uint32_t m, uint64_t* __restrict__ tags,
                                 uint32_t* __restrict__ perm) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  tags[k] = rec[k].tag;
  perm[k] = k;
}

// out[k] = the local body perm[k] or the received record perm[k] & ~kFromReceived.
__global__ void mergeGatherKernel(const uint32_t* __restrict__ perm, uint32_t m, const Vec4* __restrict__ kPos,
                                  const Vec4* __restrict__ kVel, const uint32_t* __restrict__ kId,
                                  const uint64_t* __restrict__ kTag, const BodyRecord* __restrict__ rec,
                                  Vec4* __restrict__ oPos, Vec4* __restrict__ oVel, uint32_t* __restrict__ oId,
                                  uint64_t* __restrict__ oTag) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const uint32_t p = perm[k];
  if (p & kFromReceived) {
    const BodyRecord r = rec[p & ~kFromReceived];
    oPos[k] = r.pos, oVel[k] = r.vel, oId[k] = r.id, oTag[k] = r.tag;
  } else {
    oPos[k] = kPos[p], oVel[k] = kVel[p], oId[k] = kId[p], oTag[k] = kTag[p];
  }
}

// After the force kernel, per sorted slot: is the body owned (its cell column in this slab), its
// integrated position, and its place in the new global order (cell key, index within the cell).
__global__ void finishBoidsKernel(const uint32_t* __restrict__ sortedKeys, const uint32_t* __restrict__ cellStart,
                                  uint32_t n, SlabLayout l, int me, core::GridSpec g, const Vec4* __restrict__ pos,
                                  const Vec4* __restrict__ velNew, float dt, float halfSize,
                                  Vec4* __restrict__ posOut, uint64_t* __restrict__ tagOut,
                                  unsigned char* __restrict__ owned) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t key = sortedKeys[i];
  const bool mine = ownsColumn(l, me, core::cellFromKey(g, key).x);
  owned[i] = mine ? 1 : 0;
  if (!mine) return;
  posOut[i] = core::boidIntegrate(pos[i], core::xyz(velNew[i]), dt, halfSize);
  tagOut[i] = (static_cast<uint64_t>(key) << 32) | static_cast<uint64_t>(i - cellStart[key]);
}

__global__ void columnHistogramKernel(const Vec4* __restrict__ pos, const unsigned char* __restrict__ owned,
                                      uint32_t n, core::GridSpec g, unsigned long long* __restrict__ counts) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && owned[i]) atomicAdd(counts + columnOfDev(g, pos[i]), 1ull);
}

template <typename T>
void ensure(DeviceBuffer<T>& b, size_t count) {
  // Room for the halo and for bodies drifting in: grow by a quarter more than asked.
  if (b.size() < count) b.allocate(count + count / 4 + 1024);
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(size_t(1) << 30));
  return buf;
}

class DeviceStore final : public LocalStore {
 public:
  DeviceStore(const core::SimParams& p, cudaStream_t stream) : stream_(stream) {
    int dev = 0;
    MURMUR_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    MURMUR_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    name_ = prop.name;
    gridSpec_.allocate(1);
    setParams(p);
  }

  core::EngineKind kind() const override { return core::EngineKind::Cuda; }
  std::string deviceName() const override { return name_; }
  void setParams(const core::SimParams& p) override { params_ = p; }
  void setProfiling(bool on) override { profile_ = on; }
  core::DeviceInfo deviceInfo() const override { return cuda::deviceInfo(); }

  void checkFits(size_t owned, size_t total, const core::SimParams& p) override {
    // Boids: three copies of the local set (current, merged/reordered, integrated) of 44 B, the new
    // velocities, masks, sort keys and indices twice, with a quarter of room for halo and drift;
    // the grid's start/end. Gravity: owned state and accelerations plus every position.
    size_t need = 0;
    if (p.force == core::ForceMode::Boids) {
      need = (owned + owned / 4) * (3 * 44 + 16 + 8 + 16 + 2 * 48) + size_t(core::boidGrid(p).numCells) * 8;
    } else {
      need = owned * 48 + total * 16;
    }
    size_t freeBytes = 0, totalBytes = 0;
    MURMUR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (need > freeBytes)
      throw core::UsageError("--n " + std::to_string(total) + ": " + std::to_string(owned) + " bodies on this rank need " +
                             gib(need) + " of GPU memory, " + name_ + " has " + gib(freeBytes) + " free");
  }

  void setOwned(const core::Bodies& owned, const std::vector<uint64_t>& tags) override {
    n_ = owned.size();
    ensure(pos_, n_), ensure(vel_, n_), ensure(id_, n_), ensure(tag_, n_), ensure(acc_, n_);
    upload(pos_.get(), owned.pos.data(), n_);
    upload(vel_.get(), owned.vel.data(), n_);
    upload(id_.get(), owned.id.data(), n_);
    upload(tag_.get(), tags.data(), n_);
    ensure(owned_, n_);
    if (n_) MURMUR_CUDA_CHECK(cudaMemsetAsync(owned_.get(), 1, n_, stream_));
    compact_ = true;
  }
  size_t numOwned() const override { return compact_ ? n_ : ownedCount_; }
  core::Bodies readOwned() override {
    compact();
    core::Bodies b;
    b.resize(n_);
    download(b.pos.data(), pos_.get(), n_);
    download(b.vel.data(), vel_.get(), n_);
    download(b.id.data(), id_.get(), n_);
    return b;
  }
  void synchronize() override { MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) override {
    const uint32_t n = static_cast<uint32_t>(n_);
    const cuda::LaunchConfig lc = launch();
    ensure(mask_, n_), ensure(index_, n_);
    std::vector<uint64_t> counts(static_cast<size_t>(l.numRanks), 0);
    if (n) {
      needMaskKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(pos_.get(), owned_.get(), n, l, g, mask_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    // The bodies this rank keeps, in order: only their indices (mergeReceived reads them in place).
    ensure(keepIdx_, n_);
    nKeep_ = select(n, 1ull << me, keepIdx_.get());
    // Records for every other rank, packed by peer, in order.
    size_t total = 0;
    for (int p = 0; p < l.numRanks; ++p) {
      if (p == me) continue;
      counts[static_cast<size_t>(p)] = countBit(n, 1ull << p);
      total += counts[static_cast<size_t>(p)];
    }
    ensure(send_, total);
    size_t at = 0;
    for (int p = 0; p < l.numRanks; ++p) {
      if (p == me || counts[static_cast<size_t>(p)] == 0) continue;
      const size_t m = select(n, 1ull << p, index_.get());
      packRecordsKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(index_.get(), static_cast<uint32_t>(m), pos_.get(),
                                                                    vel_.get(), id_.get(), tag_.get(),
                                                                    send_.get() + at);
      MURMUR_CUDA_LAUNCH_CHECK();
      at += m;
    }
    return counts;
  }
  const void* sendBuffer() const override { return send_.get(); }
  void* recvBuffer(size_t records) override {
    ensure(recv_, records);
    return recv_.get();
  }

  void mergeReceived(size_t records) override {
    const cuda::LaunchConfig lc = launch();
    const auto policy = thrust::cuda::par.on(stream_);
    const uint32_t m = static_cast<uint32_t>(records);
    ensure(rTag_, records), ensure(rPerm_, records);
    if (m) {
      recordTagsKernel<<<lc.blocksFor(m), lc.block, 0, stream_>>>(recv_.get(), m, rTag_.get(), rPerm_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
      thrust::sort_by_key(policy, rTag_.get(), rTag_.get() + m, rPerm_.get());
    }
    // Merge the kept bodies (in tag order, read in place through keepIdx_) with the received
    // ones by tag: a permutation first, then one gather into the other buffers, which become
    // the local set. The current buffers hold live data until then, so only the others grow.
    const size_t total = nKeep_ + records;
    ensure(aPos_, total), ensure(aVel_, total), ensure(aId_, total), ensure(aTag_, total), ensure(index_, total);
    auto keptTags = thrust::make_permutation_iterator(tag_.get(), keepIdx_.get());
    auto recvIdx = thrust::make_permutation_iterator(
        thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0), FromReceived()), rPerm_.get());
    thrust::merge_by_key(policy, keptTags, keptTags + nKeep_, rTag_.get(), rTag_.get() + m, keepIdx_.get(), recvIdx,
                         aTag_.get(), index_.get());
    if (total) {
      mergeGatherKernel<<<lc.blocksFor(total), lc.block, 0, stream_>>>(
          index_.get(), static_cast<uint32_t>(total), pos_.get(), vel_.get(), id_.get(), tag_.get(), recv_.get(),
          aPos_.get(), aVel_.get(), aId_.get(), aTag_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    std::swap(pos_, aPos_);
    std::swap(vel_, aVel_);
    std::swap(id_, aId_);
    std::swap(tag_, aTag_);
    n_ = total;
    // The gather still reads the old buffers: let it finish before any of them is replaced.
    synchronize();
    ensureLocal(n_);  // the new current buffers already hold n_; this grows the scratch ones
  }

  void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, core::StepProfile& prof) override {
    const uint32_t n = static_cast<uint32_t>(n_);
    if (n == 0) return;
    const cuda::LaunchConfig lc = launch();
    const bool timing = profile_;
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&](double& slot) {
      if (!timing) return;
      synchronize();
      slot = msSince(t0);
      t0 = std::chrono::steady_clock::now();
    };
    if (timing) synchronize(), t0 = std::chrono::steady_clock::now();
    ensureGrid(g.numCells);
    cuda::launchStoreGrid(gridSpec_.get(), g, lc);
    cuda::launchLabelCells(pos_.get(), n, gridSpec_.get(), keys_[0].get(), idx_[0].get(), lc);
    lap(prof.labelMs);
    const cuda::SortBuffers sb{{keys_[0].get(), keys_[1].get()}, {idx_[0].get(), idx_[1].get()}, sortTemp_.get(),
                               sortTemp_.size()};
    const int sel = cuda::sortByCell(sb, n, cuda::keyBitsFor(g.numCells), lc);
    lap(prof.sortMs);
    const cuda::DeviceGrid dg{gridSpec_.get(), keys_[sel].get(), idx_[sel].get(), cellStart_.get(), cellEnd_.get(),
                              g.numCells};
    cuda::launchFindCellBounds(dg.sortedKeys, n, g.numCells, cellStart_.get(), cellEnd_.get(), lc);
    lap(prof.boundsMs);
    cuda::launchReorderBodies(dg.sortedIndex, n, pos_.get(), vel_.get(), id_.get(), aPos_.get(), aVel_.get(),
                              aId_.get(), lc);
    lap(prof.reorderMs);
    // Forces for every body in the local set; the halo's results are dropped below (it is two
    // columns of many, and skipping them would cost a branch per thread in the hot kernel).
    cuda::launchBoidsGrid(true, aPos_.get(), aVel_.get(), n, dg, params_.boids, core::maxRuleRadius(params_.boids),
                          velNew_.get(), lc);
    lap(prof.forceMs);
    finishBoidsKernel<<<lc.blocksFor(n), lc.block, 0, stream_>>>(dg.sortedKeys, cellStart_.get(), n, l, me, g,
                                                                  aPos_.get(), velNew_.get(), params_.boids.dt,
                                                                  params_.halfSize, bPos_.get(), aTag_.get(),
                                                                  owned_.get());
    MURMUR_CUDA_LAUNCH_CHECK();
    // The new state is the local set in cell order with its owned flags: halo entries stay in
    // place until packOutgoing skips them, which saves a compaction pass over every body.
    std::swap(pos_, bPos_);
    std::swap(vel_, velNew_);
    std::swap(id_, aId_);
    std::swap(tag_, aTag_);
    compact_ = false;
    ownedCount_ = static_cast<size_t>(
        thrust::count(thrust::cuda::par.on(stream_), owned_.get(), owned_.get() + n, static_cast<unsigned char>(1)));
    lap(prof.integrateMs);
  }

  std::vector<uint64_t> columnHistogram(const core::GridSpec& g) override {
    const size_t cols = static_cast<size_t>(g.dims.x);
    ensure(hist_, cols);
    MURMUR_CUDA_CHECK(cudaMemsetAsync(hist_.get(), 0, cols * sizeof(unsigned long long), stream_));
    const cuda::LaunchConfig lc = launch();
    if (n_) {
      columnHistogramKernel<<<lc.blocksFor(n_), lc.block, 0, stream_>>>(pos_.get(), owned_.get(),
                                                                        static_cast<uint32_t>(n_), g, hist_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    std::vector<unsigned long long> h(cols);
    download(h.data(), hist_.get(), cols);
    return std::vector<uint64_t>(h.begin(), h.end());
  }

  const void* ownedPositions() override {
    compact();
    return pos_.get();
  }
  void* allPositions(size_t n) override {
    ensure(all_, n);
    return all_.get();
  }
  void gravityForces(size_t n, float eps2, float G, float commonMass, core::StepProfile& prof) override {
    const auto t0 = std::chrono::steady_clock::now();
    ensure(acc_, n_);
    cuda::launchGravityNaive(
        {all_.get(), static_cast<uint32_t>(n), pos_.get(), static_cast<uint32_t>(n_), eps2, G, commonMass, acc_.get()},
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
  std::vector<Vec4> readOwnedAcc() override {
    compact();
    std::vector<Vec4> a(n_);
    download(a.data(), acc_.get(), n_);
    return a;
  }

 private:
  cuda::LaunchConfig launch() const { return cuda::LaunchConfig{params_.blockSize, stream_}; }

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

  // Drops the last step's halo entries (readOwned and gathers need the owned bodies contiguous).
  void compact() {
    if (compact_) return;
    const cuda::LaunchConfig lc = launch();
    ensure(index_, n_);
    const uint32_t* end =
        n_ ? thrust::copy_if(thrust::cuda::par.on(stream_), thrust::counting_iterator<uint32_t>(0),
                             thrust::counting_iterator<uint32_t>(static_cast<uint32_t>(n_)), owned_.get(),
                             index_.get(), IsSet())
           : index_.get();
    const size_t kept = static_cast<size_t>(end - index_.get());
    ensure(aPos_, kept), ensure(aVel_, kept), ensure(aId_, kept), ensure(aTag_, kept);
    if (kept) {
      gatherBodiesKernel<<<lc.blocksFor(kept), lc.block, 0, stream_>>>(index_.get(), static_cast<uint32_t>(kept),
                                                                        pos_.get(), vel_.get(), id_.get(), tag_.get(),
                                                                        aPos_.get(), aVel_.get(), aId_.get(),
                                                                        aTag_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    }
    std::swap(pos_, aPos_);
    std::swap(vel_, aVel_);
    std::swap(id_, aId_);
    std::swap(tag_, aTag_);
    n_ = kept;
    if (n_) MURMUR_CUDA_CHECK(cudaMemsetAsync(owned_.get(), 1, n_, stream_));
    compact_ = true;
  }

  // Indices of the bodies whose mask has `bit`, in order, into out; returns how many.
  size_t select(uint32_t n, unsigned long long bit, uint32_t* out) {
    if (n == 0) return 0;
    const uint32_t* end = thrust::copy_if(thrust::cuda::par.on(stream_), thrust::counting_iterator<uint32_t>(0),
                                          thrust::counting_iterator<uint32_t>(n), out, HasBit{mask_.get(), bit});
    return static_cast<size_t>(end - out);
  }
  size_t countBit(uint32_t n, unsigned long long bit) {
    if (n == 0) return 0;
    return static_cast<size_t>(thrust::count_if(thrust::cuda::par.on(stream_), thrust::counting_iterator<uint32_t>(0),
                                                 thrust::counting_iterator<uint32_t>(n), HasBit{mask_.get(), bit}));
  }

  void ensureLocal(size_t n) {
    ensure(pos_, n), ensure(vel_, n), ensure(id_, n), ensure(tag_, n);
    ensure(aPos_, n), ensure(aVel_, n), ensure(aId_, n), ensure(aTag_, n), ensure(bPos_, n);
    ensure(velNew_, n), ensure(owned_, n), ensure(index_, n), ensure(mask_, n);
    for (int k = 0; k < 2; ++k) ensure(keys_[k], n), ensure(idx_[k], n);
    if (sortTempFor_ < n) {
      // Sized for the capacity the key buffers just got, so it grows as rarely as they do.
      const size_t cap = keys_[0].size();
      sortTemp_.allocate(cuda::sortTempBytes(static_cast<uint32_t>(cap), 32));
      sortTempFor_ = cap;
    }
  }
  void ensureGrid(uint32_t cells) {
    if (cellStart_.size() < cells) {
      cellStart_.allocate(cells);
      cellEnd_.allocate(cells);
    }
  }

  cudaStream_t stream_;
  std::string name_;
  core::SimParams params_{};
  bool profile_ = false;
  size_t n_ = 0, nKeep_ = 0, sortTempFor_ = 0, ownedCount_ = 0;
  bool compact_ = true;  // no halo entries among the n_ bodies (all owned)
  DeviceBuffer<Vec4> pos_, vel_, acc_, all_, aPos_, aVel_, bPos_, velNew_;
  DeviceBuffer<uint32_t> id_, aId_, index_, keepIdx_, rPerm_, keys_[2], idx_[2], cellStart_, cellEnd_;
  DeviceBuffer<uint64_t> tag_, aTag_, rTag_;
  DeviceBuffer<unsigned long long> mask_, hist_;
  DeviceBuffer<unsigned char> owned_, sortTemp_;
  DeviceBuffer<BodyRecord> send_, recv_;
  DeviceBuffer<core::GridSpec> gridSpec_;
};

}  // namespace

std::unique_ptr<LocalStore> createDeviceStore(const core::SimParams& p, cudaStream_t stream) {
  return std::make_unique<DeviceStore>(p, stream);
}

}  // namespace murmur::dist
