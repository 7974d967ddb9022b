#include "app/draw_source.h"

#include <glad/gl.h>

#include <chrono>
#include <cstdio>

#if defined(MURMUR_HAVE_CUDA)
#include "cuda/cuda_engine.h"
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
    : renderer_(renderer), glIsNvidia_(glIsNvidia), interop_(std::make_unique<Interop>()) {}

DrawSource::~DrawSource() = default;

void DrawSource::fill(core::Engine& engine) {
  const size_t n = engine.numBodies();
  if (renderer_.numBodies() != n) renderer_.resize(n);
#if defined(MURMUR_HAVE_CUDA)
  auto* cudaEngine = dynamic_cast<cuda::CudaEngine*>(&engine);
  if (cudaEngine && glIsNvidia_ && !interopFailed_) {
    try {
      // Buffers are registered once and again only when the renderer replaced them (resize).
      if (!interop_->buffers || interop_->generation != renderer_.bufferGeneration()) {
        interop_->buffers.reset();
        interop_->buffers = std::make_unique<cuda::GlInteropBuffers>(
            renderer_.positionBuffer(), renderer_.velocityBuffer(), renderer_.idBuffer());
        interop_->generation = renderer_.bufferGeneration();
      }
      cuda::GlInteropBuffers::Mapping mapped = interop_->buffers->map();
      cudaEngine->writeDrawBuffers(mapped.position, mapped.velocity, mapped.id);
      mapped.unmap();
      interopActive_ = true;
      offReason_.clear();
      return;
    } catch (const std::exception& e) {
      // A driver without GL interop (or a GL context on another device) falls back for good.
      interopFailed_ = true;
      interop_->buffers.reset();
      offReason_ = std::string("interop failed: ") + e.what();
      std::fprintf(stderr, "murmur: CUDA-GL %s; uploading through the host instead\n", offReason_.c_str());
    }
  } else if (cudaEngine && !glIsNvidia_) {
    offReason_ = "GL is not NVIDIA's";
  }
#endif
  if (engine.kind() == core::EngineKind::Cpu) offReason_ = "CPU engine";
  if (offReason_.empty()) offReason_ = "no CUDA interop in this build";
  interopActive_ = false;
  renderer_.upload(engine.readBodies());
}

double DrawSource::drawFrame(core::Engine& engine, const render::Camera& camera, const ViewStyle& style, int width,
                             int height) {
  const auto t0 = std::chrono::steady_clock::now();
  fill(engine);
  renderer_.draw(camera, style.draw, style.colour, width, height, style.pointSize, style.bodySize, style.worldRadius);
  glFinish();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace murmur::app
