#include "core/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "core/physics.h"
#include "core/tree.h"

namespace murmur::core {

namespace {

// labelCells + sortByCell + findCellBounds into `out`. The sort is a stable counting sort: keys
// are bounded by the cell count, so it is O(N + cells) and ties keep ascending body index, which
// makes the CPU engine deterministic. Stage times go to the three profile slots when given.
void labelCells(const GridSpec& g, const std::vector<Vec4>& pos, std::vector<uint32_t>& keys) {
  const long n = static_cast<long>(pos.size());
  keys.resize(pos.size());
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) keys[i] = cellKeyOf(g, xyz(pos[i]));
}

void sortByCell(const GridSpec& g, const std::vector<uint32_t>& keys, std::vector<uint32_t>& counts,
                std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& sortedIndex) {
  const size_t n = keys.size();
  counts.assign(static_cast<size_t>(g.numCells) + 1, 0u);
  for (size_t i = 0; i < n; ++i) ++counts[keys[i] + 1];
  for (size_t c = 1; c < counts.size(); ++c) counts[c] += counts[c - 1];
  sortedKeys.resize(n);
  sortedIndex.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t slot = counts[keys[i]]++;
    sortedKeys[slot] = keys[i];
    sortedIndex[slot] = static_cast<uint32_t>(i);
  }
}

void findCellBounds(const GridSpec& g, const std::vector<uint32_t>& sortedKeys,
                    std::vector<uint32_t>& cellStart, std::vector<uint32_t>& cellEnd) {
  cellStart.assign(g.numCells, kEmptyCell);
  cellEnd.assign(g.numCells, kEmptyCell);
  const long n = static_cast<long>(sortedKeys.size());
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n; ++k) {
    const uint32_t key = sortedKeys[k];
    if (k == 0 || sortedKeys[k - 1] != key) cellStart[key] = static_cast<uint32_t>(k);
    if (k == n - 1 || sortedKeys[k + 1] != key) cellEnd[key] = static_cast<uint32_t>(k + 1);
  }
}

template <typename T>
void gather(const std::vector<T>& src, const std::vector<uint32_t>& index, std::vector<T>& dst) {
  const long n = static_cast<long>(index.size());
  dst.resize(index.size());
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n; ++k) dst[k] = src[index[k]];
}

// Calls f(j) for every body j in cells [lo, hi] of the sorted grid. `indirect` maps a sorted
// slot to the body index (scattered); coherent data is already in sorted order (nullptr).
template <typename F>
inline void forEachInCells(const GridSpec& g, const CellRange& r, const uint32_t* cellStart,
                           const uint32_t* cellEnd, const uint32_t* indirect, F&& f) {
  for (int cz = r.lo.z; cz <= r.hi.z; ++cz)
    for (int cy = r.lo.y; cy <= r.hi.y; ++cy)
      for (int cx = r.lo.x; cx <= r.hi.x; ++cx) {
        const uint32_t key = cellKey(g, cx, cy, cz);
        const uint32_t s = cellStart[key];
        if (s == kEmptyCell) continue;
        const uint32_t e = cellEnd[key];
        for (uint32_t k = s; k < e; ++k) f(indirect ? indirect[k] : k);
      }
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CpuEngine::CpuEngine(const SimParams& p) { setParams(p); }

std::string CpuEngine::deviceName() const {
  std::ostringstream s;
  s << "CPU (OpenMP, " << omp_get_max_threads() << " threads)";
  return s.str();
}

void CpuEngine::setParams(const SimParams& p) {
  const std::string err = validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  // Any change that alters the force field invalidates the stored leapfrog acceleration.
  const bool fieldChanged = p.force != params_.force || p.pipeline != params_.pipeline ||
                            p.gravity.G != params_.gravity.G ||
                            p.gravity.softening != params_.gravity.softening ||
                            p.gravity.gridDim != params_.gravity.gridDim ||
                            p.gravity.gridSpread != params_.gravity.gridSpread ||
                            p.gravity.theta != params_.gravity.theta ||
                            p.gravity.treeLeafSize != params_.gravity.treeLeafSize ||
                            p.gravity.integrator != params_.gravity.integrator;
  if (fieldChanged) accValid_ = false;
  params_ = p;
}

void CpuEngine::reset(const Bodies& bodies) {
  const size_t n = bodies.size();
  if (bodies.vel.size() != n) throw std::invalid_argument("reset: pos and vel sizes differ");
  pos_ = bodies.pos;
  vel_ = bodies.vel;
  id_.resize(n);
  for (size_t i = 0; i < n; ++i) id_[i] = static_cast<uint32_t>(i);
  acc_.assign(n, Vec4{0, 0, 0, 0});
  posAlt_.resize(n);
  velAlt_.resize(n);
  idAlt_.resize(n);
  keys_.resize(n);
  sortedKeys_.resize(n);
  sortedIndex_.resize(n);
  accValid_ = false;
  profile_ = StepProfile{};
}

template <typename F>
void CpuEngine::timed(double& slot, F&& f) {
  if (!params_.profile) {
    f();
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  f();
  slot = msSince(t0);
}

void CpuEngine::step(int numSteps) {
  for (int s = 0; s < numSteps; ++s) stepOnce();
}

void CpuEngine::stepOnce() {
  profile_ = StepProfile{};
  if (pos_.empty()) return;
  if (params_.force == ForceMode::Boids)
    stepBoids();
  else
    stepGravity();
}

void CpuEngine::buildGrid(const GridSpec& g) {
  grid_ = g;
  timed(profile_.labelMs, [&] { labelCells(g, pos_, keys_); });
  timed(profile_.sortMs, [&] { sortByCell(g, keys_, counts_, sortedKeys_, sortedIndex_); });
  double boundsMs = 0;
  timed(boundsMs, [&] { findCellBounds(g, sortedKeys_, cellStart_, cellEnd_); });
  profile_.boundsMs += boundsMs;
  if (params_.pipeline == Pipeline::Coherent) {
    timed(profile_.reorderMs, [&] {
      gather(pos_, sortedIndex_, posAlt_);
      gather(vel_, sortedIndex_, velAlt_);
      gather(id_, sortedIndex_, idAlt_);
      std::swap(pos_, posAlt_);
      std::swap(vel_, velAlt_);
      std::swap(id_, idAlt_);
    });
  }
}

void CpuEngine::stepBoids() {
  const long n = static_cast<long>(pos_.size());
  const BoidParams& b = params_.boids;
  const BoidRadii2 r2 = boidRadii2(b);
  const Pipeline pipe = params_.pipeline;
  if (pipe != Pipeline::Naive) buildGrid(boidGrid(params_));

  timed(profile_.forceMs, [&] {
    const float radius = maxRuleRadius(b);
    const uint32_t* indirect = pipe == Pipeline::Scattered ? sortedIndex_.data() : nullptr;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      const Vec4 pi = pos_[i];
      BoidAccum acc = boidAccumInit();
      if (pipe == Pipeline::Naive) {
        for (long j = 0; j < n; ++j)
          if (j != i) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
      } else {
        const CellRange cr = cellRangeForRadius(grid_, xyz(pi), radius);
        forEachInCells(grid_, cr, cellStart_.data(), cellEnd_.data(), indirect, [&](uint32_t j) {
          if (static_cast<long>(j) != i) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
        });
      }
      velAlt_[i] = make4(boidVelocity(acc, pi, vel_[i], b), 0.0f);
    }
  });
  timed(profile_.integrateMs, [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) pos_[i] = boidIntegrate(pos_[i], xyz(velAlt_[i]), b.dt, params_.halfSize);
    std::swap(vel_, velAlt_);  // ping-pong: the new velocities become current
  });
}

GridSpec CpuEngine::gravityGridForState() const {
  return gravityGridForBodies(pos_.data(), pos_.size(), params_.gravity.gridDim, params_.gravity.gridSpread);
}

void CpuEngine::gravityForces() {
  const long n = static_cast<long>(pos_.size());
  const float eps2 = params_.gravity.softening * params_.gravity.softening;
  const float G = params_.gravity.G;
  const Pipeline pipe = params_.pipeline;
  if (pipe == Pipeline::Naive) {
    timed(profile_.forceMs, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) {
        const Vec4 pi = pos_[i];
        Vec3 a{0, 0, 0};
        for (long j = 0; j < n; ++j) a += gravityPair(pi, pos_[j], eps2);
        acc_[i] = make4(a * G, 0.0f);
      }
    });
    return;
  }
  if (pipe == Pipeline::Tree) {
    treeForces();
    return;
  }
  GridSpec g{};
  double bboxMs = 0;
  timed(bboxMs, [&] { g = gravityGridForState(); });
  buildGrid(g);
  // Monopoles of the occupied cells, summed in double from the sorted order.
  double monoMs = 0;
  timed(monoMs, [&] {
    monopole_.assign(g.numCells, Vec4{0, 0, 0, 0});
    occupiedCells_.clear();
    const uint32_t* indirect = pipe == Pipeline::Scattered ? sortedIndex_.data() : nullptr;
    for (uint32_t c = 0; c < g.numCells; ++c) {
      const uint32_t s = cellStart_[c];
      if (s == kEmptyCell) continue;
      double m = 0, x = 0, y = 0, z = 0;
      for (uint32_t k = s; k < cellEnd_[c]; ++k) {
        const Vec4& p = pos_[indirect ? indirect[k] : k];
        m += p.w;
        x += double(p.w) * p.x;
        y += double(p.w) * p.y;
        z += double(p.w) * p.z;
      }
      if (m > 0) {
        monopole_[c] = Vec4{float(x / m), float(y / m), float(z / m), float(m)};
        occupiedCells_.push_back(c);
      }
    }
  });
  profile_.boundsMs += bboxMs + monoMs;
  timed(profile_.forceMs, [&] {
    const uint32_t* indirect = pipe == Pipeline::Scattered ? sortedIndex_.data() : nullptr;
    const long numOcc = static_cast<long>(occupiedCells_.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < n; ++i) {
      const Vec4 pi = pos_[i];
      const Int3 own = cellOf(g, xyz(pi));
      Vec3 a{0, 0, 0};
      forEachInCells(g, nearCells(g, own), cellStart_.data(), cellEnd_.data(), indirect,
                     [&](uint32_t j) { a += gravityPair(pi, pos_[j], eps2); });
      for (long k = 0; k < numOcc; ++k) {
        const uint32_t c = occupiedCells_[k];
        if (isNearCell(own, cellFromKey(g, c))) continue;
        a += gravityPair(pi, monopole_[c], eps2);
      }
      acc_[i] = make4(a * G, 0.0f);
    }
  });
}

// The tree pipeline's stages: bounds, Morton keys (label), sort, reorder into key order (the
// state stays there, as in the coherent pipeline), tree build and moments (bounds), walk (force).
void CpuEngine::treeForces() {
  const uint32_t n = static_cast<uint32_t>(pos_.size());
  Vec4 lo{}, hi{};
  double boxMs = 0, buildMs = 0;
  timed(boxMs, [&] { treeBounds(pos_.data(), n, lo, hi); });
  std::vector<uint64_t> keys, sortedKeys;
  timed(profile_.labelMs, [&] { treeKeys(pos_.data(), n, lo, hi, keys); });
  timed(profile_.sortMs, [&] { treeSortByKey(keys, sortedKeys, sortedIndex_); });
  timed(profile_.reorderMs, [&] {
    gather(pos_, sortedIndex_, posAlt_);
    gather(vel_, sortedIndex_, velAlt_);
    gather(id_, sortedIndex_, idAlt_);
    std::swap(pos_, posAlt_);
    std::swap(vel_, velAlt_);
    std::swap(id_, idAlt_);
  });
  timed(buildMs, [&] { buildTree(pos_.data(), sortedKeys.data(), n, params_.gravity.theta, tree_); });
  profile_.boundsMs += boxMs + buildMs;
  const float eps2 = params_.gravity.softening * params_.gravity.softening;
  timed(profile_.forceMs, [&] {
    treeAccelerations(tree_, pos_.data(), n, eps2, params_.gravity.G, params_.gravity.treeLeafSize, acc_.data());
  });
}

void CpuEngine::stepGravity() {
  const long n = static_cast<long>(pos_.size());
  const GravityParams& gp = params_.gravity;
  if (gp.integrator == Integrator::Leapfrog) {
    if (!accValid_) gravityForces();
    double kd = 0, k = 0;
    timed(kd, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) leapfrogKickDrift(pos_[i], vel_[i], acc_[i], gp.dt);
    });
    // The stage slots report the step's own force evaluation, not the one-off initial one.
    profile_.labelMs = profile_.sortMs = profile_.boundsMs = profile_.reorderMs = profile_.forceMs = 0;
    gravityForces();
    timed(k, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) leapfrogKick(vel_[i], acc_[i], gp.dt);
    });
    profile_.integrateMs = kd + k;
    accValid_ = true;
  } else {
    gravityForces();
    timed(profile_.integrateMs, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) dampedEuler(pos_[i], vel_[i], acc_[i], gp.dt, gp.damping);
    });
    accValid_ = false;
  }
}

Bodies CpuEngine::readBodies() {
  Bodies out;
  const size_t n = pos_.size();
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t id = id_[i];
    out.pos[id] = pos_[i];
    out.vel[id] = vel_[i];
    out.id[id] = id;
  }
  return out;
}

std::vector<Vec4> CpuEngine::computeAccelerations() {
  std::vector<Vec4> out(pos_.size());
  if (pos_.empty()) return out;
  const bool keepProfile = params_.profile;
  params_.profile = false;
  gravityForces();
  params_.profile = keepProfile;
  // acc_ now holds a(x) of the current state; the leapfrog may reuse it.
  accValid_ = params_.force == ForceMode::Gravity && params_.gravity.integrator == Integrator::Leapfrog;
  for (size_t i = 0; i < pos_.size(); ++i) out[id_[i]] = acc_[i];
  return out;
}

CpuEngine::GridView CpuEngine::debugBuildGrid() {
  GridView v;
  if (pos_.empty()) return v;
  v.grid = params_.force == ForceMode::Boids ? boidGrid(params_) : gravityGridForState();
  std::vector<uint32_t> keys, counts;
  labelCells(v.grid, pos_, keys);
  sortByCell(v.grid, keys, counts, v.sortedKeys, v.sortedIndex);
  findCellBounds(v.grid, v.sortedKeys, v.cellStart, v.cellEnd);
  return v;
}

NeighbourStats CpuEngine::neighbourStats() {
  NeighbourStats st;
  const long n = static_cast<long>(pos_.size());
  if (n == 0) return st;
  const float radius = maxRuleRadius(params_.boids);
  const float r2 = radius * radius;
  double cand = 0, neigh = 0;
  if (params_.pipeline == Pipeline::Naive) {
#pragma omp parallel for reduction(+ : neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        const Vec3 d = xyz(pos_[j]) - xyz(pos_[i]);
        if (j != i && dot(d, d) < r2) neigh += 1;
      }
    cand = double(n) * double(n - 1);
  } else {
    const GridView v = debugBuildGrid();
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      const CellRange cr = cellRangeForRadius(v.grid, xyz(pos_[i]), radius);
      forEachInCells(v.grid, cr, v.cellStart.data(), v.cellEnd.data(), v.sortedIndex.data(),
                     [&](uint32_t j) {
                       if (static_cast<long>(j) == i) return;
                       cand += 1;
                       const Vec3 d = xyz(pos_[j]) - xyz(pos_[i]);
                       if (dot(d, d) < r2) neigh += 1;
                     });
    }
  }
  st.meanCandidates = cand / double(n);
  st.meanNeighbours = neigh / double(n);
  return st;
}

std::unique_ptr<Engine> createCpuEngine(const SimParams& p) { return std::make_unique<CpuEngine>(p); }

}  // namespace murmur::core
