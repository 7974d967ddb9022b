// Launch configuration shared by every launcher: the block size comes from SimParams::blockSize
// (validated: 32..1024, multiple of 32) and the grid covers the work items.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace murmur::cuda {

struct LaunchConfig {
  int block = 256;               // threads per block
  cudaStream_t stream = nullptr;  // all engine work is ordered on one stream

  unsigned blocksFor(size_t items) const {
    return static_cast<unsigned>((items + static_cast<size_t>(block) - 1) / static_cast<size_t>(block));
  }
};

}  // namespace murmur::cuda
