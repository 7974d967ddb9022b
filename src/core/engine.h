// The engine interface. Both executors implement it: the CPU engine (src/core, OpenMP) and the
// CUDA engine (src/cuda). Clients (app, benchmark, tests) only see this header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"

namespace murmur::core {

// Where a step's time goes, in milliseconds, for the last step. The engine is the only producer:
// CUDA events around each stage on the GPU, steady-clock time on the CPU engine; all zero unless
// profiling is on (Engine::setProfiling). A stage a pipeline does not have stays 0.
//   label:     cell key per body
//   sort:      order the bodies by cell key
//   bounds:    cell start/end; gravity adds its grid from the bounding box and the cell monopoles
//   reorder:   gather pos/vel/id into cell order (coherent pipeline)
//   force:     the neighbour or pair loop
//   integrate: kicks, drifts and the boundary
//   comm:      moving bodies between ranks (several ranks only: halos, migrants, gathers)
// Drawing is not a stage of the engine: whoever draws times it (render_ms in the benchmark).
struct StepProfile {
  // listMs: the verlet pipeline's list build (its search), in the steps that build one.
  double labelMs = 0, sortMs = 0, boundsMs = 0, reorderMs = 0, forceMs = 0, integrateMs = 0, commMs = 0, listMs = 0;
  double totalMs() const {
    return labelMs + sortMs + boundsMs + reorderMs + forceMs + integrateMs + commMs + listMs;
  }
  StepProfile& operator+=(const StepProfile& o) {
    labelMs += o.labelMs;
    sortMs += o.sortMs;
    boundsMs += o.boundsMs;
    reorderMs += o.reorderMs;
    forceMs += o.forceMs;
    integrateMs += o.integrateMs;
    commMs += o.commMs;
    listMs += o.listMs;
    return *this;
  }
  StepProfile& operator*=(double k) {
    labelMs *= k;
    sortMs *= k;
    boundsMs *= k;
    reorderMs *= k;
    forceMs *= k;
    integrateMs *= k;
    commMs *= k;
    listMs *= k;
    return *this;
  }
};

// The machine an engine runs on, as the benchmark records it. name: the GPU's name ("NVIDIA H100
// 80GB HBM3") or the CPU model; cc: compute capability ("9.0"); driver and runtime: CUDA versions
// ("13.0"). Empty where not applicable (all but name on the CPU engine).
struct DeviceInfo {
  std::string name, cc, driver, runtime;
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
  // What the benchmark records about the device (see DeviceInfo).
  virtual DeviceInfo deviceInfo() const = 0;

  // Takes effect on the next step without a reset (pipeline, force, block size, weights...).
  // Throws std::invalid_argument with validateParams' message when p is invalid.
  virtual void setParams(const SimParams& p) = 0;
  virtual const SimParams& params() const = 0;

  // Replaces the state, keeping the bodies' ids (checkBodies must accept them; throws
  // std::invalid_argument otherwise). Allocates all per-body buffers once here.
  virtual void reset(const Bodies& bodies) = 0;
  virtual size_t numBodies() const = 0;

  // Advances numSteps steps with the current parameters. May return before the work is done
  // (the CUDA engine queues it on its stream); synchronize() waits for it.
  virtual void step(int numSteps = 1) = 0;
  virtual void synchronize() {}

  // Steps of the pipeline's cycle: 1, or the steps a verlet neighbour list serves (one of them
  // builds it). A benchmark times whole cycles, so that the build is counted in every sample.
  virtual int stepsPerCycle() const { return 1; }

  // Per-stage timing of the steps that follow: off (the default) costs nothing; on, the CUDA
  // engine records events and waits for the last one at the end of each step.
  void setProfiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }
  // Per-stage times of the last step (zero unless profiling()).
  virtual StepProfile lastProfile() const = 0;

  // Current state, ordered by id (result.id[i] == i).
  virtual Bodies readBodies() = 0;

  // Gravity accelerations (xyz, G applied; w = 0) of the current state computed by the current
  // pipeline, ordered by id. Used by the accuracy report and tests.
  virtual std::vector<Vec4> computeAccelerations() = 0;

  // Boids neighbour statistics of the current state (current pipeline's candidate set).
  virtual NeighbourStats neighbourStats() = 0;

 protected:
  bool profiling_ = false;
};

}  // namespace murmur::core
