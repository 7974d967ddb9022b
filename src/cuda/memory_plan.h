// The CUDA engine's memory plan: which grid a parameter set searches, how many cells it has and
// what its buffers, the body arrays and the sort scratch cost on the device. bytesNeeded and
// checkDeviceFits (cuda_engine.h) are the public face of these; reset() checks once, and the
// grid buffers then grow only when a new parameter set needs more cells (device_state.h).
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <cstdint>

#include "core/bodies.h"
#include "core/params.h"

namespace murmur::cuda {

// Body arrays: pos[2], vel[2], acc (Vec4), id[2], keys[2], index[2] (uint32) and species[2]:
// 106 bytes.
constexpr size_t kBytesPerBody = 5 * sizeof(core::Vec4) + 6 * sizeof(uint32_t) + 2 * sizeof(core::Species);
// The sort scratch is sized for full 32-bit keys so that no grid ever needs more.
constexpr int kSortBitsAllocated = 32;

// The rows, verlet and clusters pipelines search their own finer grid for boids (offsets only); for gravity
// it is the coherent grid.
bool usesRowGrid(const core::SimParams& p, core::ForceMode mode);
// The verlet pipeline keeps neighbour lists (boids only).
bool usesLists(const core::SimParams& p);
// Every pipeline but naive and tree builds a grid (rows, verlet and clusters a finer one).
bool usesGrid(core::Pipeline p);

// Cells of the classic grid of `mode` (cellStart/cellEnd, monopoles).
uint32_t classicCells(const core::SimParams& p, core::ForceMode mode, size_t n);
// Cells of the grid that p's pipeline searches in `mode` for n bodies.
uint32_t gridCells(const core::SimParams& p, core::ForceMode mode, size_t n);
// Cells of the finer grid that p's pipeline (rows, verlet, clusters) searches for a local rule
// with n bodies: gridCells of a local rule's force on such a pipeline.
uint32_t rowGridCells(const core::SimParams& p, size_t n);
// Device bytes of a grid of `cells` cells: the rows grids' offsets and two counts, or the classic
// grid's start/end (and monopoles for gravity).
size_t gridBytes(uint32_t cells, const core::SimParams& p, core::ForceMode mode);
// Bytes of a rows grid of `cells` cells: the offsets and the two counts buffers.
size_t rowGridBytes(uint32_t cells);

// Sort scratch for n bodies; without a device CUB cannot be asked, so estimate generously
// (the scratch is a small fraction of the key arrays in practice).
size_t sortScratchBytes(size_t n);

// Entries per body of the first lists of a reset, before their longest list is known: the mean for
// evenly spread bodies, with room for clumps. Later builds size from the previous build's
// longest list (verlet_lists.h, sizeLists).
uint32_t expectedListEntries(const core::SimParams& p, size_t n);

}  // namespace murmur::cuda
