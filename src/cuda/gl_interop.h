// CUDA-GL interop: the only place where the CUDA engine meets OpenGL. GL buffer objects owned by
// the renderer are registered once with cudaGraphicsGLRegisterBuffer; each frame they are mapped,
// filled by one copy kernel on the engine's stream, and unmapped before GL draws them. The state
// never passes through the host. Plain C++ header (GL names are unsigned int); the GL context
// that owns the buffers must be current on the calling thread, on the engine's device.
#pragma once
#include "cuda/module_guard.h"

namespace murmur::cuda {

class CudaEngine;

class GlInteropBuffers {
 public:
  // Registers the three buffers (position vec4, velocity vec4, id uint). Throws CudaError when
  // the driver refuses (no GL interop, or the context lives on another device).
  GlInteropBuffers(unsigned int positionBuffer, unsigned int velocityBuffer, unsigned int idBuffer);
  ~GlInteropBuffers();
  GlInteropBuffers(const GlInteropBuffers&) = delete;
  GlInteropBuffers& operator=(const GlInteropBuffers&) = delete;

  // Maps the buffers, has the engine write its current state into them, unmaps. The unmap orders
  // the copy before any later GL command that reads the buffers.
  void copyFrom(CudaEngine& engine);

 private:
  void* resources_[3] = {nullptr, nullptr, nullptr};  // cudaGraphicsResource_t
};

}  // namespace murmur::cuda
