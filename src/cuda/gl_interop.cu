#include "cuda/gl_interop.h"

#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"

namespace murmur::cuda {

namespace {

constexpr int kNumBuffers = 3;

cudaGraphicsResource_t* asResources(void** r) { return reinterpret_cast<cudaGraphicsResource_t*>(r); }

}  // namespace

GlInteropBuffers::GlInteropBuffers(unsigned int positionBuffer, unsigned int velocityBuffer, unsigned int idBuffer) {
  const unsigned int names[kNumBuffers] = {positionBuffer, velocityBuffer, idBuffer};
  try {
    for (int i = 0; i < kNumBuffers; ++i) {
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

GlInteropBuffers::Mapping GlInteropBuffers::map() {
  // Stream 0, the engine's stream: see the header.
  MURMUR_CUDA_CHECK(cudaGraphicsMapResources(kNumBuffers, asResources(resources_), 0));
  Mapping m(resources_);  // from here on, unmapped on every path
  void** out[kNumBuffers] = {&m.position, &m.velocity, &m.id};
  size_t bytes = 0;
  for (int i = 0; i < kNumBuffers; ++i)
    MURMUR_CUDA_CHECK(cudaGraphicsResourceGetMappedPointer(out[i], &bytes, asResources(resources_)[i]));
  return m;
}

GlInteropBuffers::Mapping::Mapping(void* const* resources) {
  for (int i = 0; i < kNumBuffers; ++i) resources_[i] = resources[i];
}

GlInteropBuffers::Mapping::Mapping(Mapping&& o) noexcept
    : position(o.position), velocity(o.velocity), id(o.id) {
  for (int i = 0; i < kNumBuffers; ++i) {
    resources_[i] = o.resources_[i];
    o.resources_[i] = nullptr;
  }
}

void GlInteropBuffers::Mapping::unmap() {
  if (!resources_[0]) return;
  void* res[kNumBuffers] = {resources_[0], resources_[1], resources_[2]};
  for (void*& r : resources_) r = nullptr;
  position = velocity = id = nullptr;
  MURMUR_CUDA_CHECK(cudaGraphicsUnmapResources(kNumBuffers, asResources(res), 0));
}

GlInteropBuffers::Mapping::~Mapping() {
  if (resources_[0]) cudaGraphicsUnmapResources(kNumBuffers, asResources(resources_), 0);
}

}  // namespace murmur::cuda
