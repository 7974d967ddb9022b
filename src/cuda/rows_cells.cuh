// The step of the rows counting sort that the force kernels share with launchCountCells: a body
// takes the next free rank of its cell. Included only by .cu files (rows_kernels.cu and
// rows_cells.cu), each of which gets its own copy.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/grid.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

namespace {

// Body q at p takes the next free rank of its cell (launchCountCells).
__device__ __forceinline__ void countCell(const core::GridSpec& g, const core::Vec4& p, uint32_t q,
                                          uint32_t* __restrict__ keys, uint32_t* __restrict__ rank,
                                          uint32_t* __restrict__ counts, uint32_t* __restrict__ crowded) {
  const uint32_t key = core::cellKeyOf(g, core::xyz(p));
  const uint32_t r = atomicAdd(counts + key, 1u);
  keys[q] = key;
  rank[q] = r;
  if (r == kStableCellMax) *crowded = 1u;  // the cell holds more than kStableCellMax bodies
}

}  // namespace

}  // namespace murmur::cuda
