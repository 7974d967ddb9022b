// Creates an engine of either kind. The app is the only layer that knows both executors.
#pragma once

#include <memory>
#include <string>

#include "core/engine.h"
#include "core/scenarios.h"

namespace murmur::app {

// True when the CUDA engine was built and a CUDA device is present; `why` says otherwise.
bool cudaAvailable(std::string* why = nullptr);

// The default engine: cuda when available, else cpu.
core::EngineKind defaultEngineKind();

// Throws core::UsageError with one line (bytes needed, bytes available) when n bodies do not fit:
// host memory for the bodies and, for the CPU engine, its buffers and grid; GPU memory for the
// CUDA engine (bodies, sort scratch, grid). The boids grid grows with the world's volume, not
// with N: --half-size 3000 is 1.7e9 cells. Called before a scenario is built, so nothing is
// allocated for a run that cannot fit. `scenario` (when given) lets `dense` size its world first.
void checkFits(core::EngineKind kind, size_t n, const core::SimParams& params,
               const core::ScenarioSpec* scenario = nullptr);
// The same for boids made in shares over `ranks` ranks (core::makeScenarioShare), localRanks of
// them on this host: counts up to core::kMaxBodiesOverRanks, and host memory for the shares this
// host's ranks make and exchange, not for every body (each GPU checks its own share when the
// engine takes it).
void checkFitsInShares(size_t n, const core::SimParams& params, const core::ScenarioSpec& scenario, int ranks,
                       int localRanks);

// Host bytes a run of n bodies allocates on this engine kind, and the part of it that is grid.
struct HostBytes {
  size_t total = 0, grid = 0;
  uint64_t gridCells = 0;
};
HostBytes hostBytesNeeded(core::EngineKind kind, size_t n, const core::SimParams& params);

// Throws core::UsageError when the kind cannot be used here (e.g. cuda without a device).
std::unique_ptr<core::Engine> makeEngine(core::EngineKind kind, const core::SimParams& params);

}  // namespace murmur::app
