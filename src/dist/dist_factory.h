// Creates the engine for a job of several ranks: the decomposition over the host store and MPI
// (CPU engine) or over the GPU store and NCCL (CUDA engine, one GPU per local rank).
#pragma once

#include "dist/module_guard.h"

#include <memory>

#include "core/engine.h"

namespace murmur::dist {

// Collective: every rank calls it. Throws core::UsageError when this build cannot run several
// ranks of this kind (no MPI, no NCCL), JobError when a rank cannot start (no GPU for it).
std::unique_ptr<core::Engine> createDistEngine(core::EngineKind kind, const core::SimParams& p);

}  // namespace murmur::dist
