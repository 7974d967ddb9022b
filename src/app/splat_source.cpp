#include "app/splat_source.h"

#include <cstdio>

#if defined(MURMUR_HAVE_CUDA)
#include "cuda/cuda_engine.h"
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
    : renderer_(renderer), glIsNvidia_(glIsNvidia), interop_(std::make_unique<Interop>()) {}

SplatSource::~SplatSource() = default;

void SplatSource::fill(core::Engine& engine, const core::SplatView& view, bool warpReduce) {
  renderer_.resize(view.width, view.height);
#if defined(MURMUR_HAVE_CUDA)
  auto* cudaEngine = dynamic_cast<cuda::CudaEngine*>(&engine);
  if (cudaEngine && glIsNvidia_ && !interopFailed_) {
    try {
      // Registered once, and again only when the renderer replaced the buffer (a new frame size).
      if (!interop_->target || interop_->generation != renderer_.bufferGeneration()) {
        interop_->target.reset();
        interop_->target = std::make_unique<cuda::GlSplatTarget>(renderer_.keyBuffer());
        interop_->generation = renderer_.bufferGeneration();
      }
      interop_->target->render(*cudaEngine, view, warpReduce);
      interopActive_ = true;
      offReason_.clear();
      return;
    } catch (const std::exception& e) {
      interopFailed_ = true;
      interop_->target.reset();
      offReason_ = std::string("interop failed: ") + e.what();
      std::fprintf(stderr, "murmur: splat %s; resolving on the CPU instead\n", offReason_.c_str());
    }
  } else if (cudaEngine && !glIsNvidia_) {
    offReason_ = "GL is not NVIDIA's";
  }
#else
  (void)warpReduce;
#endif
  if (engine.kind() == core::EngineKind::Cpu) offReason_ = "CPU engine";
  if (offReason_.empty()) offReason_ = "no CUDA interop in this build";
  interopActive_ = false;
  const core::Bodies b = engine.readBodies();
  hostKeys_.resize(static_cast<size_t>(view.width) * static_cast<size_t>(view.height));
  core::clearSplat(hostKeys_.data(), hostKeys_.size());
  core::splatBodies(view, b.pos.data(), b.vel.data(), b.id.data(), b.size(), hostKeys_.data());
  renderer_.upload(hostKeys_);
}

}  // namespace murmur::app
