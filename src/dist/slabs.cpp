#include "dist/slabs.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/pipeline_table.h"
#include "core/cluster_search.h"
#include "core/row_search.h"

namespace murmur::dist {

namespace {

void checkShape(int numRanks, int numPlanes) {
  if (numRanks < 1 || numRanks > kMaxRanks)
    throw std::invalid_argument("ranks " + std::to_string(numRanks) + ": allowed 1.." + std::to_string(kMaxRanks));
  if (numPlanes < numRanks)
    throw std::invalid_argument("ranks " + std::to_string(numRanks) + ": the boids grid has only " +
                                std::to_string(numPlanes) +
                                " cell planes along z; each rank needs at least one (fewer ranks or a larger world)");
}

}  // namespace

SlabLayout evenSlabs(int numRanks, int numPlanes, int halo, int wrapHalo) {
  checkShape(numRanks, numPlanes);
  SlabLayout l{};
  l.numRanks = numRanks;
  l.numPlanes = numPlanes;
  l.halo = halo;
  l.wrapHalo = wrapHalo;
  for (int r = 0; r <= numRanks; ++r)
    l.start[r] = static_cast<int>(static_cast<long long>(numPlanes) * r / numRanks);
  return l;
}

SlabLayout balancedSlabs(const std::vector<uint64_t>& perPlane, int numRanks, int halo, int wrapHalo) {
  const int numPlanes = static_cast<int>(perPlane.size());
  checkShape(numRanks, numPlanes);
  uint64_t total = 0;
  for (uint64_t c : perPlane) total += c;
  if (total == 0) return evenSlabs(numRanks, numPlanes, halo, wrapHalo);
  SlabLayout l{};
  l.numRanks = numRanks;
  l.numPlanes = numPlanes;
  l.halo = halo;
  l.wrapHalo = wrapHalo;
  l.start[0] = 0;
  l.start[numRanks] = numPlanes;
  // Cut r goes after the first plane where the running count reaches r/K of the total, kept
  // inside [previous cut + 1, planes - (ranks left)] so no slab is empty.
  uint64_t running = 0;
  int c = 0;
  for (int r = 1; r < numRanks; ++r) {
    const double target = double(total) * r / numRanks;
    while (c < numPlanes && double(running + perPlane[static_cast<size_t>(c)]) <= target) {
      running += perPlane[static_cast<size_t>(c)];
      ++c;
    }
    // Plane c straddles the target: cut on the side closer to it.
    int cut = c;
    if (c < numPlanes && target - double(running) > double(running + perPlane[static_cast<size_t>(c)]) - target)
      cut = c + 1;
    cut = std::max(cut, l.start[r - 1] + 1);
    cut = std::min(cut, numPlanes - (numRanks - r));
    l.start[r] = cut;
    while (c < cut) running += perPlane[static_cast<size_t>(c++)];
    while (c > cut) running -= perPlane[static_cast<size_t>(--c)];
  }
  return l;
}

core::GridSpec rankGrid(const core::SimParams& p, size_t n) {
  return core::pipelineInfo(p.pipeline).rowGrid ? core::pipelineRowGrid(p, n) : core::boidGrid(p, n);
}

int rankHaloPlanes(const core::SimParams& p, const core::GridSpec& g) {
  // The coherent grid's cells are at least the search radius wide (--cell-width >= 1): one plane.
  return core::pipelineInfo(p.pipeline).rowGrid ? core::rowReachPlanes(g, core::searchRadius(p)) : 1;
}

int rankWrapHaloPlanes(const core::SimParams& p, const core::GridSpec& g) {
  if (p.boundary != core::Boundary::Periodic) return 0;
  // The grid is whole cells: its P planes cover the world's width L = 2 halfSize and run past the
  // top face by `over` of a plane. A body's image across a z face lies L / w from it, between
  // P - 1 and P planes along, so the image's search reads one plane further across than the
  // body's own search reads inside the world (docs/design.md#the-decomposition-over-ranks).
  // When the world ends less than 1/64 of a cell into the last plane, L / w lies within rounding
  // of a whole number, and an image's rounded coordinate may be one more plane along.
  const double over = double(g.dims.z) - 2.0 * double(p.halfSize) * double(g.invCellWidth);
  return rankHaloPlanes(p, g) + 1 + (over > 1.0 - 1.0 / 64.0 ? 1 : 0);
}

double imbalance(const SlabLayout& l, const std::vector<uint64_t>& perPlane) {
  uint64_t total = 0, most = 0;
  for (int r = 0; r < l.numRanks; ++r) {
    uint64_t owned = 0;
    for (int c = l.start[r]; c < l.start[r + 1]; ++c) owned += perPlane[static_cast<size_t>(c)];
    total += owned;
    most = std::max(most, owned);
  }
  return total == 0 ? 1.0 : double(most) * l.numRanks / double(total);
}

}  // namespace murmur::dist
