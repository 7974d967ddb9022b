#include "app/engine_factory.h"

#include "core/cpu_engine.h"
#include "core/errors.h"
#if defined(MURMUR_HAVE_CUDA)
#include "cuda/cuda_engine.h"
#endif

namespace murmur::app {

bool cudaAvailable(std::string* why) {
#if defined(MURMUR_HAVE_CUDA)
  return cuda::deviceAvailable(why);
#else
  if (why) *why = "this build has no CUDA engine (no CUDA compiler at build time)";
  return false;
#endif
}

core::EngineKind defaultEngineKind() {
  return cudaAvailable() ? core::EngineKind::Cuda : core::EngineKind::Cpu;
}

std::unique_ptr<core::Engine> makeEngine(core::EngineKind kind, const core::SimParams& params) {
  if (kind == core::EngineKind::Cpu) return core::createCpuEngine(params);
  std::string why;
  if (!cudaAvailable(&why)) throw core::UsageError("--engine cuda is not available: " + why);
#if defined(MURMUR_HAVE_CUDA)
  return cuda::createCudaEngine(params);
#else
  return nullptr;
#endif
}

}  // namespace murmur::app
