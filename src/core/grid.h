// Uniform grid math shared by every grid pipeline (CPU and CUDA).
//
// Boids: the grid covers the wrapped world cube with cell width = factor * largest rule radius.
// A body visits exactly the cells its search radius can reach (grid looping), clamped to the
// grid: the wrap boundary is not searched across (DESIGN.md §2), so every pipeline finds the
// same neighbour set as naive all-pairs.
//
// Gravity: the grid covers the bounding cube of the bodies, recomputed every step, with
// gridDim cells per axis. Near field = own cell and its 26 neighbours (exact pairs); every other
// occupied cell contributes its monopole (mass, centre of mass).
#pragma once

#include "core/hd.h"
#include "core/params.h"

namespace murmur::core {

struct Int3 {
  int x, y, z;
};

struct GridSpec {
  Vec3 origin;      // min corner, world units
  float cellWidth;  // world units
  float invCellWidth;
  Int3 dims;        // cells per axis
  uint32_t numCells;
};

MURMUR_HD GridSpec makeGrid(Vec3 origin, float cellWidth, Int3 dims) {
  GridSpec g;
  g.origin = origin;
  g.cellWidth = cellWidth;
  g.invCellWidth = 1.0f / cellWidth;
  g.dims = dims;
  g.numCells = static_cast<uint32_t>(dims.x) * static_cast<uint32_t>(dims.y) * static_cast<uint32_t>(dims.z);
  return g;
}

// The boids grid for these parameters (independent of the body positions).
inline GridSpec boidGrid(const SimParams& p) {
  const float w = maxRuleRadius(p.boids) * static_cast<float>(p.cellWidthFactor);
  int d = static_cast<int>(std::ceil(2.0f * p.halfSize / w));
  if (d < 1) d = 1;
  return makeGrid(Vec3{-p.halfSize, -p.halfSize, -p.halfSize}, w, Int3{d, d, d});
}

// The gravity grid over the bounding box [lo, hi]: a cube of gridDim cells per axis whose side is
// the box's largest extent, slightly enlarged so the max corner falls inside the last cell.
MURMUR_HD GridSpec gravityGrid(Vec3 lo, Vec3 hi, int gridDim) {
  float ext = hi.x - lo.x;
  if (hi.y - lo.y > ext) ext = hi.y - lo.y;
  if (hi.z - lo.z > ext) ext = hi.z - lo.z;
  ext = ext * 1.0001f + 1e-6f;
  return makeGrid(lo, ext / static_cast<float>(gridDim), Int3{gridDim, gridDim, gridDim});
}

MURMUR_HD int cellCoord(float x, float origin, float invW, int dim) {
  return clampi(static_cast<int>(floorf((x - origin) * invW)), 0, dim - 1);
}

MURMUR_HD Int3 cellOf(const GridSpec& g, const Vec3& p) {
  return Int3{cellCoord(p.x, g.origin.x, g.invCellWidth, g.dims.x),
              cellCoord(p.y, g.origin.y, g.invCellWidth, g.dims.y),
              cellCoord(p.z, g.origin.z, g.invCellWidth, g.dims.z)};
}

// x fastest: neighbouring cells along x are adjacent in key order.
MURMUR_HD uint32_t cellKey(const GridSpec& g, int cx, int cy, int cz) {
  return (static_cast<uint32_t>(cz) * static_cast<uint32_t>(g.dims.y) + static_cast<uint32_t>(cy)) *
             static_cast<uint32_t>(g.dims.x) +
         static_cast<uint32_t>(cx);
}

MURMUR_HD uint32_t cellKeyOf(const GridSpec& g, const Vec3& p) {
  const Int3 c = cellOf(g, p);
  return cellKey(g, c.x, c.y, c.z);
}

MURMUR_HD Int3 cellFromKey(const GridSpec& g, uint32_t key) {
  const uint32_t dx = static_cast<uint32_t>(g.dims.x), dy = static_cast<uint32_t>(g.dims.y);
  return Int3{static_cast<int>(key % dx), static_cast<int>((key / dx) % dy), static_cast<int>(key / (dx * dy))};
}

// Inclusive range of cells that a sphere of `radius` around p can reach (grid looping). It is
// computed from p's own cell and its fractional position inside it, t - c, with the same float
// expression that assigned the cells, so the range is consistent with every body's cell: a
// neighbour at distance < radius has its cell coordinate between floor(t - radius/w) and
// floor(t + radius/w). With w = radius that is always c-1..c+1 (27 cells); with w = 2 radius it
// is c-1..c or c..c+1 by the half of the cell p sits in (8 cells).
struct CellRange {
  Int3 lo, hi;
};

MURMUR_HD void cellSpan(float x, float origin, float invW, int dim, float reach, int& lo, int& hi) {
  const float t = (x - origin) * invW;
  const int c = clampi(static_cast<int>(floorf(t)), 0, dim - 1);
  const float frac = t - static_cast<float>(c);
  lo = clampi(c + static_cast<int>(floorf(frac - reach)), 0, dim - 1);
  hi = clampi(c + static_cast<int>(floorf(frac + reach)), 0, dim - 1);
}

MURMUR_HD CellRange cellRangeForRadius(const GridSpec& g, const Vec3& p, float radius) {
  const float reach = radius * g.invCellWidth;
  CellRange cr;
  cellSpan(p.x, g.origin.x, g.invCellWidth, g.dims.x, reach, cr.lo.x, cr.hi.x);
  cellSpan(p.y, g.origin.y, g.invCellWidth, g.dims.y, reach, cr.lo.y, cr.hi.y);
  cellSpan(p.z, g.origin.z, g.invCellWidth, g.dims.z, reach, cr.lo.z, cr.hi.z);
  return cr;
}

// Gravity near field: the body's own cell and its neighbours, clamped to the grid.
MURMUR_HD CellRange nearCells(const GridSpec& g, const Int3& c) {
  return CellRange{Int3{c.x > 0 ? c.x - 1 : 0, c.y > 0 ? c.y - 1 : 0, c.z > 0 ? c.z - 1 : 0},
                   Int3{c.x < g.dims.x - 1 ? c.x + 1 : c.x, c.y < g.dims.y - 1 ? c.y + 1 : c.y,
                        c.z < g.dims.z - 1 ? c.z + 1 : c.z}};
}

// True when cell `other` belongs to the near field of cell `own` (handled by exact pairs).
MURMUR_HD bool isNearCell(const Int3& own, const Int3& other) {
  const int dx = other.x - own.x, dy = other.y - own.y, dz = other.z - own.z;
  return dx >= -1 && dx <= 1 && dy >= -1 && dy <= 1 && dz >= -1 && dz <= 1;
}

// Empty-cell marker in cell start/end buffers.
constexpr uint32_t kEmptyCell = 0xffffffffu;

}  // namespace murmur::core
