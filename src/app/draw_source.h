// Fills the renderer's body buffers from an engine each frame: through CUDA-GL interop when the
// CUDA engine and an NVIDIA GL context share the device (no host round trip), otherwise by
// reading the state back and uploading it (Mesa, the CPU engine). In the splat draw mode it
// resolves the bodies into the splat renderer's key buffer instead (app/splat_source.h). Used by
// the window and by the offscreen view, so both draw exactly the same way.
#pragma once

#include <memory>
#include <string>

#include "app/interop_fallback.h"
#include "app/splat_source.h"
#include "app/view_setup.h"
#include "core/engine.h"
#include "render/renderer.h"
#include "render/splat_renderer.h"

namespace murmur::app {

class DrawSource {
 public:
  // `glIsNvidia`: the current GL context is NVIDIA's (interop possible). The GL context must be
  // current for every call.
  DrawSource(render::Renderer& renderer, bool glIsNvidia);
  ~DrawSource();

  // Copies the engine's current state into the renderer's buffers (resizing them first when the
  // body count changed). Engines may be swapped between calls.
  void fill(core::Engine& engine);

  // Splat frames (DrawMode::Splat): resolves the engine's bodies, seen by this camera, into the
  // splat renderer's key buffer (width x height), through CUDA-GL interop or on the CPU.
  void fillSplat(core::Engine& engine, const render::Camera& camera, const ViewStyle& style, int width, int height);

  // Draws what the last fill (GL modes) or fillSplat (splat) left, into the renderer's target.
  void draw(const render::Camera& camera, const ViewStyle& style, int width, int height);

  // One frame: fill() or fillSplat(), draw(), and glFinish, so that the time returned (ms) is the
  // frame's work done rather than its submission. This is what render_ms means everywhere: the
  // window's panel, the headless summary and the benchmark's column.
  double drawFrame(core::Engine& engine, const render::Camera& camera, const ViewStyle& style, int width, int height);

  // Of the last frame's path (GL buffers or splat keys).
  bool interop() const;
  // Why interop is off (empty when on).
  const std::string& interopOffReason() const;

 private:
  struct Interop;
  render::Renderer& renderer_;
  bool glIsNvidia_;
  InteropFallback fallback_;
  std::unique_ptr<Interop> interop_;
  // Created on the first splat frame: the GL modes never pay for the key buffer.
  std::unique_ptr<render::SplatRenderer> splatRenderer_;
  std::unique_ptr<SplatSource> splatSource_;
  bool lastWasSplat_ = false;
};

}  // namespace murmur::app
