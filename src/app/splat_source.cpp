#include "app/splat_source.h"

#include <cstdio>

#if defined(MURMUR_HAVE_CUDA)
#include "cuda/splat_interop.h"
#endif

namespace murmur::app {

struct SplatSource::Interop {
#if defined(MURMUR_HAVE_CUDA)
  std::unique_ptr<cuda::GlSplatTarget> target;
  uint64_t generation = ~0ull;
#endif
};

SplatSource::SplatSource(render::SplatRenderer& renderer, bool glIsNvidia)
    : renderer_(renderer), fallback_(glIsNvidia, "splat", "resolving on the CPU"), interop_(std::make_unique<Interop>()) {}

SplatSource::~SplatSource() = default;

void SplatSource::fill(core::Engine& engine, const core::SplatView& view, bool warpReduce) {
  renderer_.resize(view.width, view.height);
  if (core::RankAccess* ranks = engine.rankAccess()) {
    // Over several ranks every rank splats its own bodies and the frames meet in a per-pixel
    // minimum on this rank (rank 0): no body moves for a frame.
    core::SplatView v = view;
    ranks->compositeSplat(v, hostKeys_);
    renderer_.upload(hostKeys_);
    return;
  }
#if defined(MURMUR_HAVE_CUDA)
  const auto resolve = [&](core::DeviceAccess& device) {
    // Registered once, and again only when the renderer replaced the buffer (a new frame size).
    if (!interop_->target || interop_->generation != renderer_.bufferGeneration()) {
      interop_->target.reset();
      interop_->target = std::make_unique<cuda::GlSplatTarget>(renderer_.keyBuffer());
      interop_->generation = renderer_.bufferGeneration();
    }
    interop_->target->render(device, view, warpReduce);
  };
  if (fallback_.attempt(engine, resolve, [&] { interop_->target.reset(); })) return;
#else
  (void)warpReduce;
  fallback_.hostOnly(engine);
#endif
  const core::Bodies b = engine.readBodies();
  hostKeys_.resize(static_cast<size_t>(view.width) * static_cast<size_t>(view.height));
  core::clearSplat(hostKeys_.data(), hostKeys_.size());
  core::splatBodies(view, b.pos.data(), b.vel.data(), b.id.data(), b.size(), hostKeys_.data());
  renderer_.upload(hostKeys_);
}

}  // namespace murmur::app
