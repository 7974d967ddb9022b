// CUDA-GL interop for the splat renderer: the GL buffer of per-pixel keys that the full-screen
// pass reads (render/splat_renderer.h) is registered once; each frame it is mapped, cleared, every
// body of the engine is resolved into it straight from the engine's own arrays (no copy into
// vertex buffers), and it is unmapped before GL draws. Plain C++ header; the GL context that owns
// the buffer must be current on the calling thread, on the engine's device.
#pragma once
#include "cuda/module_guard.h"

#include "core/engine.h"
#include "core/splat.h"

namespace murmur::cuda {

class GlSplatTarget {
 public:
  // Registers the key buffer (view.width * view.height uint64). Throws CudaError when the driver
  // refuses (no GL interop, or the context lives on another device).
  explicit GlSplatTarget(unsigned int keyBuffer);
  ~GlSplatTarget();
  GlSplatTarget(const GlSplatTarget&) = delete;
  GlSplatTarget& operator=(const GlSplatTarget&) = delete;

  // Clears the buffer and resolves the engine's current bodies into it, on the engine's stream
  // (ordered after its step). `engine` is what Engine::deviceAccess() hands out; the kernels take
  // the engine's block size when it is also the core::Engine (the CUDA engine is), else the
  // default one. Throws std::invalid_argument when the registered buffer is smaller than the
  // view's width * height keys.
  void render(const core::DeviceAccess& engine, const core::SplatView& view, bool warpReduce);

 private:
  void* resource_ = nullptr;  // cudaGraphicsResource_t
};

}  // namespace murmur::cuda
