#include "core/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/pipeline_table.h"
#include "core/rule_table.h"

namespace murmur::core {

// ---- The grid stages (core/cpu_pipeline.h) ----

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

void findCellBounds(const GridSpec& g, const std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& cellStart,
                    std::vector<uint32_t>& cellEnd) {
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

void findCellFirst(const GridSpec& g, const std::vector<uint32_t>& sortedKeys, std::vector<uint32_t>& first) {
  first.assign(static_cast<size_t>(g.numCells) + 1, static_cast<uint32_t>(sortedKeys.size()));
  uint32_t next = 0;
  for (size_t k = 0; k < sortedKeys.size(); ++k)
    for (; next <= sortedKeys[k]; ++next) first[next] = static_cast<uint32_t>(k);
}


// ---- The state's shared stages ----

void CpuState::buildGrid(const GridSpec& g, bool reorder) {
  grid = g;
  timed(profile.labelMs, [&] { labelCells(g, pos, keys); });
  timed(profile.sortMs, [&] { sortByCell(g, keys, counts, sortedKeys, sortedIndex); });
  // Added rather than assigned: gravity has already put its bounding-box time in this slot.
  double boundsMs = 0;
  timed(boundsMs, [&] { findCellBounds(g, sortedKeys, cellStart, cellEnd); });
  profile.boundsMs += boundsMs;
  // Coherent, rows and verlet: the state itself moves into cell order and stays there (no
  // scatter back).
  if (reorder) timed(profile.reorderMs, [&] { reorderBySortedIndex(); });
}

void CpuState::reorderBySortedIndex() {
  gatherBodiesInto(body, sortedIndex.data(), sortedIndex.size(), alt);
  body.forEachWith(alt, [](const char*, auto& a, auto& b) { a.swap(b); });
}

GridSpec CpuState::gravityGrid() const {
  return gravityGridForBodies(pos.data(), pos.size(), params.gravity.gridDim, params.gravity.gridSpread);
}

CpuGridView CpuState::gridView(const GridSpec& g) const {
  CpuGridView v;
  v.grid = g;
  std::vector<uint32_t> k, c;
  labelCells(v.grid, pos, k);
  sortByCell(v.grid, k, c, v.sortedKeys, v.sortedIndex);
  findCellBounds(v.grid, v.sortedKeys, v.cellStart, v.cellEnd);
  return v;
}

CpuGridView CpuState::rowsGridView(const GridSpec& g) const {
  CpuGridView v = gridView(g);
  findCellFirst(v.grid, v.sortedKeys, v.first);
  return v;
}

// ---- The engine ----

CpuEngine::CpuEngine(const SimParams& p) {
  pipelines_.resize(static_cast<size_t>(enumCount<Pipeline>()));
  for (const CpuPipelineEntry& e : cpuPipelineRegistry()) pipelines_[static_cast<size_t>(e.id)] = e.make();
  setParams(p);
}

CpuPipeline& CpuEngine::pipeline(Pipeline p) const {
  const auto i = static_cast<size_t>(p);
  if (i >= pipelines_.size() || !pipelines_[i])
    throw std::logic_error(std::string("the CPU engine has no pipeline ") + toString(p));
  return *pipelines_[i];
}

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
  if (forceFieldChanged(s_.params, p)) accValid_ = false;
  // An open world keeps its box across new parameters (never narrower) and fits it again before
  // the next step: the speed or the reach may have grown.
  if (p.boundary != Boundary::Open) open_ = OpenWorld{};
  open_.stepsLeft = 0;
  shown_ = p;
  s_.params = runParams(p, open_);
  // Positions may lie outside the world until the next step wraps them, and lists hold the old
  // parameters' radius: what pipelines keep across steps is rebuilt.
  for (auto& pl : pipelines_)
    if (pl) pl->invalidate();
}

void CpuEngine::reset(const Bodies& bodies) {
  const std::string bad = checkBodies(bodies, s_.params.dims);
  if (!bad.empty()) throw std::invalid_argument("reset: " + bad);
  const size_t n = bodies.size();
  stepCount_ = 0;
  open_ = OpenWorld{};  // a new state: an open world's box starts again from the half-size
  s_.params = shown_;
  s_.body.forEachWith(bodies, [](const char*, auto& mine, const auto& given) { mine = given; });
  withDefaults(s_.body);
  s_.acc.assign(n, Vec4{0, 0, 0, 0});
  s_.alt.resize(n);
  s_.keys.resize(n);
  s_.sortedKeys.resize(n);
  s_.sortedIndex.resize(n);
  accValid_ = false;
  for (auto& pl : pipelines_)
    if (pl) pl->invalidate();
  s_.profile = StepProfile{};
}

void CpuEngine::step(int numSteps) {
  // Only steps are timed: computeAccelerations and the grid views run the same stages untimed.
  s_.timing = profiling_;
  for (int s = 0; s < numSteps; ++s) {
    if (shown_.boundary == Boundary::Open) fitOpen(), --open_.stepsLeft;
    s_.step = stepCount_, stepOnce(), ++stepCount_;
  }
  s_.timing = false;
}

void CpuEngine::fitOpen() {
  if (shown_.boundary != Boundary::Open || !runsLocalRule(shown_) || s_.pos.empty() || open_.stepsLeft > 0) return;
  if (!fitOpenWorld(shown_, maxAbsCoord(s_.pos), open_)) return;
  s_.params = runParams(shown_, open_);
  for (auto& pl : pipelines_)
    if (pl) pl->invalidate();
}

void CpuEngine::stepOnce() {
  s_.profile = StepProfile{};
  if (s_.pos.empty()) return;
  if (runsLocalRule(s_.params))
    stepBoids();
  else
    stepGravity();
}

int CpuEngine::stepsPerCycle() const {
  if (!runsLocalRule(s_.params)) return 1;
  return pipeline(s_.params.pipeline).stepsPerCycle(s_.params);
}

void CpuEngine::stepBoids() {
  if (s_.params.topological > 0)
    topologicalForces(s_);
  else
    pipeline(s_.params.pipeline).boidsForces(s_);
  const long n = s_.count();
  const float dt = localDt(s_.params);
  s_.timed(s_.profile.integrateMs, [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
      Vec3 v = xyz(s_.velAlt[i]);
      s_.pos[i] = boidIntegrate(s_.pos[i], v, dt, s_.params.halfSize, s_.params.boundary);
      s_.velAlt[i] = make4(v, s_.velAlt[i].w);  // turned where a wall was met (Boundary::Reflect)
    }
    std::swap(s_.vel, s_.velAlt);  // ping-pong: the new velocities become current
  });
}

void CpuEngine::gravityForces() {
  pipeline(effectivePipeline(s_.params.pipeline, ForceMode::Gravity)).gravityForces(s_);
}

void CpuEngine::stepGravity() {
  const long n = s_.count();
  const GravityParams& gp = s_.params.gravity;
  StepProfile& prof = s_.profile;
  if (gp.integrator == Integrator::Leapfrog) {
    if (!accValid_) gravityForces();
    double kd = 0, k = 0;
    s_.timed(kd, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) leapfrogKickDrift(s_.pos[i], s_.vel[i], s_.acc[i], gp.dt);
    });
    // The stage slots report the step's own force evaluation, not the one-off initial one.
    prof.labelMs = prof.sortMs = prof.boundsMs = prof.reorderMs = prof.forceMs = 0;
    gravityForces();
    s_.timed(k, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) leapfrogKick(s_.vel[i], s_.acc[i], gp.dt);
    });
    prof.integrateMs = kd + k;
    accValid_ = true;
  } else {
    gravityForces();
    s_.timed(prof.integrateMs, [&] {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) dampedEuler(s_.pos[i], s_.vel[i], s_.acc[i], gp.dt, gp.damping);
    });
    accValid_ = false;
  }
}

Bodies CpuEngine::readBodies() { return bodiesInIdOrder(s_.body); }

std::vector<Vec4> CpuEngine::computeAccelerations() {
  if (s_.pos.empty()) return {};
  // Known gap, kept as it was: on a boids state of the verlet pipeline the gravity grid reorders
  // the state under lists that still hold slots of the old order, and the steps that reuse them
  // sum the wrong neighbours (no caller asks for gravity accelerations of a boids run).
  gravityForces();
  // acc now holds a(x) of the current state; the leapfrog may reuse it.
  accValid_ = s_.params.force == ForceMode::Gravity && s_.params.gravity.integrator == Integrator::Leapfrog;
  return inIdOrder(s_.acc, s_.id);
}

CpuEngine::GridView CpuEngine::debugBuildGrid() {
  if (s_.pos.empty()) return GridView{};
  const SimParams& p = s_.params;
  return s_.gridView(p.force == ForceMode::Gravity ? s_.gravityGrid()
                                                   : pipeline(p.pipeline).boidsGrid(p, s_.pos.size()));
}

std::vector<std::vector<uint32_t>> CpuEngine::topologicalNeighbours() {
  fitOpen();
  const std::vector<std::vector<uint32_t>> bySlot = topologicalNeighbourIds(s_);
  std::vector<std::vector<uint32_t>> byId(bySlot.size());
  for (size_t i = 0; i < bySlot.size(); ++i) byId.at(s_.id[i]) = bySlot[i];
  return byId;
}

NeighbourStats CpuEngine::neighbourStats() {
  if (s_.pos.empty()) return NeighbourStats{};
  fitOpen();
  return pipeline(effectivePipeline(s_.params.pipeline, s_.params.force)).neighbourStats(s_);
}

std::unique_ptr<Engine> createCpuEngine(const SimParams& p) { return std::make_unique<CpuEngine>(p); }

// ---- The memory model ----

namespace {

// Per body: state, ping-pong, acceleration and grid arrays (100 B).
constexpr size_t kCpuEngineBytesPerBody = 100;

}  // namespace

size_t cpuEngineBytes(size_t n, const SimParams& p, uint64_t* gridCells, size_t* gridBytes) {
  uint64_t cells = 0;
  size_t grid = 0;
  if (!pipelineInfo(p.pipeline).allPairs) {
    // The grid: counts (cells + 1), cell start and end (uint32 each); gravity adds a monopole
    // (float4) per cell.
    if (runsLocalRule(p)) {
      cells = boidGrid(p, n).numCells;
      grid = static_cast<size_t>(cells + 1) * 3 * sizeof(uint32_t);
    } else {
      const uint64_t d = static_cast<uint64_t>(p.gravity.gridDim);
      cells = d * d * d;
      grid = static_cast<size_t>(cells + 1) * (3 * sizeof(uint32_t) + 4 * sizeof(float));
    }
  }
  if (gridCells) *gridCells = cells;
  if (gridBytes) *gridBytes = grid;
  return n * kCpuEngineBytesPerBody + grid;
}

}  // namespace murmur::core
