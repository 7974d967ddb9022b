#include "app/draw_source.h"

#include <glad/gl.h>

#include <chrono>
#include <cstdio>

#if defined(MURMUR_HAVE_CUDA)
#include "cuda/gl_interop.h"
#endif

namespace murmur::app {

struct DrawSource::Interop {
#if defined(MURMUR_HAVE_CUDA)
  std::unique_ptr<cuda::GlInteropBuffers> buffers;
  uint64_t generation = ~0ull;
#endif
};

DrawSource::DrawSource(render::Renderer& renderer, bool glIsNvidia)
    : renderer_(renderer),
      glIsNvidia_(glIsNvidia),
      fallback_(glIsNvidia, "CUDA-GL", "uploading through the host"),
      interop_(std::make_unique<Interop>()) {}

DrawSource::~DrawSource() = default;

void DrawSource::fill(core::Engine& engine) {
  lastWasSplat_ = false;
  const size_t n = engine.numBodies();
  if (renderer_.numBodies() != n) renderer_.resize(n);
#if defined(MURMUR_HAVE_CUDA)
  const auto copy = [&](core::DeviceAccess& device) {
    // Buffers are registered once and again only when the renderer replaced them (resize).
    if (!interop_->buffers || interop_->generation != renderer_.bufferGeneration()) {
      interop_->buffers.reset();
      interop_->buffers = std::make_unique<cuda::GlInteropBuffers>(renderer_.positionBuffer(),
                                                                    renderer_.velocityBuffer(), renderer_.idBuffer());
      interop_->generation = renderer_.bufferGeneration();
    }
    cuda::GlInteropBuffers::Mapping mapped = interop_->buffers->map();
    device.writeDrawBuffers(mapped.position, mapped.velocity, mapped.id);
    mapped.unmap();
  };
  if (fallback_.attempt(engine, copy, [&] { interop_->buffers.reset(); })) return;
#else
  fallback_.hostOnly(engine);
#endif
  renderer_.upload(engine.readBodies());
}

void DrawSource::fillSplat(core::Engine& engine, const render::Camera& camera, const ViewStyle& style, int width,
                           int height) {
  if (!splatRenderer_) {
    splatRenderer_ = std::make_unique<render::SplatRenderer>();
    splatSource_ = std::make_unique<SplatSource>(*splatRenderer_, glIsNvidia_);
  }
  render::SplatStyle s = style.splat;
  s.colour = static_cast<core::SplatColour>(style.colour);
  s.speedScale = style.speedScale;
  s.speedFloor = style.speedFloor;
  s.plane = style.plane;
  splatSource_->fill(engine, render::makeSplatView(camera, width, height, style.worldRadius, s), style.warpReduce);
  lastWasSplat_ = true;
}

void DrawSource::draw(const render::Camera& camera, const ViewStyle& style, int width, int height) {
  if (style.draw == render::DrawMode::Splat) {
    if (!splatRenderer_) return;  // nothing resolved yet
    glBindFramebuffer(GL_FRAMEBUFFER, renderer_.framebuffer());
    // The overlay goes on the shaded image only: the keys stay the nearest body per pixel.
    splatRenderer_->draw(style.splat, renderer_.drawOriginX(), renderer_.drawOriginY());
  } else {
    renderer_.setFog(style.splat.fogStrength);  // --fog: the same depth cue in every mode
    renderer_.draw(camera, style.draw, style.colour, width, height, style.pointSize, style.bodySize,
                   style.worldRadius);
  }
  renderer_.drawOverlay(camera, overlayStyle(style), width, height);
}

double DrawSource::drawFrame(core::Engine& engine, const render::Camera& camera, const ViewStyle& style, int width,
                             int height) {
  const auto t0 = std::chrono::steady_clock::now();
  if (style.draw == render::DrawMode::Splat) {
    fillSplat(engine, camera, style, width, height);
  } else {
    fill(engine);
  }
  draw(camera, style, width, height);
  glFinish();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool DrawSource::interop() const { return lastWasSplat_ ? splatSource_->interop() : fallback_.active(); }

const std::string& DrawSource::interopOffReason() const {
  return lastWasSplat_ ? splatSource_->interopOffReason() : fallback_.offReason();
}

}  // namespace murmur::app
