// The murmuration Python module's native part (_murmuration): a simulation over the engine
// interface, built from the tables the command line reads (parameters, rules, pipelines,
// scenarios) and checked by the same validation code (core::allowed, core::validateParams,
// app::checkFits), without any command-line text: the package (python/murmuration/__init__.py)
// hands over parameter keys and values, and the scenario as a ScenarioSpec's fields. The same
// choices as the command line give the same bodies and the same steps, to the bit.
//
// Errors: core::UsageError and std::invalid_argument become ValueError, a size that does not fit
// MemoryError, cuda::CudaError (file, line and expression in its message) RuntimeError. The
// package rewrites the option names that core's messages carry into its own names.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "app/bench.h"
#include "app/engine_factory.h"
#include "app/options.h"
#include "app/params_json.h"
#include "app/run.h"
#include "core/body_io.h"
#include "core/engine.h"
#include "core/errors.h"
#include "core/observables.h"
#include "core/param_table.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
#include "core/trajectory.h"
#if defined(MURMUR_HAVE_RENDER)
#include "app/offscreen.h"
#endif
#if defined(MURMUR_HAVE_CUDA)
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/id_order.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace murmur::python {

namespace {

// A size that does not fit this machine (app::checkFits): MemoryError.
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void checkFits(core::EngineKind kind, size_t n, const core::SimParams& p, const core::ScenarioSpec* spec) {
  try {
    app::checkFits(kind, n, p, spec);
  } catch (const core::UsageError& e) {
    throw FitError(e.what());
  }
}

// A parameter value the package hands over, checked against its row of the parameter table as
// the command line checks a typed value (core::allowed): a number (float), or for a row of names
// (pipeline, boundary, ...) one of them (str). `what` is the package's name for it
// ("rule.noise", "half_size"), which the one-line message names with the value and what is
// allowed.
double paramValue(const std::string& key, nb::handle value, const std::string& what) {
  const core::ParamDesc* d = core::findParam(key);
  if (!d) throw core::UsageError(what + ": no such parameter (" + key + ")");
  const std::string text = nb::cast<std::string>(nb::repr(value));
  const std::string allowed = core::allowedText(d->spec);
  if (d->spec.type == core::ValueType::Enum) {
    if (!nb::isinstance<nb::str>(value))
      throw nb::type_error((what + "=" + text + ": must be a str, " + allowed).c_str());
    double v = 0;
    if (!core::parseValue(d->spec, nb::cast<std::string>(value), v))
      throw core::UsageError(what + "=" + text + " is invalid: " + d->label + " must be " + allowed);
    return v;
  }
  if (!nb::isinstance<nb::float_>(value))
    throw nb::type_error((what + "=" + text + ": must be a number, " + allowed).c_str());
  const double v = nb::cast<double>(value);
  if (!core::allowed(d->spec, v)) {
    const bool tiny = d->spec.type == core::ValueType::Float && v != 0 && std::fabs(v) < double(FLT_MIN);
    throw core::UsageError(what + "=" + text + " is invalid: " + d->label + " must be " + allowed +
                           (tiny ? " (and not below 1.2e-38, the smallest normal float)" : ""));
  }
  return v;
}

// Sets checked values (paramValue's) into p.
void applyValues(core::SimParams& p, const std::vector<std::pair<std::string, double>>& values) {
  for (const auto& [key, v] : values) {
    const core::ParamDesc* d = core::findParam(key);
    if (!d) throw core::UsageError("no such parameter: " + key);
    if (!core::allowed(d->spec, v))
      throw core::UsageError(key + " = " + core::formatValue(*d, v) + " is invalid: " + d->label + " must be " +
                             core::allowedText(d->spec));
    d->set(p, v);
  }
}

// A parameter's value as Python takes it: a name for a row of names, an int for a whole-number
// row, else a float.
nb::object paramObject(const core::ParamDesc& d, double v) {
  if (d.spec.type == core::ValueType::Enum) return nb::str(core::formatValue(d, v).c_str());
  if (d.spec.type != core::ValueType::Float) return nb::int_(static_cast<long long>(v));
  return nb::float_(v);
}

#if defined(MURMUR_HAVE_CUDA)
// Page-locked host memory that a device-to-host copy fills at full speed; kept between snapshots
// (allocated once per size, never per call).
class PinnedBytes {
 public:
  PinnedBytes() = default;
  ~PinnedBytes() { release(); }
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  void reserve(size_t bytes) {
    if (bytes <= bytes_) return;
    release();
    void* p = nullptr;
    MURMUR_CUDA_CHECK(cudaMallocHost(&p, bytes));
    ptr_ = static_cast<unsigned char*>(p);
    bytes_ = bytes;
  }
  unsigned char* get() const { return ptr_; }

 private:
  void release() noexcept {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  unsigned char* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// The events of a snapshot's pieces (kSnapshotPieces), one each.
class SnapshotEvents {
 public:
  explicit SnapshotEvents(size_t count) : events_(count, nullptr) {}
  // Separate from the constructor, so that the destructor frees what was made if a creation fails.
  void create() {
    for (cudaEvent_t& e : events_) MURMUR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~SnapshotEvents() {
    for (cudaEvent_t e : events_)
      if (e) cudaEventDestroy(e);
  }
  SnapshotEvents(const SnapshotEvents&) = delete;
  SnapshotEvents& operator=(const SnapshotEvents&) = delete;
  cudaEvent_t at(size_t i) const { return events_.at(i); }

 private:
  std::vector<cudaEvent_t> events_;
};
#endif

template <typename T>
using HostArray = nb::ndarray<nb::numpy, T>;

// A snapshot is unpacked in at most this many pieces (the threads take them in turn); on the CUDA
// engine each is copied and waited for on its own.
constexpr size_t kSnapshotPieces = 64;

// Host memory for a large array that a copy fills at once: aligned to 2 MiB and, on Linux, marked
// for transparent huge pages before its first touch, so that a snapshot of 1M bodies takes a few
// dozen page faults instead of thousands. Freed with std::free (HostBlock's owner).
struct HostBlock {
  static void* allocate(size_t bytes) {
    constexpr size_t kHuge = size_t(2) << 20;
    if (bytes < 2 * kHuge) {
      void* p = std::malloc(bytes > 0 ? bytes : 1);
      if (!p) throw std::bad_alloc();
      return p;
    }
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without huge pages the memory is as before
#endif
    return p;
  }
};

// A NumPy array over memory from HostBlock::allocate (n or n x cols elements), which it frees.
template <typename T>
HostArray<T> ownedBlockArray(T* data, size_t n, size_t cols) {
  nb::capsule owner(data, [](void* p) noexcept { std::free(p); });
  if (cols == 0) {
    const size_t shape[1] = {n};
    return HostArray<T>(data, 1, shape, owner);
  }
  const size_t shape[2] = {n, cols};
  return HostArray<T>(data, 2, shape, owner);
}

// The host arrays set_state takes: C-contiguous float32, species uint8 (the package converts and
// checks shapes and the species' range).
using HostIn = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using SpeciesIn = nb::ndarray<const core::Species, nb::c_contig, nb::device::cpu>;

#if defined(MURMUR_HAVE_CUDA)
// The id-ordered device arrays the module hands out (device_positions, device_velocities,
// device_species), by the name the package passes.
enum class DeviceAttribute { Positions, Velocities, Species };

DeviceAttribute deviceAttribute(const std::string& name) {
  if (name == "positions") return DeviceAttribute::Positions;
  if (name == "velocities") return DeviceAttribute::Velocities;
  if (name == "species") return DeviceAttribute::Species;
  throw core::UsageError("device arrays: " + name + " is invalid: one of: positions, velocities, species");
}
#endif

void checkFinite(const char* what, const float* v, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!std::isfinite(v[i]))
      throw core::UsageError(std::string("set_state: ") + what + " has a value that is not finite (index " +
                             std::to_string(i) + ")");
}

}  // namespace

class Simulation {
 public:
  // The simulation the package describes: engine ("" = cuda when a device is present, else cpu),
  // n (0 = the command line's default for the engine), the scenario ("" = the default world,
  // "file" = the bodies of `path`, else a scenario's name) with its dense neighbours (<= 0: the
  // scenario's default), selection, even subset and scales, the seed, and the parameters given
  // (table keys and checked values, over the defaults and a file's header). The defaults that
  // depend on what was given are the command line's (app/option_precedence.cpp, resolveDefaults):
  // a rule brings its boundary; no scenario is the dense world of 4 neighbours on the default
  // world's pipeline for N (the galaxies for gravity; the uniform cube when a half-size is given);
  // no force is the scenario's, or the one a saved state records.
  Simulation(const std::string& engine, uint64_t n, const std::string& scenario, const std::string& path,
             const std::string& select, bool fileSubset, const std::vector<double>& scale, double neighbours,
             uint64_t seed, const std::vector<std::pair<std::string, double>>& values) {
    core::SimParams p = core::defaultParams();
    core::ScenarioSpec spec;
    uint64_t startStep = 0;
    std::string fileForce;
    std::set<std::string> given;
    for (const auto& kv : values) given.insert(kv.first);
    const bool file = scenario == "file";
    if (file) {
      if (path.empty()) throw core::UsageError("Scenario.from_file: the path is empty");
      const core::StateHeader h = core::readStateHeader(path);
      if (!h.paramsJson.empty()) app::loadParamsText(path + ": params", h.paramsJson, p);
      if (h.halfSize > 0) p.halfSize = h.halfSize;
      fileForce = h.force;
      startStep = h.step;
    }
    applyValues(p, values);
    // A rule chosen brings its boundary unless one is given.
    if (given.count("boids.rules") && !given.count("boundary")) p.boundary = core::activeRule(p).boundary;
    bool defaultWorld = false;
    if (file) {
      spec.name = "file:" + path;
      spec.select = select;
      spec.fileSubset = fileSubset;
    } else if (!scenario.empty()) {
      const std::vector<std::string>& names = core::scenarioNames();
      if (std::find(names.begin(), names.end(), scenario) == names.end())
        throw core::UsageError("scenario " + scenario + " is unknown");
      spec.name = scenario;
    } else if (!given.count("halfSize") && given.count("force") && p.force == core::ForceMode::Gravity) {
      spec.name = "galaxies";
      if (!given.count("pipeline")) p.pipeline = core::gravityWorldPipeline();
    } else if (!given.count("halfSize")) {
      spec.name = "dense";
      spec.denseNeighbours = app::kDefaultWorldNeighbours;
      if (!given.count("pipeline") && !given.count("topological")) {
        p.pipeline = core::defaultWorldPipeline(0);
        defaultWorld = !given.count("listSteps");
      }
    }
    if (neighbours > 0) spec.denseNeighbours = neighbours;
    if (scale.size() == 3) spec.scaleLength = scale[0], spec.scaleVelocity = scale[1], spec.scaleMass = scale[2];
    spec.seed = seed;
    p.seed = seed;  // one seed for the bodies and for every random draw of a rule
    core::EngineKind kind = app::defaultEngineKind();
    if (!engine.empty() && !core::parse(engine, kind))
      throw core::UsageError("engine='" + engine + "' is invalid: one of: cpu, cuda");
    if (kind == core::EngineKind::Cuda) {
      std::string why;
      if (!app::cudaAvailable(&why)) throw core::UsageError("engine='cuda' is not available: " + why);
    }
    spec.n = n > 0 ? n : (kind == core::EngineKind::Cuda ? 100000 : 10000);
    if (defaultWorld) p.pipeline = core::defaultWorldPipeline(spec.n);
    if (!given.count("force") && (fileForce.empty() || !core::parse(fileForce, p.force)))
      p.force = core::naturalForce(spec.name);
    if (core::runsLocalRule(p) && !core::serves(p.pipeline, p.force))
      throw core::UsageError(std::string("pipeline ") + core::toString(p.pipeline) + ": " +
                             core::gravityOnlyMessage());
    const std::string err = core::validateParams(p);
    if (!err.empty()) throw core::UsageError(err);
    if (!file) checkFits(kind, spec.n, p, &spec);
    core::Scenario made = core::makeScenario(spec, p);
    p.halfSize = made.halfSize;
    if (file) checkFits(kind, made.bodies.size(), p, &spec);
    engine_ = app::makeEngine(kind, p);
    engine_->reset(made.bodies);
    engine_->setStepCount(startStep);
    scenario_ = file ? "file:" + path : spec.name;
    note_ = made.note;
  }

  // Steps with the GIL released; Ctrl-C (a pending signal) stops between steps and raises. The
  // CUDA engine queues the steps and this returns once they are queued (a read, a save or
  // synchronize() waits for them); within a long call it waits every 32 steps so that Ctrl-C acts
  // within a few steps. A step(1) per call then costs Python no wait for the GPU.
  void step(long long k) {
    if (k < 0) throw core::UsageError("step: the number of steps must be >= 0, not " + std::to_string(k));
    notBusy("step");
    applyDeviceWrites(true);
    bool interrupted = false;
    {
      // Other threads run meanwhile: busy_ refuses their calls on this simulation.
      Busy busy(busy_);
      nb::gil_scoped_release release;
      for (long long i = 0; i < k; ++i) {
        engine_->step(1);
        if ((i + 1) % 32 == 0) engine_->synchronize();
        nb::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          interrupted = true;
          break;
        }
      }
      if (interrupted) engine_->synchronize();
    }
    if (interrupted) throw nb::python_error();
  }

  // Waits for the queued steps (the CUDA engine); a device error surfaces here at the latest.
  void synchronize() {
    notBusy("synchronize");
    nb::gil_scoped_release release;
    engine_->synchronize();
  }

  std::string paramsJson() const { return app::paramsToJson(engine_->params(), -1); }

  // Checked values (paramValue's) by table key, all or none: the whole set is validated as the
  // command line validates it, then taken by the engine at the next step.
  void setParamValues(const std::vector<std::pair<std::string, double>>& values) {
    core::SimParams p = engine_->params();
    applyValues(p, values);
    commitParams(p);
  }

  nb::object paramValueOf(const std::string& key) const {
    const core::ParamDesc* d = core::findParam(key);
    if (!d) throw core::UsageError("no such parameter: " + key);
    return paramObject(*d, d->get(engine_->params()));
  }

  // Observables of the current state, computed where the state lives (Engine::observe): the
  // --observables CSV's columns for this force (the flock columns with `flocks`), in its order,
  // after step and time. The derived columns (drifts) take the first sample since construction,
  // set_state or reset_observe_baseline as their baseline, as a headless run takes its first.
  nb::list observe(bool flocks, uint32_t millingMinSize) {
    notBusy("observe");
    applyDeviceWrites(false);
    core::ObserveRequest r;
    r.flocks = flocks;
    r.millingMinSize = millingMinSize;
    const core::SimParams& p = engine_->params();
    const uint64_t step = engine_->stepCount();
    const double time = double(step) * double(core::activeDt(p));
    core::Observables v;
    {
      Busy busy(busy_);
      nb::gil_scoped_release release;
      v = engine_->observe(r);
    }
    if (seriesForce_ != p.force) series_ = core::ObservablesSeries(), seriesForce_ = p.force;
    v = series_.add(v, time);
    nb::list out;
    out.append(nb::make_tuple("step", nb::int_(step)));
    out.append(nb::make_tuple("time", time));
    for (core::Obs c : core::observedColumns(p.force, flocks))
      out.append(nb::make_tuple(core::observableDesc(c).column, v[c]));
    return out;
  }
  void resetObserveBaseline() { series_ = core::ObservablesSeries(); }

  // The state in id order as new NumPy arrays the caller owns, one read: positions and
  // velocities (n, 3) float32, masses (n,) float32, species (n,) uint8, ids (n,) uint32 (0..n-1),
  // and the step. On the CUDA engine one gather by id on the device, three copies into
  // page-locked staging (kept between calls) and a parallel unpack into the arrays.
  nb::tuple snapshot() {
    notBusy("snapshot");
    applyDeviceWrites(false);
    const size_t n = engine_->numBodies();
    const uint64_t step = engine_->stepCount();
    // Left uninitialised: the unpack below writes every element, and its threads touch the pages
    // first (no zeroing pass, the page faults spread over the threads).
    struct Arrays {
      float* pos = nullptr;
      float* vel = nullptr;
      float* mass = nullptr;
      core::Species* species = nullptr;
      uint32_t* ids = nullptr;
      ~Arrays() {
        for (void* p : {static_cast<void*>(pos), static_cast<void*>(vel), static_cast<void*>(mass),
                        static_cast<void*>(species), static_cast<void*>(ids)})
          std::free(p);
      }
    } a;
    a.pos = static_cast<float*>(HostBlock::allocate(n * 3 * sizeof(float)));
    a.vel = static_cast<float*>(HostBlock::allocate(n * 3 * sizeof(float)));
    a.mass = static_cast<float*>(HostBlock::allocate(n * sizeof(float)));
    a.species = static_cast<core::Species*>(HostBlock::allocate(n * sizeof(core::Species)));
    a.ids = static_cast<uint32_t*>(HostBlock::allocate(n * sizeof(uint32_t)));
    // Bodies [from, to) of the id-ordered records into the arrays, on the calling thread.
    const auto unpackRange = [&](const core::Vec4* p4, const core::Vec4* v4, const core::Species* sp, size_t from,
                                 size_t to) {
      float* pos = a.pos;
      float* vel = a.vel;
      float* mass = a.mass;
      core::Species* species = a.species;
      uint32_t* ids = a.ids;
      for (size_t i = from; i < to; ++i) {
        const core::Vec4& p = p4[i];
        const core::Vec4& v = v4[i];
        pos[3 * i] = p.x, pos[3 * i + 1] = p.y, pos[3 * i + 2] = p.z, mass[i] = p.w;
        vel[3 * i] = v.x, vel[3 * i + 1] = v.y, vel[3 * i + 2] = v.z;
        species[i] = sp ? sp[i] : core::Species{0};
        ids[i] = static_cast<uint32_t>(i);
      }
    };
    // The same over every body, in pieces shared by the threads of one parallel region; ready(c),
    // when given, waits until piece c has arrived.
    const auto unpack = [&](const core::Vec4* p4, const core::Vec4* v4, const core::Species* sp, size_t piece,
                            const auto& ready) {
      const long long pieces = static_cast<long long>((n + piece - 1) / piece);
#pragma omp parallel for schedule(static, 1)
      for (long long c = 0; c < pieces; ++c) {
        ready(static_cast<size_t>(c));
        unpackRange(p4, v4, sp, static_cast<size_t>(c) * piece, std::min(n, static_cast<size_t>(c + 1) * piece));
      }
    };
    bool done = false;
#if defined(MURMUR_HAVE_CUDA)
    if (core::DeviceAccess* dev = engine_->deviceAccess(); dev && n > 0) {
      ensureIdBuffers(*dev);  // one gather kernel (none when the id buffers are current)
      const size_t vecBytes = n * sizeof(core::Vec4);
      staging_.reserve(2 * vecBytes + n);
      unsigned char* h = staging_.get();
      const auto* p4 = reinterpret_cast<const core::Vec4*>(h);
      const auto* v4 = reinterpret_cast<const core::Vec4*>(h + vecBytes);
      const auto* s1 = reinterpret_cast<const core::Species*>(h + 2 * vecBytes);
      // The staging memory is this simulation's: other threads' calls are refused (not raced)
      // while the copies and the unpack run without the GIL.
      Busy busy(busy_);
      nb::gil_scoped_release release;
      // In pieces: the copy engine brings them in order while the threads of one parallel region
      // unpack those that have arrived (a thread waits on its piece's event).
      const size_t piece = std::max<size_t>(size_t(1) << 15, (n + kSnapshotPieces - 1) / kSnapshotPieces);
      const size_t pieces = (n + piece - 1) / piece;
      SnapshotEvents events(pieces);
      events.create();
      for (size_t c = 0; c < pieces; ++c) {
        const size_t from = c * piece, count = std::min(n, from + piece) - from;
        MURMUR_CUDA_CHECK(cudaMemcpyAsync(h + from * sizeof(core::Vec4), posById_.get() + from,
                                          count * sizeof(core::Vec4), cudaMemcpyDeviceToHost, nullptr));
        MURMUR_CUDA_CHECK(cudaMemcpyAsync(h + vecBytes + from * sizeof(core::Vec4), velById_.get() + from,
                                          count * sizeof(core::Vec4), cudaMemcpyDeviceToHost, nullptr));
        MURMUR_CUDA_CHECK(cudaMemcpyAsync(h + 2 * vecBytes + from, speciesById_.get() + from, count,
                                          cudaMemcpyDeviceToHost, nullptr));
        MURMUR_CUDA_CHECK(cudaEventRecord(events.at(c), nullptr));
      }
      // Errors cannot leave a parallel region: a failed wait is kept and reported after it.
      std::atomic<int> failed{0};
      unpack(p4, v4, s1, piece, [&](size_t c) {
        if (cudaEventSynchronize(events.at(c)) != cudaSuccess) failed.store(1);
      });
      if (failed.load()) MURMUR_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // reports the error
      done = true;
    }
#endif
    if (!done) {
      const core::Bodies b = engine_->readBodies();
      nb::gil_scoped_release release;
      unpack(b.pos.data(), b.vel.data(), b.species.empty() ? nullptr : b.species.data(),
             std::max<size_t>(size_t(1) << 15, (n + kSnapshotPieces - 1) / kSnapshotPieces), [](size_t) {});
    }
    // Each block passes to its array before the array is made (never freed twice).
    const auto take = [](auto*& p) {
      auto* q = p;
      p = nullptr;
      return q;
    };
    nb::object pos = nb::cast(ownedBlockArray(take(a.pos), n, 3));
    nb::object vel = nb::cast(ownedBlockArray(take(a.vel), n, 3));
    nb::object mass = nb::cast(ownedBlockArray(take(a.mass), n, 0));
    nb::object species = nb::cast(ownedBlockArray(take(a.species), n, 0));
    nb::object ids = nb::cast(ownedBlockArray(take(a.ids), n, 0));
    return nb::make_tuple(pos, vel, mass, species, ids, nb::int_(step));
  }

  // The state as a trajectory frame takes it (id order), for the writer below.
  core::Bodies readForFrame() { return read(); }
  const core::Engine& engine() const { return *engine_; }
  std::string paramsJsonCompact() const { return app::paramsToJson(engine_->params(), -1); }

  // Host arrays (C-contiguous float32 and uint8, checked by the package for shape): the state
  // replaced through a reset that keeps the ids. What is not given keeps its values.
  void setStateHost(std::optional<HostIn> pos, std::optional<HostIn> vel, std::optional<HostIn> mass,
                    std::optional<SpeciesIn> species) {
    notBusy("set_state");
    const size_t n = engine_->numBodies();
    if (pos) checkFinite("positions", pos->data(), n * 3);
    if (pos) checkInBox(pos->data(), n);
    if (vel) checkFinite("velocities", vel->data(), n * 3);
    if (mass) {
      checkFinite("masses", mass->data(), n);
      for (size_t i = 0; i < n; ++i)
        if (mass->data()[i] < 0.0f)
          throw core::UsageError("set_state: masses must be >= 0 (index " + std::to_string(i) + " is " +
                                 std::to_string(mass->data()[i]) + ")");
    }
    core::Bodies b = read();
    for (size_t i = 0; i < n; ++i) {
      if (pos) std::memcpy(&b.pos[i].x, pos->data() + 3 * i, 3 * sizeof(float));
      if (vel) std::memcpy(&b.vel[i].x, vel->data() + 3 * i, 3 * sizeof(float));
      if (mass) b.pos[i].w = mass->data()[i];
    }
    if (species) b.species.assign(species->data(), species->data() + n);
    const uint64_t steps = engine_->stepCount();
    engine_->reset(b);
    engine_->setStepCount(steps);  // new values of the same bodies: the count goes on
    series_ = core::ObservablesSeries();  // a new state: the drifts measure from its first sample
#if defined(MURMUR_HAVE_CUDA)
    idFresh_ = handedOut_ = false;
#endif
  }

#if defined(MURMUR_HAVE_CUDA)
  // GPU arrays of any strides (CuPy, PyTorch, or our own): packed into the id-ordered buffers on
  // the device and scattered into the engine by id; nothing passes through the host.
  // Species (uint8, one stride of any positive size) are copied as they are.
  void setStateDevice(std::optional<nb::ndarray<>> pos, std::optional<nb::ndarray<>> vel,
                      std::optional<nb::ndarray<>> mass, std::optional<nb::ndarray<>> species) {
    notBusy("set_state");
    core::DeviceAccess& dev = deviceAccess("set_state with GPU arrays");
    const size_t n = engine_->numBodies();
    if (pos) checkDeviceArray("positions", *pos, n, 3, nb::dtype<float>(), "float32");
    if (vel) checkDeviceArray("velocities", *vel, n, 3, nb::dtype<float>(), "float32");
    if (mass) checkDeviceArray("masses", *mass, n, 0, nb::dtype<float>(), "float32");
    if (species) {
      checkDeviceArray("species", *species, n, 0, nb::dtype<core::Species>(), "uint8 (0 to 255)");
      if (n > 1 && species->stride(0) < 1)
        throw core::UsageError("set_state: species has a stride of " + std::to_string(species->stride(0)) +
                               " elements on the GPU; a positive stride is needed (a contiguous copy will do)");
    }
    ensureIdBuffers(dev);
    const cuda::LaunchConfig lc{engine_->params().blockSize, nullptr};
    const auto pack = [&](const nb::ndarray<>& a, core::Vec4* dst, int first) {
      const int64_t colStride = a.ndim() == 2 ? a.stride(1) : 1;
      launchPackColumns(static_cast<const float*>(a.data()), a.stride(0), colStride, a.ndim() == 2 ? 3 : 1,
                        static_cast<uint32_t>(n), dst, first, lc);
    };
    if (pos) pack(*pos, posById_.get(), 0);
    if (mass) pack(*mass, posById_.get(), 3);
    if (vel) pack(*vel, velById_.get(), 0);
    // Species: a strided copy of one byte per row on the engine's stream (the legacy default
    // stream); none when the array is our own buffer (device_species()).
    if (species && n > 0 && !(species->data() == speciesById_.get() && species->stride(0) == 1)) {
      const auto* src = static_cast<const core::Species*>(species->data());
      if (species->stride(0) == 1 || n == 1)
        MURMUR_CUDA_CHECK(cudaMemcpyAsync(speciesById_.get(), src, n, cudaMemcpyDeviceToDevice, nullptr));
      else
        MURMUR_CUDA_CHECK(cudaMemcpy2DAsync(speciesById_.get(), 1, src, static_cast<size_t>(species->stride(0)), 1, n,
                                            cudaMemcpyDeviceToDevice, nullptr));
    }
    try {
      dev.scatterById(core::ConstBodyPointers{pos || mass ? posById_.get() : nullptr, vel ? velById_.get() : nullptr,
                                              nullptr, species ? speciesById_.get() : nullptr});
    } catch (...) {
      idFresh_ = false;  // the buffers hold the refused values: gathered again when next asked
      throw;
    }
  }

  // The id-ordered device buffer of positions (xyz of float4, w = mass) or velocities as an
  // (n, 3) float32 array with a row stride of 4 floats, or of species as an (n,) uint8 array,
  // owned by this simulation (`owner`).
  template <typename Framework>
  nb::ndarray<Framework> deviceArray(const std::string& name, nb::handle owner) {
    const DeviceAttribute which = deviceAttribute(name);
    core::DeviceAccess& dev = deviceAccess(("device_" + name).c_str());
    ensureIdBuffers(dev);
    handedOut_ = true;
    int device = 0;
    cudaGetDevice(&device);
    const size_t n = engine_->numBodies();
    if (which == DeviceAttribute::Species) {
      const size_t shape[1] = {n};
      const int64_t strides[1] = {1};
      return nb::ndarray<Framework>(speciesById_.get(), 1, shape, owner, strides, nb::dtype<core::Species>(),
                                    nb::device::cuda::value, device);
    }
    const size_t shape[2] = {n, 3};
    const int64_t strides[2] = {4, 1};
    core::Vec4* p = which == DeviceAttribute::Velocities ? velById_.get() : posById_.get();
    return nb::ndarray<Framework>(p, 2, shape, owner, strides, nb::dtype<float>(), nb::device::cuda::value, device);
  }
  int cudaDevice() const {
    int device = 0;
    cudaGetDevice(&device);
    return device;
  }
  uintptr_t devicePointer(const std::string& name) {
    const DeviceAttribute which = deviceAttribute(name);
    ensureIdBuffers(deviceAccess("device_pointer"));
    switch (which) {
      case DeviceAttribute::Positions: return reinterpret_cast<uintptr_t>(posById_.get());
      case DeviceAttribute::Velocities: return reinterpret_cast<uintptr_t>(velById_.get());
      case DeviceAttribute::Species: return reinterpret_cast<uintptr_t>(speciesById_.get());
    }
    return 0;
  }
#endif

#if defined(MURMUR_HAVE_RENDER)
  nb::ndarray<nb::numpy, uint8_t> render(int width, int height, const std::string& draw, const std::string& colour) {
    // The command line's frame sizes and names (app/cli_definition.cpp), checked here by name.
    for (const auto& [name, v] : {std::pair<const char*, int>{"width", width}, {"height", height}})
      if (v < 16 || v > 8192)
        throw core::UsageError(std::string("render: ") + name + "=" + std::to_string(v) +
                               " is invalid: a whole number from 16 to 8192");
    static const char* const kDraws[] = {"boids", "points", "sprites", "splat"};
    static const char* const kColours[] = {"velocity", "speed", "id"};
    const auto known = [](const std::string& s, const char* const* names, int count) {
      if (s.empty()) return true;
      for (int i = 0; i < count; ++i)
        if (s == names[i]) return true;
      return false;
    };
    if (!known(draw, kDraws, 4))
      throw core::UsageError("render: draw='" + draw + "' is invalid: one of: boids, points, sprites, splat");
    if (!known(colour, kColours, 3))
      throw core::UsageError("render: colour='" + colour + "' is invalid: one of: velocity, speed, id");
    notBusy("render");
    applyDeviceWrites(false);
    if (!view_ || viewW_ != width || viewH_ != height || viewDraw_ != draw || viewColour_ != colour) {
      view_.reset();
      app::Options o;
      o.mode = app::Mode::Headless;
      o.engine = engine_->kind();
      o.params = engine_->params();
      o.scenario.n = engine_->numBodies();
      o.width = width;
      o.height = height;
      o.drawMode = draw;
      o.colourMode = colour;
      std::string why;
      view_ = app::createOffscreenView(o, *engine_, &why);
      if (!view_) throw std::runtime_error("render: no offscreen OpenGL context (" + why + ")");
      viewW_ = width, viewH_ = height, viewDraw_ = draw, viewColour_ = colour;
    }
    view_->renderFrame(*engine_);
    const std::vector<uint8_t> rgba = view_->pixels();
    const size_t w = static_cast<size_t>(width), h = static_cast<size_t>(height);
    auto* rgb = new std::vector<uint8_t>(w * h * 3);
    for (size_t i = 0; i < w * h; ++i) std::memcpy(&(*rgb)[i * 3], &rgba[i * 4], 3);
    nb::capsule owner(rgb, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
    const size_t shape[3] = {h, w, 3};
    return nb::ndarray<nb::numpy, uint8_t>(rgb->data(), 3, shape, owner);
  }
#endif

  void save(const std::string& path) {
    const core::Bodies b = read();
    core::StateHeader h;
    h.force = core::toString(engine_->params().force);
    h.halfSize = engine_->params().halfSize;
    h.step = engine_->stepCount();
    h.paramsJson = app::paramsToJson(engine_->params(), -1);
    core::writeBodiesFile(path, b, h);
  }

  size_t n() const { return engine_->numBodies(); }
  uint64_t stepCount() const { return engine_->stepCount(); }
  std::string engineName() const { return core::toString(engine_->kind()); }
  std::string device() const { return engine_->deviceName(); }
  std::string pipeline() const { return core::toString(engine_->params().pipeline); }
  std::string force() const { return core::toString(engine_->params().force); }
  std::string scenario() const { return scenario_; }
  std::string note() const { return note_; }

 private:
  // Local rules in a box (every boundary but open) keep their bodies in [-h, h) per axis; a
  // reset would wrap a position outside it onto another place without a word, so it is refused.
  void checkInBox(const float* pos, size_t n) const {
    const core::SimParams& p = engine_->params();
    if (!core::runsLocalRule(p) || p.boundary == core::Boundary::Open) return;
    const float h = p.halfSize;
    for (size_t i = 0; i < 3 * n; ++i)
      if (pos[i] < -h || pos[i] > h) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", double(pos[i]));
        throw core::UsageError("set_state: positions[" + std::to_string(i / 3) + ", " + std::to_string(i % 3) +
                               "] = " + buf + " lies outside the world [-" + core::formatValue(*core::findParam("halfSize"), h) +
                               ", " + core::formatValue(*core::findParam("halfSize"), h) + "] of the " +
                               core::toString(p.boundary) + " boundary (it would be moved, not kept)");
      }
  }

  // What was written through the device arrays reaches the engine before it is read or stepped.
  // A step ends the hand-out: the arrays are gathered again when next asked for.
  void applyDeviceWrites(bool stepping) {
#if defined(MURMUR_HAVE_CUDA)
    if (handedOut_ && idFresh_) {
      if (core::DeviceAccess* dev = engine_->deviceAccess()) dev->scatterById(idBuffers());
    }
    if (stepping) idFresh_ = handedOut_ = false;
#else
    (void)stepping;
#endif
  }

  // step(), observe() and snapshot() release the GIL: a call from another thread meanwhile is
  // refused, not raced.
  struct Busy {
    explicit Busy(bool& flag) : f(flag) { f = true; }
    ~Busy() { f = false; }
    bool& f;
  };
  void notBusy(const char* what) const {
    if (busy_)
      throw std::runtime_error(std::string(what) +
                               ": the simulation is busy in another thread (stepping, observing or taking a snapshot)");
  }

  core::Bodies read() {
    notBusy("reading the state");
    applyDeviceWrites(false);
    return engine_->readBodies();
  }

#if defined(MURMUR_HAVE_CUDA)
  core::DeviceAccess& deviceAccess(const char* what) {
    core::DeviceAccess* dev = engine_->deviceAccess();
    if (!dev)
      throw core::UsageError(std::string(what) + ": the " + core::toString(engine_->kind()) +
                             " engine keeps the state on the host (use engine=\"cuda\")");
    return *dev;
  }
  void ensureIdBuffers(core::DeviceAccess& dev) {
    notBusy("device arrays");
    const size_t n = engine_->numBodies();
    if (posById_.size() != n) {
      posById_.allocate(n);
      velById_.allocate(n);
      speciesById_.allocate(n);
      idFresh_ = false;
    }
    if (!idFresh_) {
      dev.gatherById(core::BodyPointers{posById_.get(), velById_.get(), nullptr, speciesById_.get()});
      // Consumers may work on another stream (DLPack's stream argument is not followed by
      // nanobind): the buffers are complete before an array over them is handed out.
      engine_->synchronize();
      idFresh_ = true;
    }
  }
  // The id-ordered buffers as the engine scatters them back (ids stay).
  core::ConstBodyPointers idBuffers() const {
    return core::ConstBodyPointers{posById_.get(), velById_.get(), nullptr, speciesById_.get()};
  }
  void checkDeviceArray(const char* what, const nb::ndarray<>& a, size_t n, size_t cols, nb::dlpack::dtype dtype,
                        const char* dtypeName) {
    const std::string name = std::string("set_state: ") + what;
    if (a.device_type() != nb::device::cuda::value)
      throw core::UsageError(name + ": mixes host and GPU arrays (give all on the GPU, or all as NumPy)");
    int device = 0;
    cudaGetDevice(&device);
    if (a.device_id() != device)
      throw core::UsageError(name + " is on GPU " + std::to_string(a.device_id()) + ", the simulation on GPU " +
                             std::to_string(device));
    if (a.dtype() != dtype) throw nb::type_error((name + " must be " + dtypeName + " on the GPU").c_str());
    const bool shapeOk = cols == 0 ? a.ndim() == 1 && a.shape(0) == n
                                   : a.ndim() == 2 && a.shape(0) == n && a.shape(1) == cols;
    if (!shapeOk) {
      std::string got = "(";
      for (size_t d = 0; d < a.ndim(); ++d) got += (d ? ", " : "") + std::to_string(a.shape(d));
      got += a.ndim() == 1 ? ",)" : ")";
      throw core::UsageError(name + " has shape " + got + ", expected (" + std::to_string(n) +
                             (cols ? ", " + std::to_string(cols) + ")" : ",)"));
    }
  }
#endif

  // Validated as a whole (validateParams), checked to fit, then taken by the engine; on an error
  // nothing changes.
  void commitParams(const core::SimParams& p) {
    notBusy("set_params");
    const std::string err = core::validateParams(p);
    if (!err.empty()) throw core::UsageError(err);
    // A larger world or a finer grid may not fit: refused before the engine allocates it.
    checkFits(engine_->kind(), engine_->numBodies(), p, nullptr);
    applyDeviceWrites(false);
    engine_->setParams(p);
#if defined(MURMUR_HAVE_CUDA)
    idFresh_ = false;
#endif
  }

  std::string scenario_, note_;
  std::unique_ptr<core::Engine> engine_;
  core::ObservablesSeries series_;
  core::ForceMode seriesForce_ = core::ForceMode::Boids;
  bool busy_ = false;  // step() is running with the GIL released
#if defined(MURMUR_HAVE_CUDA)
  cuda::DeviceBuffer<core::Vec4> posById_, velById_;
  cuda::DeviceBuffer<core::Species> speciesById_;
  bool idFresh_ = false;    // the buffers hold the current state (or writes not yet applied)
  bool handedOut_ = false;  // arrays over them were handed out since the last step
  PinnedBytes staging_;     // snapshot(): the id-ordered buffers' copy on the host
#endif
#if defined(MURMUR_HAVE_RENDER)
  std::unique_ptr<app::OffscreenView> view_;  // after engine_: released first
  int viewW_ = 0, viewH_ = 0;
  std::string viewDraw_, viewColour_;
#endif
};

// `murmur bench` in this process: the sweep's lists and settings as BenchOptions (empty lists take
// the preset's or the defaults, as on the command line), measured by app::runBench with its rows
// handed back instead of written to a CSV. Each row: (column, cell text) for every bench CSV
// column, empty where it does not apply. Ctrl-C stops between two configurations (the rows so far
// come back, with interrupted = True).
template <typename EnumT>
std::vector<EnumT> namesTo(const char* what, const std::vector<std::string>& names) {
  std::vector<EnumT> out;
  for (const std::string& s : names) {
    EnumT v{};
    if (!core::parse(s, v)) {
      std::string allowed;
      for (int i = 0; i < core::enumCount<EnumT>(); ++i) allowed += (i ? ", " : "") + std::string(core::EnumNames<EnumT>::names[i]);
      throw core::UsageError(std::string("bench: ") + what + "='" + s + "' is invalid: one of: " + allowed);
    }
    out.push_back(v);
  }
  return out;
}

nb::tuple bench(const std::vector<std::string>& forces, const std::vector<std::string>& pipelines,
                const std::vector<uint64_t>& counts, const std::vector<int>& blockSizes,
                const std::vector<int>& cellWidths, const std::string& engine, const std::string& scenario,
                int steps, int warmup, int repeats, double maxSeconds, const std::string& preset, int dims,
                const std::string& localRule) {
  app::Options o;
  o.mode = app::Mode::Bench;
  // A local rule of the rule table for the boids configurations, with its boundary (as --rule).
  if (!localRule.empty()) {
    const core::RuleInfo* r = core::findRule(localRule);
    if (!r || r->kind != core::RuleKind::Local)
      throw core::UsageError("bench: rule='" + localRule + "' is not a local rule of the rule table");
    core::selectRule(o.params, *r);
    o.params.boundary = r->boundary;
  }
  o.bench.forces = namesTo<core::ForceMode>("force", forces);
  o.bench.pipelines = namesTo<core::Pipeline>("pipeline", pipelines);
  o.bench.counts = counts;
  o.bench.blockSizes = blockSizes;
  o.bench.cellWidths = cellWidths;
  o.nSet = !counts.empty();
  if (!engine.empty()) {
    if (!core::parse(engine, o.engine)) throw core::UsageError("bench: engine='" + engine + "' is invalid: one of: cpu, cuda");
    o.engineSet = true;
  }
  if (!scenario.empty()) {
    const std::vector<std::string>& names = core::scenarioNames();
    if (std::find(names.begin(), names.end(), scenario) == names.end())
      throw core::UsageError("bench: scenario='" + scenario + "' is invalid: one of the scenario names");
    o.bench.scenario = o.scenario.name = scenario;
  }
  if (steps > 0) o.bench.steps = steps;
  if (warmup >= 0) o.bench.warmup = warmup;
  if (repeats > 0) o.bench.repeats = repeats;
  if (maxSeconds > 0) o.bench.maxSeconds = maxSeconds;
  if (dims > 0) o.params.dims = dims;
  for (core::Pipeline p : o.bench.pipelines)
    if (!core::serves(p, core::localRuleForce()) &&
        std::find(o.bench.forces.begin(), o.bench.forces.end(), core::ForceMode::Gravity) == o.bench.forces.end())
      throw core::UsageError(std::string("bench: pipeline='") + core::toString(p) + "': " + core::gravityOnlyMessage() +
                             "; add force='gravity'");
  if (!preset.empty()) {
    o.bench.preset = preset;
    const app::BenchPreset& pr = app::findBenchPreset(preset);
    if (pr.applyParams) pr.applyParams(o.params);
    app::fillFromPreset(pr, o.bench);
    o.bench.reference = o.bench.reference || pr.reference;
  }
  const std::string err = core::validateParams(o.params);
  if (!err.empty()) throw core::UsageError(err);
  app::resolveDefaults(o);
  std::vector<core::CsvRow> rows;
  int status = 0;
  {
    nb::gil_scoped_release release;
    status = app::runBench(o, [&](const core::CsvRow& r) { rows.push_back(r); });
  }
  nb::list out;
  for (const core::CsvRow& r : rows) {
    nb::list row;
    for (const std::string& c : core::benchCsvColumns()) row.append(nb::make_tuple(c, r.get(c)));
    out.append(row);
  }
  return nb::make_tuple(out, status);
}

// A trajectory (core/trajectory.h) written from Python: the writer the command line's
// --trajectory uses, frames and observables rows appended by the package.
class Trajectory {
 public:
  Trajectory(Simulation& sim, const std::string& path) {
    core::trajectory::checkTrajectoryPath("write_trajectory", path);
    core::trajectory::Meta meta;
    const core::SimParams& p = sim.engine().params();
    meta.force = core::toString(p.force);
    meta.halfSize = p.halfSize;
    meta.paramsJson = sim.paramsJsonCompact();
    writer_ = std::make_unique<core::trajectory::Writer>("write_trajectory", path, meta);
  }
  void frame(Simulation& sim) {
    if (!writer_) throw core::UsageError("write_trajectory: the trajectory is closed");
    const core::Bodies b = sim.readForFrame();
    const uint64_t step = sim.engine().stepCount();
    writer_->frame(b, step, double(step) * double(core::activeDt(sim.engine().params())));
  }
  void observables(const std::vector<std::string>& columns, const std::vector<double>& row) {
    if (!writer_) throw core::UsageError("write_trajectory: the trajectory is closed");
    writer_->observables(columns, row);
  }
  uint64_t frames() const { return writer_ ? writer_->frames() : 0; }
  void close() { writer_.reset(); }

 private:
  std::unique_ptr<core::trajectory::Writer> writer_;
};

nb::list pipelines() {
  nb::list out;
  for (const core::PipelineInfo& r : core::pipelineTable()) {
    nb::dict d;
    d["name"] = r.name;
    d["key"] = std::string(1, r.key);
    d["boids"] = r.boids;
    d["gravity"] = r.gravity;
    d["gravity_runs"] = core::toString(r.gravityAs);
    d["stages"] = [&] {
      nb::list s;
      for (int k = 0; k < core::kStageCount; ++k)
        if (r.stages & (1u << k)) s.append(core::kStageNames[k]);
      return s;
    }();
    d["sorts"] = r.sorts;
    d["reorders"] = r.reorders;
    d["lists"] = r.lists;
    d["all_pairs"] = r.allPairs;
    d["summary"] = r.summary;
    out.append(d);
  }
  return out;
}

nb::list rules() {
  nb::list out;
  for (const core::RuleInfo& r : core::ruleTable()) {
    nb::dict d;
    d["name"] = r.name;
    d["kind"] = r.kind == core::RuleKind::Local ? "local" : "field";
    d["force"] = core::toString(r.force);
    d["section"] = r.section;
    d["summary"] = r.summary;
    d["radius_key"] = r.radiusKey ? nb::object(nb::str(r.radiusKey)) : nb::none();
    d["speed_key"] = r.speedKey ? nb::object(nb::str(r.speedKey)) : nb::none();
    d["noise_key"] = r.noiseKey ? nb::object(nb::str(r.noiseKey)) : nb::none();
    d["dt_key"] = r.dtKey ? nb::object(nb::str(r.dtKey)) : nb::none();
    d["boundary"] = core::toString(r.boundary);
    d["constant_speed"] = r.constantSpeed;
    out.append(d);
  }
  return out;
}

nb::list paramTable() {
  nb::list out;
  const core::SimParams defaults = core::defaultParams();
  for (const core::ParamDesc& p : core::paramTable()) {
    nb::dict d;
    d["key"] = p.key;
    d["option"] = p.option;
    d["label"] = p.label;
    d["unit"] = p.unit;
    d["help"] = p.help;
    d["default"] = core::formatValue(p, p.get(defaults));
    d["allowed"] = core::allowedText(p.spec);
    static const char* const kTypes[] = {"float", "int", "count", "enum"};
    d["type"] = kTypes[static_cast<int>(p.spec.type)];
    nb::list names;
    for (int i = 0; i < p.spec.numNames; ++i) names.append(p.spec.names[i]);
    d["names"] = names;
    d["default_value"] = paramObject(p, p.get(defaults));
    out.append(d);
  }
  return out;
}

}  // namespace murmur::python

NB_MODULE(_murmuration, m) {
  using namespace murmur;
  using namespace murmur::python;
  m.doc() = "Native part of murmuration; use the murmuration package.";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const FitError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const core::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<Simulation> sim(m, "Simulation");
  sim.def(nb::init<const std::string&, uint64_t, const std::string&, const std::string&, const std::string&, bool,
                   const std::vector<double>&, double, uint64_t, const std::vector<std::pair<std::string, double>>&>(),
          "engine"_a, "n"_a, "scenario"_a, "path"_a, "select"_a, "file_subset"_a, "scale"_a, "neighbours"_a, "seed"_a,
          "values"_a)
      .def("step", &Simulation::step, "k"_a)
      .def("synchronize", &Simulation::synchronize)
      .def("snapshot", &Simulation::snapshot)
      .def("observe", &Simulation::observe, "flocks"_a, "milling_min_size"_a)
      .def("reset_observe_baseline", &Simulation::resetObserveBaseline)
      .def("params_json", &Simulation::paramsJson)
      .def("set_param_values", &Simulation::setParamValues, "values"_a)
      .def("param", &Simulation::paramValueOf, "key"_a)
      .def("set_state_host", &Simulation::setStateHost, "positions"_a.none(), "velocities"_a.none(),
           "masses"_a.none(), "species"_a.none())
      .def("save", &Simulation::save, "path"_a)
      .def_prop_ro("n", &Simulation::n)
      .def_prop_ro("step_count", &Simulation::stepCount)
      .def_prop_ro("engine", &Simulation::engineName)
      .def_prop_ro("device", &Simulation::device)
      .def_prop_ro("pipeline", &Simulation::pipeline)
      .def_prop_ro("force", &Simulation::force)
      .def_prop_ro("scenario", &Simulation::scenario)
      .def_prop_ro("note", &Simulation::note);
  nb::class_<Trajectory>(m, "Trajectory")
      .def(nb::init<Simulation&, const std::string&>(), "sim"_a, "path"_a)
      .def("frame", &Trajectory::frame, "sim"_a)
      .def("observables", &Trajectory::observables, "columns"_a, "row"_a)
      .def_prop_ro("frames", &Trajectory::frames)
      .def("close", &Trajectory::close);
#if defined(MURMUR_HAVE_CUDA)
  sim.def("set_state_device", &Simulation::setStateDevice, "positions"_a.none(), "velocities"_a.none(),
          "masses"_a.none(), "species"_a.none())
      .def("device_array",
           [](nb::handle self, const std::string& name) {
             return nb::cast<Simulation&>(self).deviceArray<nb::no_framework>(name, self);
           })
      .def("cuda_device", &Simulation::cudaDevice)
      .def("device_array_cupy",
           [](nb::handle self, const std::string& name) {
             return nb::cast<Simulation&>(self).deviceArray<nb::cupy>(name, self);
           })
      .def("device_array_torch",
           [](nb::handle self, const std::string& name) {
             return nb::cast<Simulation&>(self).deviceArray<nb::pytorch>(name, self);
           })
      .def("device_pointer", &Simulation::devicePointer, "name"_a);
  m.attr("has_cuda") = true;
#else
  m.attr("has_cuda") = false;
#endif
#if defined(MURMUR_HAVE_RENDER)
  sim.def("render", &Simulation::render, "width"_a, "height"_a, "draw"_a, "colour"_a);
  m.attr("has_render") = true;
#else
  m.attr("has_render") = false;
#endif

  m.def("bench", &bench, "forces"_a, "pipelines"_a, "counts"_a, "block_sizes"_a, "cell_widths"_a, "engine"_a,
        "scenario"_a, "steps"_a, "warmup"_a, "repeats"_a, "max_seconds"_a, "preset"_a, "dims"_a, "local_rule"_a);
  m.def("param_value", &paramValue, "key"_a, "value"_a, "what"_a);
  m.def("max_bodies", [] { return core::kMaxBodies; });
  m.def("observable_table", [] {
    nb::list out;
    for (const core::ObservableDesc& d : core::observableTable()) {
      nb::dict r;
      r["column"] = d.column;
      r["force"] = core::toString(d.force);
      r["flocks"] = d.flocks;
      r["derived"] = d.derived;
      r["meaning"] = d.meaning;
      out.append(r);
    }
    return out;
  });
  m.def("trajectory_available", [] { return core::trajectory::available(); });
  m.def("pipelines", &pipelines);
  m.def("scenarios", [] { return core::scenarioNames(); });
  m.def("param_table", &paramTable);
  m.def("rules", &rules);
  m.def("cuda_available", [] {
    std::string why;
    const bool ok = app::cudaAvailable(&why);
    return nb::make_tuple(ok, why);
  });
}
