// The CUDA engine: the Engine methods, the step loop and the gravity integration order (leapfrog
// or damped Euler). The buffers and the grid steps that pipelines share are in device_state.h,
// each pipeline's stages in pipelines/ (behind cuda_pipeline.h), the memory plan in
// memory_plan.h.
#include "cuda/cuda_engine.h"

#include <cuda_runtime_api.h>

#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/errors.h"
#include "core/grid.h"
#include "core/open_world.h"
#include "core/pipeline_table.h"
#include "core/cluster_search.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_pipeline.h"
#include "cuda/debug_api.h"
#include "cuda/device_state.h"
#include "cuda/draw_copy.h"
#include "cuda/gravity_kernels.h"
#include "cuda/grid_build.h"
#include "cuda/id_order.h"
#include "cuda/memory_plan.h"
#include "cuda/observables.h"
#include "cuda/stage_timer.h"
#include "cuda/topological_kernels.h"

namespace murmur::cuda {

using core::ForceMode;
using core::Pipeline;
using core::SimParams;
using core::Stage;
using core::Vec4;

struct CudaEngine::Impl {
  DeviceState s;
  // One instance of every pipeline run so far, each with the buffers it owns (cuda_pipeline.h),
  // made on first use; destroyed before s.
  std::unique_ptr<CudaPipeline> pipelines[core::enumCount<Pipeline>()];
  // The method a step of the current force runs (core::effectivePipeline): its boids step or
  // gravity forces, its neighbour statistics and its cycle.
  CudaPipeline* stepper = nullptr;
  // The gravity method of the current pipeline, for gravity steps and computeAccelerations (which
  // boids parameters may call too).
  CudaPipeline* gravity = nullptr;

  CudaPipeline& pipeline(Pipeline p) {
    std::unique_ptr<CudaPipeline>& slot = pipelines[static_cast<int>(p)];
    if (!slot) slot = makeCudaPipeline(p);
    return *slot;
  }
  // What every pipeline keeps across steps describes a state or parameters that changed.
  void invalidatePipelines() {
    for (auto& p : pipelines)
      if (p) p->invalidate();
  }
  // The observables' scratch buffers (cuda/observables.h), made on the first sample.
  std::unique_ptr<DeviceObserver> observer;

  // The parameters as given (params()); s.params are those the engine runs, which differ under
  // the open boundary: its box (core/open_world.h), fitted before a step or a sample.
  SimParams shown;
  core::OpenWorld open;
  DeviceBuffer<uint32_t> openBound;
  // --topological K: the shell search's grid and scratch (cuda/topological_kernels.h).
  TopologicalBuffers topological;

  // A boids step: over topological neighbours, or the pipeline's.
  void boidsStep() {
    if (s.params.topological == 0) return stepper->boidsStep(s);
    topologicalStep(s, topological);
  }

  // The parameters the engine runs: its grids over them, its pipelines planned for them.
  void apply(const SimParams& p) {
    CudaPipeline& step = pipeline(core::effectivePipeline(p.pipeline, p.force));
    CudaPipeline& grav = pipeline(core::effectivePipeline(p.pipeline, ForceMode::Gravity));
    // Grow the grid buffers first (this may throw UsageError and must leave the engine as it was),
    // so that the next step does not allocate.
    if (s.n > 0 && usesGrid(p.pipeline)) s.ensureGrid(gridCells(p, p.force, s.n), usesRowGrid(p, p.force), p.force);
    pipeline(p.pipeline).reserve(s.n);
    if (core::forceFieldChanged(s.params, p)) s.accValid = false;
    s.params = p;
    stepper = &step;
    gravity = &grav;
    stepper->plan(p, s.n);
    invalidatePipelines();
    s.rowSort.restart();
    // The grids depend on the parameters and N (a sparse world widens the cells,
    // core::boidGridCellsPerAxis; core::rowCellsPerRadius): stored here and again by reset(), not
    // every step.
    launchStoreGrid(s.gridSpecs.get() + kBoidGridSlot, core::boidGrid(p, s.n), s.launch());
    launchStoreGrid(s.gridSpecs.get() + kRowGridSlot, core::pipelineRowGrid(p, s.n), s.launch());
  }

  // Under the open boundary, once the bodies may have come near the box's faces: where they
  // are (one wait for the device), and a larger box where they need it.
  void fitOpen() {
    if (shown.boundary != core::Boundary::Open || !core::runsLocalRule(shown) || s.n == 0 || open.stepsLeft > 0)
      return;
    if (openBound.size() == 0) openBound.allocate(1);
    launchMaxAbsCoord(s.pos[s.cur].get(), s.n, openBound.get(), s.launch());
    uint32_t bits = 0;
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(&bits, openBound.get(), sizeof bits, cudaMemcpyDeviceToHost, s.stream));
    MURMUR_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    float bound = 0;
    static_assert(sizeof bound == sizeof bits, "a float's bits");
    std::memcpy(&bound, &bits, sizeof bound);
    if (core::fitOpenWorld(shown, bound, open)) {
      s.dropPendingStep();
      apply(core::runParams(shown, open));
    }
  }

  void stepGravity() {
    const LaunchConfig lc = s.launch();
    const core::GravityParams& gp = s.params.gravity;
    if (gp.integrator == core::Integrator::Leapfrog) {
      if (!s.accValid) {
        gravity->gravityForces(s);
        s.timer.discard();  // the stage times report the step's own force evaluation
      }
      s.timer.stage(Stage::Integrate, [&] {
        launchLeapfrogKickDrift(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.acc.get(), s.n, gp.dt, lc);
      });
      gravity->gravityForces(s);  // on the drifted positions; a grid pipeline rebuilds (and reorders) here
      s.timer.stage(Stage::Integrate, [&] { launchLeapfrogKick(s.vel[s.velCur].get(), s.acc.get(), s.n, gp.dt, lc); });
      s.accValid = true;
    } else {
      gravity->gravityForces(s);
      s.timer.stage(Stage::Integrate, [&] {
        launchDampedEuler(s.pos[s.cur].get(), s.vel[s.velCur].get(), s.acc.get(), s.n, gp.dt, gp.damping, lc);
      });
      s.accValid = false;
    }
  }
};

CudaEngine::CudaEngine(const SimParams& p) : impl_(std::make_unique<Impl>()) {
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  std::string why;
  if (!deviceAvailable(&why)) throw std::runtime_error("the CUDA engine cannot start: " + why);
  impl_->s.name = cuda::deviceInfo().name;
  impl_->s.create();
  setParams(p);
}

CudaEngine::~CudaEngine() = default;

std::string CudaEngine::deviceName() const { return impl_->s.name; }

core::DeviceInfo CudaEngine::deviceInfo() const { return cuda::deviceInfo(); }

const SimParams& CudaEngine::params() const { return impl_->shown; }

size_t CudaEngine::numBodies() const { return impl_->s.n; }

core::StepProfile CudaEngine::lastProfile() const { return impl_->s.profile; }

int CudaEngine::stepsPerCycle() const { return impl_->stepper->stepsPerCycle(impl_->s); }

void CudaEngine::debugSetListCapacity(uint32_t entries) {
  impl_->pipeline(impl_->s.params.pipeline).fixListCapacity(entries, impl_->s.n);
}

void CudaEngine::debugSetGridSort(GridSort mode) { impl_->s.rowSort.mode = mode; }

void CudaEngine::debugSetFlatTableRows(int rows) { impl_->s.flatTableRowsCap = rows; }
void CudaEngine::debugSetPeriodicSplit(PeriodicSplit mode) { impl_->s.periodicSplit = static_cast<int>(mode); }

bool CudaEngine::debugLastSortCounted() const { return impl_->s.rowSort.lastCounted; }

void CudaEngine::setParams(const SimParams& p) {
  Impl& m = *impl_;
  DeviceState& s = m.s;
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw std::invalid_argument(err);
  s.dropPendingStep();
  // An open world keeps its box across new parameters (never narrower) and fits it again before
  // the next step: the speed or the reach may have grown.
  if (p.boundary != core::Boundary::Open) m.open = core::OpenWorld{};
  m.open.stepsLeft = 0;
  m.apply(core::runParams(p, m.open));
  m.shown = p;
}

void CudaEngine::reset(const core::Bodies& bodies) {
  DeviceState& s = impl_->s;
  const std::string bad = core::checkBodies(bodies, s.params.dims);
  if (!bad.empty()) throw std::invalid_argument("reset: " + bad);
  const size_t n = bodies.size();
  // The radix sort counts items in an int.
  if (n > static_cast<size_t>(INT_MAX))
    throw core::UsageError("--n " + std::to_string(n) + ": the CUDA engine handles at most " +
                           std::to_string(INT_MAX) + " bodies");
  stepCount_ = 0;
  s.dropPendingStep();
  // A new state: an open world's box starts again from the half-size (the grids below follow).
  impl_->open = core::OpenWorld{};
  s.params = impl_->shown;
  s.releaseBodies();
  for (auto& pl : impl_->pipelines)
    if (pl) pl->release();
  s.rowSort.restart();
  s.accValid = false;
  s.profile = core::StepProfile{};
  s.cur = s.velCur = s.idCur = 0;
  s.commonMass = core::commonMass(bodies.pos);
  if (n == 0) return;

  // The one memory check of a reset: it counts the grid buffers too, so ensureGrid below only
  // allocates.
  checkDeviceFits(n, s.params);

  for (int k = 0; k < 2; ++k) {
    s.pos[k].allocate(n);
    s.vel[k].allocate(n);
    s.id[k].allocate(n);
    s.species[k].allocate(n);
    s.keys[k].allocate(n);
    s.index[k].allocate(n);
  }
  s.acc.allocate(n);
  s.sortTemp.allocate(sortTempBytes(static_cast<uint32_t>(n), kSortBitsAllocated));
  s.n = static_cast<uint32_t>(n);
  if (usesGrid(s.params.pipeline))
    s.ensureGrid(gridCells(s.params, s.params.force, n), usesRowGrid(s.params, s.params.force), s.params.force,
                 false);
  launchStoreGrid(s.gridSpecs.get() + kBoidGridSlot, core::boidGrid(s.params, n), s.launch());
  launchStoreGrid(s.gridSpecs.get() + kRowGridSlot, core::pipelineRowGrid(s.params, n), s.launch());
  impl_->pipeline(s.params.pipeline).reserve(s.n);
  impl_->stepper->plan(s.params, s.n);
  // Every attribute; one the bodies leave out (empty: optional) is its default, 0 (core::withDefaults).
  s.current().forEachWith(bodies, [&](const char*, auto* d, const auto& h) {
    const size_t bytes = n * sizeof(*d);
    if (h.empty())
      MURMUR_CUDA_CHECK(cudaMemset(d, 0, bytes));
    else
      MURMUR_CUDA_CHECK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
  });
}

void CudaEngine::step(int numSteps) {
  Impl& m = *impl_;
  DeviceState& s = m.s;
  for (int k = 0; k < numSteps; ++k) {
    if (m.shown.boundary == core::Boundary::Open) {
      m.fitOpen();  // observe() fitted the box before a pending pass, which stays inside it
      --m.open.stepsLeft;
    }
    s.step = stepCount_++;  // the step being taken keys the rule's draws
    if (s.pending.active) {  // its pass ran in observe(), timed there: commit it
      m.stepper->boidsStep(s);
      s.profile = s.pending.profile;
      continue;
    }
    s.timer.beginStep(profiling_, s.stream);
    if (s.n > 0) {
      if (core::runsLocalRule(s.params))
        m.boidsStep();
      else
        m.stepGravity();
    }
    s.profile = s.timer.endStep();
  }
}

void CudaEngine::synchronize() { MURMUR_CUDA_CHECK(cudaStreamSynchronize(impl_->s.stream)); }

core::Bodies CudaEngine::readBodies() {
  const DeviceState& s = impl_->s;
  if (s.n == 0) return core::Bodies{};
  core::Bodies current;
  current.forEachWith(s.current(), [&](const char*, auto& h, auto* d) { h = s.download(d, s.n); });
  return core::bodiesInIdOrder(current);
}

std::vector<Vec4> CudaEngine::computeAccelerations() {
  Impl& m = *impl_;
  DeviceState& s = m.s;
  if (s.n == 0) return {};
  s.dropPendingStep();
  s.timer.beginStep(false, s.stream);
  m.gravity->gravityForces(s);
  // acc now holds a(x) of the current state in the current order; the leapfrog may reuse it.
  s.accValid = s.params.force == ForceMode::Gravity && s.params.gravity.integrator == core::Integrator::Leapfrog;
  return core::inIdOrder(s.download(s.acc.get(), s.n), s.download(s.id[s.idCur].get(), s.n));
}

std::vector<std::vector<uint32_t>> CudaEngine::topologicalNeighbours() {
  impl_->fitOpen();
  impl_->s.dropPendingStep();
  return cuda::topologicalNeighbours(impl_->s, impl_->topological);
}

core::NeighbourStats CudaEngine::neighbourStats() {
  DeviceState& s = impl_->s;
  if (s.n == 0) return core::NeighbourStats{};
  impl_->fitOpen();
  s.dropPendingStep();
  s.timer.beginStep(false, s.stream);
  s.beginNeighbourCount();
  return impl_->stepper->neighbourStats(s);
}

// The scalar boids observables ride on the next step's force pass where the pipeline has one
// that can sample (CudaPipeline::sampleStep: rows): the pass runs now, on the current state, and
// the next step commits its results. Flocks, the group columns (the pass adds no sums about the
// centroid), gravity and the other pipelines take the observer's own passes over the state.
core::Observables CudaEngine::observe(const core::ObserveRequest& r) {
  Impl& m = *impl_;
  DeviceState& s = m.s;
  if (!m.observer) m.observer = std::make_unique<DeviceObserver>();
  m.fitOpen();
  if (s.n > 0 && core::runsLocalRule(s.params) && s.params.topological == 0 && !r.flocks && m.stepper->samplesInStep() &&
      core::samplesBoidCounts(s.params) && !core::groupObservablesApply(s.params.boundary)) {
    s.dropPendingStep();  // a second sample of the same state runs the pass again
    s.step = stepCount_;  // the pass is the next step's
    const BoidSampleSums sample = m.observer->beginBoidSample(s.n);
    s.timer.beginStep(profiling_, s.stream);
    m.stepper->sampleStep(s, sample);
    const core::Observables out = m.observer->finishBoidSample(s.n, s.stream);  // one wait, for the sums
    s.pending.profile = s.timer.endStep();  // its events are complete by now
    return out;
  }
  return m.observer->observe(deviceBodies(), s.params, r, s.stream);
}

void CudaEngine::writeDrawBuffers(const core::BodyPointers& out) {
  const DeviceState& s = impl_->s;
  launchDrawCopy(core::readOnly(s.current()), s.n, out, s.launch());
}

core::DeviceAccess::Bodies CudaEngine::deviceBodies() const {
  const DeviceState& s = impl_->s;
  return core::DeviceAccess::Bodies{core::readOnly(s.current()), s.n, s.params.blockSize};
}

void CudaEngine::gatherById(const core::BodyPointers& out) {
  const DeviceState& s = impl_->s;
  launchGatherById(core::readOnly(s.current()), s.n, out, s.launch());
}

void CudaEngine::scatterById(const core::ConstBodyPointers& in) {
  DeviceState& s = impl_->s;
  if (in.id) throw std::invalid_argument("scatterById: ids stay as they are (pass no id array)");
  const Vec4* d_pos = in.pos;
  const Vec4* d_vel = in.vel;
  if (s.n == 0 || (!d_pos && !d_vel && !in.species)) return;
  impl_->open.stepsLeft = 0;  // new positions: an open world fits its box again
  const IdStateCheck c = checkIdState(d_pos, d_vel, s.n, s.launch());
  if (c.nonFinite > 0)
    throw std::invalid_argument("the state has " + std::to_string(c.nonFinite) + " values that are not finite");
  if (c.negativeMass > 0)
    throw std::invalid_argument("the state has " + std::to_string(c.negativeMass) + " negative masses (mass must be >= 0)");
  if (s.params.dims == 2 && c.offPlane > 0)
    throw std::invalid_argument("the state has " + std::to_string(c.offPlane) +
                                " bodies off the plane (a 2D world, dims 2, needs z = 0 and vz = 0)");
  launchScatterById(in, s.id[s.idCur].get(), s.n, s.current(), s.launch());
  // What the last step (or a sample's pass) left for the next one describes the old state.
  s.dropPendingStep();
  if (d_pos) s.commonMass = c.commonMass;
  s.accValid = false;
  impl_->invalidatePipelines();
  s.rowSort.restart();
}

std::unique_ptr<core::Engine> createCudaEngine(const SimParams& p) { return std::make_unique<CudaEngine>(p); }

// Lives here rather than in debug_api.cpp because it needs the engine's internals.
GridSnapshot snapshotGrid(CudaEngine& engine) {
  DeviceState& s = engine.impl_->s;
  GridSnapshot snap;
  if (s.n == 0) return snap;
  s.dropPendingStep();
  s.timer.beginStep(false, s.stream);
  const ForceMode mode = s.params.force;
  s.rowSort.countsReady = false;  // buildGrid overwrites the counting sort's keys and ranks
  const DeviceGrid g = s.buildGrid(mode, false);
  MURMUR_CUDA_CHECK(cudaMemcpy(&snap.grid, g.grid, sizeof(core::GridSpec), cudaMemcpyDeviceToHost));
  snap.pos = s.download(s.pos[s.cur].get(), s.n);
  snap.id = s.download(s.id[s.idCur].get(), s.n);
  snap.sortedKeys = s.download(g.sortedKeys, s.n);
  snap.sortedIndex = s.download(g.sortedIndex, s.n);
  snap.cellStart = s.download(s.cellStart.get(), g.numCells);
  snap.cellEnd = s.download(s.cellEnd.get(), g.numCells);
  if (mode == ForceMode::Gravity) snap.monopole = s.download(s.monopole.get(), g.numCells);
  return snap;
}

}  // namespace murmur::cuda
