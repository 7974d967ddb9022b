// One simulation over several ranks (docs/design.md#the-decomposition-over-ranks), as an Engine: the headless loop drives it
// like any other. Every rank constructs one and makes the same calls in the same order; the
// calls are collective. Rank 0 speaks for the job: readBodies() returns every body, in id order,
// on rank 0 and an empty set elsewhere.
//
// Boids (the coherent or the rows pipeline): slabs of cell planes of the pipeline's grid
// (slabs.h), a halo of the planes the search reaches on either side per step (one on the coherent
// grid, two or three on the rows grid; under the periodic boundary also across the z faces, from
// the slabs at the other face), migration to the owner of the plane a body moved into,
// slab boundaries moved every kRebalanceSteps steps to even out the bodies per rank. Every rank
// keeps its bodies in the global order of the last step (see BodyRecord::tag), so the result
// equals the same pipeline on one rank to the bit, for any number of ranks.
// Gravity: all pairs; rank r owns a run of ids, gathers every position each force evaluation
// (transport allgather) and computes its own bodies' forces against all of them, summed in id
// order as on one rank.
#pragma once

#include "dist/module_guard.h"

#include <cstdint>
#include <memory>
#include <string>

#include "core/engine.h"
#include "dist/local_store.h"
#include "dist/slabs.h"
#include "dist/transport.h"

namespace murmur::dist {

// Communication statistics since reset (rank 0's view; bytes summed over all ranks).
struct CommStats {
  uint64_t steps = 0;
  uint64_t haloRecords = 0;     // bodies sent as halo or migrants, all ranks, all steps
  uint64_t bytesMoved = 0;      // bulk bytes sent by all ranks, all steps (halo + gathers)
  double commMs = 0;            // rank 0's time in transfers (profiling only)
  int rebalances = 0;
  double imbalance = 1;         // last measured max/mean bodies per rank (boids)
};

class DistEngine final : public core::Engine, public core::RankAccess {
 public:
  // Throws std::invalid_argument for parameters several ranks cannot run (pipelines, grid too
  // small for the ranks).
  DistEngine(std::unique_ptr<Transport> transport, std::unique_ptr<LocalStore> store, const core::SimParams& p);

  core::EngineKind kind() const override { return store_->kind(); }
  std::string deviceName() const override;
  // Rank 0's device; the name says how many ranks ("NVIDIA H200 x2 ranks (nccl)").
  core::DeviceInfo deviceInfo() const override;
  void setParams(const core::SimParams& p) override;
  const core::SimParams& params() const override { return params_; }
  // Every rank passes the same bodies; each keeps what it owns. A failure on any rank (memory)
  // fails reset on every rank with one message naming the rank.
  void reset(const core::Bodies& bodies) override;
  size_t numBodies() const override { return total_; }
  void step(int numSteps = 1) override;
  void synchronize() override { store_->synchronize(); }
  core::StepProfile lastProfile() const override { return profile_; }
  core::Bodies readBodies() override;
  std::vector<core::Vec4> computeAccelerations() override;
  // Not available over several ranks: throws core::UsageError.
  core::NeighbourStats neighbourStats() override;
  // Collective: the state gathered on rank 0 (as readBodies) and the CPU reference there
  // (core::observeBodies); the other ranks get empty values. Not computed on the ranks' GPUs.
  core::Observables observe(const core::ObserveRequest& r) override;

  // Several ranks (core::RankAccess): clients ask rankAccess() instead of casting to this class.
  const core::RankAccess* rankAccess() const override { return this; }
  core::RankAccess* rankAccess() override { return this; }
  int rank() const override { return transport_->rank(); }
  int numRanks() const override { return transport_->size(); }
  int ranks() const { return transport_->size(); }
  const SlabLayout& layout() const { return layout_; }
  CommStats commStats() const { return stats_; }
  // This rank's store on the last step (tests): the counting sort ran; the owned bodies the
  // selection before the exchange read.
  bool lastSortCounted() const { return store_->lastSortCounted(); }
  size_t lastSelectionRead() const { return store_->lastSelectionRead(); }
  // One line for the summary: ranks, transport, communication per step.
  std::string summary() const override;
  std::string broadcastFromRoot(const std::string& s) override { return transport_->broadcast(s, 0); }
  void compositeSplat(core::SplatView& view, std::vector<uint64_t>& keys) override;
  void idShare(size_t total, size_t* first, size_t* last) const override {
    *first = firstIdOfRank(total, ranks(), rank());
    *last = firstIdOfRank(total, ranks(), rank() + 1);
  }
  void resetShare(const core::Bodies& share, size_t total) override;

  static constexpr int kRebalanceSteps = 20;
  // Slabs move when the fullest rank holds this much more than the mean.
  static constexpr double kRebalanceThreshold = 1.05;

 private:
  // reset and resetShare: the counters of a new state; the slabs balanced over the histogram of
  // every body's plane; the owned bodies handed to the store (every rank agreeing on the outcome).
  void startReset(size_t n);
  // The grid for n bodies (grid_), and how many of `pos` lie in each of its planes.
  std::vector<uint64_t> planeCounts(const std::vector<core::Vec4>& pos, size_t n);
  void balanceSlabs(const std::vector<uint64_t>& hist);
  void finishReset(const core::Bodies& owned, const std::vector<uint64_t>& tags, size_t n);
  void stepBoids();
  void stepGravity();
  void gravityForces();
  // The tree over ranks (gravityForces with --pipeline tree): every rank builds the tree over the
  // gathered positions in the order one engine's state would have, walks its share of the walk
  // groups, and the accelerations are gathered back (docs/multi-gpu.md).
  void treeForces();
  void rebalance();
  // Runs f on every rank; when it throws on any, every rank throws the first failure's message
  // prefixed with its rank, so rank 0 can report it and no rank waits for another. Every store
  // call that can fail (allocations, device errors, reads) runs inside one, between collectives:
  // a rank never enters a transfer that a failed peer will not join.
  template <typename F>
  void agreed(F&& f);

  std::unique_ptr<Transport> transport_;
  std::unique_ptr<LocalStore> store_;
  core::SimParams params_;
  core::GridSpec grid_{};
  SlabLayout layout_{};
  size_t total_ = 0;
  float commonMass_ = 0;  // core::commonMass of the bodies of the last reset
  core::StepProfile profile_;
  CommStats stats_;
  bool accValid_ = false;
  // readBodies gathers once per state: later calls (the renderer, then the output) reuse it.
  bool gathered_ = false;
  core::Bodies gatheredBodies_;
};

// Throws std::invalid_argument when several ranks cannot run these parameters.
std::string validateDistParams(const core::SimParams& p, int ranks);

}  // namespace murmur::dist
