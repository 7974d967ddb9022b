// Who owns what when one simulation runs over several ranks (docs/design.md#the-decomposition-over-ranks). Plain C++17 with
// __host__ __device__ helpers, so the CPU loops and the CUDA kernels decide ownership and halos
// with the same code.
//
// Boids: the world is cut into slabs along the boids grid's z axis. A slab is a run of whole cell
// planes (all cells with one z coordinate), so a body's owner follows from the cell the grid puts
// it in (core::cellOf), with the same float expression every pipeline uses: no body can fall
// between two owners or be claimed by two. The grid is the pipeline's (rankGrid): the coherent
// grid, whose cells are at least the search radius wide, or the rows pipeline's finer grid. A
// body's search reaches `halo` planes on either side of its own (1 on the coherent grid; on the
// rows grid core::rowReachPlanes, 2 or 3), so the halo a rank needs is exactly the `halo` planes
// around its slab, each complete, from whichever ranks own them (a slab may be thinner than the
// halo). The wrap boundary is not searched across (docs/design.md#the-boundary-rule):
// no halo crosses it, but bodies that wrap migrate to the rank owning the plane they re-enter.
// Why z: the cell key runs x fastest and z slowest (core::cellKey), so a slab is one contiguous
// run of cell keys. A rank's bodies in cell order are then the global cell order cut into pieces
// by rank: its own slab in the middle, the halo from lower ranks before it and from higher ranks
// after it, and the GPU store keeps that order without merging anything (device_store.cu).
//
// Gravity (all pairs): rank r owns a contiguous run of ids; every rank gathers every position.
#pragma once

#include "dist/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/grid.h"
#include "core/hd.h"
#include "core/params.h"

namespace murmur::dist {

constexpr int kMaxRanks = 64;

// Rank r owns cell planes [start[r], start[r + 1]); start[0] = 0, start[numRanks] = numPlanes,
// every slab at least one plane thick. A rank reads the `halo` planes on either side of its slab.
// Passed by value to kernels, so a fixed array.
struct SlabLayout {
  int numRanks;
  int numPlanes;
  int halo;
  int start[kMaxRanks + 1];
};

// The plane a body is in (its cell's z coordinate), and the plane of a cell key.
MURMUR_HD int planeOf(const core::GridSpec& g, float z) {
  return core::cellCoord(z, g.origin.z, g.invCellWidth, g.dims.z);
}
MURMUR_HD int planeOfKey(const core::GridSpec& g, uint32_t key) {
  return static_cast<int>(key / (static_cast<uint32_t>(g.dims.x) * static_cast<uint32_t>(g.dims.y)));
}
// The first cell key of `plane` (numCells for plane numPlanes): a slab's keys are
// [firstKeyOfPlane(start[r]), firstKeyOfPlane(start[r + 1])).
MURMUR_HD uint32_t firstKeyOfPlane(const core::GridSpec& g, int plane) {
  return static_cast<uint32_t>(plane) * static_cast<uint32_t>(g.dims.x) * static_cast<uint32_t>(g.dims.y);
}

MURMUR_HD int ownerOfPlane(const SlabLayout& l, int plane) {
  int r = 0;
  while (r + 1 < l.numRanks && plane >= l.start[r + 1]) ++r;
  return r;
}

// The ranks that need a body in `plane` for the next step are ranks lo..hi: its owner, and the
// owners of the planes within l.halo of it (they read it as halo), which are neighbours in rank
// order because slabs follow the planes in rank order.
MURMUR_HD void neededRanks(const SlabLayout& l, int plane, int& lo, int& hi) {
  const int below = plane - l.halo, above = plane + l.halo;  // no halo across the wrap boundary
  lo = ownerOfPlane(l, below < 0 ? 0 : below);
  hi = ownerOfPlane(l, above >= l.numPlanes ? l.numPlanes - 1 : above);
}

// The same ranks as a list, owner first, then the others in rank order: at most
// min(numRanks, 2 halo + 1) of them (3 on the coherent grid; out must hold that many, kMaxRanks
// always does). Returns how many it wrote.
MURMUR_HD int ranksNeeding(const SlabLayout& l, int plane, int* out) {
  int lo = 0, hi = 0, count = 0;
  neededRanks(l, plane, lo, hi);
  const int owner = ownerOfPlane(l, plane);
  out[count++] = owner;
  for (int r = lo; r <= hi; ++r)
    if (r != owner) out[count++] = r;
  return count;
}

// Whether `rank` needs a body in `plane` next step (owns it, or reads it as halo).
MURMUR_HD bool rankNeeds(const SlabLayout& l, int rank, int plane) {
  return plane >= l.start[rank] - l.halo && plane < l.start[rank + 1] + l.halo && plane >= 0 &&
         plane < l.numPlanes;
}

MURMUR_HD bool ownsPlane(const SlabLayout& l, int rank, int plane) {
  return plane >= l.start[rank] && plane < l.start[rank + 1];
}

// Equal slabs (as equal as whole planes allow), each reading `halo` planes on either side. Throws
// std::invalid_argument when there are fewer planes than ranks or more ranks than kMaxRanks.
SlabLayout evenSlabs(int numRanks, int numPlanes, int halo = 1);

// Slabs holding about the same number of bodies: cuts where the running count passes r/K of the
// total, each slab at least one plane. perPlane[c] = bodies in plane c (all ranks summed).
SlabLayout balancedSlabs(const std::vector<uint64_t>& perPlane, int numRanks, int halo = 1);

// The boids grid the slabs cut for pipeline p.pipeline and n bodies in all: the pipeline's rows
// grid (core::pipelineRowGrid, which depends on n: every rank passes the whole count, as one
// engine has it) for a pipeline with a rows grid (core/pipeline_table.h), else the coherent grid
// (core::boidGrid).
core::GridSpec rankGrid(const core::SimParams& p, size_t n);
// The halo planes on either side of a slab of g (rankGrid(p, n)) that p's search needs.
int rankHaloPlanes(const core::SimParams& p, const core::GridSpec& g);

// max over ranks of bodies owned / mean; 1 = perfectly balanced.
double imbalance(const SlabLayout& l, const std::vector<uint64_t>& perPlane);

// Gravity: first id owned by rank r of numRanks for n bodies (rank r owns [first(r), first(r+1))).
inline size_t firstIdOfRank(size_t n, int numRanks, int rank) {
  return n * static_cast<size_t>(rank) / static_cast<size_t>(numRanks);
}

}  // namespace murmur::dist
