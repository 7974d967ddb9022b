// The cell offsets of the `rows` boids pipeline (rows_kernels.h): findCellFirst from the radix
// sort's keys, and the counting sort by cell. Compiled without FMA contraction (see
// CMakeLists.txt), so that a body's cell is the CPU's.
#include <cub/device/device_scan.cuh>

#include <climits>

#include "core/grid.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"
#include "cuda/rows_cells.cuh"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec4;

namespace {

// Every cell between the previous slot's key (exclusive) and this slot's key (inclusive) starts
// here. The cells before the first key start at 0 and those after the last key at n; those two
// runs are filled by every thread of the grid in strides, since they can be long (a rank's local
// set covers only its slab's planes of the whole grid: a serial fill by one thread cost many times
// the rest of the step at 10M bodies over two ranks; measurements:
// docs/performance.md#four-gpus-rows-and-coherent-over-ranks). Each entry is written exactly once.
__global__ void __launch_bounds__(1024) findCellFirstKernel(const uint32_t* __restrict__ sortedKeys, uint32_t n,
                                                            uint32_t fromCell, uint32_t toCell,
                                                            uint32_t* __restrict__ cellFirst) {
  const uint32_t k = globalThreadIndex();
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t firstKey = __ldg(sortedKeys), lastKey = __ldg(sortedKeys + n - 1);
  for (uint32_t c = fromCell + k; c < firstKey; c += stride) cellFirst[c] = 0;
  for (uint64_t c = uint64_t(lastKey) + 1 + k; c <= toCell; c += stride) cellFirst[c] = n;
  if (k >= n) return;
  const uint32_t key = __ldg(sortedKeys + k);
  const uint32_t prev = k == 0 ? key : __ldg(sortedKeys + k - 1) + 1u;
  for (uint32_t c = prev; c <= key; ++c) cellFirst[c] = k;
}

// The counting sort (see rows_kernels.h). Each body takes the next free rank of its cell with one
// atomic; which body gets which rank depends on the order the atomics land in, so placeKernel's
// order inside a cell is arbitrary, and reorderPlacedKernel puts every body of a cell back in the
// order of its current slot: the permutation of a stable sort, the one the radix sort gives.
__global__ void __launch_bounds__(1024)
    countCellsKernel(const Vec4* __restrict__ pos, uint32_t n, const GridSpec* __restrict__ grid,
                     uint32_t* __restrict__ keys, uint32_t* __restrict__ rank, uint32_t* __restrict__ counts,
                     uint32_t* __restrict__ crowded) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  countCell(*grid, ldg4(pos + q), q, keys, rank, counts, crowded);
}

__global__ void __launch_bounds__(1024)
    placeKernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ rank, uint32_t n,
                const uint32_t* __restrict__ cellFirst, uint32_t* __restrict__ placed) {
  const uint32_t q = globalThreadIndex();
  if (q >= n) return;
  placed[__ldg(cellFirst + __ldg(keys + q)) + __ldg(rank + q)] = q;
}

// A body's place in its cell is the number of the cell's bodies with a lower current slot; the
// body is gathered there (reads through the placement, writes within the cell). Cells of more
// than kStableCellMax bodies keep the order of the atomics (countCellsKernel flagged them, and
// the engine then sorts with the radix sort).
__global__ void __launch_bounds__(1024)
    reorderPlacedKernel(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ placed, uint32_t n,
                        const uint32_t* __restrict__ cellFirst, const core::ConstBodyPointers in,
                        const core::BodyPointers out, Vec4* __restrict__ plane, bool headings) {
  const uint32_t p = globalThreadIndex();
  if (p >= n) return;
  const uint32_t q = __ldg(placed + p);
  const uint32_t key = __ldg(keys + q);
  const uint32_t s = __ldg(cellFirst + key), e = __ldg(cellFirst + key + 1);
  uint32_t dst = p;
  if (e - s <= kStableCellMax) {
    uint32_t r = 0;
    for (uint32_t t = s; t < e; ++t) r += __ldg(placed + t) < q ? 1u : 0u;
    dst = s + r;
  }
  moveBody(out, dst, in, q);
  if (plane) storePlaneRecord(plane, dst, in, q, headings);
}

}  // namespace

void launchFindCellFirst(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellFirst,
                         const LaunchConfig& lc) {
  launchFindCellFirstIn(d_sortedKeys, n, 0, numCells, d_cellFirst, lc);
}

void launchFindCellFirstIn(const uint32_t* d_sortedKeys, uint32_t n, uint32_t fromCell, uint32_t toCell,
                           uint32_t* d_cellFirst, const LaunchConfig& lc) {
  findCellFirstKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedKeys, n, fromCell, toCell, d_cellFirst);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchCountCells(const Vec4* d_pos, uint32_t n, const GridSpec* d_grid, uint32_t* d_keys, uint32_t* d_rank,
                      uint32_t* d_counts, uint32_t* d_crowded, const LaunchConfig& lc) {
  countCellsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_keys, d_rank, d_counts,
                                                                 d_crowded);
  MURMUR_CUDA_LAUNCH_CHECK();
}

bool countingSortFits(uint32_t numCells) { return size_t(numCells) + 1 <= size_t(INT_MAX); }

size_t cellScanTempBytes(uint32_t numCells) {
  size_t bytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint32_t*>(nullptr),
                                                  static_cast<uint32_t*>(nullptr), static_cast<int>(numCells) + 1));
  return bytes;
}

void launchScanCellCounts(const uint32_t* d_counts, uint32_t numCells, uint32_t* d_cellFirst, void* d_temp,
                          size_t tempBytes, const LaunchConfig& lc) {
  size_t bytes = tempBytes;
  MURMUR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, bytes, d_counts, d_cellFirst,
                                                  static_cast<int>(numCells) + 1, lc.stream));
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchPlaceByCell(const uint32_t* d_keys, const uint32_t* d_rank, uint32_t n, const uint32_t* d_cellFirst,
                       uint32_t* d_placed, const LaunchConfig& lc) {
  placeKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_keys, d_rank, n, d_cellFirst, d_placed);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchReorderPlaced(const uint32_t* d_keys, const uint32_t* d_placed, uint32_t n, const uint32_t* d_cellFirst,
                         const core::ConstBodyPointers& in, const core::BodyPointers& out, const LaunchConfig& lc,
                         core::Vec4* d_plane, bool planeHeadings) {
  if (n == 0) return;
  reorderPlacedKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_keys, d_placed, n, d_cellFirst, in, out,
                                                                   d_plane, planeHeadings);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
