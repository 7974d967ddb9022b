// The tree pipeline (gravity only): Barnes-Hut over a radix tree built every step (core/tree.h).
// Its stages: bounds, Morton keys (label), sort, reorder into key order (the state stays there,
// as in the coherent pipeline), tree build and moments (bounds), walk (force). Boids have no far
// field to approximate, so it does not serve them (the default boidsForces throws).
#include <vector>

#include "core/cpu_pipeline.h"
#include "core/tree.h"

namespace murmur::core {

namespace {

class TreePipeline final : public CpuPipeline {
 public:
  Pipeline id() const override { return Pipeline::Tree; }

  void gravityForces(CpuState& s) override {
    const uint32_t n = static_cast<uint32_t>(s.pos.size());
    const GravityParams& gp = s.params.gravity;
    Vec4 lo{}, hi{};
    double boxMs = 0, buildMs = 0;
    s.timed(boxMs, [&] { treeBounds(s.pos.data(), n, lo, hi); });
    std::vector<uint64_t> keys, sortedKeys;
    s.timed(s.profile.labelMs, [&] { treeKeys(s.pos.data(), n, lo, hi, keys); });
    s.timed(s.profile.sortMs, [&] { treeSortByKey(keys, sortedKeys, s.sortedIndex); });
    s.timed(s.profile.reorderMs, [&] { s.reorderBySortedIndex(); });
    s.timed(buildMs, [&] { buildTree(s.pos.data(), sortedKeys.data(), n, gp.theta, tree_); });
    s.profile.boundsMs += boxMs + buildMs;
    const float eps2 = gp.softening * gp.softening;
    s.timed(s.profile.forceMs,
            [&] { treeAccelerations(tree_, s.pos.data(), n, eps2, gp.G, gp.treeLeafSize, s.acc.data()); });
  }

 private:
  CpuTree tree_;
};

}  // namespace

std::unique_ptr<CpuPipeline> makeTreePipeline() { return std::make_unique<TreePipeline>(); }

}  // namespace murmur::core
