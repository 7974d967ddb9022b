// The host store: one rank's bodies in host memory, the stages as OpenMP loops over the same
// core physics and grid functions the CPU engine uses (so one rank reproduces the CPU engine's
// coherent and rows pipelines to the bit).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/cpu_engine.h"
#include "core/cpu_pipeline.h"
#include "core/format.h"
#include "core/physics.h"
#include "core/pipeline_table.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "core/splat.h"
#include "core/tree.h"
#include "dist/local_store.h"

namespace murmur::dist {

namespace {

using core::Vec4;

using core::msSince;

class HostStore final : public LocalStore {
 public:
  explicit HostStore(const core::SimParams& p) : params_(p) {}

  core::EngineKind kind() const override { return core::EngineKind::Cpu; }
  std::string deviceName() const override {
    std::ostringstream s;
    s << "CPU (OpenMP, " << omp_get_max_threads() << " threads)";
    return s.str();
  }
  void checkFits(size_t, size_t, const core::SimParams&) override {}
  void setProfiling(bool on) override { profile_ = on; }
  core::DeviceInfo deviceInfo() const override { return cpu_.deviceInfo(); }

  // Boids are put in cell order right away (a stable sort of the order given, which is the order
  // the first step of one rank gives them too), with tags of that order, as the GPU store does.
  void setOwned(const core::Bodies& owned, const std::vector<uint64_t>& tags, const core::GridSpec& g,
                size_t /*total: g has what the rows grid takes from it*/) override {
    body_.forEachWith(owned, [](const char*, auto& mine, const auto& given) { mine = given; });
    core::withDefaults(body_);
    tag_ = tags;
    acc_.assign(pos_.size(), Vec4{0, 0, 0, 0});
    treeOrder_.clear();  // one engine's state starts in the order given
    if (!core::runsLocalRule(params_) || pos_.empty()) return;
    // The CPU engine's stable counting sort: the same order as a stable sort of the order given.
    core::labelCells(g, pos_, keys_);
    core::sortByCell(g, keys_, counts_, sortedKeys_, sortedIndex_);
    reorderBySortedIndex();
    for (size_t k = 0, first = 0; k < pos_.size(); ++k) {
      const uint32_t key = sortedKeys_[k];
      if (k > 0 && key != sortedKeys_[k - 1]) first = k;
      tag_[k] = (uint64_t(key) << 32) | uint64_t(k - first);
    }
  }
  size_t numOwned() const override { return pos_.size(); }
  core::Bodies readOwned() override { return body_; }
  void synchronize() override {}

  std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) override {
    me_ = me;
    const size_t peers = static_cast<size_t>(l.numRanks);
    std::vector<std::vector<BodyRecord>> out(peers);
    keep_.resize(0);
    keepTag_.clear();
    for (size_t i = 0; i < pos_.size(); ++i) {
      // Up to maxRanksNeeding: more than 3 once a slab is thinner than the halo, or across the z
      // faces under the periodic boundary.
      int need[kMaxRanks];
      const int k = ranksNeeding(l, planeOf(g, pos_[i].z), need);
      for (int j = 0; j < k; ++j) {
        if (need[j] == me) {
          keep_.forEachWith(body_, [&](const char*, auto& kept, const auto& a) { kept.push_back(a[i]); });
          keepTag_.push_back(tag_[i]);
        } else {
          out[static_cast<size_t>(need[j])].push_back(recordOf(body_, i, tag_[i]));
        }
      }
    }
    send_.clear();
    std::vector<uint64_t> counts(peers);
    for (size_t p = 0; p < peers; ++p) {
      counts[p] = out[p].size();
      send_.insert(send_.end(), out[p].begin(), out[p].end());
    }
    return counts;
  }
  const void* sendBuffer() const override { return send_.data(); }
  void* recvBuffer(size_t records) override {
    recv_.resize(records);
    return recv_.data();
  }
  // The arrivals from lower ranks, the kept bodies, the arrivals from higher ranks: the global
  // order of the last step restricted to this rank, because a slab is one run of cell keys
  // (slabs.h) and every sender holds the bodies of its own slab of the last step, whichever planes
  // they are needed for now (a halo across the z face included). The GPU store relies on this
  // without looking; here every step checks it on the tags, so the CPU tests over several ranks
  // prove the order the GPU store assumes.
  void mergeReceived(const std::vector<uint64_t>& perPeer) override {
    size_t records = 0, low = 0;
    for (size_t p = 0; p < perPeer.size(); ++p) {
      records += static_cast<size_t>(perPeer[p]);
      if (static_cast<int>(p) < me_) low += static_cast<size_t>(perPeer[p]);
    }
    recv_.resize(records);
    const size_t kept = keep_.size(), n = kept + records;
    body_.resize(n);
    tag_.resize(n);
    for (size_t o = 0; o < n; ++o) {
      if (o >= low && o < low + kept) {
        const size_t a = o - low;
        body_.forEachWith(keep_, [&](const char*, auto& mine, const auto& k) { mine[o] = k[a]; });
        tag_[o] = keepTag_[a];
      } else {
        const BodyRecord& r = recv_[o < low ? o : o - kept];
        storeRecord(r, body_, o);
        tag_[o] = r.tag;
      }
      if (o > 0 && tag_[o] <= tag_[o - 1])
        throw std::logic_error("the arrivals are not in the global cell order (tag " + std::to_string(tag_[o]) +
                               " after " + std::to_string(tag_[o - 1]) + ")");
    }
  }

  void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, uint64_t step,
                      core::StepProfile& prof) override {
    const long n = static_cast<long>(pos_.size());
    // The CPU engine's grid stages: labelCells + sortByCell (a stable counting sort, ties in tag
    // order, the local order) + findCellBounds, then the reorder into cell order.
    auto t0 = std::chrono::steady_clock::now();
    core::labelCells(g, pos_, keys_);
    if (profile_) prof.labelMs = msSince(t0), t0 = std::chrono::steady_clock::now();
    core::sortByCell(g, keys_, counts_, sortedKeys_, sortedIndex_);
    core::findCellBounds(g, sortedKeys_, cellStart_, cellEnd_);
    const bool rows = core::pipelineInfo(params_.pipeline).rowGrid;  // else the coherent grid
    if (rows) core::findCellFirst(g, sortedKeys_, cellFirst_);
    if (profile_) prof.sortMs = msSince(t0), t0 = std::chrono::steady_clock::now();
    reorderBySortedIndex();
    if (profile_) prof.reorderMs = msSince(t0), t0 = std::chrono::steady_clock::now();

    // Forces for owned bodies; halo bodies are only read. Same visiting order as the CPU
    // engine's pipeline. Coherent: cells z, y, x over the radius' range, then slots in order.
    // Rows (core/cpu_pipelines/rows.cpp): the rows of core::forEachRow, each a run of slots; the
    // halo holds every plane the rows reach (slabs.h), so each run is the one-rank run. Under the
    // periodic boundary localRuleLoop searches around the images too: x and y stay inside the
    // slab, and the planes across the z faces are the wrapped halo.
    const float radius = core::searchRadius(params_);
    altVel_.resize(pos_.size());
    core::localRuleLoop(
        params_, core::DrawKeys{id_.data(), step, params_.seed}, pos_, vel_, altVel_, [&](long i) { return !ownsPlane(l, me, planeOfKey(g, sortedKeys_[i])); },
        [&](long i, const Vec4& pi, auto&& add) {
          if (rows)
            core::rowCandidates(g, cellFirst_.data(), radius, i, pi, add);
          else
            core::gridCandidates<true>(g, cellStart_.data(), cellEnd_.data(), sortedIndex_.data(), radius, i, pi, add);
        });
    if (profile_) prof.forceMs = msSince(t0), t0 = std::chrono::steady_clock::now();
    // Integrate the owned bodies, give them their place in the new global order, drop the halo.
    size_t o = 0;
    tag_.resize(pos_.size());
    for (long i = 0; i < n; ++i) {
      const uint32_t key = sortedKeys_[i];
      if (!ownsPlane(l, me, planeOfKey(g, key))) continue;
      core::Vec3 v = core::xyz(altVel_[i]);
      const Vec4 moved =
          core::boidIntegrate(pos_[i], v, core::localDt(params_), params_.halfSize, params_.boundary);  // a wall turns v
      body_.forEach([&](const char*, auto& a) { a[o] = a[i]; });  // every attribute; then the new state
      pos_[o] = moved;
      vel_[o] = core::make4(v, altVel_[i].w);
      tag_[o] = (uint64_t(key) << 32) | (uint64_t(i) - cellStart_[key]);
      ++o;
    }
    body_.resize(o);
    tag_.resize(o);
    if (profile_) prof.integrateMs = msSince(t0);
  }

  std::vector<uint64_t> planeHistogram(const core::GridSpec& g) override {
    std::vector<uint64_t> h(static_cast<size_t>(g.dims.z), 0);
    for (const Vec4& p : pos_) ++h[static_cast<size_t>(planeOf(g, p.z))];
    return h;
  }

  const void* ownedPositions() override { return pos_.data(); }
  void* allPositions(size_t n) override {
    all_.resize(n);
    return all_.data();
  }
  void gravityForces(size_t n, float eps2, float G, float /*commonMass*/, core::StepProfile& prof) override {
    const auto t0 = std::chrono::steady_clock::now();
    const long m = static_cast<long>(pos_.size()), nn = static_cast<long>(n);
    acc_.resize(pos_.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; ++i) {
      const Vec4 pi = pos_[i];
      core::Vec3 a{0, 0, 0};
      for (long j = 0; j < nn; ++j) a += core::gravityPair(pi, all_[j], eps2);
      acc_[i] = core::make4(a * G, 0.0f);
    }
    if (profile_) prof.forceMs = msSince(t0);
  }
  void leapfrogKickDrift(float dt) override {
    const long m = static_cast<long>(pos_.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; ++i) core::leapfrogKickDrift(pos_[i], vel_[i], acc_[i], dt);
  }
  void leapfrogKick(float dt) override {
    const long m = static_cast<long>(pos_.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; ++i) core::leapfrogKick(vel_[i], acc_[i], dt);
  }
  void dampedEuler(float dt, float damping) override {
    const long m = static_cast<long>(pos_.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; ++i) core::dampedEuler(pos_[i], vel_[i], acc_[i], dt, damping);
  }
  std::vector<Vec4> readOwnedAcc() override { return acc_; }

  std::vector<size_t> treeWalkShare(size_t total, const core::GravityParams& gp, int me, int k,
                                    core::StepProfile& prof) override {
    const uint32_t n = static_cast<uint32_t>(total);
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&](double& slot) {
      if (!profile_) return;
      slot += msSince(t0);
      t0 = std::chrono::steady_clock::now();
    };
    // One engine's state order: its tree pipeline sorts the state by key every evaluation (ties
    // keep the current order), so every rank replays that order and builds the very same tree.
    if (treeOrder_.size() != n) {
      treeOrder_.resize(n);
      std::iota(treeOrder_.begin(), treeOrder_.end(), 0u);
    }
    std::vector<Vec4> cur(n);
    treeSorted_.resize(n);
    for (uint32_t i = 0; i < n; ++i) cur[i] = all_[treeOrder_[i]];
    Vec4 lo{}, hi{};
    core::treeBounds(cur.data(), n, lo, hi);
    std::vector<uint64_t> keys, sortedKeys;
    std::vector<uint32_t> sortedIndex;
    core::treeKeys(cur.data(), n, lo, hi, keys);
    lap(prof.labelMs);
    core::treeSortByKey(keys, sortedKeys, sortedIndex);
    lap(prof.sortMs);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) {
      treeSorted_[i] = cur[sortedIndex[i]];
      order[i] = treeOrder_[sortedIndex[i]];
    }
    treeOrder_.swap(order);
    lap(prof.reorderMs);
    core::buildTree(treeSorted_.data(), sortedKeys.data(), n, gp.theta, tree_);
    lap(prof.boundsMs);
    // Every rank's share of the walk groups: contiguous, cut where the bodies split evenly.
    const std::vector<uint32_t>& gs = tree_.groupStart;
    const size_t groups = gs.empty() ? 0 : gs.size() - 1;
    std::vector<size_t> cut(static_cast<size_t>(k) + 1, groups), bodyCut(static_cast<size_t>(k) + 1, 0);
    cut[0] = 0;
    for (int r = 1; r < k; ++r)
      cut[static_cast<size_t>(r)] =
          static_cast<size_t>(std::lower_bound(gs.begin(), gs.end() - 1, core::treeShareStart(n, r, k)) - gs.begin());
    for (size_t r = 0; r <= static_cast<size_t>(k); ++r) bodyCut[r] = groups ? gs[cut[r]] : 0;
    treeAcc_.assign(n, Vec4{0, 0, 0, 0});
    core::treeAccelerationsOfGroups(tree_, treeSorted_.data(), gp.softening * gp.softening, gp.G, gp.treeLeafSize,
                                    cut[static_cast<size_t>(me)], cut[static_cast<size_t>(me) + 1], treeAcc_.data());
    lap(prof.forceMs);
    treeAllAcc_.resize(n);
    return bodyCut;
  }
  const void* treeSortedAcc() override { return treeAcc_.data(); }
  void* treeGatheredAcc() override { return treeAllAcc_.data(); }
  void takeTreeAcc(size_t firstId, size_t lastId) override {
    acc_.assign(lastId - firstId, Vec4{0, 0, 0, 0});
    for (size_t i = 0; i < treeOrder_.size(); ++i)
      if (treeOrder_[i] >= firstId && treeOrder_[i] < lastId) acc_[treeOrder_[i] - firstId] = treeAllAcc_[i];
  }

  uint64_t* splatOwned(const core::SplatView& view) override {
    splat_.resize(static_cast<size_t>(view.width) * static_cast<size_t>(view.height));
    core::clearSplat(splat_.data(), splat_.size());
    core::splatBodies(view, pos_.data(), vel_.data(), id_.data(), pos_.size(), splat_.data());
    return splat_.data();
  }
  void readSplat(std::vector<uint64_t>& keys) override { keys = splat_; }

  void setParams(const core::SimParams& p) override { params_ = p; }

 private:
  // Every attribute into the order of sortedIndex_ (through the alt buffers).
  void reorderBySortedIndex() {
    core::gatherBodiesInto(body_, sortedIndex_.data(), sortedIndex_.size(), alt_);
    body_.forEachWith(alt_, [](const char*, auto& a, auto& b) { a.swap(b); });
  }

  core::SimParams params_{};
  core::CpuEngine cpu_{params_};  // for deviceInfo: the CPU engine describes the host the same way
  bool profile_ = false;
  int me_ = 0;
  // The bodies (every attribute of core/bodies.h; pos_, vel_ and id_ name its arrays for the
  // physics), the reorder's target (altVel_: the boids' new velocities) and the kept bodies.
  core::Bodies body_, alt_, keep_;
  std::vector<Vec4>& pos_ = body_.pos;
  std::vector<Vec4>& vel_ = body_.vel;
  std::vector<uint32_t>& id_ = body_.id;
  std::vector<Vec4>& altVel_ = alt_.vel;
  std::vector<Vec4> acc_, all_;
  // The tree over ranks: the order one engine's state would be in (indices of the gathered
  // positions), the tree, the positions in its order, the share's and every share's accelerations.
  std::vector<uint32_t> treeOrder_;
  core::CpuTree tree_;
  std::vector<Vec4> treeSorted_, treeAcc_, treeAllAcc_;
  std::vector<uint64_t> splat_;
  std::vector<uint64_t> tag_;
  std::vector<uint64_t> keepTag_;
  std::vector<BodyRecord> send_, recv_;
  std::vector<uint32_t> keys_, counts_, cellStart_, cellEnd_, cellFirst_, sortedIndex_, sortedKeys_;
};

}  // namespace

std::unique_ptr<LocalStore> createHostStore(const core::SimParams& p) {
  auto s = std::make_unique<HostStore>(p);
  s->setParams(p);
  return s;
}

}  // namespace murmur::dist
