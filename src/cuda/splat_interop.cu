#include "cuda/splat_interop.h"

#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/splat_kernels.h"

namespace murmur::cuda {

GlSplatTarget::GlSplatTarget(unsigned int keyBuffer) {
  cudaGraphicsResource_t r = nullptr;
  // WriteDiscard: every frame starts with a clear, GL's old contents need not be kept.
  MURMUR_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&r, keyBuffer, cudaGraphicsRegisterFlagsWriteDiscard));
  resource_ = r;
}

GlSplatTarget::~GlSplatTarget() {
  if (resource_) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(resource_));
}

void GlSplatTarget::render(const core::DeviceAccess& engine, const core::SplatView& view, bool warpReduce) {
  cudaGraphicsResource_t res = static_cast<cudaGraphicsResource_t>(resource_);
  // The default stream is the engine's: the clear and the splat follow the step, the unmap
  // follows them.
  MURMUR_CUDA_CHECK(cudaGraphicsMapResources(1, &res, 0));
  try {
    void* ptr = nullptr;
    size_t bytes = 0;
    MURMUR_CUDA_CHECK(cudaGraphicsResourceGetMappedPointer(&ptr, &bytes, res));
    const size_t numPixels = static_cast<size_t>(view.width) * static_cast<size_t>(view.height);
    if (bytes < numPixels * sizeof(uint64_t))
      throw std::invalid_argument("splat: key buffer of " + std::to_string(bytes) + " bytes is smaller than " +
                                  std::to_string(view.width) + "x" + std::to_string(view.height) + " keys");
    const core::DeviceAccess::Bodies b = engine.deviceBodies();
    const LaunchConfig lc{b.blockSize, nullptr};
    auto* keys = static_cast<uint64_t*>(ptr);
    launchSplatClear(keys, numPixels, lc);
    launchSplat(b.pos, b.vel, b.id, static_cast<uint32_t>(b.n), view, keys, warpReduce, lc);
  } catch (...) {
    cudaGraphicsUnmapResources(1, &res, 0);
    throw;
  }
  MURMUR_CUDA_CHECK(cudaGraphicsUnmapResources(1, &res, 0));
}

}  // namespace murmur::cuda
