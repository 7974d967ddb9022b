#include "cuda/row_grid_sort.h"

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/grid_build.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::Stage;

RowGridSort::~RowGridSort() {
  if (crowdedHost) cudaFreeHost(crowdedHost);
  if (crowdedEvent) cudaEventDestroy(crowdedEvent);
  for (int k = 0; k < 2; ++k) {
    if (countsRead[k]) cudaEventDestroy(countsRead[k]);
    if (countsZeroed[k]) cudaEventDestroy(countsZeroed[k]);
  }
  if (sideStream) {
    cudaStreamSynchronize(sideStream);
    cudaStreamDestroy(sideStream);
  }
}

void RowGridSort::create(cudaStream_t stream) {
  stream_ = stream;
  crowded.allocate(1);
  MURMUR_CUDA_CHECK(cudaStreamCreateWithFlags(&sideStream, cudaStreamNonBlocking));
  for (int k = 0; k < 2; ++k) {
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&countsRead[k], cudaEventDisableTiming));
    MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&countsZeroed[k], cudaEventDisableTiming));
  }
  MURMUR_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&crowdedHost), sizeof(uint32_t)));
  MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&crowdedEvent, cudaEventDisableTiming));
}

void RowGridSort::restart() {
  countsReady = false;
  countingOff = false;
  crowdedPending = false;
  MURMUR_CUDA_CHECK(cudaMemsetAsync(crowded.get(), 0, sizeof(uint32_t), stream_));
}

void RowGridSort::waitForSideStream() {
  if (sideStream) MURMUR_CUDA_CHECK(cudaStreamSynchronize(sideStream));
}

void RowGridSort::allocateCounts(uint32_t cells) {
  waitForSideStream();
  for (int k = 0; k < 2; ++k) {
    cellCount[k].allocate(size_t(cells) + 1);
    countsState[k] = Counts::Dirty;
  }
  countedIn = toRecycle = -1;
  countsReady = false;
}

void RowGridSort::releaseCounts() {
  waitForSideStream();
  for (int k = 0; k < 2; ++k) {
    cellCount[k].release();
    countsState[k] = Counts::Dirty;
  }
  countedIn = toRecycle = -1;
  countsReady = false;
}

void RowGridSort::sort(DeviceState& s, const core::GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc) {
  if (countingWanted(cells)) {
    s.timer.stage(Stage::Label, [&] {
      launchCountCells(s.pos[s.cur].get(), s.n, d_grid, s.keys[0].get(), s.index[0].get(), countsToFill(),
                       crowded.get(), lc);
    });
    placeCounted(s, cells, lc);
    recycleCounts();
    return;
  }
  lastCounted = false;
  const int sel = s.labelAndSort(d_grid, cells, lc);
  s.timer.stage(Stage::Bounds, [&] { launchFindCellFirst(s.keys[sel].get(), s.n, cells, s.cellFirst.get(), lc); });
  s.reorderBodies(s.index[sel].get(), lc);
}

bool RowGridSort::countingWanted(uint32_t cells) {
  if (crowdedPending && cudaEventQuery(crowdedEvent) == cudaSuccess) {
    crowdedPending = false;
    if (*crowdedHost != 0) countingOff = true;
  }
  return countingSortFits(cells) && (mode == CudaEngine::GridSort::Counting ||
                                     (mode == CudaEngine::GridSort::Auto && !countingOff));
}

uint32_t* RowGridSort::countsToFill() {
  const int k = countInto;
  if (countsState[k] == Counts::Dirty)
    MURMUR_CUDA_CHECK(cudaMemsetAsync(cellCount[k].get(), 0, cellCount[k].bytes(), stream_));
  else if (countsState[k] == Counts::Zeroing)
    MURMUR_CUDA_CHECK(cudaStreamWaitEvent(stream_, countsZeroed[k], 0));
  countsState[k] = Counts::Dirty;
  countedIn = k;
  countInto = 1 - k;
  return cellCount[k].get();
}

void RowGridSort::recycleCounts() {
  if (toRecycle < 0) return;
  const int k = toRecycle;
  toRecycle = -1;
  MURMUR_CUDA_CHECK(cudaEventRecord(countsRead[k], stream_));
  MURMUR_CUDA_CHECK(cudaStreamWaitEvent(sideStream, countsRead[k], 0));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(cellCount[k].get(), 0, cellCount[k].bytes(), sideStream));
  MURMUR_CUDA_CHECK(cudaEventRecord(countsZeroed[k], sideStream));
  countsState[k] = Counts::Zeroing;
}

void RowGridSort::placeCounted(DeviceState& s, uint32_t cells, const LaunchConfig& lc) {
  lastCounted = true;
  const int k = countedIn;
  s.timer.stage(Stage::Bounds, [&] {
    launchScanCellCounts(cellCount[k].get(), cells, s.cellFirst.get(), s.sortTemp.get(), s.sortTemp.size(), lc);
  });
  countedIn = -1;
  toRecycle = k;
  s.timer.stage(Stage::Sort, [&] {
    launchPlaceByCell(s.keys[0].get(), s.index[0].get(), s.n, s.cellFirst.get(), s.index[1].get(), lc);
  });
  s.timer.stage(Stage::Reorder, [&] {
    launchReorderPlaced(s.keys[0].get(), s.index[1].get(), s.n, s.cellFirst.get(), core::readOnly(s.current()),
                        s.other(), lc, s.planeOut, s.planeHeadings);
  });
  s.flipState();
  if (!crowdedPending) {
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(crowdedHost, crowded.get(), sizeof(uint32_t), cudaMemcpyDeviceToHost, stream_));
    MURMUR_CUDA_CHECK(cudaEventRecord(crowdedEvent, stream_));
    crowdedPending = true;
  }
}

int sortIndexByRowGrid(DeviceState& s, const core::GridSpec* d_grid, uint32_t cells, const LaunchConfig& lc) {
  launchLabelCells(s.pos[s.cur].get(), s.n, d_grid, s.keys[0].get(), s.index[0].get(), lc);
  const SortBuffers sb{{s.keys[0].get(), s.keys[1].get()}, {s.index[0].get(), s.index[1].get()}, s.sortTemp.get(),
                       s.sortTemp.size()};
  const int sel = sortByCell(sb, s.n, keyBitsFor(cells), lc);
  launchFindCellFirst(s.keys[sel].get(), s.n, cells, s.cellFirst.get(), lc);
  return sel;
}

}  // namespace murmur::cuda
