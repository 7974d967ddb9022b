#include "cuda/gl_interop.h"

#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"

namespace murmur::cuda {

GlInteropBuffers::GlInteropBuffers(unsigned int positionBuffer, unsigned int velocityBuffer, unsigned int idBuffer) {
  const unsigned int names[3] = {positionBuffer, velocityBuffer, idBuffer};
  try {
    for (int i = 0; i < 3; ++i) {
      cudaGraphicsResource_t r = nullptr;
      // WriteDiscard: CUDA overwrites the whole buffer, GL's old contents need not be kept.
      MURMUR_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&r, names[i], cudaGraphicsRegisterFlagsWriteDiscard));
      resources_[i] = r;
    }
  } catch (...) {
    for (void*& r : resources_)
      if (r) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(r)), r = nullptr;
    throw;
  }
}

GlInteropBuffers::~GlInteropBuffers() {
  for (void* r : resources_)
    if (r) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(r));
}

void GlInteropBuffers::copyFrom(CudaEngine& engine) {
  cudaGraphicsResource_t res[3] = {static_cast<cudaGraphicsResource_t>(resources_[0]),
                                   static_cast<cudaGraphicsResource_t>(resources_[1]),
                                   static_cast<cudaGraphicsResource_t>(resources_[2])};
  // Mapped on the default stream, the engine's stream: the copy kernel is ordered after the
  // step and before the unmap.
  MURMUR_CUDA_CHECK(cudaGraphicsMapResources(3, res, 0));
  void* ptr[3] = {nullptr, nullptr, nullptr};
  size_t bytes = 0;
  try {
    for (int i = 0; i < 3; ++i) MURMUR_CUDA_CHECK(cudaGraphicsResourceGetMappedPointer(&ptr[i], &bytes, res[i]));
    engine.writeDrawBuffers(ptr[0], ptr[1], ptr[2]);
  } catch (...) {
    cudaGraphicsUnmapResources(3, res, 0);
    throw;
  }
  MURMUR_CUDA_CHECK(cudaGraphicsUnmapResources(3, res, 0));
}

}  // namespace murmur::cuda
