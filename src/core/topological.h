// Topological neighbours (--topological K; Ballerini et al. 2008): the active rule sums over each
// body's K nearest other bodies instead of everyone within its radius, optionally only those within
// a cutoff. Exact: ties in distance are broken by id, so the set is the one a brute-force sort of
// (d^2, id) finds. The search grows over a grid shell by shell (the cells at Chebyshev distance s
// of the body's cell) until no body outside the shells searched can be nearer than the K-th found,
// on both engines (docs/models.md#topological-neighbours).
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/boundary.h"
#include "core/grid.h"
#include "core/hd.h"
#include "core/params.h"
#include "core/physics.h"
#include "core/row_search.h"

namespace murmur::core {

constexpr int kMaxTopological = 64;

// The lists' loops unroll on the device (their indices known when compiled keep them in registers).
#if defined(__CUDA_ARCH__)
#define MURMUR_TOPOLOGICAL_UNROLL _Pragma("unroll")
#else
#define MURMUR_TOPOLOGICAL_UNROLL
#endif

// Whether neighbour (d2a, ida) comes before (d2b, idb): nearer, or as near with the smaller id.
MURMUR_HD bool nearerThan(float d2a, uint32_t ida, float d2b, uint32_t idb) {
  return d2a < d2b || (d2a == d2b && ida < idb);
}

// The K nearest found so far, in order (d^2, id), for K up to KMax: the last K entries of the
// arrays hold them (still +inf where fewer have been found), the first KMax - K are -inf and never
// move. Every index is known when compiled (the loops unroll), so on the GPU the lists stay in
// registers for a small KMax.
template <int KMax>
struct KNearest {
  float d2[KMax];
  uint32_t id[KMax];
  uint32_t slot[KMax];
  MURMUR_HD explicit KNearest(int k) {
MURMUR_TOPOLOGICAL_UNROLL
    for (int m = 0; m < KMax; ++m) {
      const bool pad = m < KMax - k;
      d2[m] = pad ? -INFINITY : INFINITY;
      id[m] = pad ? 0u : 0xffffffffu;
      slot[m] = 0;
    }
  }
  // The squared distance a candidate must beat (inf until K are found).
  MURMUR_HD float bound() const { return d2[KMax - 1]; }
  // Inserts a candidate where it belongs, the K-th falling off the end.
  MURMUR_HD void offer(float dd, uint32_t cid, uint32_t cslot) {
    if (!nearerThan(dd, cid, d2[KMax - 1], id[KMax - 1])) return;
MURMUR_TOPOLOGICAL_UNROLL
    for (int m = 0; m < KMax; ++m) {
      if (nearerThan(dd, cid, d2[m], id[m])) {
        const float t = d2[m];
        const uint32_t ti = id[m], ts = slot[m];
        d2[m] = dd, id[m] = cid, slot[m] = cslot;
        dd = t, cid = ti, cslot = ts;
      }
    }
  }
  // Whether entry m holds a neighbour found (one of the K, nearest first from KMax - K).
  MURMUR_HD bool found(int m) const { return d2[m] > -INFINITY && d2[m] < INFINITY; }
};

// The offset from p_i to p_j: p_j - p_i, under the periodic boundary its minimum image
// (core::minimumImageOffset, the periodic pipelines' offsets). The same rounding on both engines.
MURMUR_HD Vec3 topologicalOffset(const Vec3& pi, const Vec3& pj, bool periodic, float halfSize) {
  return periodic ? minimumImageOffset(pi, pj, halfSize) : pj - pi;
}

// The cells of shell s along one axis of D cells, as offsets from the body's cell c: [lo, hi].
// Periodic: the offsets grow until they hold every cell once; otherwise they stop at the grid.
struct ShellAxis {
  int lo, hi;
  bool full;  // no cell of the axis lies outside
};
MURMUR_HD ShellAxis shellAxis(int s, int c, int D, bool periodic) {
  ShellAxis a;
  if (periodic) {
    const int below = (D - 1) / 2, above = D - 1 - below;
    a.lo = -(s < below ? s : below);
    a.hi = s < above ? s : above;
    a.full = a.hi - a.lo + 1 >= D;
  } else {
    a.lo = -(s < c ? s : c);
    a.hi = s < D - 1 - c ? s : D - 1 - c;
    a.full = a.lo == -c && a.hi == D - 1 - c;
  }
  return a;
}

// Searches the cells around p shell by shell, calling visitRun(firstKey, count) for runs of cells
// consecutive along x (consecutive keys, so their bodies are one range of sorted slots), each cell
// once, until the K-th nearest is certain: every body outside the shells searched is farther than
// best's K-th (or than the cutoff, cutoff2 > 0), or no cell is left. The distance to the region
// searched is taken a little short (margin), so that rounding in a body's cell never hides one.
template <typename Best, typename VisitRun>
MURMUR_HD void searchShells(const GridSpec& g, const Vec3& p, bool periodic, float cutoff2, const Best& best,
                            VisitRun&& visitRun) {
  const Int3 c = cellOf(g, p);
  const float w = g.cellWidth;
  const float margin = w * 1e-4f + (fabsf(g.origin.x) + fabsf(g.origin.y) + fabsf(g.origin.z)) * 1e-6f;
  // The cells of x offsets [a, b] in row (y, z) (wrapped; a run that crosses the x faces of a
  // torus is two runs).
  const auto run = [&](int a, int b, int y, int z) {
    if (a > b) return;
    int x0 = c.x + a, x1 = c.x + b;
    if (periodic) {
      y = y < 0 ? y + g.dims.y : (y >= g.dims.y ? y - g.dims.y : y);
      z = z < 0 ? z + g.dims.z : (z >= g.dims.z ? z - g.dims.z : z);
      if (x1 < 0) x0 += g.dims.x, x1 += g.dims.x;  // wholly across the low face
      if (x0 >= g.dims.x) x0 -= g.dims.x, x1 -= g.dims.x;  // wholly across the high face
      if (x0 < 0) {
        visitRun(cellKey(g, x0 + g.dims.x, y, z), static_cast<uint32_t>(-x0));
        x0 = 0;
      }
      if (x1 >= g.dims.x) {
        visitRun(cellKey(g, 0, y, z), static_cast<uint32_t>(x1 - g.dims.x + 1));
        x1 = g.dims.x - 1;
      }
    }
    visitRun(cellKey(g, x0, y, z), static_cast<uint32_t>(x1 - x0 + 1));
  };
  ShellAxis prev[3] = {{1, -1, false}, {1, -1, false}, {1, -1, false}};  // shell -1: nothing
  for (int s = 0;; ++s) {
    const ShellAxis ax = shellAxis(s, c.x, g.dims.x, periodic), ay = shellAxis(s, c.y, g.dims.y, periodic),
                    az = shellAxis(s, c.z, g.dims.z, periodic);
    for (int oz = az.lo; oz <= az.hi; ++oz)
      for (int oy = ay.lo; oy <= ay.hi; ++oy) {
        const bool inner = oy >= prev[1].lo && oy <= prev[1].hi && oz >= prev[2].lo && oz <= prev[2].hi;
        if (!inner || prev[0].lo > prev[0].hi) {
          run(ax.lo, ax.hi, c.y + oy, c.z + oz);
        } else {  // the row's cells beyond the last shell's, at both ends
          run(ax.lo, prev[0].lo - 1, c.y + oy, c.z + oz);
          run(prev[0].hi + 1, ax.hi, c.y + oy, c.z + oz);
        }
      }
    if (ax.full && ay.full && az.full) return;  // every cell searched
    // The nearest point outside the shells searched, axis by axis.
    float gap = INFINITY;
    const ShellAxis* axes[3] = {&ax, &ay, &az};
    const float pc[3] = {p.x, p.y, p.z};
    const float oc[3] = {g.origin.x, g.origin.y, g.origin.z};
    const int cc[3] = {c.x, c.y, c.z};
    const int dd[3] = {g.dims.x, g.dims.y, g.dims.z};
    for (int a = 0; a < 3; ++a) {
      const ShellAxis& A = *axes[a];
      if (A.full) continue;
      const float lo = oc[a] + static_cast<float>(cc[a] + A.lo) * w;
      const float hi = oc[a] + static_cast<float>(cc[a] + A.hi + 1) * w;
      if (periodic || cc[a] + A.lo > 0) gap = fminf(gap, pc[a] - lo);
      if (periodic || cc[a] + A.hi < dd[a] - 1) gap = fminf(gap, hi - pc[a]);
    }
    gap -= margin;
    prev[0] = ax, prev[1] = ay, prev[2] = az;
    if (gap <= 0.0f) continue;
    const float gap2 = gap * gap;
    if (cutoff2 > 0.0f && gap2 >= cutoff2) return;  // beyond the cutoff: no one else counts
    if (best.bound() < gap2) return;
  }
}

// The sphere search (the CUDA engine's, outside the periodic boundary): spheres of growing radius
// about p walked by the rows pipeline's rows (core::forEachRow on a grid of cellFirst offsets),
// until the K-th nearest is certain. Pass m offers the bodies with R_{m-1}^2 <= d^2 < R_m^2
// (visitRows(first, last, lo2, hi2) filters them, so that no body is offered twice); forEachRow
// never prunes a pair that d^2 < R^2 accepts (core/row_search.h), so after pass m every body
// nearer than R_m has been offered, and once K of them are (best's K-th below R_m^2) no other can
// be nearer. r0 is the first radius (a guess: the previous step's K-th distance, or the mean
// density's); each further pass grows it by half. The cutoff (cutoff > 0) and the whole grid
// (maxReach: no pair of bodies in the grid's box is as far) end the search.
template <typename Best, typename VisitRows>
MURMUR_HD void searchSpheres(const GridSpec& g, const Vec3& p, float r0, float cutoff, float maxReach,
                             const Best& best, VisitRows&& visitRows) {
  float lo2 = -1.0f;
  float r = r0 > 0.0f ? r0 : maxReach;
  for (;;) {
    bool last = false;
    float hi2;
    if (cutoff > 0.0f && !(r < cutoff)) {
      r = cutoff, hi2 = cutoff * cutoff, last = true;
    } else if (!(r < maxReach)) {
      r = maxReach, hi2 = INFINITY, last = true;
    } else {
      hi2 = r * r;
    }
    forEachRow(g, p, r, [&](uint32_t first, uint32_t lastKey) { visitRows(first, lastKey, lo2, hi2); });
    if (last || best.bound() < hi2) return;
    lo2 = hi2;
    r *= 1.5f;
  }
}

// The distance within which a body has, at the mean density of n bodies in p's world, K others.
inline double topologicalMeanReach(const SimParams& p, size_t n, double k) {
  const double side = 2.0 * double(p.halfSize);
  const double density = double(n > 0 ? n : 1) / (p.dims == 2 ? side * side : side * side * side);
  constexpr double kPi = 3.14159265358979323846;
  return p.dims == 2 ? sqrt(k / (kPi * density)) : cbrt(3.0 * k / (4.0 * kPi * density));
}

// The sphere search's grid: cubic cells of kTopologicalSphereCell times the mean K-th distance,
// at most boidGridCellCap(n) of them; maxReach: the grid's diagonal (searchSpheres).
constexpr double kTopologicalSphereCell = 1.2;
constexpr int kTopologicalSphereXSplit = 4;
inline GridSpec topologicalSphereGrid(const SimParams& p, size_t n, float* maxReach) {
  float w = static_cast<float>(kTopologicalSphereCell * topologicalMeanReach(p, n, p.topological > 0 ? p.topological : 1));
  if (!(w > 0.0f)) w = p.halfSize;
  const int d = boidGridCellsPerAxis(p, n, w);
  const double rowCells = double(d) * (p.dims == 2 ? 1.0 : double(d));
  int sx = kTopologicalSphereXSplit;
  while (sx > 1 && double(d) * sx * rowCells >= 2147483648.0) sx /= 2;  // 31-bit cell keys
  GridSpec g = worldGrid(p, w, d * sx, d);
  g.invCellWidthX = g.invCellWidth * static_cast<float>(sx);
  const double cx = g.dims.x / sx, cy = g.dims.y, cz = g.dims.z;
  *maxReach = static_cast<float>(double(g.cellWidth) * sqrt(cx * cx + cy * cy + cz * cz) * 1.001) + g.cellWidth;
  return g;
}

// The grid the topological search walks: cells holding about K/2 bodies each at the mean density
// of n bodies over the world (p's box), at most boidGridCellCap(n) of them.
inline GridSpec topologicalGrid(const SimParams& p, size_t n) {
  const bool plane = p.dims == 2;
  const double side = 2.0 * double(p.halfSize);
  const double measure = plane ? side * side : side * side * side;
  // K/2 a cell measured fastest on an H200 (K/10 to K a cell: docs/models.md#topological-neighbours).
  const double perCell = 0.5 * double(p.topological > 0 ? p.topological : 1);
  const double cellMeasure = measure * perCell / double(n > 0 ? n : 1);
  float w = static_cast<float>(plane ? sqrt(cellMeasure) : cbrt(cellMeasure));
  if (p.topologicalRadius > 0.0f && w > p.topologicalRadius) w = p.topologicalRadius;  // a cutoff stops early
  if (!(w > 0.0f)) w = p.halfSize;
  int d = boidGridCellsPerAxis(p, n, w);
  if (p.boundary == Boundary::Periodic) {
    // Whole cells across the torus, so that the shells wrap without a narrower cell.
    const float L = 2.0f * p.halfSize;
    d = static_cast<int>(floorf(L / w));
    if (d < 1) d = 1;
    w = L / static_cast<float>(d);
  }
  return worldGrid(p, w, d, d);
}

}  // namespace murmur::core
