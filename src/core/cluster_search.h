// The `clusters` pipeline's layout and search (boids), shared by the CPU engine and the CUDA
// kernel: the cluster-pair scheme of GROMACS' GPU kernels (Páll & Hess, Comput. Phys. Commun.
// 184, 2013), with the list made by each warp as it goes instead of kept in memory.
//
// Layout: the bodies sorted by the cells of a rows grid (core/row_search.h) whose cells are as
// wide as a cube holding kClusterSize bodies at the world's mean density, split finely along x,
// so that the sorted order runs along x-rows of square cross-section. A cluster is kClusterSize
// consecutive bodies of that order (a group of them that starts a new row is cut there: a
// cluster never spans two rows), so it is a compact box of about one cell.
//
// Search: for a cluster's bounding box, the rows a sphere of the largest rule radius around any
// point of the box can reach, and per row the x-range of cells it reaches (forEachBoxRow: the
// rows search of a point, widened to the box); every body of those ranges whose distance to the
// box is below the radius (boxDistance2) is a candidate of every body of the cluster, and each
// such pair is tested exactly. On the GPU a warp takes one cluster: lanes of 8 bodies by 4
// candidates per instruction, each lane holding two bodies, every lane busy
// (cuda/cluster_kernels.cu).
//
// Exactness: the box contains every body of the cluster, so the rows and x-ranges of the box
// contain each body's own rows search (which is exact, see row_search.h), and a body at distance
// >= r from the box is at distance >= r from every body in it. Both hold after rounding: the
// bounds are computed from the box corners by the same float expressions as for a point, which
// are monotone in the coordinates, and the box's d^2 is computed like a pair's d^2 from gaps no
// larger than the pair's coordinate differences (round-to-nearest is monotone). So a pair that
// naive's d^2 < r^2 accepts is never pruned.
//
// Sum order: the candidates of a cluster, in the order the rows visit them, go round
// kClusterPartials partial sums (candidate k to partial k % kPartials, the lane that tests it on the GPU), which
// are added as (s0 + s1) + (s2 + s3). Every body of the cluster is its own candidate: the sums are
// relative (the rule's RelSum), and the body is taken out of them at the end. The CPU engine
// sums in that order too, so both engines add the same terms in the same order.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/grid.h"
#include "core/hd.h"
#include "core/params.h"
#include "core/physics.h"
#include "core/row_search.h"

namespace murmur::core {

// Bodies a cluster: 16, two a lane of the GPU kernel's tile. The gathering of a cluster's
// candidates costs more than testing them, and 16 bodies share it: on an H100 (1M boids, block
// 128, bench/results/h100/clusters/; measurements: docs/performance.md#the-cluster-kernel)
// clusters of 16 made a shorter step than clusters of 8 in the CIS 565 world and at 10M `dense`
// and as short a one at FLAME GPU density; clusters of 32 (four a lane, 96 registers) were slower
// in all three. The cells hold 16 too (cells of 8, clusters two cells long, were slower in both 1M
// worlds and about as fast at 10M `dense`; cells of 32 slower in all three).
constexpr int kClusterSize = 16;
constexpr int kClusterPartials = 4;

// The clusters pipeline's grid for n bodies: cells of the side of a cube (a square in 2D) that
// holds kClusterSize bodies at the mean density, split along x like the rows grid (rowXSplitFor),
// and never more than 2^30 cells before the split, so that keys stay below 2^31.
inline GridSpec clusterGrid(const SimParams& p, size_t n) {
  const double side = 2.0 * double(p.halfSize);
  const double perBody = worldMeasure(p) / double(n > 0 ? n : 1);
  double w = std::pow(double(kClusterSize) * perBody, 1.0 / double(p.dims));
  w = std::max(w, side / (p.dims == 2 ? 32768.0 : 1024.0));
  const float wf = static_cast<float>(w);
  int d = static_cast<int>(std::ceil(2.0f * p.halfSize / wf));
  if (d < 1) d = 1;
  const int sx = rowXSplitFor(n, p, wf, d);
  GridSpec g = worldGrid(p, wf, d * sx, d);
  g.invCellWidthX = g.invCellWidth * static_cast<float>(sx);  // a power of two: exact
  return g;
}

// The grid of a pipeline whose table row has a rows grid (core::PipelineInfo::rowGrid).
inline GridSpec pipelineRowGrid(const SimParams& p, size_t n) {
  return p.pipeline == Pipeline::Clusters ? clusterGrid(p, n) : rowGrid(p, n);
}

// rowGap for an interval [lo, hi] of coordinates in cell units: no larger than rowGap(t, ...) for
// any t in it.
MURMUR_HD float boxGap(float lo, float hi, int c, int dim, float m) {
  float g = 0.0f;
  if (c > 0 && static_cast<float>(c) > hi)
    g = static_cast<float>(c) - hi;
  else if (c < dim - 1 && static_cast<float>(c + 1) < lo)
    g = lo - static_cast<float>(c + 1);
  g -= m;
  return g > 0.0f ? g : 0.0f;
}

// RowSphere for a box [lo, hi]: the rows a sphere of `radius` around any point of the box can
// reach, and per row the x-range of cells that covers every such sphere's x-range.
struct RowBox {
  float txlo, txhi, tylo, tyhi, tzlo, tzhi;  // the box in cell units (x in x-cell units)
  float sx, reach2, m;
  int ylo, ny, zlo, nz;

  MURMUR_HD bool rowAt(const GridSpec& g, int cz, int cy, uint32_t& first, uint32_t& last) const {
    const float gz = boxGap(tzlo, tzhi, cz, g.dims.z, m), gy = boxGap(tylo, tyhi, cy, g.dims.y, m);
    const float rx2 = reach2 - gz * gz - gy * gy;
    if (rx2 <= 0.0f) return false;
    const float rx = (sqrtf(rx2) + m) * sx;
    first = cellKey(g, clampi(static_cast<int>(floorf(txlo - rx)), 0, g.dims.x - 1), cy, cz);
    last = cellKey(g, clampi(static_cast<int>(floorf(txhi + rx)), 0, g.dims.x - 1), cy, cz);
    return true;
  }
};

MURMUR_HD RowBox rowBox(const GridSpec& g, const Vec3& lo, const Vec3& hi, float radius) {
  RowBox b;
  b.m = rowMargin(g);
  const float reach = radius * g.invCellWidth + b.m;
  b.reach2 = reach * reach;
  b.sx = rowXSplit(g);
  b.txlo = (lo.x - g.origin.x) * g.invCellWidthX;
  b.txhi = (hi.x - g.origin.x) * g.invCellWidthX;
  b.tylo = (lo.y - g.origin.y) * g.invCellWidth;
  b.tyhi = (hi.y - g.origin.y) * g.invCellWidth;
  b.tzlo = (lo.z - g.origin.z) * g.invCellWidth;
  b.tzhi = (hi.z - g.origin.z) * g.invCellWidth;
  b.zlo = clampi(static_cast<int>(floorf(b.tzlo - reach)), 0, g.dims.z - 1);
  b.nz = clampi(static_cast<int>(floorf(b.tzhi + reach)), 0, g.dims.z - 1) - b.zlo + 1;
  b.ylo = clampi(static_cast<int>(floorf(b.tylo - reach)), 0, g.dims.y - 1);
  b.ny = clampi(static_cast<int>(floorf(b.tyhi + reach)), 0, g.dims.y - 1) - b.ylo + 1;
  return b;
}

// Calls f(first, last) for every row of rowBox(g, lo, hi, radius) that is not pruned, z outer and
// y inner (the order of the candidates, and so of the sums).
template <typename F>
MURMUR_HD void forEachBoxRow(const GridSpec& g, const Vec3& lo, const Vec3& hi, float radius, F&& f) {
  const RowBox b = rowBox(g, lo, hi, radius);
  for (int cz = b.zlo; cz < b.zlo + b.nz; ++cz)
    for (int cy = b.ylo; cy < b.ylo + b.ny; ++cy) {
      uint32_t first = 0, last = 0;
      if (b.rowAt(g, cz, cy, first, last)) f(first, last);
    }
}

// The squared distance from p to the box [lo, hi], rounded like a pair's d^2 (distance2) from
// gaps no larger than p's coordinate differences to any point of the box: never above the d^2 of
// p and a point of the box.
MURMUR_HD float boxDistance2(const Vec3& p, const Vec3& lo, const Vec3& hi) {
  // max(lo - p, p - hi, 0): the gap below the box, above it, or none (no branches on the GPU).
  const float gx = fmaxf(fmaxf(lo.x - p.x, p.x - hi.x), 0.0f);
  const float gy = fmaxf(fmaxf(lo.y - p.y, p.y - hi.y), 0.0f);
  const float gz = fmaxf(fmaxf(lo.z - p.z, p.z - hi.z), 0.0f);
  return distance2(Vec3{gx, gy, gz});
}

// The row (cy, cz) a position falls in on g, as one number: bodies of one cluster share it.
MURMUR_HD uint32_t clusterRowOf(const GridSpec& g, const Vec3& p) {
  const Int3 c = cellOf(g, p);
  return static_cast<uint32_t>(c.z) * static_cast<uint32_t>(g.dims.y) + static_cast<uint32_t>(c.y);
}

// The four partial sums of a body, added in the GPU's shuffle order: (s0 + s1) + (s2 + s3).
template <typename Rule>
MURMUR_HD typename Rule::RelSum addPartials(const typename Rule::RelSum (&s)[kClusterPartials]) {
  return Rule::combine(Rule::combine(s[0], s[1]), Rule::combine(s[2], s[3]));
}

}  // namespace murmur::core
