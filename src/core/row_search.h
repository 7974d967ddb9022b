// The `rows` pipeline's neighbour search (boids), shared by the CPU engine and the CUDA kernel.
//
// Cells are up to kRowCellsPerRadius times finer than the classic grid's (half the search radius
// at cell width 1x, where classic cells are crowded: rowCellsPerRadius) and bodies are sorted by
// cell with x fastest, so every row of cells along x is
// one contiguous range of the sorted order. A body visits, for each (y, z) row its sphere can
// reach, only the x-range of cells that the sphere reaches at that row's distance: one
// contiguous loop per row, no per-cell bookkeeping, and with half-width cells about 2.5x fewer
// candidates than the 27 cells of the classic grid (the volume searched shrinks from (3r)^3
// towards the sphere).
//
// Exactness: a row or cell is skipped only when a lower bound of the distance from the body to
// every position the cell can hold is at least the radius. The bound is taken in cell units,
// from the same float expression that assigns cells ((x - origin) * invCellWidth), less a margin
// that covers that expression's rounding (rowMargin), so a pair that the naive test
// d^2 < r^2 accepts is never pruned. Cells may be split along x by a power of two s
// (rowXSplitFor): x in x-cell units is then exactly s times x in cell units (scaling by a power
// of two commutes with rounding), and so is the row's x-range, so the same bound holds.
// Clamped border cells only extend outwards, which the bounds (taken from the cell's inner
// faces) already allow for. The boundary is not searched across (docs/design.md#the-boundary-rule), as in every
// other pipeline.
#pragma once

#include "core/grid.h"
#include "core/hd.h"
#include "core/params.h"

namespace murmur::core {

// Fine cells per classic cell: 2 (half the classic width) where classic cells are crowded,
// 1 (the classic width, rows still pruned) where they are not. Halving the cells cuts the
// candidates by 2.5x but doubles the rows, and each row is a loop whose length differs per lane;
// on an H100 the halved cells won at 15.6 bodies per classic cell (CIS 565 world, 1M) and lost
// at 8 (FLAME GPU density; measurements: docs/performance.md#the-rows-pipeline).
constexpr int kRowCellsPerRadius = 2;
constexpr double kRowFineBodiesPerCell = 12.0;

// Cells per classic cell for n bodies in p's world: the mean occupancy of a classic cell decides.
inline int rowCellsPerRadius(const SimParams& p, size_t n) {
  const double w = double(searchRadius(p)) * p.cellWidthFactor;
  const double perCell = double(n) * cellMeasure(p, w) / worldMeasure(p);
  return perCell >= kRowFineBodiesPerCell ? kRowCellsPerRadius : 1;
}

// The GPU force kernel's loop by the mean occupancy of the rows grid's cells
// (cuda/rows_kernels.cu). Short: a loop per row, two candidates per iteration. Flat: one loop
// over all of a boid's rows (the lanes of a warp idle less while rows differ in length, but their
// loads spread over more rows at once). Batched: a loop per row, four candidates per iteration,
// the sums skipped outside every radius, so that a warp jumps over candidates no lane needs. On
// an H100 (bench/results/h100/flat-explore/; measurements: docs/performance.md#the-rows-kernels):
// at about 2 bodies per cell (CIS 565 world with half-width cells, 10M `dense`) short beat flat;
// at 8 (FLAME GPU density, cell width 1 and 2) flat beat batched; at 15.6 (CIS 565 world at cell
// width 2) batched beat flat. The thresholds sit between. In the plane (dims 2) the kernels read
// each candidate's position and velocity as one packed record (cuda/rows_kernels.h
// RowsStepOut::plane), and there batched beat flat at 4 bodies a cell, so the plane takes batched
// from that occupancy on: on an H200 at 1M, the force stage 0.0805 ms against 0.0889 ms in the
// plane's CIS 565 world at 12.6 neighbours, and 0.180 ms against 0.262 ms in Vicsek's gathered
// flock (measurements: docs/performance.md#vicsek-and-the-periodic-boundary).
enum class RowLoop { Short, Flat, Batched };
constexpr double kRowFlatBodiesPerCell = 4.0;
constexpr double kRowBatchBodiesPerCell = 12.0;

// Mean bodies per cell of rowGrid(p, n): the classic cell's occupancy over the cells it splits into.
inline double rowBodiesPerCell(const SimParams& p, size_t n) {
  const double w = double(searchRadius(p)) * p.cellWidthFactor;
  const double split = rowCellsPerRadius(p, n);
  return double(n) * cellMeasure(p, w / split) / worldMeasure(p);
}

inline RowLoop rowLoop(const SimParams& p, size_t n) {
  const double perCell = rowBodiesPerCell(p, n);
  if (perCell < kRowFlatBodiesPerCell) return RowLoop::Short;
  return perCell >= kRowBatchBodiesPerCell || p.dims == 2 ? RowLoop::Batched : RowLoop::Flat;
}

// Slack in cell units on every distance bound: a fixed part for the rounding of the radius and
// of d^2, plus a part that grows with the grid, since the cell coordinate t = (x - o) * invW
// carries a rounding error of a few ulp of t (t < dims). Either costs well under 1% of the
// candidates.
constexpr float kRowMarginFixed = 1e-3f;
// The split of g's cells along x (rowXSplitFor; 1 for an unsplit grid).
MURMUR_HD float rowXSplit(const GridSpec& g) { return g.invCellWidthX / g.invCellWidth; }
MURMUR_HD float rowMargin(const GridSpec& g) {
  const int dx = static_cast<int>(ceilf(static_cast<float>(g.dims.x) / rowXSplit(g)));
  const int dyz = g.dims.y > g.dims.z ? g.dims.y : g.dims.z;
  const int d = dx > dyz ? dx : dyz;
  return kRowMarginFixed + 16.0f * static_cast<float>(d) * 1.1920929e-7f;
}

// Cells along x per cell along y and z. A row's range is whole cells, so each row also takes the
// bodies of the part of its end cells that the sphere does not reach: about one cell's worth per
// row. Splitting the cells along x (and only along x: the rows, and so the loops and the range
// lookups, stay as they are) trims that to a fraction. The split is the smallest power of two
// (at most kRowMaxXSplit) that leaves at most kRowBodiesPerXCell bodies per cell, where the
// cells stay addressable with 31-bit keys. On an H100 (splits 1 to 16,
// bench/results/h100/xsplit-explore.csv; measurements: docs/performance.md#the-rows-kernels) the
// split this picks (4 in the CIS 565 world at 1.95 bodies per cell, 16 at FLAME GPU density at 8,
// 4 at 10M `dense` at 1.9) was the fastest or close to it in each; finer splits pay in the sort's
// key bits and in the offsets, one per cell.
constexpr int kRowMaxXSplit = 16;
constexpr double kRowBodiesPerXCell = 0.5;

inline int rowXSplitFor(size_t n, const SimParams& p, float w, int d) {
  const double perCell = double(n) * cellMeasure(p, w) / worldMeasure(p);
  const double cells = double(d) * double(d) * (p.dims == 2 ? 1.0 : double(d));
  int sx = 1;
  while (sx < kRowMaxXSplit && perCell / sx > kRowBodiesPerXCell && cells * (2 * sx) < 2147483648.0) sx *= 2;
  return sx;
}

// The rows pipeline's grid for n bodies: cell width = cellWidthFactor * largest radius /
// rowCellsPerRadius(p, n) (wider in a sparse world: boidGridCellsPerAxis), split along x by
// rowXSplitFor.
// rowGridForRadius: the same split of cells for a search to `radius` (the verlet pipeline's list
// radius, a little above the rule radius). The split stays the rule radius' one, with which the
// list build was fastest overall on an H100 (bench/results/h100/verlet-explore/4-cell-split.csv;
// measurements: docs/performance.md#the-verlet-pipeline): cells split 2 times won only in the CIS
// 565 world, by less than they lost at FLAME GPU density and at 10M `dense`, and 3 times lost in
// all three.
inline GridSpec rowGridForRadius(const SimParams& p, size_t n, float radius) {
  float w = radius * static_cast<float>(p.cellWidthFactor) / static_cast<float>(rowCellsPerRadius(p, n));
  const int d = boidGridCellsPerAxis(p, n, w);  // wider cells in a sparse world
  const int sx = rowXSplitFor(n, p, w, d);
  GridSpec g = worldGrid(p, w, d * sx, d);
  g.invCellWidthX = g.invCellWidth * static_cast<float>(sx);  // a power of two: exact
  return g;
}
inline GridSpec rowGrid(const SimParams& p, size_t n) { return rowGridForRadius(p, n, searchRadius(p)); }

// Gap in cell units between coordinate t and what cell c of `dim` can hold, less the margin m;
// 0 when t lies in (or within m of) it. Cell c holds [c, c + 1), except that the border cells
// also hold whatever the clamp in cellCoord sends them: everything below 0 or from dim on.
MURMUR_HD float rowGap(float t, int c, int dim, float m) {
  float g = 0.0f;
  if (c > 0 && static_cast<float>(c) > t)
    g = static_cast<float>(c) - t;
  else if (c < dim - 1 && static_cast<float>(c + 1) < t)
    g = t - static_cast<float>(c + 1);
  g -= m;
  return g > 0.0f ? g : 0.0f;
}

// The rows a sphere of `radius` around p can reach: the (y, z) box of candidate rows, and per
// row the x-range of cells the sphere reaches at that row's distance. The CPU engine and the GPU
// kernels visit the rows through forEachRow, z outer and y inner, so both sum in the same order.
struct RowSphere {
  float tx, ty, tz;  // p in cell units (tx in x-cell units, sx times finer)
  float sx;          // rowXSplit
  float reach2;      // (radius + margin)^2 in cell units
  float m;           // rowMargin
  int ylo, ny, zlo, nz;

  // Row (cy, cz), ylo <= cy < ylo + ny and zlo <= cz < zlo + nz: false when pruned; otherwise
  // the keys of its first and last cell. The sorted range of the row is
  // [cellFirst[first], cellFirst[last + 1]).
  MURMUR_HD bool rowAt(const GridSpec& g, int cz, int cy, uint32_t& first, uint32_t& last) const {
    const float gz = rowGap(tz, cz, g.dims.z, m), gy = rowGap(ty, cy, g.dims.y, m);
    const float rx2 = reach2 - gz * gz - gy * gy;
    if (rx2 <= 0.0f) return false;
    const float rx = (sqrtf(rx2) + m) * sx;
    first = cellKey(g, clampi(static_cast<int>(floorf(tx - rx)), 0, g.dims.x - 1), cy, cz);
    last = cellKey(g, clampi(static_cast<int>(floorf(tx + rx)), 0, g.dims.x - 1), cy, cz);
    return true;
  }
};

MURMUR_HD RowSphere rowSphere(const GridSpec& g, const Vec3& p, float radius) {
  RowSphere s;
  s.m = rowMargin(g);
  const float reach = radius * g.invCellWidth + s.m;
  s.reach2 = reach * reach;
  s.sx = rowXSplit(g);
  s.tx = (p.x - g.origin.x) * g.invCellWidthX;
  s.ty = (p.y - g.origin.y) * g.invCellWidth;
  s.tz = (p.z - g.origin.z) * g.invCellWidth;
  s.zlo = clampi(static_cast<int>(floorf(s.tz - reach)), 0, g.dims.z - 1);
  s.nz = clampi(static_cast<int>(floorf(s.tz + reach)), 0, g.dims.z - 1) - s.zlo + 1;
  s.ylo = clampi(static_cast<int>(floorf(s.ty - reach)), 0, g.dims.y - 1);
  s.ny = clampi(static_cast<int>(floorf(s.ty + reach)), 0, g.dims.y - 1) - s.ylo + 1;
  return s;
}

// How many planes along z beyond a body's own its rows search can reach: rowSphere's rows lie
// within planes [c - k, c + k] of the body's plane c (its clamped cell z). Every row the search may
// visit counts, not only rows that can hold a neighbour, so that a set holding those planes whole
// gives every row the same range as the whole world does (the slabs over several ranks,
// dist/slabs.h). With reach = radius / cell width + margin: floor(tz +- reach) lies within
// floor(reach) + 1 of floor(tz), and the small addend covers the float rounding of tz +- reach
// when reach sits just below an integer.
inline int rowReachPlanes(const GridSpec& g, float radius) {
  const float reach = radius * g.invCellWidth + rowMargin(g);
  return static_cast<int>(std::floor(reach + 1.0f / 64.0f)) + 1;
}

// Calls f(first, last) for every row of rowSphere(g, p, radius) that is not pruned, in order (row
// k = (cz - zlo) ny + (cy - ylo)). Two nested loops rather than one over k: row(k)'s division and
// remainder by ny cost the GPU kernels an integer division per row.
template <typename F>
MURMUR_HD void forEachRow(const GridSpec& g, const Vec3& p, float radius, F&& f) {
  const RowSphere s = rowSphere(g, p, radius);
  for (int cz = s.zlo; cz < s.zlo + s.nz; ++cz)
    for (int cy = s.ylo; cy < s.ylo + s.ny; ++cy) {
      uint32_t first = 0, last = 0;
      if (s.rowAt(g, cz, cy, first, last)) f(first, last);
    }
}

// forEachRow's rows in the same order, walked by one loop over the row count that steps y and
// then z by increments (no division either). The verlet list kernels take this form: inside the
// images loop of forEachListed, the two nested loops made ptxas keep the build kernel at 32
// registers with a 104-byte stack of spills; the rows kernels keep forEachRow, which they run
// faster with.
template <typename F>
MURMUR_HD void forEachRowOneLoop(const GridSpec& g, const Vec3& p, float radius, F&& f) {
  const RowSphere s = rowSphere(g, p, radius);
  const int rows = s.ny * s.nz;
  int cy = s.ylo, cz = s.zlo;
  for (int k = 0; k < rows; ++k) {
    uint32_t first = 0, last = 0;
    if (s.rowAt(g, cz, cy, first, last)) f(first, last);
    if (++cy == s.ylo + s.ny) {
      cy = s.ylo;
      ++cz;
    }
  }
}

}  // namespace murmur::core
