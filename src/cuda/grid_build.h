// Grid-build stages shared by the boids and gravity grid pipelines (docs/design.md#pipelines):
// labelCells -> sortByCell -> findCellBounds (-> reorderBodies, coherent) plus, for gravity, the
// bounding-box grid and the per-cell monopoles. Kernels live in grid_build.cu; these launchers
// only enqueue work on lc.stream and never synchronise with the host.
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <cstdint>

#include "core/bodies.h"
#include "core/grid.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// A built grid as the force kernels see it (all device pointers). For the coherent pipeline the
// body arrays are in cell order and sortedIndex is not needed.
struct DeviceGrid {
  const core::GridSpec* grid;   // spec in device memory (the gravity grid is computed there)
  const uint32_t* sortedKeys;   // cell key per sorted slot
  const uint32_t* sortedIndex;  // body index per sorted slot
  const uint32_t* cellStart;    // per cell: first sorted slot, or kEmptyCell
  const uint32_t* cellEnd;      // per cell: one past the last sorted slot, or kEmptyCell
  uint32_t numCells;
};

// Partial results of the bounding-box reduction: at most this many blocks, each writing a (lo, hi)
// pair. Enough to fill any current GPU; the final pass reduces them in one block.
constexpr unsigned kMaxBoundsBlocks = 1024;

// Output d_grid: `grid` stored into device memory (a one-thread kernel, so no host sync).
void launchStoreGrid(core::GridSpec* d_grid, const core::GridSpec& grid, const LaunchConfig& lc);

// Output *d_out: the largest |x|, |y| or |z| of d_pos[0, n), as the bits of a float (0 for n = 0):
// where the bodies of an open world are (core/open_world.h).
void launchMaxAbsCoord(const core::Vec4* d_pos, uint32_t n, uint32_t* d_out, const LaunchConfig& lc);

// Bytes of device scratch launchGravityGridFromBounds needs (independent of n).
size_t gravityGridScratchBytes();

// Input d_pos[0, n), n > 0. Output d_grid = core::gravityGridAroundMass(bounding box, centre of
// mass, mean distance, spread, cellsPerAxis): the same grid core::gravityGridForBodies builds on
// the host (sums in double; the grid's rounding absorbs their different order).
void launchGravityGridFromBounds(const core::Vec4* d_pos, uint32_t n, int cellsPerAxis, float spread,
                                 void* d_scratch, core::GridSpec* d_grid, const LaunchConfig& lc);

// labelCells. Input d_pos, d_grid. Output d_keys[i] = cell key of body i, d_index[i] = i.
void launchLabelCells(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid,
                      uint32_t* d_keys, uint32_t* d_index, const LaunchConfig& lc);

// Key bits the radix sort must look at for keys in [0, numCells): at least 1.
int keyBitsFor(uint32_t numCells);

// Device scratch bytes sortByCell needs for n pairs and `bits` key bits (asks CUB; needs a device).
size_t sortTempBytes(uint32_t n, int bits);

// sortByCell's ping-pong buffers: keys[0] / index[0] hold the labels on entry.
struct SortBuffers {
  uint32_t* keys[2];
  uint32_t* index[2];
  void* temp;
  size_t tempBytes;
};

// Stable radix sort of (keys[0], index[0]) by key over the low `bits` bits. Returns the buffer
// (0 or 1) that holds the sorted pairs; the other one is clobbered.
int sortByCell(const SortBuffers& b, uint32_t n, int bits, const LaunchConfig& lc);

// findCellBounds. Input d_sortedKeys[0, n). Output d_cellStart / d_cellEnd[0, numCells): the
// half-open range [start, end) of each cell in sorted order, core::kEmptyCell for empty cells
// (both buffers are reset every call).
void launchFindCellBounds(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells,
                          uint32_t* d_cellStart, uint32_t* d_cellEnd, const LaunchConfig& lc);
// The same for the cells [fromCell, endCell) only (they must hold every key of [0, n)); the other
// entries are left as they were (a rank's slab and the planes its search reaches).
void launchFindCellBoundsIn(const uint32_t* d_sortedKeys, uint32_t n, uint32_t fromCell, uint32_t endCell,
                            uint32_t* d_cellStart, uint32_t* d_cellEnd, const LaunchConfig& lc);

// reorderBodies. Input the body arrays (every attribute of core/bodies.h) and d_sortedIndex.
// Output the arrays gathered into cell order: out.x[k] = in.x[d_sortedIndex[k]]. In and out must
// not alias. With d_plane, also the bodies' plane records in that order (storePlaneRecord, 2D;
// with planeHeadings their unit velocities).
void launchReorderBodies(const uint32_t* d_sortedIndex, uint32_t n, const core::ConstBodyPointers& in,
                         const core::BodyPointers& out, const LaunchConfig& lc, core::Vec4* d_plane = nullptr,
                         bool planeHeadings = false);

// Gravity monopoles. Input positions (through d_sortedIndex for the scattered pipeline, or
// nullptr when the positions are already in cell order) and the cell bounds. Output d_monopole[c]
// = (centre of mass xyz, w = mass) of cell c, all zero for an empty or massless cell.
void launchCellMonopoles(const core::Vec4* d_pos, const uint32_t* d_sortedIndex,
                         const uint32_t* d_cellStart, const uint32_t* d_cellEnd, uint32_t numCells,
                         core::Vec4* d_monopole, const LaunchConfig& lc);

}  // namespace murmur::cuda
