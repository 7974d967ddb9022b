// The CPU engine: the same physics and the same three pipelines as the CUDA engine, parallel
// over bodies with OpenMP. It is the reference in tests and the fallback without an NVIDIA GPU.
#pragma once

#include <memory>
#include <vector>

#include "core/engine.h"
#include "core/grid.h"
#include "core/tree.h"
#include "core/verlet.h"

namespace murmur::core {

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const SimParams& p);

  EngineKind kind() const override { return EngineKind::Cpu; }
  std::string deviceName() const override;
  DeviceInfo deviceInfo() const override;
  void setParams(const SimParams& p) override;
  const SimParams& params() const override { return params_; }
  void reset(const Bodies& bodies) override;
  size_t numBodies() const override { return pos_.size(); }
  void step(int numSteps = 1) override;
  StepProfile lastProfile() const override { return profile_; }
  Bodies readBodies() override;
  std::vector<Vec4> computeAccelerations() override;
  NeighbourStats neighbourStats() override;
  int stepsPerCycle() const override;

  // Grid state after the last grid build, for invariant tests: keys and body indices in sorted
  // order, and per-cell [start, end) into that order (kEmptyCell when empty).
  struct GridView {
    GridSpec grid;
    std::vector<uint32_t> sortedKeys, sortedIndex, cellStart, cellEnd;
  };
  // Builds the grid for the current positions with the current pipeline's rules (boids or
  // gravity grid) and returns it; does not modify the body state.
  GridView debugBuildGrid();

 private:
  void stepOnce();
  void stepBoids();
  // The verlet pipeline: the plan of the next build, and the build itself (grid, reorder, lists).
  VerletPlan nextListPlan() const;
  void buildLists();
  void stepGravity();
  // Gravity accelerations of the current state into acc_ (current order).
  void gravityForces();
  void treeForces();
  // labelCells + sortByCell + findCellBounds (+ reorderBodies for coherent) on the current
  // positions; gravity also builds the monopoles.
  void buildGrid(const GridSpec& g);
  // The state moves into sortedIndex_ order (coherent, rows, tree); ids move with it.
  void reorderBySortedIndex();
  GridSpec gravityGridForState() const;
  template <typename F>
  void timed(double& slot, F&& f);

  SimParams params_;
  StepProfile profile_;
  // Body state in its current order (cell order for the coherent pipeline).
  std::vector<Vec4> pos_, vel_, acc_;
  std::vector<uint32_t> id_;
  // Second buffers: velocities ping-pong for boids; gather targets for coherent reorder.
  std::vector<Vec4> posAlt_, velAlt_;
  std::vector<uint32_t> idAlt_;
  // Grid buffers.
  GridSpec grid_{};
  std::vector<uint32_t> keys_, sortedKeys_, sortedIndex_, cellStart_, cellEnd_, counts_;
  std::vector<uint32_t> cellFirst_;  // rows pipeline: first sorted slot of every cell, and n at the end
  // Verlet pipeline: every body's list (slots of the order at the build, which the state keeps
  // until the next one), the plan it was built with, and the steps it has served.
  std::vector<std::vector<uint32_t>> lists_;
  VerletPlan listPlan_{};
  int listAge_ = 0;
  bool listValid_ = false;
  // Set by reset() and setParams(): positions may lie outside the world until the next step
  // wraps them, so the next list is built for one step, without images.
  bool listFresh_ = true;
  std::vector<Vec4> monopole_;          // per cell: centre of mass xyz, w = mass (gravity)
  std::vector<uint32_t> occupiedCells_;  // cell keys with mass > 0 (gravity far field)
  CpuTree tree_;
  bool accValid_ = false;
  bool timing_ = false;  // profiling_ while a step runs; the stage slots are filled only then
};

std::unique_ptr<Engine> createCpuEngine(const SimParams& p);

}  // namespace murmur::core
