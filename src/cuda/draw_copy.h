// The render copy: the current state, in its current order, into the renderer's buffers.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/hd.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// One kernel; any output pointer may be null to skip that array. No host sync.
void launchDrawCopy(const core::Vec4* d_pos, const core::Vec4* d_vel, const uint32_t* d_id, uint32_t n,
                    void* d_posOut, void* d_velOut, void* d_idOut, const LaunchConfig& lc);

}  // namespace murmur::cuda
