// The GPU store's class (device_store.h) and what its parts share. Its members are defined in
// device_store.cu (its life, ownership and the exchange), device_store_step.cu (the boids local
// step: the local set's sort by cell and the forces) and device_store_gravity.cu (gravity, the tree
// over ranks and the frame). Included only by those files.
#pragma once

#include "dist/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/engine.h"
#include "core/grid.h"
#include "core/params.h"
#include "core/pipeline_table.h"
#include "core/splat.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/device_buffer.h"
#include "cuda/grid_build.h"
#include "cuda/launch.h"
#include "cuda/tree_build.h"
#include "dist/local_store.h"
#include "dist/slabs.h"

namespace murmur::dist {

// Counts the host reads back, in one small copy each time it needs them.
struct Control {
  uint32_t numSelected;          // owned bodies that leave or are another rank's halo
  uint32_t ownedBegin, ownedEnd;  // the owned slots of the local arrays (the rest is halo)
  // The owned slots the next selection reads ([ownedBegin, edgeLow) and [edgeHigh, ownedEnd)).
  uint32_t edgeLow, edgeHigh;
  uint32_t crowded;              // the counting sort met a cell of more than kStableCellMax bodies
  uint32_t perRank[kMaxRanks];   // selected bodies each rank needs (this rank: those it keeps)
};

template <typename T>
void ensure(cuda::DeviceBuffer<T>& b, size_t count) {
  // Room for the halo and for bodies drifting in: grow by a quarter more than asked.
  if (b.size() < count) b.allocate(count + count / 4 + 1024);
}

// The local set of the next step, read in place (device_store_step.cu).
struct LocalSet;

class DeviceStore final : public LocalStore {
 public:
  DeviceStore(const core::SimParams& p, cudaStream_t stream);
  ~DeviceStore() override;
  DeviceStore(const DeviceStore&) = delete;
  DeviceStore& operator=(const DeviceStore&) = delete;

  core::EngineKind kind() const override { return core::EngineKind::Cuda; }
  std::string deviceName() const override { return name_; }
  void setParams(const core::SimParams& p) override {
    if (!pipeline_ || p.pipeline != params_.pipeline) pipeline_ = cuda::makeCudaPipeline(p.pipeline);
    params_ = p;
    pipeline_->plan(params_, total_);
  }
  void setProfiling(bool on) override { profile_ = on; }
  core::DeviceInfo deviceInfo() const override { return cuda::deviceInfo(); }

  void checkFits(size_t owned, size_t total, const core::SimParams& p) override;

  // The bodies come in tag order (the order given); boids are put in cell order right away (a
  // stable sort), which is the order the first step of one rank gives them too.
  void setOwned(const core::Bodies& owned, const std::vector<uint64_t>& /*tags: the order given*/,
                const core::GridSpec& g, size_t total) override;
  size_t numOwned() const override { return ownedEnd_ - ownedBegin_; }
  core::Bodies readOwned() override;
  void synchronize() override { MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) override;
  const void* sendBuffer() const override { return send_.get(); }
  void* recvBuffer(size_t records) override {
    ensure(recv_, records);
    return recv_.get();
  }

  void mergeReceived(const std::vector<uint64_t>& perPeer) override;

  void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, uint64_t step,
                      core::StepProfile& prof) override;

  bool lastSortCounted() const override { return lastCounted_; }
  size_t lastSelectionRead() const override { return lastEdgeRead_; }

  std::vector<uint64_t> planeHistogram(const core::GridSpec& g) override;

  // Gravity keeps every body owned (ownedBegin_ = 0); boids read their owned range here too.
  const void* ownedPositions() override { return pos_.get() + ownedBegin_; }
  void* allPositions(size_t n) override {
    ensure(all_, n);
    return all_.get();
  }
  void gravityForces(size_t n, float eps2, float G, float commonMass, core::StepProfile& prof) override;
  void leapfrogKickDrift(float dt) override;
  void leapfrogKick(float dt) override;
  void dampedEuler(float dt, float damping) override;

  std::vector<size_t> treeWalkShare(size_t total, const core::GravityParams& gp, int me, int k,
                                    core::StepProfile& prof) override;
  const void* treeSortedAcc() override { return treeAcc_.get(); }
  // The positions in key order are not needed once walked: they receive every share.
  void* treeGatheredAcc() override { return treeSorted_.get(); }
  void takeTreeAcc(size_t firstId, size_t lastId) override;

  uint64_t* splatOwned(const core::SplatView& view) override;
  void readSplat(std::vector<uint64_t>& keys) override;
  std::vector<core::Vec4> readOwnedAcc() override;

 private:
  cuda::LaunchConfig launch() const { return cuda::LaunchConfig{params_.blockSize, stream_}; }
  // The pipeline of params_, planned for the world's count total_.
  const cuda::CudaPipeline& pipeline() {
    if (!pipeline_) {
      pipeline_ = cuda::makeCudaPipeline(params_.pipeline);
      pipeline_->plan(params_, total_);
    }
    return *pipeline_;
  }

  // The rows pipeline's counting sort of the local set over the local cells [fromCell, endCell)
  // (see device_store_step.cu; the whole grid when the halo wraps around z), into the reordered
  // arrays, the sorted keys and the cell offsets.
  // Returns false, having changed nothing the radix sort reads, when it does not run: another
  // pipeline, more local cells than the scan counts, or a crowded cell (this step and every later
  // one until the next setOwned).
  template <typename Lap>
  bool countedSort(const LocalSet& set, uint32_t m, uint32_t n, const SlabLayout& l, const core::GridSpec& g, int me,
                   uint32_t fromCell, uint32_t endCell, Lap& lap, core::StepProfile& prof);

  // The rows grids (a local set sorted on finer cells, offsets in cellFirst) or the coherent grid.
  static bool rows(const core::SimParams& p) { return core::pipelineInfo(p.pipeline).rowGrid; }

  // The first slot of every cell from the sorted keys [0, n): cellStart/cellEnd on the coherent
  // grid, cellFirst on the rows grid.
  // Cells [fromCell, endCell) only (rows: with the end marker at endCell): every key of [0, n)
  // lies there, and no search reads outside.
  void findCellBegins(const uint32_t* sortedKeys, uint32_t n, uint32_t fromCell, uint32_t endCell,
                      const cuda::LaunchConfig& lc);
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

  // Ordered selection of the items `op` accepts into out (device_store.cu).
  template <typename InT, typename OpT>
  void selectIf(InT in, uint32_t* out, uint32_t* d_count, uint32_t n, OpT op);

  cuda::SortBuffers sortBuffers() {
    return cuda::SortBuffers{{keys_[0].get(), keys_[1].get()}, {idx_[0].get(), idx_[1].get()}, sortTemp_.get(),
                             sortTemp_.size()};
  }
  // The scratch buffers of a local step over m bodies.
  void ensureWork(size_t m);
  core::BodyPointers current() const { return core::BodyPointers{pos_.get(), vel_.get(), id_.get(), species_.get()}; }
  core::BodyPointers gatherTarget() const {
    return core::BodyPointers{aPos_.get(), aVel_.get(), aId_.get(), aSpecies_.get()};
  }
  void swapWithGatherTarget() {
    std::swap(pos_, aPos_), std::swap(vel_, aVel_), std::swap(id_, aId_), std::swap(species_, aSpecies_);
  }
  void ensureGrid(uint32_t cells);

  cudaStream_t stream_;
  std::string name_;
  core::SimParams params_{};
  std::unique_ptr<cuda::CudaPipeline> pipeline_;  // the boids force pass of params_.pipeline
  bool profile_ = false;
  int me_ = 0;
  // pos_/vel_/id_/species_ (every attribute of core/bodies.h: current()) hold n_ bodies;
  // [ownedBegin_, ownedEnd_) are this rank's (gravity: all). The a-buffers are a reorder's target
  // (gatherTarget()).
  size_t n_ = 0, ownedBegin_ = 0, ownedEnd_ = 0, sortTempFor_ = 0;
  size_t total_ = 0;  // bodies over all ranks (the rows loop is chosen for the whole count)
  // The next local step's arrivals from lower and higher ranks, and the owned bodies that left.
  size_t numLow_ = 0, numHigh_ = 0, numGone_ = 0;
  int sorted_ = 0;  // which keys_/idx_ buffer holds the last step's sorted keys
  // The counting sort: the local cells' counts (zero between steps), the scan's scratch; a cell
  // was crowded since the last setOwned; the last step's sort was the counting sort.
  cuda::DeviceBuffer<uint32_t> counts_;
  cuda::DeviceBuffer<unsigned char> scanTemp_;
  bool crowded_ = false, lastCounted_ = false;
  // The side stream that zeroes the counts after each scan (zeroing_: until the next count waits).
  cudaStream_t side_ = nullptr;
  cudaEvent_t scanned_ = nullptr, zeroed_ = nullptr;
  bool zeroing_ = false;
  // The slots of the last local step where the owned bodies the next selection reads end and
  // start again, for the slab (and halo) they were sorted for; how many the last selection read.
  struct EdgesFor {
    bool valid = false;
    int start = 0, end = 0, halo = 0, wrapHalo = 0;
  } edgesFor_;
  size_t edgeLow_ = 0, edgeHigh_ = 0, lastEdgeRead_ = 0;
  Control host_{};
  cuda::DeviceBuffer<Control> ctl_;
  cuda::DeviceBuffer<core::Vec4> pos_, vel_, acc_, all_, aPos_, aVel_, velNew_, rPos_;
  cuda::DeviceBuffer<uint32_t> id_, aId_, selected_, peerIdx_, keys_[2], idx_[2], cellStart_, cellEnd_, cellFirst_;
  cuda::DeviceBuffer<core::Species> species_, aSpecies_;
  cuda::DeviceBuffer<unsigned long long> hist_;
  cuda::DeviceBuffer<unsigned char> sortTemp_, selectTemp_;
  cuda::DeviceBuffer<BodyRecord> send_, recv_;
  cuda::DeviceBuffer<core::GridSpec> gridSpec_;
  // The tree over ranks (treeWalkShare): its buffers, the positions in key order (then every
  // share's accelerations), this share's accelerations, the order one engine's state is in (and
  // its next), for treeOrderFor_ bodies (0: the order given, not yet made).
  cuda::TreeBuffers tree_;
  cuda::DeviceBuffer<core::Vec4> treeSorted_, treeAcc_;
  cuda::DeviceBuffer<uint32_t> treeOrder_[2], bodyCut_;
  size_t treeOrderFor_ = 0;
  // The frame over ranks (splatOwned): this rank's keys.
  cuda::DeviceBuffer<uint64_t> splat_;
  size_t splatPixels_ = 0;
};

}  // namespace murmur::dist
