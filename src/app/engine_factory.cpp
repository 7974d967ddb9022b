#include "app/engine_factory.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/cpu_engine.h"
#include "core/grid.h"
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

// What this process may still allocate, in bytes: the least of MemAvailable (/proc/meminfo), the
// address-space limit (ulimit -v) and the cgroup's memory.max less its usage (containers, CI
// runners). 0 when none is known (then nothing is checked).
size_t hostAvailableBytes() {
  size_t best = 0;
  const auto consider = [&best](size_t v) {
    if (v > 0 && (best == 0 || v < best)) best = v;
  };
  {
    std::ifstream in("/proc/meminfo");
    std::string key;
    size_t kb = 0;
    while (in >> key) {
      if (key == "MemAvailable:" && (in >> kb)) {
        consider(kb * 1024);
        break;
      }
      in.ignore(1 << 12, '\n');
    }
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) consider(static_cast<size_t>(as.rlim_cur));
  std::ifstream maxFile("/sys/fs/cgroup/memory.max"), curFile("/sys/fs/cgroup/memory.current");
  std::string maxText;
  size_t cur = 0;
  if ((maxFile >> maxText) && maxText != "max" && (curFile >> cur)) {
    const size_t limit = std::strtoull(maxText.c_str(), nullptr, 10);
    consider(limit > cur ? limit - cur : 1);
  }
  return best;
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

HostBytes hostBytesNeeded(core::EngineKind kind, size_t n, const core::SimParams& params) {
  HostBytes b;
  b.total = n * kHostBytesPerBody;
  if (kind != core::EngineKind::Cpu) return b;
  b.total += n * kCpuEngineBytesPerBody;
  if (params.pipeline == core::Pipeline::Naive) return b;
  // The CPU engine's grid: counts (cells + 1), cell start and end (uint32 each); gravity adds a
  // monopole (float4) per cell.
  if (params.force == core::ForceMode::Boids) {
    b.gridCells = core::boidGrid(params).numCells;
    b.grid = static_cast<size_t>(b.gridCells + 1) * 3 * sizeof(uint32_t);
  } else {
    const uint64_t d = static_cast<uint64_t>(params.gravity.gridDim);
    b.gridCells = d * d * d;
    b.grid = static_cast<size_t>(b.gridCells + 1) * (3 * sizeof(uint32_t) + 4 * sizeof(float));
  }
  b.total += b.grid;
  return b;
}

void checkFits(core::EngineKind kind, size_t n, const core::SimParams& paramsIn, const core::ScenarioSpec* scenario) {
  core::SimParams params = paramsIn;
  if (scenario && scenario->name == "dense")
    params.halfSize = core::denseHalfSize(n, params.boids, scenario->denseNeighbours);
  const HostBytes host = hostBytesNeeded(kind, n, params);
  const size_t avail = hostAvailableBytes();
  if (avail > 0 && host.total > avail) {
    std::string what = "--n " + std::to_string(n);
    if (host.grid > host.total / 2 && params.force == core::ForceMode::Boids) {
      // The world's size as the user set it: the dense scenario derives it from --neighbours.
      const bool dense = scenario && scenario->name == "dense";
      char h[96];
      if (dense)
        std::snprintf(h, sizeof h, " --scenario dense --neighbours %g (a world of half-size %g)",
                      scenario->denseNeighbours, double(params.halfSize));
      else
        std::snprintf(h, sizeof h, " --half-size %g", double(params.halfSize));
      what += std::string(h) + ": the boids grid of " + std::to_string(host.gridCells) + " cells";
      throw core::UsageError(what + " needs " + gib(host.total) + " of memory on the " + core::toString(kind) +
                             " engine, this machine has " + gib(avail) + " available (use " +
                             (dense ? "more --neighbours" : "a smaller --half-size") + " or --cell-width 2)");
    }
    throw core::UsageError(what + ": needs " + gib(host.total) + " of memory for the " + core::toString(kind) +
                           " engine, this machine has " + gib(avail) + " available");
  }
#if defined(MURMUR_HAVE_CUDA)
  if (kind == core::EngineKind::Cuda && cudaAvailable()) cuda::checkDeviceFits(n, params);
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
