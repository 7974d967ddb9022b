#include "app/offscreen.h"

#include <glad/gl.h>

#include <chrono>

#include "app/draw_source.h"
#include "app/view_setup.h"
#include "core/rule_table.h"
#include "render/egl_context.h"

namespace murmur::app {

namespace {

class EglOffscreenView final : public OffscreenView {
 public:
  EglOffscreenView(std::unique_ptr<render::EglContext> ctx, const Options& o, core::Engine& engine)
      : ctx_(std::move(ctx)), width_(o.width), height_(o.height) {
    // Frame the initial state; the camera then stays put so a video shows the motion. Boids are
    // framed by the world and their count alone, so their state is not read (over ranks it would
    // be gathered to this rank: 36 GB at a billion boids).
    const bool boids = core::runsLocalRule(engine.params()) && !followsBodies(engine.params());
    const core::Bodies b = boids ? core::Bodies{} : engine.readBodies();
    style_ = defaultStyle(engine.params(), engine.numBodies(), b, o.drawMode, o.colourMode);
    applySplatOptions(style_, o.slab, o.fog, o.edl, o.warpReduce);
    style_.box = o.box;
    style_.legend = o.legend;
    frameScene(camera_, b, engine.params(), style_);
    follow_ = OpenFollow(b);
    camera_.setDistance(camera_.distance() / o.zoom);
    renderer_ = std::make_unique<render::Renderer>();
    // The splat frame is resolved per pixel already; multisampling would only copy it four times.
    renderer_->setOffscreenTarget(width_, height_, style_.draw == render::DrawMode::Splat ? 1 : 4);
    source_ = std::make_unique<DrawSource>(*renderer_, ctx_->isNvidia());
    renderer_->setSpeedScale(style_.speedScale);
    renderer_->setPlane(style_.plane);
    renderer_->setSpriteAlpha(style_.spriteAlpha);
  }

  double renderFrame(core::Engine& engine) override {
    ctx_->makeCurrent();
    followOpenWorld(camera_, engine, follow_);  // an open world's camera follows the bodies
    return source_->drawFrame(engine, camera_, style_, width_, height_);
  }
  bool interop() const override { return source_->interop(); }
  std::vector<uint8_t> pixels() override {
    ctx_->makeCurrent();
    return renderer_->readPixels(width_, height_);
  }
  const char* drawMode() const override { return render::toString(style_.draw); }
  int width() const override { return width_; }
  int height() const override { return height_; }

 private:
  std::unique_ptr<render::EglContext> ctx_;
  std::unique_ptr<render::Renderer> renderer_;
  std::unique_ptr<DrawSource> source_;
  render::Camera camera_;
  OpenFollow follow_;
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
