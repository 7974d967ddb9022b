// The engine interface. Both executors implement it: the CPU engine (src/core, OpenMP) and the
// CUDA engine (src/cuda). Clients (app, benchmark, tests) only see this header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"

namespace murmur::core {

// Milliseconds spent per stage in the last step (all zero unless SimParams::profile).
// label: cell key per body; sort: order by key; bounds: cell start/end (and gravity monopoles);
// reorder: gather into cell order (coherent); force: neighbour/pair loop; integrate: kicks,
// drifts and the boundary; render: copy into the draw buffer (filled by the renderer);
// comm: moving bodies between ranks (several ranks only: halos, migration, gathers).
struct StepProfile {
  double labelMs = 0, sortMs = 0, boundsMs = 0, reorderMs = 0, forceMs = 0, integrateMs = 0,
         renderMs = 0, commMs = 0;
  double totalMs() const {
    return labelMs + sortMs + boundsMs + reorderMs + forceMs + integrateMs + renderMs + commMs;
  }
  StepProfile& operator+=(const StepProfile& o) {
    labelMs += o.labelMs;
    sortMs += o.sortMs;
    boundsMs += o.boundsMs;
    reorderMs += o.reorderMs;
    forceMs += o.forceMs;
    integrateMs += o.integrateMs;
    renderMs += o.renderMs;
    commMs += o.commMs;
    return *this;
  }
};

// Neighbour statistics of the current state (boids): how many bodies each boid examined
// (candidates) and how many fell within the largest rule radius (neighbours), both means.
struct NeighbourStats {
  double meanCandidates = 0;
  double meanNeighbours = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual EngineKind kind() const = 0;
  // Human-readable executor: "CPU (OpenMP, 8 threads)" or the GPU's name.
  virtual std::string deviceName() const = 0;

  // Takes effect on the next step without a reset (pipeline, force, block size, weights...).
  // Throws std::invalid_argument with validateParams' message when p is invalid.
  virtual void setParams(const SimParams& p) = 0;
  virtual const SimParams& params() const = 0;

  // Replaces the state; body i gets id i. Allocates all per-body buffers once here.
  virtual void reset(const Bodies& bodies) = 0;
  virtual size_t numBodies() const = 0;

  // Advances numSteps steps with the current parameters. May return before the work is done
  // (the CUDA engine queues it on its stream); synchronize() waits for it.
  virtual void step(int numSteps = 1) = 0;
  virtual void synchronize() {}

  // Per-stage times of the last step (zero unless params().profile).
  virtual StepProfile lastProfile() const = 0;

  // Current state, ordered by id (result.id[i] == i).
  virtual Bodies readBodies() = 0;

  // Gravity accelerations (xyz, G applied; w = 0) of the current state computed by the current
  // pipeline, ordered by id. Used by the accuracy report and tests.
  virtual std::vector<Vec4> computeAccelerations() = 0;

  // Boids neighbour statistics of the current state (current pipeline's candidate set).
  virtual NeighbourStats neighbourStats() = 0;
};

}  // namespace murmur::core
