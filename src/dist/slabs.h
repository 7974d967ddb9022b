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
// halo). Under the wrap boundary no search crosses the z faces (docs/design.md#the-boundary-rule)
// and no halo does; bodies that wrap migrate to the rank owning the plane they re-enter. Under the
// periodic boundary the searches around a body's images near a z face read the planes at the
// other face, so the halo wraps too: a rank also reads the planes within `wrapHalo` of its slab
// across the face (rankWrapHaloPlanes), from the last slabs for the first ones and vice versa.
// Why z: the cell key runs x fastest and z slowest (core::cellKey), so a slab is one contiguous
// run of cell keys. A rank's bodies in cell order are then the global cell order cut into pieces
// by rank: its own slab in the middle, whatever it receives from lower ranks before it and from
// higher ranks after it (planes across the face included: the first rank's wrapped halo comes
// from the last ranks, whose planes follow its own in the global order), and the GPU store keeps
// that order without merging anything (device_store.cu).
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
// every slab at least one plane thick. A rank reads the `halo` planes on either side of its slab
// and, when wrapHalo > 0 (the periodic boundary), the planes within wrapHalo of it across the z
// face (see planesReach). Passed by value to kernels, so a fixed array.
struct SlabLayout {
  int numRanks;
  int numPlanes;
  int halo;
  int wrapHalo;  // 0: no halo crosses the z faces (the wrap boundary)
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

// Whether a search from plane a may read plane b, or one from b plane a (the relation is
// symmetric): within `halo` of each other inside the world, or, when the halo wraps, within
// wrapHalo across the z face, counting the planes from the higher one up through the top face
// and on from plane 0 (b + numPlanes - a for a above b).
MURMUR_HD bool planesReach(const SlabLayout& l, int a, int b) {
  const int lo = a < b ? a : b, hi = a < b ? b : a;
  return hi - lo <= l.halo || (l.wrapHalo > 0 && lo + l.numPlanes - hi <= l.wrapHalo);
}

// Whether `rank` needs a body in `plane` next step: it owns the plane, or some plane of its slab
// reaches it (planesReach), so that it reads it as halo.
MURMUR_HD bool rankNeeds(const SlabLayout& l, int rank, int plane) {
  if (plane < 0 || plane >= l.numPlanes) return false;
  const int first = l.start[rank], last = l.start[rank + 1] - 1;
  if (plane >= first - l.halo && plane <= last + l.halo) return true;
  // Across the face: of the slab's planes below `plane`, the first is the nearest to it that way
  // (up through the top face and on from plane 0); of those above it, the last.
  return l.wrapHalo > 0 && ((first < plane && first + l.numPlanes - plane <= l.wrapHalo) ||
                            (last > plane && plane + l.numPlanes - last <= l.wrapHalo));
}

MURMUR_HD bool ownsPlane(const SlabLayout& l, int rank, int plane) {
  return plane >= l.start[rank] && plane < l.start[rank + 1];
}

// The most ranks one plane is needed by: its owner and the owners of the planes it reaches, which
// on either side of it (inside the world, then on across the face) are at most
// max(halo, wrapHalo); and no more than there are ranks.
MURMUR_HD int maxRanksNeeding(const SlabLayout& l) {
  const int most = 1 + 2 * (l.wrapHalo > l.halo ? l.wrapHalo : l.halo);
  return most < l.numRanks ? most : l.numRanks;
}

// The ranks that need a body in `plane` next step as a list, owner first, then the others in rank
// order, each once (a rank that reads the plane from both sides, inside the world and across the
// face, is listed once): at most maxRanksNeeding(l) (out must hold that many; kMaxRanks always
// does). Returns how many it wrote.
MURMUR_HD int ranksNeeding(const SlabLayout& l, int plane, int* out) {
  const int owner = ownerOfPlane(l, plane);
  int count = 0;
  out[count++] = owner;
  for (int r = 0; r < l.numRanks; ++r)
    if (r != owner && rankNeeds(l, r, plane)) out[count++] = r;
  return count;
}

// Whether `rank` owns `plane` and no other rank needs it: a body there stays where it is.
MURMUR_HD bool neededOnlyBy(const SlabLayout& l, int rank, int plane) {
  if (!ownsPlane(l, rank, plane)) return false;
  for (int r = 0; r < l.numRanks; ++r)
    if (r != rank && rankNeeds(l, r, plane)) return false;
  return true;
}

// Equal slabs (as equal as whole planes allow), each reading `halo` planes on either side and
// wrapHalo across the z face. Throws std::invalid_argument when there are fewer planes than ranks
// or more ranks than kMaxRanks.
SlabLayout evenSlabs(int numRanks, int numPlanes, int halo = 1, int wrapHalo = 0);

// Slabs holding about the same number of bodies: cuts where the running count passes r/K of the
// total, each slab at least one plane. perPlane[c] = bodies in plane c (all ranks summed).
SlabLayout balancedSlabs(const std::vector<uint64_t>& perPlane, int numRanks, int halo = 1, int wrapHalo = 0);

// The boids grid the slabs cut for pipeline p.pipeline and n bodies in all: the pipeline's rows
// grid (core::pipelineRowGrid, which depends on n: every rank passes the whole count, as one
// engine has it) for a pipeline with a rows grid (core/pipeline_table.h), else the coherent grid
// (core::boidGrid).
core::GridSpec rankGrid(const core::SimParams& p, size_t n);
// The halo planes on either side of a slab of g (rankGrid(p, n)) that p's search needs.
int rankHaloPlanes(const core::SimParams& p, const core::GridSpec& g);
// The planes across the z face a slab of g reads under p's boundary (SlabLayout::wrapHalo): 0
// under the wrap boundary; under the periodic one the halo and one plane more, since the grid's
// last plane runs past the world's top face (the grid is whole cells), so a body's image across a
// face may lie one plane further along than the body is from the face; one more still when that
// last plane holds less than 1/64 of a cell of the world, where the rounding of an image's
// coordinate may move it by one more plane.
int rankWrapHaloPlanes(const core::SimParams& p, const core::GridSpec& g);

// max over ranks of bodies owned / mean; 1 = perfectly balanced.
double imbalance(const SlabLayout& l, const std::vector<uint64_t>& perPlane);

// Gravity: first id owned by rank r of numRanks for n bodies (rank r owns [first(r), first(r+1))).
inline size_t firstIdOfRank(size_t n, int numRanks, int rank) {
  return n * static_cast<size_t>(rank) / static_cast<size_t>(numRanks);
}

}  // namespace murmur::dist
