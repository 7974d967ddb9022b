// Error handling for CUDA calls: every runtime call and every launch is checked, and a failure
// throws (library code never exits). The message carries file:line, the failing expression and
// CUDA's own description, so a report from a user's machine points at the line.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace murmur::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, cudaError_t code) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throwCudaError(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace murmur::cuda

#define MURMUR_CUDA_CHECK(expr)                                                  \
  do {                                                                           \
    const cudaError_t murmurCudaErr_ = (expr);                                   \
    if (murmurCudaErr_ != cudaSuccess)                                           \
      ::murmur::cuda::throwCudaError(murmurCudaErr_, #expr, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch. Launch errors (bad configuration, missing kernel image) are reported
// at once; faults inside a kernel surface at the next synchronising call unless
// MURMUR_CUDA_DEBUG_SYNC (CMake option of the same name) synchronises here, which reports them at
// the launch that caused them.
#if defined(MURMUR_CUDA_DEBUG_SYNC)
#define MURMUR_CUDA_LAUNCH_CHECK()                  \
  do {                                              \
    MURMUR_CUDA_CHECK(cudaGetLastError());          \
    MURMUR_CUDA_CHECK(cudaDeviceSynchronize());     \
  } while (0)
#else
#define MURMUR_CUDA_LAUNCH_CHECK() MURMUR_CUDA_CHECK(cudaGetLastError())
#endif
