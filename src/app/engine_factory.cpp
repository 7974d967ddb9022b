#include "app/engine_factory.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/format.h"
#include "core/rule_table.h"

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

// Host bytes per body: the scenario's arrays and a read-back copy (2 x 36 B); the CPU engine adds
// its own (core::cpuEngineBytes).
constexpr size_t kHostBytesPerBody = 72;

}  // namespace

HostBytes hostBytesNeeded(core::EngineKind kind, size_t n, const core::SimParams& params) {
  HostBytes b;
  b.total = n * kHostBytesPerBody;
  if (kind != core::EngineKind::Cpu) return b;
  b.total += core::cpuEngineBytes(n, params, &b.gridCells, &b.grid);
  return b;
}

namespace {

// The checks every run makes before a body is made: the body count and the dense world's size
// (its grid holds at most a few cells a body, core::boidGridCellCap). Returns the parameters with
// the dense world's size.
core::SimParams checkWorld(size_t n, const core::SimParams& paramsIn, const core::ScenarioSpec* scenario,
                           bool inShares) {
  {
    const std::string err = core::checkBodyCount(n, inShares);
    if (!err.empty()) throw core::UsageError(err);
  }
  core::SimParams params = paramsIn;
  if (scenario && scenario->name == "dense") {
    // The world dense sizes to n: checked here, before a body is made (a billion bodies take
    // minutes and tens of GB to build).
    params.halfSize = core::denseHalfSize(n, params, scenario->denseNeighbours);
    const std::string err = core::validateParams(params);
    if (!err.empty()) {
      char h[64];
      std::snprintf(h, sizeof h, "%g", scenario->denseNeighbours);
      throw core::UsageError("--n " + std::to_string(n) + " with --scenario dense --neighbours " + h + ": " + err);
    }
  }
  return params;
}

// Host bytes per body of a share made over ranks, at the peak of the exchange that sends every
// body to its owner (dist::DistEngine::resetShare): the share as made (36 B), its records out and
// in (2 x 48 B), the owner per body (4 B), the owned bodies and their tags (36 + 8 B).
constexpr size_t kShareHostBytesPerBody = 180;

}  // namespace

void checkFits(core::EngineKind kind, size_t n, const core::SimParams& paramsIn, const core::ScenarioSpec* scenario) {
  const bool dense = scenario && scenario->name == "dense";
  const core::SimParams params = checkWorld(n, paramsIn, scenario, false);
  const HostBytes host = hostBytesNeeded(kind, n, params);
  const size_t avail = hostAvailableBytes();
  if (avail > 0 && host.total > avail) {
    std::string what = "--n " + std::to_string(n);
    if (host.grid > host.total / 2 && core::runsLocalRule(params)) {
      // The world's size as the user set it: the dense scenario derives it from --neighbours.
      char h[96];
      if (dense)
        std::snprintf(h, sizeof h, " --scenario dense --neighbours %g (a world of half-size %g)",
                      scenario->denseNeighbours, double(params.halfSize));
      else
        std::snprintf(h, sizeof h, " --half-size %g", double(params.halfSize));
      what += std::string(h) + ": the boids grid of " + std::to_string(host.gridCells) + " cells";
      throw core::UsageError(what + " needs " + core::formatGiB(host.total) + " of memory on the " +
                             core::toString(kind) + " engine, this machine has " + core::formatGiB(avail) +
                             " available (use " +
                             (dense ? "more --neighbours" : "a smaller --half-size") + " or --cell-width 2)");
    }
    throw core::UsageError(what + ": needs " + core::formatGiB(host.total) + " of memory for the " +
                           core::toString(kind) + " engine, this machine has " + core::formatGiB(avail) +
                           " available");
  }
#if defined(MURMUR_HAVE_CUDA)
  if (kind == core::EngineKind::Cuda && cudaAvailable()) cuda::checkDeviceFits(n, params);
#endif
}

void checkFitsInShares(size_t n, const core::SimParams& params, const core::ScenarioSpec& scenario, int ranks,
                       int localRanks) {
  checkWorld(n, params, &scenario, true);
  // The ranks of this host make and exchange their shares at the same time.
  const size_t onHost = static_cast<size_t>(
      double(n) * double(std::min(std::max(localRanks, 1), ranks)) / double(std::max(ranks, 1)) + 0.5);
  const size_t need = onHost * kShareHostBytesPerBody, avail = hostAvailableBytes();
  if (avail > 0 && need > avail)
    throw core::UsageError("--n " + std::to_string(n) + ": the shares of the " + std::to_string(localRanks) +
                           " ranks on this host need " + core::formatGiB(need) + " of memory while they are made " +
                           "and sent to their owners, this machine has " + core::formatGiB(avail) +
                           " available (more hosts, or a smaller --n)");
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
