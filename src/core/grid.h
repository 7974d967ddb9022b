// Uniform grid math shared by every grid pipeline (CPU and CUDA).
//
// Boids: the grid covers the wrapped world cube with cell width = factor * largest rule radius,
// wider where so few bodies fill so large a world that the grid would outgrow them (boidGrid).
// A body visits exactly the cells its search radius can reach (grid looping), clamped to the
// grid: the wrap boundary is not searched across (docs/design.md#the-boundary-rule), so every pipeline finds the
// same neighbour set as naive all-pairs.
//
// Gravity: the grid covers the bounding cube of the bodies, recomputed every step, with
// gridDim cells per axis. Near field = own cell and its 26 neighbours (exact pairs); every other
// occupied cell contributes its monopole (mass, centre of mass).
#pragma once

#include <algorithm>
#include <cmath>

#include "core/hd.h"
#include "core/params.h"
#include "core/rules/local_rules.h"

namespace murmur::core {

struct Int3 {
  int x, y, z;
};

struct GridSpec {
  Vec3 origin;      // min corner, world units
  float cellWidth;  // world units
  float invCellWidth;
  // Along x: invCellWidth times a power of two (1 except in the rows pipeline's grids, whose cells
  // are split along x; see core/row_search.h), so that x in x-cell units is exactly that power
  // of two times x in cell units.
  float invCellWidthX;
  Int3 dims;  // cells per axis
  uint32_t numCells;
};

MURMUR_HD GridSpec makeGrid(Vec3 origin, float cellWidth, Int3 dims) {
  GridSpec g;
  g.origin = origin;
  g.cellWidth = cellWidth;
  g.invCellWidth = 1.0f / cellWidth;
  g.invCellWidthX = g.invCellWidth;
  g.dims = dims;
  g.numCells = static_cast<uint32_t>(dims.x) * static_cast<uint32_t>(dims.y) * static_cast<uint32_t>(dims.z);
  return g;
}

// A boids grid of d cells of width w per axis over the world: a cube, or in 2D one cell deep,
// centred on the plane z = 0 (every body lies inside it, and a search's z range is that cell).
inline GridSpec worldGrid(const SimParams& p, float w, int dx, int d) {
  const bool plane = p.dims == 2;
  return makeGrid(Vec3{-p.halfSize, -p.halfSize, plane ? -0.5f * w : -p.halfSize}, w, Int3{dx, d, plane ? 1 : d});
}

// The most cells a boids grid of n bodies holds: kGridCellsPerBody a body, at least
// kGridMinCells, at most 2^30 (32-bit keys with room to spare). A sparse world (a few boids in a
// large box) widens its cells instead, so that a grid's memory stays proportional to n: wider
// cells only add candidates, never lose a neighbour, and there are few bodies to add.
constexpr double kGridCellsPerBody = 8.0;
constexpr double kGridMinCells = 4096.0;
constexpr double kGridMaxCells = 1073741824.0;
inline double boidGridCellCap(size_t n) {
  return std::min(std::max(kGridCellsPerBody * double(n), kGridMinCells), kGridMaxCells);
}

// The cells per axis of a boids grid over the world whose cells are at least w wide: d =
// ceil(2 halfSize / w), or where d^3 (d^2 in the plane) cells would pass boidGridCellCap(n), the
// most that fit under it, w then widened to 2 halfSize / d (w is updated).
inline int boidGridCellsPerAxis(const SimParams& p, size_t n, float& w) {
  int d = static_cast<int>(std::ceil(2.0f * p.halfSize / w));
  if (d < 1) d = 1;
  const int axes = p.dims == 2 ? 2 : 3;
  const double cap = boidGridCellCap(n);
  if (std::pow(double(d), axes) <= cap) return d;
  int c = static_cast<int>(std::floor(std::pow(cap, 1.0 / axes)));
  while (c > 1 && std::pow(double(c), axes) > cap) --c;
  while (std::pow(double(c + 1), axes) <= cap) ++c;
  if (c < 1) c = 1;
  if (c >= d) return d;
  // c < d <= 2 halfSize / w + 1, so c <= 2 halfSize / w and the widened cells are no narrower.
  w = std::max(w, 2.0f * p.halfSize / static_cast<float>(c));
  return c;
}

// The grid of cells cellWidthFactor times the rule's reach over the world, whatever the body
// count (the observables' grid, which widens its cells by whole factors of the reach itself).
inline GridSpec boidGridAtFactor(const SimParams& p) {
  const float w = searchRadius(p) * static_cast<float>(p.cellWidthFactor);
  int d = static_cast<int>(std::ceil(2.0f * p.halfSize / w));
  if (d < 1) d = 1;
  return worldGrid(p, w, d, d);
}

// The boids grid for these parameters and n bodies (independent of the body positions): cells
// of cellWidthFactor times the rule's reach, wider in a sparse world (boidGridCellsPerAxis).
inline GridSpec boidGrid(const SimParams& p, size_t n) {
  float w = searchRadius(p) * static_cast<float>(p.cellWidthFactor);
  const int d = boidGridCellsPerAxis(p, n, w);
  return worldGrid(p, w, d, d);
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

// The gravity grid around the mass: a cube centred on the centre of mass whose half-side is the
// smaller of what holds the bounding box and `spread` times the mass-weighted mean distance from
// the centre. A bounding cube alone lets a few far bodies stretch the cells until a concentrated
// system (a Plummer core) sits in a handful of them and the exact near field turns quadratic;
// bodies outside the cube fall into its border cells (cellOf clamps), whose monopoles still sit
// at their true centres of mass. The half-side is rounded up to a quarter octave and the centre
// to 1/32 of it, so engines whose sums round differently (CPU, GPU) still build the same grid.
// spread <= 0 gives the plain bounding cube.
MURMUR_HD float quarterOctaveCeil(float h) {
  int e = 0;
  const float m = frexpf(h, &e);  // h = m 2^e, m in [0.5, 1): exact on host and device
  const float steps[5] = {0.5f, 0.59460356f, 0.70710678f, 0.84089642f, 1.0f};
  float q = 1.0f;
  for (int k = 4; k >= 0; --k)
    if (m <= steps[k]) q = steps[k];
  return ldexpf(q, e);
}

MURMUR_HD GridSpec gravityGridAroundMass(Vec3 lo, Vec3 hi, Vec3 com, float meanDist, float spread, int gridDim) {
  if (!(spread > 0.0f) || !(meanDist > 0.0f)) return gravityGrid(lo, hi, gridDim);
  const float hb = fmaxf(fmaxf(fmaxf(hi.x - com.x, com.x - lo.x), fmaxf(hi.y - com.y, com.y - lo.y)),
                         fmaxf(hi.z - com.z, com.z - lo.z));
  float h = fminf(hb, spread * meanDist);
  if (!(h > 1e-6f)) h = 1e-6f;
  const float hq = quarterOctaveCeil(h);
  const float q = hq * (1.0f / 32.0f);
  const Vec3 c{roundf(com.x / q) * q, roundf(com.y / q) * q, roundf(com.z / q) * q};
  return makeGrid(Vec3{c.x - hq, c.y - hq, c.z - hq}, 2.0f * hq / static_cast<float>(gridDim),
                  Int3{gridDim, gridDim, gridDim});
}

// Clamps a whole-valued float to [0, dim - 1] before converting: a coordinate far outside the
// grid (or a NaN) would overflow the float-to-int conversion, which is undefined behaviour.
// fmaxf returns 0 for NaN, so a NaN body lands in cell 0 instead of anywhere.
MURMUR_HD int clampToCell(float c, int dim) {
  return static_cast<int>(fminf(fmaxf(c, 0.0f), static_cast<float>(dim - 1)));
}

MURMUR_HD int cellCoord(float x, float origin, float invW, int dim) {
  return clampToCell(floorf((x - origin) * invW), dim);
}

MURMUR_HD Int3 cellOf(const GridSpec& g, const Vec3& p) {
  return Int3{cellCoord(p.x, g.origin.x, g.invCellWidthX, g.dims.x),
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

// t and reach are rounded products (mulRn): fused into the sums below, they would move a body
// that sits exactly on a half or whole cell to a different range than the host gives it.
MURMUR_HD void cellSpan(float x, float origin, float invW, int dim, float reach, int& lo, int& hi) {
  const float t = mulRn(x - origin, invW);
  const int c = clampToCell(floorf(t), dim);
  const float cf = static_cast<float>(c);
  const float frac = t - cf;
  // In float until clamped (see clampToCell); c and the floors are small whole numbers inside
  // the world, where the float sum is exact and equals the integer one.
  lo = clampToCell(cf + floorf(frac - reach), dim);
  hi = clampToCell(cf + floorf(frac + reach), dim);
}

MURMUR_HD CellRange cellRangeForRadius(const GridSpec& g, const Vec3& p, float radius) {
  const float reach = mulRn(radius, g.invCellWidth);
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

// The gravity grid of a set of bodies as every engine builds it: bounding box (exact), centre of
// mass and mean distance (summed in double), then gravityGridAroundMass. Host reference.
inline GridSpec gravityGridForBodies(const Vec4* pos, size_t n, int gridDim, float spread) {
  if (n == 0) return gravityGrid(Vec3{0, 0, 0}, Vec3{0, 0, 0}, gridDim);
  Vec3 lo = xyz(pos[0]), hi = lo;
  double m = 0, mx = 0, my = 0, mz = 0;
  for (size_t i = 0; i < n; ++i) {
    const Vec4& p = pos[i];
    lo = Vec3{fminf(lo.x, p.x), fminf(lo.y, p.y), fminf(lo.z, p.z)};
    hi = Vec3{fmaxf(hi.x, p.x), fmaxf(hi.y, p.y), fmaxf(hi.z, p.z)};
    m += p.w;
    mx += double(p.w) * p.x, my += double(p.w) * p.y, mz += double(p.w) * p.z;
  }
  if (!(m > 0)) return gravityGrid(lo, hi, gridDim);
  const Vec3 com{float(mx / m), float(my / m), float(mz / m)};
  double md = 0;
  for (size_t i = 0; i < n; ++i) {
    const Vec3 d = xyz(pos[i]) - com;
    md += double(pos[i].w) * std::sqrt(double(d.x) * d.x + double(d.y) * d.y + double(d.z) * d.z);
  }
  return gravityGridAroundMass(lo, hi, com, float(md / m), spread, gridDim);
}

// Empty-cell marker in cell start/end buffers.
constexpr uint32_t kEmptyCell = 0xffffffffu;

// Calls f(j) for every body j in the cells of range r of a sorted grid. The loops run z, y, x with
// x innermost on every engine: a body's neighbour sums then add the same terms in the same order
// on the CPU and the GPU, which is what lets the tests compare them to 1e-5. Scattered data
// (CoherentT false) reaches a body through the sorted index; coherent data is already in cell
// order, so the sorted slot is the body. cellStart/cellEnd/sortedIndex are read-only here
// (loadReadOnly takes the GPU's read-only cache path).
template <bool CoherentT, typename F>
MURMUR_HD void forEachInCells(const GridSpec& g, const CellRange& r, const uint32_t* __restrict__ cellStart,
                              const uint32_t* __restrict__ cellEnd, const uint32_t* __restrict__ sortedIndex,
                              F&& f) {
  for (int cz = r.lo.z; cz <= r.hi.z; ++cz)
    for (int cy = r.lo.y; cy <= r.hi.y; ++cy)
      for (int cx = r.lo.x; cx <= r.hi.x; ++cx) {
        const uint32_t key = cellKey(g, cx, cy, cz);
        const uint32_t s = loadReadOnly(cellStart + key);
        if (s == kEmptyCell) continue;
        const uint32_t e = loadReadOnly(cellEnd + key);
        for (uint32_t q = s; q < e; ++q) f(CoherentT ? q : loadReadOnly(sortedIndex + q));
      }
}

}  // namespace murmur::core
