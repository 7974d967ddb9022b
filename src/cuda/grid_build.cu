// Grid-build kernels. This file is compiled without FMA contraction (see CMakeLists.txt): cell
// keys, the gravity grid spec and everything that decides which cell a body is in must round
// exactly like the CPU reference, or a body on a cell face lands in a different cell.
#include "cuda/grid_build.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::GridSpec;
using core::Vec4;

namespace {

__global__ void __launch_bounds__(1024) storeGridKernel(GridSpec* grid, GridSpec value) { *grid = value; }

// The largest |x|, |y| or |z| of the bodies into *out as float bits (a non-negative float orders
// as its bits do), which the caller set to 0: a grid-stride loop, each warp's maximum added once.
__global__ void __launch_bounds__(1024) maxAbsCoordKernel(const Vec4* __restrict__ pos, uint32_t n, uint32_t* out) {
  float m = 0.0f;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const Vec4 p = ldg4(pos + i);
    m = fmaxf(m, fmaxf(fabsf(p.x), fmaxf(fabsf(p.y), fabsf(p.z))));
  }
  for (int off = kWarpSize / 2; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(kFullWarpMask, m, off));
  if (threadIdx.x % kWarpSize == 0) atomicMax(out, __float_as_uint(m));
}

// Min/max over the block, valid in thread 0. Every thread of the block must call it.
__device__ void blockMinMax(float (&lo)[3], float (&hi)[3]) {
  __shared__ float partial[6][kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  warpMinMax(lo, hi);
  if (lane == 0) {
    for (int a = 0; a < 3; ++a) {
      partial[a][warp] = lo[a];
      partial[3 + a][warp] = hi[a];
    }
  }
  __syncthreads();
  if (warp == 0) {
    const bool has = lane < static_cast<int>(blockDim.x / kWarpSize);
    for (int a = 0; a < 3; ++a) {
      lo[a] = has ? partial[a][lane] : INFINITY;
      hi[a] = has ? partial[3 + a][lane] : -INFINITY;
    }
    warpMinMax(lo, hi);
  }
}

// Scratch layout of the gravity-grid reduction (kMaxBoundsBlocks = B blocks at most):
//   Vec4 box[2B]        per block (lo, hi)
//   double moment[4B]   per block (sum m, sum m x, sum m y, sum m z)
//   double spread[B]    per block sum m |p - com|
//   double centre[8]    lo xyz, hi xyz (as double), and com written by the centre pass
struct GridScratch {
  Vec4* box;
  double* moment;
  double* spread;
  double* centre;
};

__host__ __device__ inline GridScratch gridScratch(void* base) {
  GridScratch g;
  g.box = static_cast<Vec4*>(base);
  g.moment = reinterpret_cast<double*>(g.box + 2 * kMaxBoundsBlocks);
  g.spread = g.moment + 4 * kMaxBoundsBlocks;
  g.centre = g.spread + kMaxBoundsBlocks;
  return g;
}

// First pass: grid-stride min/max and mass moments per block (moments in double, like the CPU).
__global__ void __launch_bounds__(1024) boundsPartialKernel(const Vec4* __restrict__ pos, uint32_t n, void* scratch) {
  const GridScratch g = gridScratch(scratch);
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  double m = 0, mx = 0, my = 0, mz = 0;
  for (uint32_t k = globalThreadIndex(); k < n; k += gridDim.x * blockDim.x) {
    const Vec4 p = ldg4(pos + k);
    lo[0] = fminf(lo[0], p.x), lo[1] = fminf(lo[1], p.y), lo[2] = fminf(lo[2], p.z);
    hi[0] = fmaxf(hi[0], p.x), hi[1] = fmaxf(hi[1], p.y), hi[2] = fmaxf(hi[2], p.z);
    m += p.w;
    mx += double(p.w) * p.x, my += double(p.w) * p.y, mz += double(p.w) * p.z;
  }
  blockMinMax(lo, hi);
  m = blockSum(m), mx = blockSum(mx), my = blockSum(my), mz = blockSum(mz);
  if (threadIdx.x == 0) {
    st4(g.box + 2 * blockIdx.x, Vec4{lo[0], lo[1], lo[2], 0.0f});
    st4(g.box + 2 * blockIdx.x + 1, Vec4{hi[0], hi[1], hi[2], 0.0f});
    double* mo = g.moment + 4 * blockIdx.x;
    mo[0] = m, mo[1] = mx, mo[2] = my, mo[3] = mz;
  }
}

// Second pass, one block: the box and the centre of mass.
__global__ void __launch_bounds__(1024) boundsCentreKernel(void* scratch, unsigned numPartials) {
  const GridScratch g = gridScratch(scratch);
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  double m = 0, mx = 0, my = 0, mz = 0;
  for (unsigned k = threadIdx.x; k < numPartials; k += blockDim.x) {
    const Vec4 a = ldg4(g.box + 2 * k), b = ldg4(g.box + 2 * k + 1);
    lo[0] = fminf(lo[0], a.x), lo[1] = fminf(lo[1], a.y), lo[2] = fminf(lo[2], a.z);
    hi[0] = fmaxf(hi[0], b.x), hi[1] = fmaxf(hi[1], b.y), hi[2] = fmaxf(hi[2], b.z);
    const double* mo = g.moment + 4 * k;
    m += mo[0], mx += mo[1], my += mo[2], mz += mo[3];
  }
  blockMinMax(lo, hi);
  m = blockSum(m), mx = blockSum(mx), my = blockSum(my), mz = blockSum(mz);
  if (threadIdx.x == 0) {
    double* c = g.centre;
    for (int a = 0; a < 3; ++a) c[a] = lo[a], c[3 + a] = hi[a];
    // com as float, as the CPU reference rounds it; massless systems fall back to the box.
    c[6] = m;
    const float com[3] = {m > 0 ? float(mx / m) : 0.0f, m > 0 ? float(my / m) : 0.0f, m > 0 ? float(mz / m) : 0.0f};
    Vec4* comOut = reinterpret_cast<Vec4*>(c + 8);
    *comOut = Vec4{com[0], com[1], com[2], 0.0f};
  }
}

// Third pass: mass-weighted distance from the centre of mass, per block.
__global__ void __launch_bounds__(1024) spreadPartialKernel(const Vec4* __restrict__ pos, uint32_t n, void* scratch) {
  const GridScratch g = gridScratch(scratch);
  const Vec4 com = *reinterpret_cast<const Vec4*>(g.centre + 8);
  double md = 0;
  for (uint32_t k = globalThreadIndex(); k < n; k += gridDim.x * blockDim.x) {
    const Vec4 p = ldg4(pos + k);
    const float dx = p.x - com.x, dy = p.y - com.y, dz = p.z - com.z;
    md += double(p.w) * sqrt(double(dx) * dx + double(dy) * dy + double(dz) * dz);
  }
  md = blockSum(md);
  if (threadIdx.x == 0) g.spread[blockIdx.x] = md;
}

// Last pass, one block: derives the grid on the device, so the label kernel reads it without a
// round trip through the host.
__global__ void __launch_bounds__(1024) boundsGridKernel(void* scratch, unsigned numPartials, int cellsPerAxis,
                                                         float spread, GridSpec* __restrict__ grid) {
  const GridScratch g = gridScratch(scratch);
  double md = 0;
  for (unsigned k = threadIdx.x; k < numPartials; k += blockDim.x) md += g.spread[k];
  md = blockSum(md);
  if (threadIdx.x == 0) {
    const double* c = g.centre;
    const Vec4 com = *reinterpret_cast<const Vec4*>(c + 8);
    const double m = c[6];
    const core::Vec3 lo = core::make3(float(c[0]), float(c[1]), float(c[2]));
    const core::Vec3 hi = core::make3(float(c[3]), float(c[4]), float(c[5]));
    *grid = m > 0 ? core::gravityGridAroundMass(lo, hi, core::xyz(com), float(md / m), spread, cellsPerAxis)
                  : core::gravityGrid(lo, hi, cellsPerAxis);
  }
}

// The grid spec is read from device memory, not passed by value: for gravity it is derived on the
// device from this step's bounding box (boundsGridKernel), and fetching it to the host would
// synchronise every step. The index starts as the identity; the sort carries it with the keys.
__global__ void __launch_bounds__(1024)
    labelCellsKernel(const Vec4* __restrict__ pos, uint32_t n, const GridSpec* __restrict__ gridPtr,
                     uint32_t* __restrict__ keys, uint32_t* __restrict__ index) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const GridSpec g = *gridPtr;
  keys[i] = core::cellKeyOf(g, core::xyz(ldg4(pos + i)));
  index[i] = i;
}

// A cell starts where the sorted key changes from the previous slot and ends where it changes
// to the next one; every other cell keeps the kEmptyCell fill.
__global__ void __launch_bounds__(1024)
    findCellBoundsKernel(const uint32_t* __restrict__ keys, uint32_t n, uint32_t* __restrict__ cellStart,
                         uint32_t* __restrict__ cellEnd) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t key = keys[k];
  if (k == 0 || keys[k - 1] != key) cellStart[key] = k;
  if (k == n - 1 || keys[k + 1] != key) cellEnd[key] = k + 1;
}

// Gathers (reads through the index, writes contiguously) rather than scatters: the writes then
// coalesce, and the random side is a read that the read-only cache can absorb. The id travels
// with the body so that it keeps its identity in cell order.
__global__ void __launch_bounds__(1024)
    reorderBodiesKernel(const uint32_t* __restrict__ index, uint32_t n, const core::ConstBodyPointers in,
                        const core::BodyPointers out, Vec4* __restrict__ plane, bool headings) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  const uint32_t j = __ldg(index + k);
  moveBody(out, k, in, j);
  if (plane) storePlaneRecord(plane, k, in, j, headings);
}

// One warp per cell: a dense cell (the core of a Plummer sphere) can hold a large share of all
// bodies, so a thread per cell would serialise on it. Sums in double like the CPU reference.
__global__ void __launch_bounds__(1024)
    cellMonopolesKernel(const Vec4* __restrict__ pos, const uint32_t* __restrict__ index,
                        const uint32_t* __restrict__ cellStart, const uint32_t* __restrict__ cellEnd,
                        uint32_t numCells, Vec4* __restrict__ monopole) {
  const uint32_t cell = globalThreadIndex() / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (cell >= numCells) return;  // uniform per warp: block sizes are multiples of 32
  double m = 0, x = 0, y = 0, z = 0;
  const uint32_t s = cellStart[cell];
  if (s != core::kEmptyCell) {
    const uint32_t e = cellEnd[cell];
    for (uint32_t q = s + lane; q < e; q += kWarpSize) {
      const Vec4 p = ldg4(pos + (index ? index[q] : q));
      m += p.w;
      x += double(p.w) * p.x;
      y += double(p.w) * p.y;
      z += double(p.w) * p.z;
    }
  }
  m = warpSum(m);
  x = warpSum(x);
  y = warpSum(y);
  z = warpSum(z);
  if (lane == 0)
    st4(monopole + cell, m > 0 ? Vec4{float(x / m), float(y / m), float(z / m), float(m)} : Vec4{0, 0, 0, 0});
}

}  // namespace

void launchStoreGrid(GridSpec* d_grid, const GridSpec& grid, const LaunchConfig& lc) {
  storeGridKernel<<<1, 1, 0, lc.stream>>>(d_grid, grid);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchMaxAbsCoord(const Vec4* d_pos, uint32_t n, uint32_t* d_out, const LaunchConfig& lc) {
  MURMUR_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(uint32_t), lc.stream));
  if (n == 0) return;
  const unsigned blocks = std::min(lc.blocksFor(n), kMaxBoundsBlocks);
  maxAbsCoordKernel<<<blocks, lc.block, 0, lc.stream>>>(d_pos, n, d_out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

size_t gravityGridScratchBytes() {
  return 2 * kMaxBoundsBlocks * sizeof(Vec4) + 5 * kMaxBoundsBlocks * sizeof(double) + 8 * sizeof(double) +
         sizeof(Vec4);
}

void launchGravityGridFromBounds(const Vec4* d_pos, uint32_t n, int cellsPerAxis, float spread, void* d_scratch,
                                 GridSpec* d_grid, const LaunchConfig& lc) {
  unsigned blocks = lc.blocksFor(n);
  if (blocks > kMaxBoundsBlocks) blocks = kMaxBoundsBlocks;
  boundsPartialKernel<<<blocks, lc.block, 0, lc.stream>>>(d_pos, n, d_scratch);
  MURMUR_CUDA_LAUNCH_CHECK();
  boundsCentreKernel<<<1, lc.block, 0, lc.stream>>>(d_scratch, blocks);
  MURMUR_CUDA_LAUNCH_CHECK();
  spreadPartialKernel<<<blocks, lc.block, 0, lc.stream>>>(d_pos, n, d_scratch);
  MURMUR_CUDA_LAUNCH_CHECK();
  boundsGridKernel<<<1, lc.block, 0, lc.stream>>>(d_scratch, blocks, cellsPerAxis, spread, d_grid);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchLabelCells(const Vec4* d_pos, uint32_t n, const GridSpec* d_grid, uint32_t* d_keys,
                      uint32_t* d_index, const LaunchConfig& lc) {
  labelCellsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, n, d_grid, d_keys, d_index);
  MURMUR_CUDA_LAUNCH_CHECK();
}

// Radix sort passes grow with the key width: sorting only the bits that a cell key can use (16
// for the 40^3 cells of the CIS 565 world) takes fewer passes than a full 32-bit key.
int keyBitsFor(uint32_t numCells) {
  int bits = 1;
  while (bits < 32 && (uint64_t(1) << bits) < numCells) ++bits;
  return bits;
}

size_t sortTempBytes(uint32_t n, int bits) {
  cub::DoubleBuffer<uint32_t> keys(nullptr, nullptr), values(nullptr, nullptr);
  size_t bytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, static_cast<int>(n), 0, bits));
  return bytes;
}

int sortByCell(const SortBuffers& b, uint32_t n, int bits, const LaunchConfig& lc) {
  // The double-buffer form needs no O(n) scratch of its own; CUB picks the output buffer from the
  // number of passes, on the host, so reading the selector does not synchronise.
  cub::DoubleBuffer<uint32_t> keys(b.keys[0], b.keys[1]), values(b.index[0], b.index[1]);
  size_t bytes = b.tempBytes;
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.temp, bytes, keys, values, static_cast<int>(n), 0,
                                                    bits, lc.stream));
  MURMUR_CUDA_LAUNCH_CHECK();
  return keys.selector;
}

void launchFindCellBounds(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellStart,
                          uint32_t* d_cellEnd, const LaunchConfig& lc) {
  launchFindCellBoundsIn(d_sortedKeys, n, 0, numCells, d_cellStart, d_cellEnd, lc);
}

void launchFindCellBoundsIn(const uint32_t* d_sortedKeys, uint32_t n, uint32_t fromCell, uint32_t endCell,
                            uint32_t* d_cellStart, uint32_t* d_cellEnd, const LaunchConfig& lc) {
  // 0xff bytes make every word kEmptyCell.
  static_assert(core::kEmptyCell == 0xffffffffu, "memset fill assumes kEmptyCell is all ones");
  const size_t bytes = size_t(endCell - fromCell) * sizeof(uint32_t);
  MURMUR_CUDA_CHECK(cudaMemsetAsync(d_cellStart + fromCell, 0xff, bytes, lc.stream));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(d_cellEnd + fromCell, 0xff, bytes, lc.stream));
  findCellBoundsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedKeys, n, d_cellStart, d_cellEnd);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchReorderBodies(const uint32_t* d_sortedIndex, uint32_t n, const core::ConstBodyPointers& in,
                         const core::BodyPointers& out, const LaunchConfig& lc, Vec4* d_plane,
                         bool planeHeadings) {
  if (n == 0) return;
  reorderBodiesKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedIndex, n, in, out, d_plane,
                                                                     planeHeadings);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchCellMonopoles(const Vec4* d_pos, const uint32_t* d_sortedIndex, const uint32_t* d_cellStart,
                         const uint32_t* d_cellEnd, uint32_t numCells, Vec4* d_monopole, const LaunchConfig& lc) {
  const size_t threads = size_t(numCells) * kWarpSize;
  cellMonopolesKernel<<<lc.blocksFor(threads), lc.block, 0, lc.stream>>>(d_pos, d_sortedIndex, d_cellStart,
                                                                         d_cellEnd, numCells, d_monopole);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
