// The textbook coherent grid (see the header): the benchmark's yardstick for the classic
// pipelines. Deliberately plain: one kernel per stage, thrust for the sort (which sorts all 32
// key bits and allocates its scratch on every call, as the textbook code does), a reset kernel
// for the cell buffers and a per-thread loop over whole cells. Compiled with nvcc's defaults;
// core::BoidsRule keeps the neighbour test exact under them (core/rules/boids.h).
#include "cuda/textbook_coherent.h"

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/grid.h"
#include "core/physics.h"
#include "core/rule_table.h"
#include "core/rules/local_rules.h"
#include "cuda/boids_kernels.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"
#include "cuda/device_buffer.h"
#include "cuda/device_utils.cuh"
#include "cuda/grid_build.h"
#include "cuda/stage_timer.h"

namespace murmur::cuda {

using core::BoidParams;
using core::GridSpec;
using core::SimParams;
using core::Stage;
using core::Vec4;

namespace {

constexpr int kNoCell = -1;

__global__ void textbookLabelKernel(const Vec4* pos, int n, GridSpec g, int* keys, int* index) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = static_cast<int>(core::cellKeyOf(g, core::xyz(pos[i])));
  index[i] = i;
}

__global__ void textbookResetKernel(int* buffer, int count, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) buffer[i] = value;
}

__global__ void textbookCellStartEndKernel(const int* keys, int n, int* cellStart, int* cellEnd) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int key = keys[i];
  if (i == 0 || keys[i - 1] != key) cellStart[key] = i;
  if (i == n - 1 || keys[i + 1] != key) cellEnd[key] = i + 1;
}

__global__ void textbookGatherKernel(const int* index, int n, const Vec4* pos, const Vec4* vel, const uint32_t* id,
                                     Vec4* posSorted, Vec4* velSorted, uint32_t* idSorted) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int j = index[i];
  posSorted[i] = pos[j];
  velSorted[i] = vel[j];
  idSorted[i] = id[j];
}

__global__ void textbookVelocityKernel(const Vec4* pos, const Vec4* vel, int n, GridSpec g, const int* cellStart,
                                       const int* cellEnd, BoidParams b, float searchRadius, Vec4* velNew) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec4 pi = pos[i];
  const core::BoidsRule::Setup r2 = core::BoidsRule::setup(b);
  core::BoidsRule::Sum acc = core::BoidsRule::zero([&] { return vel[i]; });
  const core::CellRange cr = core::cellRangeForRadius(g, core::xyz(pi), searchRadius);
  for (int cz = cr.lo.z; cz <= cr.hi.z; ++cz)
    for (int cy = cr.lo.y; cy <= cr.hi.y; ++cy)
      for (int cx = cr.lo.x; cx <= cr.hi.x; ++cx) {
        const int cell = static_cast<int>(core::cellKey(g, cx, cy, cz));
        const int start = cellStart[cell];
        if (start == kNoCell) continue;
        const int end = cellEnd[cell];
        for (int j = start; j < end; ++j)
          if (j != i) {
            const core::Vec3 d = core::xyz(pos[j]) - core::xyz(pi);
            core::BoidsRule::add(acc, pos[j], d, core::distance2(d), [&] { return vel[j]; }, r2);
          }
      }
  velNew[i] = core::make4(core::BoidsRule::velocity(acc, pi, vel[i], b, core::BodyDraws{}), 0.0f);
}

__global__ void textbookIntegrateKernel(Vec4* pos, const Vec4* vel, int n, float dt, float halfSize) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  pos[i] = core::boidIntegrate(pos[i], core::xyz(vel[i]), dt, halfSize);
}

class TextbookCoherentEngine final : public core::Engine {
 public:
  explicit TextbookCoherentEngine(const SimParams& p) {
    std::string why;
    if (!deviceAvailable(&why)) throw std::runtime_error("the CUDA engine cannot start: " + why);
    name_ = cuda::deviceInfo().name;
    d_gridSpec_.allocate(1);
    d_counts_.allocate(2);
    setParams(p);
  }

  core::EngineKind kind() const override { return core::EngineKind::Cuda; }
  std::string deviceName() const override { return name_; }
  core::DeviceInfo deviceInfo() const override { return cuda::deviceInfo(); }

  void setParams(const SimParams& p) override {
    const std::string err = core::validateParams(p);
    if (!err.empty()) throw std::invalid_argument(err);
    if (!core::runsLocalRule(p))
      throw std::invalid_argument("textbook-coherent is a boids baseline: --force gravity is not supported");
    // The recipe as taught searches the world's cells only: it has no images to search across the faces.
    if (p.boundary != core::Boundary::Wrap)
      throw std::invalid_argument(std::string("textbook-coherent is the wrap boundary's baseline: --boundary ") +
                                  core::toString(p.boundary) + " is not supported");
    params_ = p;
    grid_ = core::boidGrid(p, n_);
    launchStoreGrid(d_gridSpec_.get(), grid_, launch());
    if (n_ > 0) allocateCells();
  }
  const SimParams& params() const override { return params_; }

  void reset(const core::Bodies& bodies) override {
    n_ = 0;
    const size_t n = bodies.size();
    if (n == 0) return;
    checkDeviceFits(n, params_);
    for (int k = 0; k < 2; ++k) {
      pos_[k].allocate(n);
      vel_[k].allocate(n);
      id_[k].allocate(n);
    }
    keys_.allocate(n);
    index_.allocate(n);
    n_ = static_cast<int>(n);
    grid_ = core::boidGrid(params_, n);  // its cells widen in a sparse world: they depend on n
    launchStoreGrid(d_gridSpec_.get(), grid_, launch());
    allocateCells();
    posCur_ = velCur_ = 0;
    std::vector<uint32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0u);
    MURMUR_CUDA_CHECK(cudaMemcpy(pos_[0].get(), bodies.pos.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice));
    MURMUR_CUDA_CHECK(cudaMemcpy(vel_[0].get(), bodies.vel.data(), n * sizeof(Vec4), cudaMemcpyHostToDevice));
    MURMUR_CUDA_CHECK(cudaMemcpy(id_[0].get(), ids.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  }
  size_t numBodies() const override { return static_cast<size_t>(n_); }

  void step(int numSteps) override {
    for (int s = 0; s < numSteps; ++s) {
      timer_.beginStep(profiling(), nullptr);
      if (n_ > 0) stepOnce();
      profile_ = timer_.endStep();
    }
  }
  void synchronize() override { MURMUR_CUDA_CHECK(cudaDeviceSynchronize()); }
  core::StepProfile lastProfile() const override { return profile_; }

  core::Bodies readBodies() override {
    core::Bodies out;
    out.resize(static_cast<size_t>(n_));
    if (n_ == 0) return out;
    const std::vector<Vec4> pos = download(pos_[posCur_].get());
    const std::vector<Vec4> vel = download(vel_[velCur_].get());
    const std::vector<uint32_t> ids = download(id_[posCur_].get());
    for (size_t k = 0; k < ids.size(); ++k) {
      const uint32_t id = ids[k];
      if (id >= ids.size()) throw std::logic_error("readBodies: body id out of range (corrupt device state)");
      out.pos[id] = pos[k];
      out.vel[id] = vel[k];
      out.id[id] = id;
    }
    return out;
  }

  std::vector<Vec4> computeAccelerations() override {
    throw std::logic_error("textbook-coherent is a boids baseline: it computes no gravity");
  }

  // The engine's own grid statistics kernel over this baseline's grid of the current state.
  core::NeighbourStats neighbourStats() override {
    core::NeighbourStats st;
    if (n_ == 0) return st;
    timer_.beginStep(false, nullptr);
    buildCells();
    const float radius = core::searchRadius(params_);
    MURMUR_CUDA_CHECK(cudaMemset(d_counts_.get(), 0, 2 * sizeof(unsigned long long)));
    const DeviceGrid g{d_gridSpec_.get(), reinterpret_cast<const uint32_t*>(keys_.get()),
                       reinterpret_cast<const uint32_t*>(index_.get()),
                       reinterpret_cast<const uint32_t*>(cellStart_.get()),
                       reinterpret_cast<const uint32_t*>(cellEnd_.get()), grid_.numCells};
    launchBoidsStatsGrid(pos_[posCur_].get(), static_cast<uint32_t>(n_), g, radius, radius * radius,
                         d_counts_.get(), launch());
    std::vector<unsigned long long> counts(2);
    MURMUR_CUDA_CHECK(cudaMemcpy(counts.data(), d_counts_.get(), 2 * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost));
    st.meanCandidates = double(counts[0]) / double(n_);
    st.meanNeighbours = double(counts[1]) / double(n_);
    return st;
  }

 private:
  LaunchConfig launch() const { return LaunchConfig{params_.blockSize, nullptr}; }
  unsigned blocks(int count) const { return launch().blocksFor(static_cast<size_t>(count)); }

  void allocateCells() {
    if (cellStart_.size() >= grid_.numCells) return;
    cellStart_.allocate(grid_.numCells);
    cellEnd_.allocate(grid_.numCells);
  }

  // label -> sort -> cell start/end on the current (unsorted) positions.
  void buildCells() {
    const int bs = params_.blockSize;
    const int cells = static_cast<int>(grid_.numCells);
    timer_.stage(Stage::Label, [&] {
      textbookLabelKernel<<<blocks(n_), bs>>>(pos_[posCur_].get(), n_, grid_, keys_.get(), index_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    });
    timer_.stage(Stage::Sort, [&] {
      thrust::sort_by_key(thrust::device, thrust::device_ptr<int>(keys_.get()),
                          thrust::device_ptr<int>(keys_.get() + n_), thrust::device_ptr<int>(index_.get()));
    });
    timer_.stage(Stage::Bounds, [&] {
      textbookResetKernel<<<blocks(cells), bs>>>(cellStart_.get(), cells, kNoCell);
      MURMUR_CUDA_LAUNCH_CHECK();
      textbookResetKernel<<<blocks(cells), bs>>>(cellEnd_.get(), cells, kNoCell);
      MURMUR_CUDA_LAUNCH_CHECK();
      textbookCellStartEndKernel<<<blocks(n_), bs>>>(keys_.get(), n_, cellStart_.get(), cellEnd_.get());
      MURMUR_CUDA_LAUNCH_CHECK();
    });
  }

  // The state (pos[posCur], vel[velCur], id[posCur]) is gathered into the other pos/vel/id
  // buffers; the old velocities are then free and receive the new ones.
  void stepOnce() {
    const int bs = params_.blockSize;
    buildCells();
    Vec4* posSorted = pos_[1 - posCur_].get();
    Vec4* velSorted = vel_[1 - velCur_].get();
    Vec4* velNew = vel_[velCur_].get();
    timer_.stage(Stage::Reorder, [&] {
      textbookGatherKernel<<<blocks(n_), bs>>>(index_.get(), n_, pos_[posCur_].get(), vel_[velCur_].get(),
                                               id_[posCur_].get(), posSorted, velSorted, id_[1 - posCur_].get());
      MURMUR_CUDA_LAUNCH_CHECK();
    });
    timer_.stage(Stage::Force, [&] {
      textbookVelocityKernel<<<blocks(n_), bs>>>(posSorted, velSorted, n_, grid_, cellStart_.get(), cellEnd_.get(),
                                                 params_.boids, core::searchRadius(params_), velNew);
      MURMUR_CUDA_LAUNCH_CHECK();
    });
    timer_.stage(Stage::Integrate, [&] {
      textbookIntegrateKernel<<<blocks(n_), bs>>>(posSorted, velNew, n_, params_.boids.dt, params_.halfSize);
      MURMUR_CUDA_LAUNCH_CHECK();
    });
    posCur_ = 1 - posCur_;
  }

  template <typename T>
  std::vector<T> download(const T* d_src) const {
    std::vector<T> out(static_cast<size_t>(n_));
    MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), d_src, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }

  SimParams params_{};
  GridSpec grid_{};
  std::string name_;
  int n_ = 0;
  DeviceBuffer<Vec4> pos_[2], vel_[2];
  DeviceBuffer<uint32_t> id_[2];
  DeviceBuffer<int> keys_, index_, cellStart_, cellEnd_;
  DeviceBuffer<GridSpec> d_gridSpec_;
  DeviceBuffer<unsigned long long> d_counts_;
  int posCur_ = 0, velCur_ = 0;
  StageTimer timer_;
  core::StepProfile profile_;
};

}  // namespace

std::unique_ptr<core::Engine> createTextbookCoherentEngine(const SimParams& p) {
  return std::make_unique<TextbookCoherentEngine>(p);
}

}  // namespace murmur::cuda
