#include "app/offscreen.h"

#include <glad/gl.h>

#include <chrono>

#include "app/draw_source.h"
#include "app/splat_source.h"
#include "app/view_setup.h"
#include "render/egl_context.h"

namespace murmur::app {

namespace {

class EglOffscreenView final : public OffscreenView {
 public:
  EglOffscreenView(std::unique_ptr<render::EglContext> ctx, const Options& o, core::Engine& engine)
      : ctx_(std::move(ctx)), width_(o.width), height_(o.height) {
    // Frame the initial state; the camera then stays put so a video shows the motion.
    const core::Bodies b = engine.readBodies();
    style_ = defaultStyle(engine.params(), b, o.drawMode, o.colourMode);
    applySplatOptions(style_, o.slab, o.fog, o.edl, o.warpReduce);
    frameScene(camera_, b, engine.params(), style_);
    camera_.setDistance(camera_.distance() / o.zoom);
    renderer_ = std::make_unique<render::Renderer>();
    // The splat frame is resolved per pixel already; multisampling would only copy it four times.
    renderer_->setOffscreenTarget(width_, height_, style_.draw == render::DrawMode::Splat ? 1 : 4);
    source_ = std::make_unique<DrawSource>(*renderer_, ctx_->isNvidia());
    splatRenderer_ = std::make_unique<render::SplatRenderer>();
    splatSource_ = std::make_unique<SplatSource>(*splatRenderer_, ctx_->isNvidia());
    renderer_->setSpeedScale(style_.speedScale);
    renderer_->setSpriteAlpha(style_.spriteAlpha);
  }

  // The render stage's one measurement (render_ms everywhere): from the end of the step to the
  // frame being complete on the GPU - the fill (interop map, kernels, unmap; or read-back and
  // upload) and the draw, waited for with glFinish.
  double renderFrame(core::Engine& engine) override {
    ctx_->makeCurrent();
    const auto t0 = std::chrono::steady_clock::now();
    if (style_.draw == render::DrawMode::Splat) {
      style_.splat.colour = static_cast<core::SplatColour>(style_.colour);
      const core::SplatView v = render::makeSplatView(camera_, width_, height_, style_.worldRadius, style_.splat);
      splatSource_->fill(engine, v, style_.warpReduce);
      glBindFramebuffer(GL_FRAMEBUFFER, renderer_->framebuffer());
      splatRenderer_->draw(style_.splat);
    } else {
      source_->fill(engine);
      renderer_->draw(camera_, style_.draw, style_.colour, width_, height_, style_.pointSize, style_.bodySize,
                      style_.worldRadius);
    }
    glFinishAll();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  bool interop() const override {
    return style_.draw == render::DrawMode::Splat ? splatSource_->interop() : source_->interop();
  }
  std::vector<uint8_t> pixels() override {
    ctx_->makeCurrent();
    return renderer_->readPixels(width_, height_);
  }
  const char* drawMode() const override { return render::toString(style_.draw); }
  int width() const override { return width_; }
  int height() const override { return height_; }

 private:
  // Waits for the GL work so that the measured time is the frame's, not its submission's.
  void glFinishAll() { glFinish(); }

  std::unique_ptr<render::EglContext> ctx_;
  std::unique_ptr<render::Renderer> renderer_;
  std::unique_ptr<DrawSource> source_;
  std::unique_ptr<render::SplatRenderer> splatRenderer_;
  std::unique_ptr<SplatSource> splatSource_;
  render::Camera camera_;
  ViewStyle style_;
  int width_, height_;
};

}  // namespace

std::unique_ptr<OffscreenView> createOffscreenView(const Options& o, core::Engine& engine, std::string* why) {
  std::string err;
  auto ctx = render::EglContext::create(&err);
  if (!ctx) {
    if (why) *why = err.empty() ? "no EGL context" : err;
    return nullptr;
  }
  try {
    return std::make_unique<EglOffscreenView>(std::move(ctx), o, engine);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace murmur::app
