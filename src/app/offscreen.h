// Headless rendering of an engine's state through EGL and a framebuffer object: the same
// renderer the window uses. Shared by `--headless` (screenshots, video) and `bench --render`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/options.h"
#include "core/engine.h"

namespace murmur::app {

class OffscreenView {
 public:
  virtual ~OffscreenView() = default;
  // Fills the draw buffers from the engine (CUDA-GL interop when available, else an upload)
  // and draws one frame; returns render_ms (DrawSource::drawFrame).
  virtual double renderFrame(core::Engine& engine) = 0;
  // True when the CUDA engine writes the GL buffers (or the splat keys) directly (no host round trip).
  virtual bool interop() const = 0;
  // The last frame, RGBA, top row first.
  virtual std::vector<uint8_t> pixels() = 0;
  // The draw mode in use ("splat", "boids", ...).
  virtual const char* drawMode() const = 0;
  virtual int width() const = 0;
  virtual int height() const = 0;
};

// nullptr with `why` set when no offscreen GL context can be created on this machine.
std::unique_ptr<OffscreenView> createOffscreenView(const Options& o, core::Engine& engine,
                                                   std::string* why);

}  // namespace murmur::app
