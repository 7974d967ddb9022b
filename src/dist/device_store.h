// The GPU store: one rank's bodies in device memory, its stages as kernels on one stream (the
// NCCL transport's), the grid build and force kernels shared with the CUDA engine.
#pragma once

#include "dist/module_guard.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "dist/local_store.h"

namespace murmur::dist {

std::unique_ptr<LocalStore> createDeviceStore(const core::SimParams& p, cudaStream_t stream);

}  // namespace murmur::dist
