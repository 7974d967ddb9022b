// Creates an engine of either kind. The app is the only layer that knows both executors.
#pragma once

#include <memory>
#include <string>

#include "core/engine.h"

namespace murmur::app {

// True when the CUDA engine was built and a CUDA device is present; `why` says otherwise.
bool cudaAvailable(std::string* why = nullptr);

// The default engine: cuda when available, else cpu.
core::EngineKind defaultEngineKind();

// Throws core::UsageError with one line (bytes needed, bytes available) when n bodies do not fit:
// host memory for the bodies and, for the CPU engine, its buffers; GPU memory for the CUDA
// engine. Called before a scenario is built, so an absurd --n fails at once.
void checkFits(core::EngineKind kind, size_t n, const core::SimParams& params);

// Throws core::UsageError when the kind cannot be used here (e.g. cuda without a device).
std::unique_ptr<core::Engine> makeEngine(core::EngineKind kind, const core::SimParams& params);

}  // namespace murmur::app
