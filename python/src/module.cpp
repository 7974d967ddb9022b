// The murmuration Python module's native part (_murmuration): a simulation over the engine
// interface, built from the same parsing, validation and scenario code as the command line, and
// the tables (pipelines, rules, scenarios, parameters) the command line reads. The Python package
// (python/murmuration/__init__.py) wraps it with the documented API; docs/python.md describes it.
//
// Errors: core::UsageError (the command line's one-line messages) and std::invalid_argument
// become ValueError, a size that does not fit MemoryError, cuda::CudaError (file, line and
// expression in its message) RuntimeError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/bench.h"
#include "app/engine_factory.h"
#include "app/options.h"
#include "app/params_json.h"
#include "app/run.h"
#include "core/body_io.h"
#include "core/engine.h"
#include "core/errors.h"
#include "core/param_table.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
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

// Parses a command line ("murmur" plus args) as the program does; throws UsageError.
app::Options parseArgs(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"murmur"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (std::string& a : argv) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  app::Options o;
  if (!app::parseOptions(static_cast<int>(argv.size()), ptrs.data(), o))
    throw core::UsageError("help is not available here");
  return o;
}

void checkFits(core::EngineKind kind, size_t n, const core::SimParams& p, const core::ScenarioSpec* spec) {
  try {
    app::checkFits(kind, n, p, spec);
  } catch (const core::UsageError& e) {
    throw FitError(e.what());
  }
}

bool hasArg(const std::vector<std::string>& args, const char* name) {
  for (const std::string& a : args)
    if (a == name) return true;
  return false;
}

template <typename T>
using HostArray = nb::ndarray<nb::numpy, T>;

// A NumPy array that owns a copy of `values` of shape (n) or (n, cols).
template <typename T>
HostArray<T> hostArray(std::vector<T> values, size_t n, size_t cols) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  if (cols == 0) {
    const size_t shape[1] = {n};
    return HostArray<T>(owned->data(), 1, shape, owner);
  }
  const size_t shape[2] = {n, cols};
  return HostArray<T>(owned->data(), 2, shape, owner);
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
  // args: command-line options of a headless run (--n, --force, --scenario, ...); paramsJson: the
  // parameters as --params JSON text, applied over the defaults below the options.
  Simulation(const std::vector<std::string>& args, const std::optional<std::string>& paramsJson, bool pipelineGiven) {
    std::vector<std::string> full = {"--headless", "--no-render"};
    full.insert(full.end(), args.begin(), args.end());
    o_ = parseArgs(full);
    if (paramsJson) {
      const core::ForceMode force = o_.params.force;
      const core::Pipeline pipeline = o_.params.pipeline;
      std::set<std::string> keys;
      // Topological neighbours run on rows: the parameters are read over it unless --pipeline
      // chose one, and the default world's choice comes back below only without them.
      if (!hasArg(args, "--pipeline")) o_.params.pipeline = core::Pipeline::Rows;
      app::loadParamsText("params", *paramsJson, o_.params, &keys);
      if (!hasArg(args, "--pipeline") && !keys.count("pipeline")) {
        if (o_.params.topological > 0)
          o_.defaultWorld = false;
        else
          o_.params.pipeline = pipeline;
      }
      // The options beat the parameters, as they beat a --params file.
      if (hasArg(args, "--force")) o_.params.force = force;
      else if (keys.count("force")) o_.forceSet = true;
      // A world size asked for keeps the uniform cube of that size, as --half-size does (the
      // default world would size itself from N).
      if (keys.count("halfSize") && !hasArg(args, "--scenario") && o_.scenario.name == "dense") {
        o_.scenario.name = "uniform";
        o_.defaultWorld = false;
        if (!hasArg(args, "--pipeline") && !keys.count("pipeline")) o_.params.pipeline = core::defaultParams().pipeline;
      }
      if (hasArg(args, "--pipeline")) o_.params.pipeline = pipeline;
    }
    if (pipelineGiven) o_.defaultWorld = false;
    app::resolveDefaults(o_);
    const std::string err = core::validateParams(o_.params);
    if (!err.empty()) throw core::UsageError(err);
    core::SimParams params = o_.params;
    const bool fromFile = o_.scenario.name.rfind("file:", 0) == 0;
    if (!fromFile) checkFits(o_.engine, o_.scenario.n, params, &o_.scenario);
    core::Scenario scenario = core::makeScenario(o_.scenario, params);
    params.halfSize = scenario.halfSize;
    if (fromFile) checkFits(o_.engine, scenario.bodies.size(), params, &o_.scenario);
    engine_ = app::makeEngine(o_.engine, params);
    engine_->reset(scenario.bodies);
    engine_->setStepCount(o_.startStep);
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

  HostArray<float> positions() {
    const core::Bodies b = read();
    std::vector<float> v(b.size() * 3);
    for (size_t i = 0; i < b.size(); ++i) std::memcpy(&v[i * 3], &b.pos[i].x, 3 * sizeof(float));
    return hostArray(std::move(v), b.size(), 3);
  }
  HostArray<float> velocities() {
    const core::Bodies b = read();
    std::vector<float> v(b.size() * 3);
    for (size_t i = 0; i < b.size(); ++i) std::memcpy(&v[i * 3], &b.vel[i].x, 3 * sizeof(float));
    return hostArray(std::move(v), b.size(), 3);
  }
  HostArray<float> masses() {
    const core::Bodies b = read();
    std::vector<float> v(b.size());
    for (size_t i = 0; i < b.size(); ++i) v[i] = b.pos[i].w;
    return hostArray(std::move(v), b.size(), 0);
  }
  HostArray<core::Species> species() {
    core::Bodies b = read();
    core::withDefaults(b);  // none read back: species 0 throughout
    const size_t n = b.size();
    return hostArray(std::move(b.species), n, 0);
  }

  std::string paramsJson() const { return app::paramsToJson(engine_->params(), -1); }

  void setParams(const std::string& json) {
    notBusy("set_params");
    core::SimParams p = engine_->params();
    app::loadParamsText("params", json, p);
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

  // Host arrays (C-contiguous float32 and uint8, checked by the package for shape): the state
  // replaced through a reset that keeps the ids. What is not given keeps its values.
  void setStateHost(std::optional<HostIn> pos, std::optional<HostIn> vel, std::optional<HostIn> mass,
                    std::optional<SpeciesIn> species) {
    notBusy("set_state");
    const size_t n = engine_->numBodies();
    if (pos) checkFinite("positions", pos->data(), n * 3);
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
    std::vector<std::string> args = {"--headless", "--width", std::to_string(width), "--height", std::to_string(height)};
    if (!draw.empty()) args.insert(args.end(), {"--draw", draw});
    if (!colour.empty()) args.insert(args.end(), {"--colour", colour});
    const app::Options r = parseArgs(args);
    notBusy("render");
    applyDeviceWrites(false);
    if (!view_ || viewW_ != r.width || viewH_ != r.height || viewDraw_ != draw || viewColour_ != colour) {
      view_.reset();
      app::Options o = o_;
      o.width = r.width;
      o.height = r.height;
      o.drawMode = r.drawMode;
      o.colourMode = r.colourMode;
      std::string why;
      view_ = app::createOffscreenView(o, *engine_, &why);
      if (!view_) throw std::runtime_error("render: no offscreen OpenGL context (" + why + ")");
      viewW_ = r.width, viewH_ = r.height, viewDraw_ = draw, viewColour_ = colour;
    }
    view_->renderFrame(*engine_);
    const std::vector<uint8_t> rgba = view_->pixels();
    const size_t w = static_cast<size_t>(r.width), h = static_cast<size_t>(r.height);
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
  std::string engine() const { return core::toString(engine_->kind()); }
  std::string device() const { return engine_->deviceName(); }
  std::string pipeline() const { return core::toString(engine_->params().pipeline); }
  std::string force() const { return core::toString(engine_->params().force); }
  std::string scenario() const { return o_.scenario.name; }

 private:
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

  // step() releases the GIL: a call from another thread meanwhile is refused, not raced.
  struct Busy {
    explicit Busy(bool& flag) : f(flag) { f = true; }
    ~Busy() { f = false; }
    bool& f;
  };
  void notBusy(const char* what) const {
    if (busy_) throw std::runtime_error(std::string(what) + ": the simulation is stepping in another thread");
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

  app::Options o_;
  std::unique_ptr<core::Engine> engine_;
  bool busy_ = false;  // step() is running with the GIL released
#if defined(MURMUR_HAVE_CUDA)
  cuda::DeviceBuffer<core::Vec4> posById_, velById_;
  cuda::DeviceBuffer<core::Species> speciesById_;
  bool idFresh_ = false;    // the buffers hold the current state (or writes not yet applied)
  bool handedOut_ = false;  // arrays over them were handed out since the last step
#endif
#if defined(MURMUR_HAVE_RENDER)
  std::unique_ptr<app::OffscreenView> view_;  // after engine_: released first
  int viewW_ = 0, viewH_ = 0;
  std::string viewDraw_, viewColour_;
#endif
};

// murmur bench with these options (the CSV path among them); the exit status.
int runBench(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"bench"};
  full.insert(full.end(), args.begin(), args.end());
  app::Options o = parseArgs(full);
  app::resolveDefaults(o);
  nb::gil_scoped_release release;
  return app::runBench(o);
}

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
  sim.def(nb::init<const std::vector<std::string>&, const std::optional<std::string>&, bool>(), "args"_a,
          "params_json"_a.none(), "pipeline_given"_a)
      .def("step", &Simulation::step, "k"_a)
      .def("synchronize", &Simulation::synchronize)
      .def("positions", &Simulation::positions)
      .def("velocities", &Simulation::velocities)
      .def("masses", &Simulation::masses)
      .def("species", &Simulation::species)
      .def("params_json", &Simulation::paramsJson)
      .def("set_params", &Simulation::setParams, "json"_a)
      .def("set_state_host", &Simulation::setStateHost, "positions"_a.none(), "velocities"_a.none(),
           "masses"_a.none(), "species"_a.none())
      .def("save", &Simulation::save, "path"_a)
      .def_prop_ro("n", &Simulation::n)
      .def_prop_ro("step_count", &Simulation::stepCount)
      .def_prop_ro("engine", &Simulation::engine)
      .def_prop_ro("device", &Simulation::device)
      .def_prop_ro("pipeline", &Simulation::pipeline)
      .def_prop_ro("force", &Simulation::force)
      .def_prop_ro("scenario", &Simulation::scenario);
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

  m.def("run_bench", &runBench, "args"_a);
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
