#include "cuda/debug_api.h"

#include "cuda/cuda_check.h"

namespace murmur::cuda {

DeviceReservation::DeviceReservation(size_t bytes) { MURMUR_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }

DeviceReservation::~DeviceReservation() {
  if (ptr_) cudaFree(ptr_);
}

size_t deviceFreeBytes() {
  size_t freeBytes = 0, totalBytes = 0;
  MURMUR_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  return freeBytes;
}

}  // namespace murmur::cuda
