// The splat renderer on the GPU: clears a frame of 64-bit keys and resolves every body into it
// with atomicMin (the per-body arithmetic is core/splat.h, shared with the CPU executor).
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <cstdint>

#include "core/hd.h"
#include "core/splat.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// Fills numPixels keys with core::kSplatEmpty. No host sync.
void launchSplatClear(uint64_t* d_keys, size_t numPixels, const LaunchConfig& lc);

// Resolves n bodies into d_keys (view.width * view.height entries). warpReduce: lanes of a warp
// that land on the same pixel agree on the nearest among themselves first and send one atomic,
// meant for bodies in cell order, where many neighbours share a pixel. The result is identical
// either way. On an H100 at 10M boids it was slower (measurements: docs/performance.md#rendering):
// the load before each atomic already skips most losers, and __match_any_sync costs more than it
// saves.
// No host sync.
void launchSplat(const core::Vec4* d_pos, const core::Vec4* d_vel, const uint32_t* d_id, uint32_t n,
                 const core::SplatView& view, uint64_t* d_keys, bool warpReduce, const LaunchConfig& lc);

}  // namespace murmur::cuda
