// One rank's bodies and the stages it runs on them, on the host (CPU engine) or on its GPU (CUDA
// engine). The decomposition (dist_engine.cpp) drives a store through this interface and never
// touches body data itself; the stores decide ownership and halos with the same slabs.h code.
#pragma once

#include "dist/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/engine.h"
#include "core/grid.h"
#include "core/splat.h"
#include "dist/slabs.h"

namespace murmur::dist {

// What travels between ranks for boids. `tag` places the body in the global cell order of the
// last step: (cell key << 32) | index within the cell, or the id before the first step. A rank's
// local set kept in tag order is the global order restricted to that rank, so the next stable
// sort by cell gives every rank the same neighbour order one rank would have (see dist_engine.cpp).
// Both stores get that order by construction (slabs.h: the arrivals from lower ranks come before a
// rank's own bodies, those from higher ranks after them); the host store checks it on the tags.
// A record holds every attribute of core/bodies.h; recordOf and storeRecord are the one place
// that lists them (the arrays' order), and the assertion below fails when an attribute is added
// without them. 48 bytes: the attributes, the tag and 3 bytes of padding.
struct BodyRecord {
  core::Vec4 pos;
  core::Vec4 vel;
  uint64_t tag;
  uint32_t id;
  core::Species species;
  uint8_t pad[3];
};
static_assert(sizeof(BodyRecord) == 48, "records are exchanged as raw bytes");
static_assert(core::kAttributeCount == 4, "BodyRecord, recordOf and storeRecord carry every attribute");

// Body i of the arrays a, with its tag, as a record; the record into slot k of the arrays out.
template <typename Arrays>
MURMUR_HD BodyRecord recordOf(const Arrays& a, size_t i, uint64_t tag) {
  return BodyRecord{a.pos[i], a.vel[i], tag, a.id[i], a.species[i], {0, 0, 0}};
}
template <typename Arrays>
MURMUR_HD void storeRecord(const BodyRecord& r, Arrays& out, size_t k) {
  out.pos[k] = r.pos, out.vel[k] = r.vel, out.id[k] = r.id, out.species[k] = r.species;
}

class LocalStore {
 public:
  virtual ~LocalStore() = default;

  virtual core::EngineKind kind() const = 0;
  virtual std::string deviceName() const = 0;
  // Validated parameters of the next step (rules, dt, block size).
  virtual void setParams(const core::SimParams& p) = 0;
  // Per-stage timing of the next steps (waits for the device between stages when on).
  virtual void setProfiling(bool on) = 0;
  // What the benchmark records about this rank's device.
  virtual core::DeviceInfo deviceInfo() const = 0;
  // Bytes of device memory a store for `owned` bodies (plus halo room) needs; throws
  // core::UsageError naming the shortfall when they do not fit. Host stores check nothing.
  virtual void checkFits(size_t owned, size_t total, const core::SimParams& p) = 0;

  // Replaces the owned bodies (host data, ids set) and their tags, given in tag order. Boids: g is
  // the grid of every step until the next reset (dist/slabs.h rankGrid) and total the bodies of
  // all ranks, which the rows pipeline's grid and loop depend on.
  virtual void setOwned(const core::Bodies& owned, const std::vector<uint64_t>& tags, const core::GridSpec& g,
                        size_t total) = 0;
  virtual size_t numOwned() const = 0;
  // Host copy of the owned bodies (every attribute), in the store's order.
  virtual core::Bodies readOwned() = 0;
  // Waits for queued work (device stores).
  virtual void synchronize() = 0;

  // --- boids, one step = packOutgoing, exchange, mergeReceived, boidsLocalStep ---
  // Sorts every owned body by the ranks that need it next (slabs.h ranksNeeding on its cell
  // plane): records for other ranks go to the send buffer, packed by peer, in tag order; the ones
  // this rank needs stay. Returns the records per peer.
  virtual std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) = 0;
  virtual const void* sendBuffer() const = 0;
  // A buffer for `records` incoming records, in the transport's memory space.
  virtual void* recvBuffer(size_t records) = 0;
  // Joins the received records (perPeer[p] from peer p, packed in peer order) and the kept bodies
  // into one local set in tag order: lower peers' records, the kept bodies, higher peers' records.
  virtual void mergeReceived(const std::vector<uint64_t>& perPeer) = 0;
  // The local step of the pipeline of the last setParams (coherent or rows, on the grid g of
  // setOwned): cells, stable sort, reorder into cell order, forces for the owned bodies (halo
  // bodies are read only), integrate, new tags; then only the owned bodies stay. step: the step
  // being taken, which keys the rule's draws (core/random.h DrawKeys).
  virtual void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, uint64_t step,
                              core::StepProfile& prof) = 0;
  // Owned bodies per cell plane (length g.dims.z).
  virtual std::vector<uint64_t> planeHistogram(const core::GridSpec& g) = 0;
  // What the last step did, for tests: whether its local step sorted with the counting sort, and
  // how many owned bodies its selection before the exchange read (a store that reads them all
  // says so).
  virtual bool lastSortCounted() const { return false; }
  virtual size_t lastSelectionRead() const { return numOwned(); }

  // --- gravity, all pairs ---
  // Owned positions (numOwned float4, transport memory) and a buffer for all n positions.
  virtual const void* ownedPositions() = 0;
  virtual void* allPositions(size_t n) = 0;
  // acc of every owned body from the n gathered positions, in their order. commonMass: the mass of
  // every body when all have the same (core::commonMass of the whole set), else 0.
  virtual void gravityForces(size_t n, float eps2, float G, float commonMass, core::StepProfile& prof) = 0;
  virtual void leapfrogKickDrift(float dt) = 0;
  virtual void leapfrogKick(float dt) = 0;
  virtual void dampedEuler(float dt, float damping) = 0;
  // Host copy of the owned accelerations, in the store's order (as readOwned).
  virtual std::vector<core::Vec4> readOwnedAcc() = 0;

  // --- gravity, the tree over ranks (DistEngine::treeForces) ---
  // Builds, from the n gathered positions (id order, allPositions), the tree one engine builds:
  // the positions in the order one engine's state is in (the last evaluation's key order, the
  // order given at setOwned before the first), bounds, keys, stable sort, moments; that order then
  // becomes the sorted one. Walks this rank's share of the walk groups (share `me` of k, cut where
  // the bodies split evenly) into the sorted accelerations. Returns the k + 1 offsets of every
  // share in the sorted order (the same on every rank).
  virtual std::vector<size_t> treeWalkShare(size_t n, const core::GravityParams& gp, int me, int k,
                                            core::StepProfile& prof) = 0;
  // The sorted accelerations (n, transport memory; this rank's share filled by treeWalkShare), and
  // the buffer (n) every share is gathered into.
  virtual const void* treeSortedAcc() = 0;
  virtual void* treeGatheredAcc() = 0;
  // The owned bodies (ids [firstId, lastId)) take their accelerations from the gathered ones; the
  // integrators read them as gravityForces' own.
  virtual void takeTreeAcc(size_t firstId, size_t lastId) = 0;

  // --- frames over ranks (DistEngine::compositeSplat) ---
  // Clears this store's image of view.width x view.height splat keys and splats the owned bodies
  // into it (core/splat.h); returns the image in the transport's memory space.
  virtual uint64_t* splatOwned(const core::SplatView& view) = 0;
  // Host copy of that image (on the root after the reduction: the composited frame).
  virtual void readSplat(std::vector<uint64_t>& keys) = 0;
};

std::unique_ptr<LocalStore> createHostStore(const core::SimParams& p);

}  // namespace murmur::dist
