// The tree pipeline (core/tree.h), gravity only: bounds -> keys -> sort -> reorder (the state
// stays in key order, as in the coherent pipeline) -> radix tree and moments -> group walk.
#include "cuda/cuda_pipeline.h"
#include "cuda/device_state.h"
#include "cuda/tree_build.h"

namespace murmur::cuda {

namespace {

using core::Stage;

class TreePipeline final : public CudaPipeline {
 public:
  void gravityForces(DeviceState& s) override {
    const LaunchConfig lc = s.launch();
    const core::GravityParams& gp = s.params.gravity;
    TreeBuffers& tree = tree_;
    s.timer.stage(Stage::Bounds, [&] { launchTreeBounds(s.pos[s.cur].get(), s.n, tree, lc); });
    s.timer.stage(Stage::Label, [&] { launchTreeKeys(s.pos[s.cur].get(), s.n, tree, lc); });
    int sel = 0;
    s.timer.stage(Stage::Sort, [&] { sel = treeSort(s.n, tree, lc); });
    s.reorderBodies(tree.index[sel].get(), lc);
    s.timer.stage(Stage::Bounds,
                  [&] { launchBuildTree(s.pos[s.cur].get(), tree.keys[sel].get(), s.n, gp.theta, tree, lc); });
    s.timer.stage(Stage::Force, [&] {
      launchTreeWalk(s.pos[s.cur].get(), s.n, tree, gp.softening * gp.softening, gp.G, gp.treeLeafSize, s.acc.get(),
                     lc);
    });
  }

  // The gravity grid of the current force mode, as the CPU engine counts it.
  core::NeighbourStats neighbourStats(DeviceState& s) override { return s.classicGridStats(); }

  void reserve(uint32_t n) override {
    if (n > 0) tree_.reserve(n);
  }
  void release() override { tree_.release(); }

 private:
  TreeBuffers tree_;  // keys, nodes, moments: allocated while the pipeline runs
};

}  // namespace

std::unique_ptr<CudaPipeline> makeTreePipeline() { return std::make_unique<TreePipeline>(); }

}  // namespace murmur::cuda
