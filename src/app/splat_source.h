// Fills the splat renderer's key buffer from an engine each frame: the CUDA kernels resolve the
// engine's bodies in place through CUDA-GL interop when the CUDA engine and an NVIDIA GL context
// share the device; otherwise the CPU executor (core/splat.h) resolves a read-back copy and the
// keys are uploaded (Mesa, the CPU engine). The same algorithm either way, so CI tests it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/interop_fallback.h"
#include "core/engine.h"
#include "core/splat.h"
#include "render/splat_renderer.h"

namespace murmur::app {

class SplatSource {
 public:
  // `glIsNvidia`: the current GL context is NVIDIA's (interop possible). The GL context must be
  // current for every call.
  SplatSource(render::SplatRenderer& renderer, bool glIsNvidia);
  ~SplatSource();

  // Resolves the engine's current bodies into the renderer's key buffer (resized to the view).
  void fill(core::Engine& engine, const core::SplatView& view, bool warpReduce);

  bool interop() const { return fallback_.active(); }
  const std::string& interopOffReason() const { return fallback_.offReason(); }

 private:
  struct Interop;
  render::SplatRenderer& renderer_;
  InteropFallback fallback_;
  std::unique_ptr<Interop> interop_;
  std::vector<uint64_t> hostKeys_;
};

}  // namespace murmur::app
