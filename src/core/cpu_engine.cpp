#include "core/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/physics.h"
#include "core/row_search.h"
#include "core/tree.h"

namespace murmur::core {

namespace {

// The grid stages as free functions, so that a step times them (CpuEngine::timed) and
// debugBuildGrid runs the same code untimed. sortByCell is a stable counting sort: keys are
// bounded by the cell count, so it is O(N + cells), and ties keep ascending body index, which
// makes the CPU engine deterministic (the pinned checksums of test_determinism.cpp rely on it).
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

// The rows pipeline's per-cell offsets: first[c] = first sorted slot with key >= c, for
// c in [0, numCells]; cell c holds [first[c], first[c + 1]).
void findCellFirst(const GridSpec& g, const std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& first) {
  first.assign(static_cast<size_t>(g.numCells) + 1, static_cast<uint32_t>(sortedKeys.size()));
  uint32_t next = 0;
  for (size_t k = 0; k < sortedKeys.size(); ++k)
    for (; next <= sortedKeys[k]; ++next) first[next] = static_cast<uint32_t>(k);
}

template <typename T>
void gather(const std::vector<T>& src, const std::vector<uint32_t>& index, std::vector<T>& dst) {
  const long n = static_cast<long>(index.size());
  dst.resize(index.size());
#pragma omp parallel for schedule(static)
  for (long k = 0; k < n; ++k) dst[k] = src[index[k]];
}

// core::forEachInCells with the pipeline chosen at run time: scattered reads through the sorted
// index, coherent data is already in cell order.
template <typename F>
inline void forEachInCellsOf(bool coherent, const GridSpec& g, const CellRange& r, const uint32_t* cellStart,
                             const uint32_t* cellEnd, const uint32_t* sortedIndex, F&& f) {
  if (coherent)
    forEachInCells<true>(g, r, cellStart, cellEnd, sortedIndex, f);
  else
    forEachInCells<false>(g, r, cellStart, cellEnd, sortedIndex, f);
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CpuEngine::CpuEngine(const SimParams& p) { setParams(p); }

std::string CpuEngine::deviceName() const {
  std::ostringstream s;
  // The wait policy decides how the engine behaves on a busy machine (app/openmp_policy.h).
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  s << "CPU (OpenMP, " << omp_get_max_threads() << " threads, " << (wait ? wait : "default")
    << " wait)";
  return s.str();
}

DeviceInfo CpuEngine::deviceInfo() const {
  DeviceInfo info;
  // The model name is what makes CPU results comparable across machines; Linux reports it in
  // /proc/cpuinfo, elsewhere the thread count alone has to do.
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t value = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
    if (value != std::string::npos) info.name = line.substr(value);
    break;
  }
  if (info.name.empty()) info.name = "CPU";
  info.name += " (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
  return info;
}

void CpuEngine::setParams(const SimParams& p) {
  const std::string err = validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  if (forceFieldChanged(params_, p)) accValid_ = false;
  params_ = p;
  listValid_ = false;
  listFresh_ = true;
}

void CpuEngine::reset(const Bodies& bodies) {
  const std::string bad = checkBodies(bodies);
  if (!bad.empty()) throw std::invalid_argument("reset: " + bad);
  const size_t n = bodies.size();
  pos_ = bodies.pos;
  vel_ = bodies.vel;
  id_ = bodies.id;
  acc_.assign(n, Vec4{0, 0, 0, 0});
  posAlt_.resize(n);
  velAlt_.resize(n);
  idAlt_.resize(n);
  keys_.resize(n);
  sortedKeys_.resize(n);
  sortedIndex_.resize(n);
  accValid_ = false;
  listValid_ = false;
  listFresh_ = true;
  profile_ = StepProfile{};
}

template <typename F>
void CpuEngine::timed(double& slot, F&& f) {
  if (!timing_) {
    f();
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  f();
  slot = msSince(t0);
}

void CpuEngine::step(int numSteps) {
  // Only steps are timed: computeAccelerations and the grid views run the same stages untimed.
  timing_ = profiling_;
  for (int s = 0; s < numSteps; ++s) stepOnce();
  timing_ = false;
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
  // Added rather than assigned: gravity has already put its bounding-box time in this slot.
  double boundsMs = 0;
  timed(boundsMs, [&] { findCellBounds(g, sortedKeys_, cellStart_, cellEnd_); });
  profile_.boundsMs += boundsMs;
  // Coherent and rows: the state itself moves into cell order and stays there (no scatter back);
  // the ids move with it, which is what readBodies uses to hand the state back in id order.
  if (params_.pipeline == Pipeline::Coherent || params_.pipeline == Pipeline::Rows ||
      params_.pipeline == Pipeline::Verlet) {
    timed(profile_.reorderMs, [&] { reorderBySortedIndex(); });
  }
}

void CpuEngine::reorderBySortedIndex() {
  gather(pos_, sortedIndex_, posAlt_);
  gather(vel_, sortedIndex_, velAlt_);
  gather(id_, sortedIndex_, idAlt_);
  std::swap(pos_, posAlt_);
  std::swap(vel_, velAlt_);
  std::swap(id_, idAlt_);
}

int CpuEngine::stepsPerCycle() const {
  if (params_.force != ForceMode::Boids || params_.pipeline != Pipeline::Verlet) return 1;
  return verletPlan(params_).steps;
}

VerletPlan CpuEngine::nextListPlan() const {
  return listFresh_ ? verletPlanFor(params_, 1) : verletPlan(params_);
}

void CpuEngine::buildLists() {
  listPlan_ = nextListPlan();
  buildGrid(rowGridForRadius(params_, pos_.size(), listPlan_.radius));
  double firstMs = 0;
  timed(firstMs, [&] { findCellFirst(grid_, sortedKeys_, cellFirst_); });
  profile_.boundsMs += firstMs;
  const long n = static_cast<long>(pos_.size());
  lists_.resize(pos_.size());
  timed(profile_.listMs, [&] {
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      std::vector<uint32_t>& list = lists_[i];
      list.clear();
      forEachListed(
          grid_, listPlan_, params_.halfSize, static_cast<uint32_t>(i), xyz(pos_[i]),
          [&](uint32_t j) { return xyz(pos_[j]); }, [&](uint32_t k) { return cellFirst_[k]; },
          [&](uint32_t j) { list.push_back(j); });
    }
  });
  listAge_ = 0;
  listValid_ = true;
  listFresh_ = false;
}

void CpuEngine::stepBoids() {
  const long n = static_cast<long>(pos_.size());
  const BoidParams& b = params_.boids;
  const BoidRadii2 r2 = boidRadii2(b);
  const Pipeline pipe = params_.pipeline;
  const bool rows = pipe == Pipeline::Rows;
  const bool verlet = pipe == Pipeline::Verlet;
  if (verlet) {
    if (!listValid_ || listAge_ >= listPlan_.steps) buildLists();
    ++listAge_;
  } else if (rows) {
    buildGrid(rowGrid(params_, pos_.size()));
    double firstMs = 0;
    timed(firstMs, [&] { findCellFirst(grid_, sortedKeys_, cellFirst_); });
    profile_.boundsMs += firstMs;
  } else if (pipe != Pipeline::Naive) {
    buildGrid(boidGrid(params_));
  }

  timed(profile_.forceMs, [&] {
    const float radius = maxRuleRadius(b);
    const bool coherent = pipe == Pipeline::Coherent;
    // Dynamic chunks: boids in dense cells have many more neighbours than the rest. Each body's
    // sum runs on one thread in a fixed order, so the result does not depend on the schedule.
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      const Vec4 pi = pos_[i];
      BoidAccum acc = boidAccumInit();
      if (pipe == Pipeline::Naive) {
        for (long j = 0; j < n; ++j)
          if (j != i) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
      } else if (verlet) {
        for (const uint32_t j : lists_[i]) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
      } else if (rows) {
        forEachRow(grid_, xyz(pi), radius, [&](uint32_t first, uint32_t last) {
          for (long j = cellFirst_[first]; j < static_cast<long>(cellFirst_[last + 1]); ++j)
            if (j != i) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
        });
      } else {
        const CellRange cr = cellRangeForRadius(grid_, xyz(pi), radius);
        forEachInCellsOf(coherent, grid_, cr, cellStart_.data(), cellEnd_.data(), sortedIndex_.data(), [&](uint32_t j) {
          if (static_cast<long>(j) != i) boidAccumulate(acc, pi, pos_[j], vel_[j], r2);
        });
      }
      // Into the other buffer: the bodies after i must still read the old velocity of i.
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
        // The self pair is included: r = 0 contributes exactly zero thanks to the softening, and
        // a branch-free loop is what the GPU's tiled kernel runs too.
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
  // Monopoles of the occupied cells, summed in double from the sorted order: a cell of a Plummer
  // core can hold a large share of all the mass, where float sums would lose the centre.
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
    // rows and verlet: the coherent grid
    const bool coherent = pipe == Pipeline::Coherent || pipe == Pipeline::Rows || pipe == Pipeline::Verlet;
    const long numOcc = static_cast<long>(occupiedCells_.size());
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < n; ++i) {
      const Vec4 pi = pos_[i];
      const Int3 own = cellOf(g, xyz(pi));
      Vec3 a{0, 0, 0};
      forEachInCellsOf(coherent, g, nearCells(g, own), cellStart_.data(), cellEnd_.data(), sortedIndex_.data(),
                       [&](uint32_t j) { a += gravityPair(pi, pos_[j], eps2); });
      // The far field walks the occupied cells only: most cells of a centrally concentrated
      // cluster's grid are empty.
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
  timed(profile_.reorderMs, [&] { reorderBySortedIndex(); });
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

Bodies CpuEngine::readBodies() { return bodiesInIdOrder(pos_, vel_, id_); }

std::vector<Vec4> CpuEngine::computeAccelerations() {
  if (pos_.empty()) return {};
  gravityForces();
  // acc_ now holds a(x) of the current state; the leapfrog may reuse it.
  accValid_ = params_.force == ForceMode::Gravity && params_.gravity.integrator == Integrator::Leapfrog;
  return inIdOrder(acc_, id_);
}

CpuEngine::GridView CpuEngine::debugBuildGrid() {
  GridView v;
  if (pos_.empty()) return v;
  v.grid = params_.force == ForceMode::Gravity    ? gravityGridForState()
           : params_.pipeline == Pipeline::Rows   ? rowGrid(params_, pos_.size())
           : params_.pipeline == Pipeline::Verlet ? verletGrid(params_, pos_.size())
                                                  : boidGrid(params_);
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
  } else if (params_.pipeline == Pipeline::Verlet && params_.force == ForceMode::Boids) {
    // Candidates: the entries of lists built now with the steady plan; neighbours: the entries
    // that the exact test accepts.
    const GridView v = debugBuildGrid();
    const VerletPlan plan = verletPlan(params_);
    std::vector<uint32_t> first;
    findCellFirst(v.grid, v.sortedKeys, first);
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long t = 0; t < n; ++t) {
      const Vec3 pi = xyz(pos_[v.sortedIndex[t]]);
      forEachListed(
          v.grid, plan, params_.halfSize, static_cast<uint32_t>(t), pi,
          [&](uint32_t k) { return xyz(pos_[v.sortedIndex[k]]); }, [&](uint32_t k) { return first[k]; },
          [&](uint32_t k) {
            cand += 1;
            const Vec3 d = xyz(pos_[v.sortedIndex[k]]) - pi;
            if (dot(d, d) < r2) neigh += 1;
          });
    }
  } else if (params_.pipeline == Pipeline::Rows && params_.force == ForceMode::Boids) {
    const GridView v = debugBuildGrid();
    std::vector<uint32_t> first;
    findCellFirst(v.grid, v.sortedKeys, first);
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      forEachRow(v.grid, xyz(pos_[i]), radius, [&](uint32_t lo, uint32_t hi) {
        for (uint32_t k = first[lo]; k < first[hi + 1]; ++k) {
          const long j = static_cast<long>(v.sortedIndex[k]);
          if (j == i) continue;
          cand += 1;
          const Vec3 d = xyz(pos_[j]) - xyz(pos_[i]);
          if (dot(d, d) < r2) neigh += 1;
        }
      });
    }
  } else {
    const GridView v = debugBuildGrid();
#pragma omp parallel for reduction(+ : cand, neigh) schedule(dynamic, 256)
    for (long i = 0; i < n; ++i) {
      const CellRange cr = cellRangeForRadius(v.grid, xyz(pos_[i]), radius);
      forEachInCells<false>(v.grid, cr, v.cellStart.data(), v.cellEnd.data(), v.sortedIndex.data(),
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
