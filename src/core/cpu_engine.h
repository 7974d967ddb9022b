// The CPU engine: the same physics and the same pipelines as the CUDA engine, parallel over
// bodies with OpenMP. It is the reference in tests and the fallback without an NVIDIA GPU. Each
// pipeline is a file of core/cpu_pipelines/ behind core/cpu_pipeline.h; this class holds the
// state and the parts they share.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/cpu_pipeline.h"
#include "core/engine.h"
// Clients of the engine have long found the grid, tree and verlet functions through this header.
#include "core/grid.h"
#include "core/tree.h"
#include "core/open_world.h"
#include "core/verlet.h"

namespace murmur::core {

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const SimParams& p);

  EngineKind kind() const override { return EngineKind::Cpu; }
  std::string deviceName() const override;
  DeviceInfo deviceInfo() const override;
  void setParams(const SimParams& p) override;
  const SimParams& params() const override { return shown_; }
  void reset(const Bodies& bodies) override;
  size_t numBodies() const override { return s_.pos.size(); }
  void step(int numSteps = 1) override;
  StepProfile lastProfile() const override { return s_.profile; }
  Bodies readBodies() override;
  std::vector<Vec4> computeAccelerations() override;
  NeighbourStats neighbourStats() override;
  int stepsPerCycle() const override;
  Observables observe(const ObserveRequest& r) override {
    fitOpen();
    return observeBodies(s_.pos, s_.vel, s_.params, r);
  }

  // Grid state after the last grid build, for invariant tests: keys and body indices in sorted
  // order, and per-cell [start, end) into that order (kEmptyCell when empty).
  using GridView = CpuGridView;
  // Builds the grid for the current positions with the current pipeline's rules (boids or
  // gravity grid) and returns it; does not modify the body state.
  GridView debugBuildGrid();
  // Under --topological K: every body's K nearest, indexed by id (ids 0..N-1), each list in order
  // (d^2, id); the sets the step sums over.
  std::vector<std::vector<uint32_t>> topologicalNeighbours();

 private:
  void stepOnce();
  // Under the open boundary, once the bodies may have come near the box's faces: a larger box
  // where they need it (core/open_world.h).
  void fitOpen();
  void stepBoids();
  void stepGravity();
  // Gravity accelerations of the current state into s_.acc (current order), by the method the
  // pipeline table names for gravity on the current pipeline.
  void gravityForces();
  // The CPU engine's instance of pipeline p (throws std::logic_error when it has none).
  CpuPipeline& pipeline(Pipeline p) const;

  // One instance of every registered pipeline, indexed by core::Pipeline.
  std::vector<std::unique_ptr<CpuPipeline>> pipelines_;
  CpuState s_;  // s_.params: the parameters run (an open world's box in halfSize)
  SimParams shown_;  // the parameters as given
  OpenWorld open_;
  bool accValid_ = false;
};

std::unique_ptr<Engine> createCpuEngine(const SimParams& p);

// Host bytes the CPU engine allocates for n bodies with parameters p, beyond the bodies handed
// to it: its state, ping-pong, acceleration and grid arrays per body, and the grid. gridCells and
// gridBytes (when given) receive the grid's cells and its part of the bytes (0 for naive).
size_t cpuEngineBytes(size_t n, const SimParams& p, uint64_t* gridCells = nullptr, size_t* gridBytes = nullptr);

}  // namespace murmur::core
