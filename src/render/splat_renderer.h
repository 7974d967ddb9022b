// The splat renderer's GL side: the buffer of per-pixel keys (core/splat.h) and the full-screen
// pass that turns it into colour, with eye-dome lighting. The keys come from CUDA (the buffer is
// registered once for interop, see cuda/splat_interop.h) or from the CPU executor through
// upload(). Draws into the framebuffer that is bound, so the HUD and the panel go on top as with
// the other draw modes.
//
// Every member function needs the GL context to be current on the calling thread.
#pragma once
#include "render/module_guard.h"

#include <cstdint>
#include <vector>

#include "core/splat.h"
#include "render/camera.h"
#include "render/shader.h"

namespace murmur::render {

// How the splat frame looks; ViewStyle (app) carries one.
struct SplatStyle {
  float bodySize = 0.5f;        // world units: a body's diameter when close enough to be a disc
  // 0..1: how far the far side of the scene (of the slab, when on) fades into the background.
  float fogStrength = 0.55f;
  float edlStrength = 0.7f;     // eye-dome lighting; 0 turns it off
  float edlRadius = 1.0f;       // pixels
  // Slab (clip view): only bodies within slabHalfWidth of the plane through the camera's target,
  // facing the eye, moved slabOffset along the view direction, are drawn. slabHalfWidth <= 0: all.
  float slabHalfWidth = 0.0f;   // world units
  float slabOffset = 0.0f;      // world units, > 0 is farther from the eye
  core::SplatColour colour = core::SplatColour::Heading;
  float speedScale = 1.0f;      // |v| at the hot end of the speed ramp
  float speedFloor = 0.0f;      // |v| at its cold end
  bool plane = false;           // a 2D world: headings from the direction in the plane
};

// The per-frame view for the splat kernels: camera matrices, frame size, fog over the scene
// sphere of radius worldRadius around the target, slab planes.
core::SplatView makeSplatView(const Camera& camera, int width, int height, float worldRadius, const SplatStyle& s);

class SplatRenderer {
 public:
  // Builds the full-screen program (throws std::runtime_error naming the shader on failure).
  explicit SplatRenderer(const ShaderSource& shaders = ShaderSource());
  ~SplatRenderer();
  SplatRenderer(const SplatRenderer&) = delete;
  SplatRenderer& operator=(const SplatRenderer&) = delete;

  static const ProgramDesc& program();

  // Sizes the key buffer for a width x height frame. When the size changes the buffer is
  // replaced (its name changes, bufferGeneration() increments: an interop client registers it
  // again). Throws std::runtime_error when the GL cannot allocate it.
  void resize(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }
  unsigned int keyBuffer() const { return keyBuffer_; }
  uint64_t bufferGeneration() const { return generation_; }

  // Host fallback: width() * height() keys, bottom row first.
  void upload(const std::vector<uint64_t>& keys);

  // Full-screen pass into the bound draw framebuffer: a width() x height() viewport whose
  // bottom-left corner is (originX, originY) (the window keeps a strip for the panel).
  void draw(const SplatStyle& style, int originX = 0, int originY = 0);

 private:
  ShaderProgram program_;
  unsigned int vao_ = 0;
  unsigned int keyBuffer_ = 0;
  int width_ = 0, height_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace murmur::render
