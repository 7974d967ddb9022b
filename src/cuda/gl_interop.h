// CUDA-GL interop: the only place where CUDA meets OpenGL. GL buffer objects owned by the renderer
// are registered once with cudaGraphicsGLRegisterBuffer; each frame map() hands out their device
// pointers for as long as the returned Mapping lives, the caller writes into them (the CUDA
// engine's writeDrawBuffers), and the Mapping's end unmaps them before GL draws. The state never
// passes through the host, and this file knows nothing of who writes. Plain C++ header (GL names
// are unsigned int); the GL context that owns the buffers must be current on the calling thread,
// on the CUDA device in use.
#pragma once
#include "cuda/module_guard.h"

namespace murmur::cuda {

class GlInteropBuffers {
 public:
  // Registers the three buffers (position vec4, velocity vec4, id uint). Throws CudaError when
  // the driver refuses (no GL interop, or the context lives on another device).
  GlInteropBuffers(unsigned int positionBuffer, unsigned int velocityBuffer, unsigned int idBuffer);
  ~GlInteropBuffers();
  GlInteropBuffers(const GlInteropBuffers&) = delete;
  GlInteropBuffers& operator=(const GlInteropBuffers&) = delete;

  // The buffers mapped on the default stream (the CUDA engine's): work queued there while the
  // Mapping lives is ordered before the unmap, and the unmap before any later GL command that
  // reads the buffers.
  class Mapping {
   public:
    ~Mapping();  // unmaps when unmap() was not called (errors then go unreported)
    Mapping(Mapping&& o) noexcept;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    Mapping& operator=(Mapping&&) = delete;
    // Unmaps now; throws CudaError when the driver fails.
    void unmap();

    void* position = nullptr;  // float4 per body
    void* velocity = nullptr;  // float4 per body
    void* id = nullptr;        // uint32 per body

   private:
    friend class GlInteropBuffers;
    explicit Mapping(void* const* resources);
    void* resources_[3] = {nullptr, nullptr, nullptr};  // cudaGraphicsResource_t; null once unmapped
  };

  // Throws CudaError when the buffers cannot be mapped.
  Mapping map();

 private:
  void* resources_[3] = {nullptr, nullptr, nullptr};  // cudaGraphicsResource_t
};

}  // namespace murmur::cuda
