#include "dist/dist_engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "core/errors.h"
#include "core/format.h"
#include "core/grid.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "dist/launch.h"

namespace murmur::dist {

namespace {

using core::msSince;

std::vector<size_t> bytesOf(const std::vector<uint64_t>& records, size_t recordBytes) {
  std::vector<size_t> b(records.size());
  for (size_t p = 0; p < records.size(); ++p) b[p] = static_cast<size_t>(records[p]) * recordBytes;
  return b;
}

}  // namespace

std::string validateDistParams(const core::SimParams& p, int ranks) {
  const std::string err = core::validateParams(p);
  if (!err.empty()) return err;
  if (!core::runsOnRanks(p.pipeline, p.force)) {
    // The table of core/pipeline_table.h says which pipelines several ranks run (kOnRanks*).
    const core::Pipeline d = core::defaultRankPipeline(p.force);
    const std::string method =
        d == core::Pipeline::Naive ? "all pairs" : std::string("the ") + core::toString(d) + " pipeline";
    return std::string("--pipeline ") + core::toString(p.pipeline) + ": over several ranks " +
           (core::runsLocalRule(p) ? "boids run " : "gravity runs ") + method +
           " (allowed: " + core::joinNames(core::rankPipelines(p.force)) + ")";
  }
  if (ranks > kMaxRanks) return "ranks " + std::to_string(ranks) + ": allowed 1.." + std::to_string(kMaxRanks);
  // The ranks share the world by slabs along z, which a plane does not have.
  if (p.dims == 2 && ranks > 1)
    return "--dims 2: a 2D world runs on one rank (the ranks split the world into slabs along z)";
  // The slabs cut a box that stays where it is; an open world's box grows as the bodies fly.
  if (p.boundary == core::Boundary::Open && core::runsLocalRule(p) && ranks > 1)
    return "--boundary open: an open world runs on one rank (the ranks split a fixed box into slabs along z; "
           "wrap, periodic or reflect run on several)";
  if (p.topological > 0 && core::runsLocalRule(p) && ranks > 1)
    return "--topological " + std::to_string(p.topological) +
           ": topological neighbours run on one rank (a body's K nearest may lie beyond any halo of its slab)";
  if (core::runsLocalRule(p)) {
    // The planes of the world at the rule's cell width; a sparse world's grid widens its cells
    // (core::boidGridCellsPerAxis) and may have fewer, which the slabs refuse at reset, where N
    // is known.
    const int planes = core::boidGridAtFactor(p).dims.z;
    if (planes < ranks)
      return "ranks " + std::to_string(ranks) + ": the boids grid has " + std::to_string(planes) +
             " cell planes along z and each rank needs one (fewer ranks, or a larger --n / world)";
  }
  return "";
}

DistEngine::DistEngine(std::unique_ptr<Transport> transport, std::unique_ptr<LocalStore> store,
                       const core::SimParams& p)
    : transport_(std::move(transport)), store_(std::move(store)) {
  setParams(p);
}

std::string DistEngine::deviceName() const {
  return std::to_string(ranks()) + " ranks x " + store_->deviceName() + " (" + transport_->name() + ")";
}

core::DeviceInfo DistEngine::deviceInfo() const {
  core::DeviceInfo d = store_->deviceInfo();
  d.name += " x" + std::to_string(ranks()) + " ranks (" + transport_->name() + ")";
  return d;
}

void DistEngine::setParams(const core::SimParams& p) {
  const std::string err = validateDistParams(p, ranks());
  if (!err.empty()) throw std::invalid_argument(err);
  // The engines' one rule (core::forceFieldChanged): the pipeline, theta, the grid and the leaf
  // size change a gravity method's accelerations too.
  if (core::forceFieldChanged(params_, p)) accValid_ = false;
  // The slabs are whole planes of the pipeline's grid and the bodies' order is that grid's cell
  // order, so a step on another grid (another world or cell width) or of another pipeline (the
  // stores keep the pipeline's offsets between steps) needs the bodies laid out again: a reset.
  bool gridChanged = false;
  if (core::runsLocalRule(p) && total_ > 0) {
    gridChanged = p.pipeline != params_.pipeline;
    const core::GridSpec g = rankGrid(p, total_);
    gridChanged = gridChanged || g.dims.x != grid_.dims.x || g.dims.y != grid_.dims.y || g.dims.z != grid_.dims.z ||
                  g.cellWidth != grid_.cellWidth || g.invCellWidthX != grid_.invCellWidthX ||
                  rankHaloPlanes(p, g) != layout_.halo;
  }
  if ((gridChanged || p.force != params_.force) && total_ > 0)
    throw std::invalid_argument("over several ranks, the force, the pipeline and the world size change only with a "
                                "reset");
  params_ = p;
  // The boundary changes who reads which planes across the z faces, not who owns what: the next
  // exchange sends the halo of the new boundary.
  if (core::runsLocalRule(p) && total_ > 0) layout_.wrapHalo = rankWrapHaloPlanes(p, grid_);
  store_->setParams(p);
}

template <typename F>
void DistEngine::agreed(F&& f) {
  int status = 0;
  std::string what;
  try {
    f();
  } catch (const core::UsageError& e) {
    status = 2, what = e.what();
  } catch (const std::invalid_argument& e) {
    status = 2, what = e.what();
  } catch (const std::exception& e) {
    status = 1, what = e.what();
  }
  const std::vector<uint64_t> all = transport_->allgather(static_cast<uint64_t>(status));
  for (int r = 0; r < ranks(); ++r) {
    if (all[static_cast<size_t>(r)] == 0) continue;
    const std::string msg = transport_->broadcast(what, r);
    throw JobError("rank " + std::to_string(r) + ": " + msg, static_cast<int>(all[static_cast<size_t>(r)]));
  }
}

void DistEngine::startReset(size_t n) {
  total_ = n;
  stepCount_ = 0;
  stats_ = CommStats{};
  profile_ = core::StepProfile{};
  accValid_ = false;
  gathered_ = false;
}

std::vector<uint64_t> DistEngine::planeCounts(const std::vector<core::Vec4>& pos, size_t n) {
  // The pipeline's grid for the whole count (the rows grid depends on it), as one engine has it.
  grid_ = rankGrid(params_, n);
  std::vector<uint64_t> hist(static_cast<size_t>(grid_.dims.z), 0);
  for (const core::Vec4& p : pos) ++hist[static_cast<size_t>(planeOf(grid_, p.z))];
  return hist;
}

void DistEngine::balanceSlabs(const std::vector<uint64_t>& hist) {
  layout_ = balancedSlabs(hist, ranks(), rankHaloPlanes(params_, grid_), rankWrapHaloPlanes(params_, grid_));
  stats_.imbalance = imbalance(layout_, hist);
}

void DistEngine::finishReset(const core::Bodies& owned, const std::vector<uint64_t>& tags, size_t n) {
  agreed([&] {
    store_->checkFits(owned.size(), n, params_);
    store_->setOwned(owned, tags, grid_, n);
    store_->synchronize();
  });
}

void DistEngine::reset(const core::Bodies& bodies) {
  {
    const std::string err = core::checkBodies(bodies, params_.dims);  // the same bodies, so the same verdict, everywhere
    if (!err.empty()) throw std::invalid_argument("reset: " + err);
  }
  const size_t n = bodies.size();
  const int me = rank(), k = ranks();
  startReset(n);
  commonMass_ = core::commonMass(bodies.pos);  // every rank holds all the bodies here
  core::Bodies filled;  // the bodies with every attribute (species 0 where they have none)
  const core::Bodies* given = &bodies;
  if (bodies.species.empty()) filled = bodies, core::withDefaults(filled), given = &filled;
  std::vector<uint32_t> mine;  // the bodies this rank owns, in the order given
  if (core::runsLocalRule(params_)) {
    // Every rank holds the same bodies here, so the balanced layout needs no communication.
    balanceSlabs(planeCounts(bodies.pos, n));
    for (size_t i = 0; i < n; ++i)
      if (ownsPlane(layout_, me, planeOf(grid_, bodies.pos[i].z))) mine.push_back(static_cast<uint32_t>(i));
  } else {
    const size_t first = firstIdOfRank(n, k, me), last = firstIdOfRank(n, k, me + 1);
    for (size_t i = first; i < last; ++i) mine.push_back(static_cast<uint32_t>(i));
  }
  // Before the first step the global order is the order given (gravity does not read it).
  const std::vector<uint64_t> tags(mine.begin(), mine.end());
  finishReset(core::gatherBodies(*given, mine), tags, n);
}

void DistEngine::resetShare(const core::Bodies& share, size_t n) {
  const int k = ranks();
  size_t first = 0, last = 0;
  idShare(n, &first, &last);
  // Each rank holds other bodies, so the verdicts are agreed (and name the rank).
  agreed([&] {
    if (share.pos.size() != last - first || share.vel.size() != share.pos.size() || share.id.size() != share.pos.size())
      throw std::invalid_argument("reset: this rank's share holds " + std::to_string(share.pos.size()) +
                                  " bodies, not the " + std::to_string(last - first) + " of ids [" +
                                  std::to_string(first) + ", " + std::to_string(last) + ")");
    for (size_t i = 0; i < share.id.size(); ++i)
      if (share.id[i] != first + i)
        throw std::invalid_argument("reset: the share of ids [" + std::to_string(first) + ", " + std::to_string(last) +
                                    ") holds id " + std::to_string(share.id[i]) + " at " + std::to_string(first + i));
    const std::string err = core::checkPlane(share, params_.dims);
    if (!err.empty()) throw std::invalid_argument("reset: " + err);
  });
  startReset(n);
  {
    // The mass every body has when all have the same positive mass (core::commonMass of every
    // body): the smallest and largest over every rank; an empty share counts for neither.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double range[2] = {-kInf, -kInf};  // the largest mass, minus the smallest
    for (const core::Vec4& p : share.pos) {
      const double w = p.w;
      if (w != w) {  // NaN: no common mass
        range[0] = range[1] = kInf;
        break;
      }
      range[0] = std::max(range[0], w);
      range[1] = std::max(range[1], -w);
    }
    transport_->allreduceMax(range, 2);
    const double most = range[0], least = -range[1];
    commonMass_ = least == most && least > 0 ? float(least) : 0.0f;
  }
  core::Bodies owned;
  std::vector<uint64_t> tags;
  if (core::runsLocalRule(params_)) {
    std::vector<uint64_t> hist = planeCounts(share.pos, n);
    transport_->allreduceSum(hist.data(), hist.size());
    balanceSlabs(hist);
    // Every body to the rank that owns its plane, in id order per rank (the tag carries the id);
    // peer p's share holds lower ids than peer p + 1's, so the arrivals in peer order are the
    // owned bodies in id order, as reset picks them.
    std::vector<int> owner(share.pos.size());
    std::vector<uint64_t> sendCount(static_cast<size_t>(k), 0);
    for (size_t i = 0; i < share.pos.size(); ++i) {
      owner[i] = ownerOfPlane(layout_, planeOf(grid_, share.pos[i].z));
      ++sendCount[static_cast<size_t>(owner[i])];
    }
    std::vector<size_t> sendBytes(static_cast<size_t>(k)), recvBytes(static_cast<size_t>(k)), at(static_cast<size_t>(k), 0);
    for (size_t p = 0; p < sendBytes.size(); ++p) {
      sendBytes[p] = static_cast<size_t>(sendCount[p]) * sizeof(BodyRecord);
      if (p + 1 < at.size()) at[p + 1] = at[p] + static_cast<size_t>(sendCount[p]);
    }
    core::Bodies filled;  // the share with every attribute (species 0 where it has none)
    const core::Bodies* given = &share;
    if (share.species.empty()) filled = share, core::withDefaults(filled), given = &filled;
    std::vector<BodyRecord> send(share.pos.size());
    for (size_t i = 0; i < share.pos.size(); ++i)
      send[at[static_cast<size_t>(owner[i])]++] = recordOf(*given, i, share.id[i]);
    const std::vector<uint64_t> recvCount = transport_->alltoall(sendCount);
    size_t arriving = 0;
    for (size_t p = 0; p < recvCount.size(); ++p) {
      recvBytes[p] = static_cast<size_t>(recvCount[p]) * sizeof(BodyRecord);
      arriving += static_cast<size_t>(recvCount[p]);
    }
    std::vector<BodyRecord> recv(arriving);
    transport_->alltoallvHost(send.data(), sendBytes, recv.data(), recvBytes);
    owned.resize(arriving);
    tags.resize(arriving);
    for (size_t i = 0; i < arriving; ++i) {
      storeRecord(recv[i], owned, i);
      tags[i] = recv[i].tag;  // before the first step the global order is the order given: id order
    }
  } else {
    owned = share;  // a rank owns a run of ids: its share
    tags.resize(owned.id.size());
    std::iota(tags.begin(), tags.end(), uint64_t(first));
  }
  finishReset(owned, tags, n);
}

void DistEngine::step(int numSteps) {
  store_->setProfiling(profiling());
  for (int s = 0; s < numSteps; ++s) {
    profile_ = core::StepProfile{};
    gathered_ = false;
    if (total_ > 0) {
      if (core::runsLocalRule(params_))
        stepBoids();  // reads stepCount_: the step being taken keys the draws
      else
        stepGravity();
      ++stats_.steps;
    }
    ++stepCount_;
  }
}

void DistEngine::stepBoids() {
  const int me = rank();
  // The comm stage is everything between two local steps: choosing who needs which body next
  // (owners and the neighbouring slabs' halo), packing, and the exchange itself.
  auto t0 = std::chrono::steady_clock::now();
  if (profiling()) store_->synchronize(), t0 = std::chrono::steady_clock::now();
  // A rank that fails (out of memory, a device error) says so at the next agreement, before any
  // rank enters a transfer that would wait for it forever.
  std::vector<uint64_t> sendCounts;
  agreed([&] { sendCounts = store_->packOutgoing(layout_, grid_, me); });
  const std::vector<uint64_t> recvCounts = transport_->alltoall(sendCounts);
  const uint64_t incoming = std::accumulate(recvCounts.begin(), recvCounts.end(), uint64_t(0));
  void* recv = nullptr;
  agreed([&] { recv = store_->recvBuffer(static_cast<size_t>(incoming)); });
  transport_->alltoallv(store_->sendBuffer(), bytesOf(sendCounts, sizeof(BodyRecord)), recv,
                        bytesOf(recvCounts, sizeof(BodyRecord)));
  if (profiling()) store_->synchronize(), profile_.commMs = msSince(t0);
  const uint64_t sent = std::accumulate(sendCounts.begin(), sendCounts.end(), uint64_t(0));
  stats_.haloRecords += sent;
  stats_.bytesMoved += sent * sizeof(BodyRecord);
  agreed([&] {
    store_->mergeReceived(recvCounts);
    store_->boidsLocalStep(layout_, grid_, me, stepCount_, profile_);
  });
  if ((stats_.steps + 1) % kRebalanceSteps == 0) rebalance();
}

void DistEngine::rebalance() {
  std::vector<uint64_t> hist;
  agreed([&] { hist = store_->planeHistogram(grid_); });
  transport_->allreduceSum(hist.data(), hist.size());
  stats_.imbalance = imbalance(layout_, hist);
  if (stats_.imbalance <= kRebalanceThreshold) return;
  // Only ownership changes here; the bodies move with the next step's migration, and the
  // result does not depend on who owns what.
  layout_ = balancedSlabs(hist, ranks(), layout_.halo, layout_.wrapHalo);
  stats_.imbalance = imbalance(layout_, hist);
  ++stats_.rebalances;
}

void DistEngine::gravityForces() {
  const int k = ranks();
  std::vector<size_t> bytes(static_cast<size_t>(k));
  for (int r = 0; r < k; ++r)
    bytes[static_cast<size_t>(r)] =
        (firstIdOfRank(total_, k, r + 1) - firstIdOfRank(total_, k, r)) * sizeof(core::Vec4);
  void* all = nullptr;
  agreed([&] { all = store_->allPositions(total_); });
  auto t0 = std::chrono::steady_clock::now();
  if (profiling()) store_->synchronize(), t0 = std::chrono::steady_clock::now();
  transport_->allgatherv(store_->ownedPositions(), store_->numOwned() * sizeof(core::Vec4), all, bytes);
  if (profiling()) store_->synchronize(), profile_.commMs += msSince(t0);
  stats_.bytesMoved += total_ * sizeof(core::Vec4) * static_cast<size_t>(k - 1);
  if (params_.pipeline == core::Pipeline::Tree) {
    treeForces();
    return;
  }
  const float eps2 = params_.gravity.softening * params_.gravity.softening;
  agreed([&] { store_->gravityForces(total_, eps2, params_.gravity.G, commonMass_, profile_); });
}

void DistEngine::treeForces() {
  const int k = ranks(), me = rank();
  std::vector<size_t> cut;
  agreed([&] { cut = store_->treeWalkShare(total_, params_.gravity, me, k, profile_); });
  // Every rank's share of the sorted accelerations to every rank; each then takes its own bodies'.
  std::vector<size_t> bytes(static_cast<size_t>(k));
  for (size_t r = 0; r < bytes.size(); ++r) bytes[r] = (cut[r + 1] - cut[r]) * sizeof(core::Vec4);
  auto t0 = std::chrono::steady_clock::now();
  if (profiling()) store_->synchronize(), t0 = std::chrono::steady_clock::now();
  const auto* sorted = static_cast<const core::Vec4*>(store_->treeSortedAcc());
  transport_->allgatherv(sorted + cut[static_cast<size_t>(me)], bytes[static_cast<size_t>(me)],
                         store_->treeGatheredAcc(), bytes);
  if (profiling()) store_->synchronize(), profile_.commMs += msSince(t0);
  stats_.bytesMoved += total_ * sizeof(core::Vec4) * static_cast<size_t>(k - 1) / static_cast<size_t>(k);
  agreed([&] { store_->takeTreeAcc(firstIdOfRank(total_, k, me), firstIdOfRank(total_, k, me + 1)); });
}

void DistEngine::stepGravity() {
  const core::GravityParams& gp = params_.gravity;
  if (gp.integrator == core::Integrator::Leapfrog) {
    if (!accValid_) gravityForces();
    profile_ = core::StepProfile{};  // the step's own force evaluation, not the initial one
    agreed([&] { store_->leapfrogKickDrift(gp.dt); });
    gravityForces();
    agreed([&] { store_->leapfrogKick(gp.dt); });
    accValid_ = true;
  } else {
    gravityForces();
    agreed([&] { store_->dampedEuler(gp.dt, gp.damping); });
    accValid_ = false;
  }
}

core::Observables DistEngine::observe(const core::ObserveRequest& r) {
  const core::Bodies b = readBodies();
  if (rank() != 0) return core::Observables{};
  return core::observeBodies(b.pos, b.vel, params_, r);
}

core::Bodies DistEngine::readBodies() {
  if (!gathered_) {
    core::Bodies mine;
    agreed([&] { mine = store_->readOwned(); });
    const std::vector<uint64_t> counts = transport_->allgather(mine.size());
    size_t n = 0;
    for (uint64_t c : counts) n += static_cast<size_t>(c);
    const bool root = rank() == 0;
    core::Bodies packed;
    if (root) packed.resize(n);
    // Every attribute, rank by rank, to the root.
    mine.forEachWith(packed, [&](const char*, auto& own, auto& all) {
      std::vector<size_t> bytes(counts.size());
      for (size_t p = 0; p < counts.size(); ++p) bytes[p] = static_cast<size_t>(counts[p]) * sizeof(own[0]);
      transport_->gatherv(own.data(), bytes[static_cast<size_t>(rank())], all.data(), bytes, 0);
    });
    gatheredBodies_ = core::Bodies{};
    if (root) {
      if (n != total_)
        throw std::logic_error("gathered " + std::to_string(n) + " bodies, expected " + std::to_string(total_));
      gatheredBodies_ = core::bodiesInIdOrder(packed);
    }
    gathered_ = true;
  }
  return gatheredBodies_;
}

std::vector<core::Vec4> DistEngine::computeAccelerations() {
  // All pairs over every rank's positions, whatever the force mode's own decomposition.
  const std::vector<uint64_t> counts = transport_->allgather(store_->numOwned());
  std::vector<size_t> bytes(counts.size());
  size_t n = 0;
  for (size_t p = 0; p < counts.size(); ++p) {
    bytes[p] = static_cast<size_t>(counts[p]) * sizeof(core::Vec4);
    n += static_cast<size_t>(counts[p]);
  }
  void* all = store_->allPositions(n);
  transport_->allgatherv(store_->ownedPositions(), store_->numOwned() * sizeof(core::Vec4), all, bytes);
  core::StepProfile unused;
  store_->gravityForces(n, params_.gravity.softening * params_.gravity.softening, params_.gravity.G, commonMass_,
                       unused);
  // All pairs: the next step's first kick may use them only where all pairs is the step's method.
  accValid_ = params_.force == core::ForceMode::Gravity && params_.pipeline != core::Pipeline::Tree;
  const std::vector<core::Vec4> acc = store_->readOwnedAcc();
  const core::Bodies mine = store_->readOwned();
  std::vector<size_t> idBytes(counts.size());
  for (size_t p = 0; p < counts.size(); ++p) idBytes[p] = static_cast<size_t>(counts[p]) * sizeof(uint32_t);
  const bool root = rank() == 0;
  std::vector<core::Vec4> packedAcc(root ? n : 0);
  std::vector<uint32_t> packedId(root ? n : 0);
  transport_->gatherv(acc.data(), bytes[static_cast<size_t>(rank())], packedAcc.data(), bytes, 0);
  transport_->gatherv(mine.id.data(), idBytes[static_cast<size_t>(rank())], packedId.data(), idBytes, 0);
  std::vector<core::Vec4> out(root ? n : 0);
  for (size_t i = 0; i < out.size(); ++i) out[packedId[i]] = packedAcc[i];
  return out;
}

core::NeighbourStats DistEngine::neighbourStats() {
  throw core::UsageError("neighbour statistics are not available over several ranks");
}

void DistEngine::compositeSplat(core::SplatView& view, std::vector<uint64_t>& keys) {
  static_assert(std::is_trivially_copyable<core::SplatView>::value, "the view travels as bytes");
  const std::string bytes =
      transport_->broadcast(std::string(reinterpret_cast<const char*>(&view), sizeof view), 0);
  std::memcpy(&view, bytes.data(), sizeof view);
  // Every rank splats the bodies it owns where they live (a GPU store on its GPU); the keys are an
  // order-independent minimum, so which rank holds a body changes nothing, and one reduction in
  // the transport's memory composites the frame on rank 0.
  const size_t pixels = static_cast<size_t>(view.width) * static_cast<size_t>(view.height);
  uint64_t* image = nullptr;
  agreed([&] { image = store_->splatOwned(view); });
  transport_->reduceMinBulk(image, pixels, 0);
  agreed([&] {
    if (rank() == 0) store_->readSplat(keys);
  });
}

std::string DistEngine::summary() const {
  std::ostringstream s;
  const double steps = stats_.steps > 0 ? double(stats_.steps) : 1.0;
  s << "ranks=" << ranks() << " transport=" << transport_->name()
    << " moved_mb_per_step=" << double(stats_.bytesMoved) / steps / 1e6;
  if (core::runsLocalRule(params_)) {
    s << " halo_bodies_per_step=" << double(stats_.haloRecords) / steps << " imbalance=" << stats_.imbalance
      << " rebalances=" << stats_.rebalances << " slabs=";
    for (int r = 0; r <= layout_.numRanks; ++r) s << (r ? "," : "") << layout_.start[r];
  }
  return s.str();
}

}  // namespace murmur::dist
