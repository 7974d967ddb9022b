// A plain textbook coherent grid for boids, kept as the benchmark's baseline (`murmur bench
// --pipeline textbook-coherent`): what the classic pipelines must beat within their own
// definitions. It is the recipe as a course teaches it, written once and left unoptimised on
// purpose: label cells, thrust::sort_by_key on the full 32-bit keys, reset and fill cell
// start/end, gather position/velocity/id into cell order, then one thread per boid loops over the
// cells its radius reaches. Same rules (core/physics.h) and same grid math (core/grid.h) as the
// engine, so it finds exactly naive's neighbours. Not a pipeline of the viewer.
#pragma once

#include "cuda/module_guard.h"

#include <memory>

#include "core/engine.h"

namespace murmur::cuda {

// Boids only, under the wrap boundary: setParams throws std::invalid_argument for gravity, for
// --boundary periodic (the recipe searches the world's cells only) and for invalid parameters.
// The pipeline field of the parameters is ignored. Throws like createCudaEngine without a device.
std::unique_ptr<core::Engine> createTextbookCoherentEngine(const core::SimParams& p);

}  // namespace murmur::cuda
