// Launch configuration shared by every launcher: the block size comes from SimParams::blockSize
// (validated: 32..1024, multiple of 32) and the grid covers the work items.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace murmur::cuda {

struct LaunchConfig {
  int block = 256;               // threads per block
  cudaStream_t stream = nullptr;  // all engine work is ordered on one stream

  unsigned blocksFor(size_t items) const {
    return static_cast<unsigned>((items + static_cast<size_t>(block) - 1) / static_cast<size_t>(block));
  }
};

// Calls f(std::integral_constant<int, B>) with B = the block size when the tiled all-pairs
// kernels have a compile-time-specialised version of it (the tile loop unrolls), else B = 0 (the
// same kernel with the block size read at run time). The one list of specialised sizes: the
// boids and gravity naive launchers both dispatch through it.
template <typename F>
void withStaticBlockSize(int block, F&& f) {
  switch (block) {
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    case 512: return f(std::integral_constant<int, 512>{});
    default: return f(std::integral_constant<int, 0>{});
  }
}

}  // namespace murmur::cuda
