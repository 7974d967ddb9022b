// The render copy: the current state, in its current order, into the renderer's buffers.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/bodies.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// One kernel: out.x[i] = in.x[i] for every attribute whose output is not null. No host sync.
void launchDrawCopy(const core::ConstBodyPointers& in, uint32_t n, const core::BodyPointers& out,
                    const LaunchConfig& lc);

}  // namespace murmur::cuda
