#include "cuda/verlet_lists.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/errors.h"
#include "core/format.h"
#include "core/row_search.h"
#include "cuda/cuda_check.h"
#include "cuda/debug_api.h"
#include "cuda/device_state.h"
#include "cuda/grid_build.h"

namespace murmur::cuda {

VerletListState::~VerletListState() {
  if (statsHost) cudaFreeHost(statsHost);
  if (event) cudaEventDestroy(event);
}

void VerletListState::create() {
  scalars.allocate(4);
  MURMUR_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&statsHost), 4 * sizeof(uint32_t)));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
}

void VerletListState::release() {
  entries.release();
  count.release();
  overflow.release();
  capacity = 0;
  fixed = false;
  valid = false;
  fresh = true;
}

void VerletListState::fixCapacity(uint32_t want, uint32_t n) {
  capacity = std::max<uint32_t>((want + kListQuad - 1) / kListQuad * kListQuad, kListQuad);
  entries.allocate(verletListWords(std::max<size_t>(n, 1), capacity));
  eventPending = false;
  valid = false;
  fixed = true;
}

VerletLists VerletListState::view() const {
  return VerletLists{entries.get(), count.get(), overflow.get(), scalars.get(),
                     scalars.get() + 1, reinterpret_cast<unsigned long long*>(scalars.get() + 2),
                     capacity};
}

void sizeLists(DeviceState& s, VerletListState& L, const core::GridSpec* d_grid, const LaunchConfig& lc) {
  if (L.fixed) return;
  const uint32_t n = s.n;
  uint32_t want = L.capacity;
  const auto roomFor = [&](const uint32_t* stats) {
    const uint32_t longest = stats[1];
    const double total = double(stats[2]) + 4294967296.0 * double(stats[3]);
    const double byMean = 3.0 * total / double(n) + 32.0;
    return static_cast<uint32_t>(std::min(double(longest) + double(longest / 4) + 16.0, byMean));
  };
  if (L.capacity == 0) {
    MURMUR_CUDA_CHECK(cudaMemsetAsync(L.scalars.get(), 0, 4 * sizeof(uint32_t), s.stream));
    launchVerletBuild(s.pos[s.cur].get(), n, d_grid, s.cellFirst.get(), L.plan, s.params.halfSize, L.view(), lc);
    uint32_t stats[4] = {};
    MURMUR_CUDA_CHECK(cudaMemcpy(stats, L.scalars.get(), sizeof stats, cudaMemcpyDeviceToHost));
    want = roomFor(stats);
    L.eventPending = false;
  } else if (L.eventPending && cudaEventQuery(L.event) == cudaSuccess) {
    L.eventPending = false;
    const uint32_t room = roomFor(L.statsHost);
    if (room > L.capacity) want = room;
  }
  if (want <= L.capacity && L.entries.get()) return;
  want = std::max((std::min(want, n) + kListQuad - 1) / kListQuad * kListQuad, kListQuad);
  const size_t need = verletListWords(n, want) * sizeof(uint32_t);
  const size_t freeBytes = deviceFreeBytes() + L.entries.bytes();
  if (need > freeBytes)
    throw core::UsageError("verlet lists of " + std::to_string(want) + " entries per body: need " +
                           core::formatBytes(need) + " of GPU memory, " + s.name + " has " +
                           core::formatBytes(freeBytes) + " free (--pipeline rows searches without lists)");
  L.entries.allocate(verletListWords(n, want));
  L.capacity = want;
}

void buildLists(DeviceState& s, VerletListState& L) {
  const LaunchConfig lc = s.launch();
  L.plan = L.fresh ? core::verletPlanFor(s.params, 1) : core::verletPlan(s.params);
  const core::GridSpec g = core::rowGridForRadius(s.params, s.n, L.plan.radius);
  core::GridSpec* d_grid = s.gridSpecs.get() + kVerletGridSlot;
  if (!L.gridKnown || std::memcmp(&g, &L.gridStored, sizeof g) != 0) {
    launchStoreGrid(d_grid, g, lc);
    L.gridStored = g;
    L.gridKnown = true;
  }
  s.ensureRowGrid(g.numCells);
  if (L.count.size() < s.n) {
    L.count.allocate(s.n);
    L.overflow.allocate(s.n);
  }
  s.rowSort.sort(s, d_grid, g.numCells, lc);
  sizeLists(s, L, d_grid, lc);
  s.timer.stage(core::Stage::List, [&] {
    MURMUR_CUDA_CHECK(cudaMemsetAsync(L.scalars.get(), 0, 4 * sizeof(uint32_t), s.stream));
    launchVerletBuild(s.pos[s.cur].get(), s.n, d_grid, s.cellFirst.get(), L.plan, s.params.halfSize, L.view(), lc);
  });
  if (!L.eventPending) {
    MURMUR_CUDA_CHECK(
        cudaMemcpyAsync(L.statsHost, L.scalars.get(), 4 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s.stream));
    MURMUR_CUDA_CHECK(cudaEventRecord(L.event, s.stream));
    L.eventPending = true;
  }
  L.age = 0;
  L.valid = true;
  L.fresh = false;
}

}  // namespace murmur::cuda
