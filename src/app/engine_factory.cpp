#include "app/engine_factory.h"

#include <cstdio>
#include <fstream>
#include <string>

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

namespace {

// MemAvailable from /proc/meminfo in bytes; 0 when unknown (then nothing is checked).
size_t hostAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kb = 0;
  while (in >> key) {
    if (key == "MemAvailable:" && (in >> kb)) return kb * 1024;
    in.ignore(1 << 12, '\n');
  }
  return 0;
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(size_t(1) << 30));
  return buf;
}

// Host bytes per body: the scenario's arrays and a read-back copy (2 x 36 B); the CPU engine adds
// its state, ping-pong, acceleration and grid arrays (100 B).
constexpr size_t kHostBytesPerBody = 72;
constexpr size_t kCpuEngineBytesPerBody = 100;

}  // namespace

void checkFits(core::EngineKind kind, size_t n, const core::SimParams& params) {
  const size_t host = n * (kHostBytesPerBody + (kind == core::EngineKind::Cpu ? kCpuEngineBytesPerBody : 0));
  const size_t avail = hostAvailableBytes();
  if (avail > 0 && host > avail) {
    throw core::UsageError("--n " + std::to_string(n) + ": needs " + gib(host) + " of memory for the " +
                           core::toString(kind) + " engine, this machine has " + gib(avail) + " available");
  }
#if defined(MURMUR_HAVE_CUDA)
  if (kind == core::EngineKind::Cuda && cudaAvailable()) cuda::checkDeviceFits(n, params);
#else
  (void)params;
#endif
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
