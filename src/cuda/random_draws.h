// The counter-based draws (core/random.h) on the device: the same bits as the host's for the same
// (seed, id, step, index), which is what lets a rule's noise not depend on the engine. The kernel
// here fills a buffer with the draws of a set of bodies; rules draw inline in their own kernels.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>
#include <vector>

#include "core/random.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// d_out[k] = core::bodyDraw(seed, d_id[k], step, index) for k < n. No host sync.
void launchBodyDraws(uint64_t seed, uint64_t step, uint32_t index, const uint32_t* d_id, uint32_t n,
                     core::Draw4* d_out, const LaunchConfig& lc);

// The same for host ids, through device buffers, synchronously (tests and tools).
std::vector<core::Draw4> bodyDrawsOnDevice(uint64_t seed, uint64_t step, uint32_t index,
                                           const std::vector<uint32_t>& ids);

}  // namespace murmur::cuda
