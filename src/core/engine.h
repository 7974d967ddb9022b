// The engine interface. Both executors implement it: the CPU engine (src/core, OpenMP) and the
// CUDA engine (src/cuda). Clients (app, benchmark, tests) only see this header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/errors.h"
#include "core/observables.h"
#include "core/params.h"
#include "core/splat.h"
#include "core/stages.h"

namespace murmur::core {

// Where a step's time goes, in milliseconds, for the last step, per stage of core/stages.h. The
// engine is the only producer: CUDA events around each stage on the GPU, steady-clock time on the
// CPU engine; all zero unless profiling is on (Engine::setProfiling). A stage a pipeline does not
// have stays 0. Drawing is not a stage of the engine: whoever draws times it (render_ms).
struct StepProfile {
  double labelMs = 0, sortMs = 0, boundsMs = 0, reorderMs = 0, listMs = 0, forceMs = 0, integrateMs = 0, commMs = 0;

  double& at(Stage s);
  double at(Stage s) const;
  double totalMs() const {
    double t = 0;
    for (int s = 0; s < kStageCount; ++s) t += at(static_cast<Stage>(s));
    return t;
  }
  StepProfile& operator+=(const StepProfile& o) {
    for (int s = 0; s < kStageCount; ++s) at(static_cast<Stage>(s)) += o.at(static_cast<Stage>(s));
    return *this;
  }
  StepProfile& operator*=(double k) {
    for (int s = 0; s < kStageCount; ++s) at(static_cast<Stage>(s)) *= k;
    return *this;
  }
};

// The field of stage s: the one place that ties a stage of core/stages.h to its field.
using StageField = double StepProfile::*;
inline StageField stageField(Stage s) {
  static constexpr StageField fields[kStageCount] = {
      &StepProfile::labelMs, &StepProfile::sortMs,  &StepProfile::boundsMs,    &StepProfile::reorderMs,
      &StepProfile::listMs,  &StepProfile::forceMs, &StepProfile::integrateMs, &StepProfile::commMs};
  return fields[static_cast<int>(s)];
}
inline double& StepProfile::at(Stage s) { return this->*stageField(s); }
inline double StepProfile::at(Stage s) const { return this->*stageField(s); }

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

// Capabilities an engine hands out (docs/design.md#the-engine-interface): what a client needs of
// one kind of engine, asked through the interface instead of a cast to the engine's class.

// The state on a GPU, for clients that read or write it in place: the interop draw copy, the
// splat renderer, the Python module's device arrays.
class DeviceAccess {
 public:
  // The current arrays (every attribute of core/bodies.h), their count, and the engine's threads
  // per block: kernels that read the state launch with it.
  struct Bodies : ConstBodyPointers {
    size_t n = 0;
    int blockSize = 0;
  };
  virtual ~DeviceAccess() = default;
  // The current state on the device, in its current (possibly cell) order, for kernels that read
  // it in place. Valid until the next step, reset or setParams.
  virtual Bodies deviceBodies() const = 0;
  // Copies the current state, in its current order, into device arrays of numBodies() entries
  // (the mapped interop buffers): every attribute whose pointer in `out` is not null. Queued on
  // the engine's stream, no host sync.
  virtual void writeDrawBuffers(const BodyPointers& out) = 0;
  void writeDrawBuffers(void* d_pos, void* d_vel, void* d_id) {
    writeDrawBuffers(BodyPointers{static_cast<Vec4*>(d_pos), static_cast<Vec4*>(d_vel), static_cast<uint32_t*>(d_id),
                                  nullptr});
  }

  // The state in id order on the device (the Python module's zero-copy arrays). gatherById writes
  // every attribute of body i whose array in `out` is not null to its entry i (arrays of
  // numBodies() entries the caller owns; position w = mass). One kernel on the engine's stream, no
  // host sync.
  virtual void gatherById(const BodyPointers& out) = 0;
  void gatherById(Vec4* d_pos, Vec4* d_vel) { gatherById(BodyPointers{d_pos, d_vel, nullptr, nullptr}); }
  // The reverse: replaces the state from id-ordered device arrays laid out as gatherById writes
  // them (a null pointer keeps that attribute; ids stay, so `in.id` must be null), scattered by id
  // into the engine's current order on its stream. What the engine carries from one step to the
  // next (lists, cell counts, the leapfrog's accelerations, the common mass) is rebuilt by the
  // next step. Throws std::invalid_argument, the state unchanged, when a value is not finite or a
  // mass is negative.
  virtual void scatterById(const ConstBodyPointers& in) = 0;
  void scatterById(const Vec4* d_pos, const Vec4* d_vel) {
    scatterById(ConstBodyPointers{d_pos, d_vel, nullptr, nullptr});
  }
};

// One simulation over several ranks: who this is, what the run's summary says of them, and the
// collectives a frame drawn over them needs.
class RankAccess {
 public:
  virtual ~RankAccess() = default;
  virtual int rank() const = 0;
  virtual int numRanks() const = 0;
  // One line for the summary: ranks, transport, communication per step.
  virtual std::string summary() const = 0;
  // Collective: rank 0's `s` on every rank.
  virtual std::string broadcastFromRoot(const std::string& s) = 0;
  // Collective, a splat frame of every rank's bodies composited without moving a body: rank 0's
  // `view` goes to every rank (which gets it in `view`), each rank splats the bodies it owns into
  // its own keys (core/splat.h), and rank 0's `keys` becomes their per-pixel minimum, the frame one
  // rank holding every body would make, bit for bit. Other ranks' `keys` are scratch.
  virtual void compositeSplat(SplatView& view, std::vector<uint64_t>& keys) = 0;
  // This rank's run of ids [*first, *last) among `total` bodies: what it passes to resetShare.
  virtual void idShare(size_t total, size_t* first, size_t* last) const = 0;
  // Collective: Engine::reset with every body, each rank passing only the bodies of its idShare,
  // in id order (ids first, first + 1, ...). They travel to the ranks that own them, so no rank
  // holds every body: the state, and every later step, equal reset's with all of them.
  virtual void resetShare(const Bodies& share, size_t total) = 0;
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

  // The steps the state has taken: reset sets 0, every step adds one, and a state that comes
  // with its step (a state file's header, a trajectory frame) sets it with setStepCount. The one
  // count state files, trajectories, Python and a rule's random draws (core/random.h) read.
  uint64_t stepCount() const { return stepCount_; }
  void setStepCount(uint64_t steps) { stepCount_ = steps; }
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

  // Observables of the current state (core/observables.h), computed where the state lives (the
  // GPU engine does not copy the state to the host). An engine without them throws UsageError.
  virtual Observables observe(const ObserveRequest&) {
    throw UsageError("observables: not available on the " + deviceName() + " engine");
  }

  // Capabilities (null where the engine has none): the state on a GPU; several ranks.
  virtual DeviceAccess* deviceAccess() { return nullptr; }
  virtual const RankAccess* rankAccess() const { return nullptr; }
  virtual RankAccess* rankAccess() { return nullptr; }

 protected:
  uint64_t stepCount_ = 0;  // stepCount(): each engine's reset zeroes it and its step adds to it

 protected:
  bool profiling_ = false;
};

}  // namespace murmur::core
