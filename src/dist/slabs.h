// Who owns what when one simulation runs over several ranks (DESIGN.md §3b). Plain C++17 with
// __host__ __device__ helpers, so the CPU loops and the CUDA kernels decide ownership and halos
// with the same code.
//
// Boids: the world is cut into slabs along the boids grid's x axis. A slab is a run of whole cell
// columns, so a body's owner follows from the cell the grid puts it in (core::cellOf), with the
// same float expression every pipeline uses: no body can fall between two owners or be claimed
// by two. A body's neighbours lie in its own column and the next one on either side (cell width
// >= search radius), so the halo a rank needs is exactly the two columns around its slab, each
// complete. The wrap boundary is not searched across (DESIGN.md §2): no halo crosses it, but
// bodies that wrap migrate to the rank owning the column they re-enter.
//
// Gravity (all pairs): rank r owns a contiguous run of ids; every rank gathers every position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hd.h"

namespace murmur::dist {

constexpr int kMaxRanks = 64;

// Rank r owns cell columns [start[r], start[r + 1]); start[0] = 0, start[numRanks] = numColumns,
// every slab at least one column wide. Passed by value to kernels, so a fixed array.
struct SlabLayout {
  int numRanks;
  int numColumns;
  int start[kMaxRanks + 1];
};

MURMUR_HD int ownerOfColumn(const SlabLayout& l, int column) {
  int r = 0;
  while (r + 1 < l.numRanks && column >= l.start[r + 1]) ++r;
  return r;
}

// The ranks that need a body in `column` for the next step: its owner, and the owners of the
// columns on either side (they read it as halo). Writes up to 3 distinct ranks, owner first.
MURMUR_HD int ranksNeeding(const SlabLayout& l, int column, int out[3]) {
  int count = 0;
  out[count++] = ownerOfColumn(l, column);
  for (int d = -1; d <= 1; d += 2) {
    const int c = column + d;
    if (c < 0 || c >= l.numColumns) continue;  // no halo across the wrap boundary
    const int r = ownerOfColumn(l, c);
    bool seen = false;
    for (int k = 0; k < count; ++k) seen = seen || out[k] == r;
    if (!seen) out[count++] = r;
  }
  return count;
}

MURMUR_HD bool ownsColumn(const SlabLayout& l, int rank, int column) {
  return column >= l.start[rank] && column < l.start[rank + 1];
}

// Equal slabs (as equal as whole columns allow). Throws std::invalid_argument when there are
// fewer columns than ranks or more ranks than kMaxRanks.
SlabLayout evenSlabs(int numRanks, int numColumns);

// Slabs holding about the same number of bodies: cuts where the running count passes r/K of the
// total, each slab at least one column. perColumn[c] = bodies in column c (all ranks summed).
SlabLayout balancedSlabs(const std::vector<uint64_t>& perColumn, int numRanks);

// max over ranks of bodies owned / mean; 1 = perfectly balanced.
double imbalance(const SlabLayout& l, const std::vector<uint64_t>& perColumn);

// Gravity: first id owned by rank r of numRanks for n bodies (rank r owns [first(r), first(r+1))).
inline size_t firstIdOfRank(size_t n, int numRanks, int rank) {
  return n * static_cast<size_t>(rank) / static_cast<size_t>(numRanks);
}

}  // namespace murmur::dist
