// `murmur bench`, the run: one engine per kind reused by every configuration, each configuration
// warmed up and timed per step (step + synchronize, wall clock) within its time budget, the
// progress line and the time-left estimate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "app/bench.h"
#include "app/bench_output.h"
#include "app/engine_factory.h"
#include "app/git_sha.h"
#include "app/offscreen.h"
#include "app/params_json.h"
#include "app/progress.h"
#include "app/run.h"
#include "app/stop_signal.h"
#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/format.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
#if defined(MURMUR_HAVE_CUDA)
#include "cuda/sample_nbody.h"
#endif

#if defined(MURMUR_HAVE_CUDA)
#include "cuda/textbook_coherent.h"
#endif

namespace murmur::app {

using core::EngineKind;
using core::ForceMode;
using core::Pipeline;
using core::UsageError;

int budgetedWarmup(const BenchOptions& b, double stepMs) {
  // The warm-up loop below stops after the step that takes it past a quarter of the budget.
  const int asked = std::max(1, b.warmup);
  if (!(stepMs > 0)) return asked;
  const double past = std::floor(0.25 * b.maxSeconds * 1000.0 / stepMs) + 1;
  return past < asked ? static_cast<int>(past) : asked;
}

int stepsWithinBudget(const BenchOptions& b, double warmMs) {
  const double perRepeat = b.maxSeconds * 1000.0 / double(b.repeats);
  if (warmMs > 0 && b.steps * warmMs > perRepeat)
    return std::min(b.steps, std::max(2, static_cast<int>(perRepeat / warmMs)));
  return b.steps;
}

SweepEstimate::SweepEstimate(const BenchOptions& b, int gravityGridDim)
    : b_(b), gravityCells_(std::pow(double(gravityGridDim), 3.0)) {}

double SweepEstimate::cost(const BenchConfig& c, size_t n) const {
  const double x = double(std::max<size_t>(n, 1));
  if (c.reference || core::pipelineInfo(c.pipeline).allPairs) return x * x;
  return c.force == core::ForceMode::Gravity ? x * std::min(x, gravityCells_) : x;
}

double SweepEstimate::stepSeconds(double msPerStep) const {
  const double timed = double(stepsWithinBudget(b_, msPerStep)) * b_.repeats * (b_.observe ? 2 : 1);
  return (budgetedWarmup(b_, msPerStep) + timed) * msPerStep / 1000.0;
}

void SweepEstimate::add(const BenchConfig& c, size_t n, double seconds, long stepsRun, double msPerStep) {
  if (c.n == 0) fileN_ = n;
  done_.push_back({c, Done{n, msPerStep}});
  seconds_ += seconds;
  outside_ += std::max(0.0, seconds - double(stepsRun) * msPerStep / 1000.0);
}

double SweepEstimate::remaining(const std::vector<BenchConfig>& plan, size_t from) const {
  if (done_.empty()) return -1;
  const double count = double(done_.size());
  const auto same = [](const BenchConfig& a, const BenchConfig& b) {
    return a.engine == b.engine && a.force == b.force && a.pipeline == b.pipeline && a.textbook == b.textbook &&
           a.reference == b.reference;
  };
  double s = 0;
  for (size_t i = from; i < plan.size(); ++i) {
    const BenchConfig& c = plan[i];
    if (!c.skipReason.empty()) continue;
    const size_t n = c.n ? c.n : fileN_;
    // The measured N of the same kind nearest to n (on a log scale): the work per step scales
    // from there, the nearer the better (a small N's step is mostly fixed costs).
    const Done* nearest = nullptr;
    double distance = 0;
    for (const auto& [dc, d] : done_) {
      if (!same(dc, c)) continue;
      const double dist = std::fabs(std::log(double(std::max<size_t>(d.n, 1)) / double(std::max<size_t>(n, 1))));
      if (!nearest || dist < distance || (dist == distance && d.n > nearest->n)) nearest = &d, distance = dist;
    }
    if (nearest)
      s += stepSeconds(nearest->msPerStep * cost(c, n) / cost(c, nearest->n)) + outside_ / count;
    else
      s += seconds_ / count;
  }
  return s;
}

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// A configuration that cannot run; the reason goes to the progress line and the sidecar.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::unique_ptr<OffscreenView> makeOffscreenView(const Options& o, core::Engine& engine, std::string* why) {
#if defined(MURMUR_HAVE_RENDER)
  return createOffscreenView(o, engine, why);
#else
  (void)o;
  (void)engine;
  *why = "this build has no renderer (built with MURMUR_ENABLE_RENDER=OFF)";
  return nullptr;
#endif
}

struct EngineSlot {
  std::unique_ptr<core::Engine> engine;
  core::DeviceInfo info;
  std::string deviceName;
  std::string brokenReason;  // set when the engine could not be recreated after a failure
};

// The last scenario built: consecutive configurations differ only in pipeline, block size or
// cell width, and generating 10M bodies costs more than some measurements.
struct ScenarioCache {
  std::string name;
  uint64_t n = 0;
  core::Scenario scenario;
};

core::SimParams configParams(const Options& o, const BenchConfig& c) {
  core::SimParams p = o.params;
  p.force = c.force;
  p.pipeline = c.pipeline;
  if (c.blockSize) p.blockSize = c.blockSize;
  if (c.cellWidth) p.cellWidthFactor = c.cellWidth;
  if (o.dt > 0) core::setActiveDt(p, o.dt);
  return p;
}

// The sample formulation's force kernel on the same bodies, warmed up and timed like an engine
// step (launch + synchronize, wall clock). Positions do not move: an all-pairs step costs the
// same for any state. Its time is all force; integrate stays empty.
Measurement measureReference(const Options& o, const core::Bodies& bodies, Measurement& m) {
#if defined(MURMUR_HAVE_CUDA)
  const float eps2 = m.params.gravity.softening * m.params.gravity.softening;
  cuda::SampleNbody sample(bodies.pos, eps2, m.params.gravity.G, m.params.blockSize);
  const double budgetMs = o.bench.maxSeconds * 1000.0;
  double warmMs = 0;
  for (int s = 0; s < o.bench.warmup || s == 0; ++s) {
    const auto t0 = Clock::now();
    sample.computeForces();
    const double ms = msBetween(t0, Clock::now());
    ++m.warmup;
    warmMs = s == 0 ? ms : std::min(warmMs, ms);
    if (m.warmup * warmMs > 0.25 * budgetMs) break;
  }
  const int steps = stepsWithinBudget(o.bench, warmMs);
  m.warmupAsked = o.bench.warmup;
  m.stepsAsked = o.bench.steps;
  m.stepsPerRepeat = steps;
  for (int r = 0; r < o.bench.repeats; ++r) {
    std::vector<double> repeatMs;
    for (int s = 0; s < steps; ++s) {
      const auto t0 = Clock::now();
      sample.computeForces();
      repeatMs.push_back(msBetween(t0, Clock::now()));
    }
    m.repeatMedians.push_back(stepStats(repeatMs).median);
    m.stepMs.insert(m.stepMs.end(), repeatMs.begin(), repeatMs.end());
  }
  m.stageMean.forceMs = stepStats(m.stepMs).median;
  return m;
#else
  (void)o;
  (void)bodies;
  (void)m;
  throw Skip("this build has no CUDA engine");
#endif
}

// The configuration's bodies, built once per scenario and N (the cache), with the world's size
// in m.params. A file scenario's size is known only now: one above the limits is skipped.
const core::Bodies& configBodies(const Options& o, const BenchConfig& c, ScenarioCache& cache, Measurement& m) {
  if (cache.name != c.scenario || cache.n != c.n || cache.scenario.bodies.size() == 0) {
    core::ScenarioSpec spec = o.scenario;
    spec.name = c.scenario;
    spec.denseNeighbours = c.denseNeighbours;
    if (c.n) spec.n = c.n;
    cache = ScenarioCache{};  // release the previous N before building the next
    if (c.n) checkFits(c.engine, c.n, m.params, &spec);  // UsageError: reported as skipped
    cache.scenario = core::makeScenario(spec, m.params);
    cache.name = c.scenario;
    cache.n = c.n;
  }
  m.params.halfSize = cache.scenario.halfSize;
  const core::Bodies& bodies = cache.scenario.bodies;
  m.n = bodies.size();
  if (c.n == 0) {  // a file scenario: its size is known only now
    const std::string why = sizeLimitReason(c.engine, c.force, c.pipeline, m.n);
    if (!why.empty()) throw Skip(why);
  }
  return bodies;
}

// `repeats` runs of `steps` single steps in whole cycles of `cycle` steps: `timed()` runs inside
// each step's time (after the step and its wait), `after()` outside it. Each repeat's times,
// spread over their cycles (spreadCycleMeans). Throws Skip when a signal arrives.
template <typename Timed, typename After>
std::vector<std::vector<double>> timeRepeats(core::Engine& engine, int repeats, int steps, int cycle, Timed&& timed,
                                             After&& after) {
  std::vector<std::vector<double>> out;
  for (int r = 0; r < repeats; ++r) {
    std::vector<double> repeatMs;
    for (int s = 0; s < steps; s += cycle) {
      for (int k = 0; k < cycle; ++k) {
        const auto t0 = Clock::now();
        engine.step(1);
        engine.synchronize();
        timed();
        if (StopSignal::received()) throw Skip(std::string("interrupted by ") + StopSignal::name());
        repeatMs.push_back(msBetween(t0, Clock::now()));
        after();
      }
    }
    spreadCycleMeans(repeatMs, static_cast<size_t>(cycle));
    out.push_back(std::move(repeatMs));
  }
  return out;
}

// The timed steps after the warm-up: per-step times, stage means, render times, the repeats'
// medians. Throws Skip when a signal arrives.
void timeSteps(const Options& o, core::Engine& engine, OffscreenView* view, Measurement& m) {
  // Warm-up, and a time budget per configuration: a configuration whose steps take long (naive
  // at large N) runs fewer warm-up and timed steps rather than stalling the sweep; the CSV's
  // steps and warmup_steps columns say how many ran, its cut column and the progress line whether
  // that is fewer than asked.
  const double budgetMs = o.bench.maxSeconds * 1000.0;
  double warmMs = 0;
  for (int s = 0; s < o.bench.warmup || s == 0; ++s) {
    const auto t0 = Clock::now();
    engine.step(1);
    engine.synchronize();
    if (StopSignal::received()) throw Skip(std::string("interrupted by ") + StopSignal::name());
    if (view) view->renderFrame(engine);
    const double ms = msBetween(t0, Clock::now());
    ++m.warmup;
    warmMs = s == 0 ? ms : std::min(warmMs, ms);
    if (m.warmup * warmMs > 0.25 * budgetMs) break;
  }
  const int steps = stepsWithinBudget(o.bench, warmMs);
  // Timed in whole cycles of the pipeline (spreadCycleMeans): every sample is the mean step of one
  // cycle, so no sample leaves out a build.
  const int cycle = std::max(1, engine.stepsPerCycle());
  m.stepMs.reserve(static_cast<size_t>(steps) * o.bench.repeats);
  std::vector<double> renderMs;
  for (const std::vector<double>& repeatMs : timeRepeats(
           engine, o.bench.repeats, steps, cycle, [] {},
           [&] {
             m.stageMean += engine.lastProfile();
             if (view) renderMs.push_back(view->renderFrame(engine));
           })) {
    m.repeatMedians.push_back(stepStats(repeatMs).median);
    m.stepMs.insert(m.stepMs.end(), repeatMs.begin(), repeatMs.end());
  }
  // A flock that gathers (Vicsek's does) times more neighbours than it started with.
  if (m.hasNeighbours) m.neighboursTimed = engine.neighbourStats();
  // --observe: as many steps again (the same repeats), each followed by a sample, timed together
  // (the sums back on the host included). A sample may run part of the next step's work (the rows
  // pipeline's force pass samples the state it starts from), so what sampling costs is the
  // difference of the medians (observeCostMs), not the sample's own time.
  if (m.observed) {
    core::ObserveRequest req;
    req.flocks = m.observedFlocks;
    for (const std::vector<double>& repeatMs :
         timeRepeats(engine, o.bench.repeats, steps, cycle, [&] { m.lastObservables = engine.observe(req); }, [] {}))
      m.sampledStepMs.insert(m.sampledStepMs.end(), repeatMs.begin(), repeatMs.end());
  }
  // What ran of what was asked (a repeat runs whole cycles: it may run more than `steps`).
  m.warmupAsked = o.bench.warmup;
  m.stepsAsked = o.bench.steps;
  m.stepsPerRepeat = static_cast<int>(m.stepMs.size() / static_cast<size_t>(o.bench.repeats));
  const double k = 1.0 / double(m.stepMs.size());
  m.stageMean *= k;
  // The median, like sim_ms_median and the headless summary: a frame that waits on the driver
  // now and then (interop map, a context switch) should not move the number frame_fps uses.
  if (!renderMs.empty()) m.renderMs = stepStats(renderMs).median;
}

Measurement measure(const Options& o, const BenchConfig& c, EngineSlot& slot, ScenarioCache& cache) {
  Measurement m;
  m.params = configParams(o, c);
  const core::Bodies& bodies = configBodies(o, c, cache, m);
  if (c.reference) return measureReference(o, bodies, m);

  core::Engine& engine = *slot.engine;
  engine.setParams(m.params);
  engine.reset(bodies);
  // Per-stage times are part of every row. Profiling records CUDA events (CPU clocks) around
  // the stages; the step is synchronised per step anyway, so the cost is small.
  engine.setProfiling(true);

  std::unique_ptr<OffscreenView> view;
  if (o.bench.render) {
    std::string why;
    view = makeOffscreenView(o, engine, &why);
    if (!view) throw Skip("rendering: " + (why.empty() ? std::string("no offscreen view") : why));
    m.rendered = true;
    m.drawMode = view->drawMode();
  }
  if (core::runsLocalRule(c.force)) {
    m.neighbours = engine.neighbourStats();
    m.hasNeighbours = true;
  }
  // The textbook baseline is not an engine of ours: it has no observables.
  m.observed = o.bench.observe && !c.textbook;
  m.observedFlocks = o.bench.observeFlocks && core::runsLocalRule(c.force);

  timeSteps(o, engine, view.get(), m);
  // Known only once a frame has been filled.
  if (view) m.interop = view->interop();

  // A state that blew up times different branches than a sane one: such a row would mislead.
  const core::Bodies final = engine.readBodies();
  for (const auto& p : final.pos)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      throw Skip("the state became non-finite (check dt and softening)");
  return m;
}

// Engine slots: (engine kind, textbook baseline).
using SlotKey = std::pair<EngineKind, bool>;
SlotKey slotKey(const BenchConfig& c) { return {c.engine, c.textbook}; }

std::unique_ptr<core::Engine> makeBenchEngine(const BenchConfig& c, core::SimParams p) {
  if (!c.textbook) return makeEngine(c.engine, p);
#if defined(MURMUR_HAVE_CUDA)
  std::string why;
  if (!cudaAvailable(&why))
    throw UsageError(std::string("--pipeline ") + kTextbookPipeline + " needs the CUDA engine: " + why);
  p.force = core::localRuleForce();
  return cuda::createTextbookCoherentEngine(p);
#else
  throw UsageError(std::string("--pipeline ") + kTextbookPipeline +
                   " needs the CUDA engine: this build has no CUDA compiler");
#endif
}

}  // namespace

namespace {

// Engines first, one per kind (and one for the textbook baseline), reused by every configuration:
// an --engine that cannot run here is a usage error before any file is touched.
std::map<SlotKey, EngineSlot> openSlots(const Options& o, const std::vector<BenchConfig>& plan) {
  std::map<SlotKey, EngineSlot> slots;
  for (const BenchConfig& c : plan) {
    if (slots.count(slotKey(c)) || (c.textbook && !c.skipReason.empty())) continue;
    EngineSlot& s = slots[slotKey(c)];
    s.engine = makeBenchEngine(c, o.params);
    s.deviceName = s.engine->deviceName();
    s.info = s.engine->deviceInfo();
    std::fprintf(stderr, "bench: %s engine%s on %s\n", core::toString(c.engine),
                 c.textbook ? " (textbook coherent baseline)" : "", s.deviceName.c_str());
  }
  if (o.engine == EngineKind::Cpu && o.bench.blockSizes.size() > 1)
    std::fprintf(stderr, "bench: the CPU engine has no block size; each configuration runs once\n");
  if (o.bench.cpuBaseline && o.engine != EngineKind::Cpu && !slots.count(SlotKey{EngineKind::Cpu, false}))
    std::fprintf(stderr, "bench: --cpu-baseline: no configuration has n <= %s\n", withSuffix(kCpuBaselineMaxN).c_str());
  return slots;
}

// The sidecar's entry for this run: how it was asked for and on which devices.
json runJson(const Options& o, const std::map<SlotKey, EngineSlot>& slots) {
  json devices = json::object();
  for (const auto& [key, s] : slots) {
    if (key.second) continue;  // the baseline runs on the CUDA engine's device
    const EngineKind kind = key.first;
    json d = deviceJson(s.info);
    d["engine_device"] = s.deviceName;
    devices[core::toString(kind)] = d;
  }
  return json{{"command_line", o.bench.commandLine},
              {"started_utc", core::isoUtcNow()},
              {"git_sha", gitSha()},
              {"csv", o.bench.csv},
              {"preset", o.bench.preset},
              {"warmup_steps", o.bench.warmup},
              {"steps", o.bench.steps},
              {"repeats", o.bench.repeats},
              {"render", o.bench.render},
              {"cpu_baseline", o.bench.cpuBaseline},
              {"seed", o.scenario.seed},
              {"params", json::parse(paramsToJson(o.params))},
              {"devices", devices},
              {"configurations", json::array()}};
}

// Measures one configuration into m; returns why it was skipped (empty when measured).
std::string measureOrSkip(const Options& o, const BenchConfig& c, EngineSlot& slot, ScenarioCache& cache,
                          Measurement& m) {
  std::string skip = c.skipReason;
  if (skip.empty() && !slot.brokenReason.empty()) skip = slot.brokenReason;
  if (!skip.empty()) return skip;
  bool engineSuspect = false;
  try {
    m = measure(o, c, slot, cache);
  } catch (const Skip& e) {
    skip = e.what();
  } catch (const UsageError& e) {  // not enough device memory, a bad scenario
    skip = e.what();
  } catch (const std::invalid_argument& e) {  // parameters the engine rejects
    skip = e.what();
  } catch (const std::exception& e) {  // a device fault, host memory
    skip = e.what();
    engineSuspect = true;
  }
  if (engineSuspect) {
    // A failed step can leave the engine (and a CUDA context) unusable: start a fresh one so
    // that one bad configuration does not take the rest of the sweep with it.
    try {
      slot.engine.reset();
      cache = ScenarioCache{};
      slot.engine = makeBenchEngine(c, o.params);
    } catch (const std::exception& e) {
      slot.brokenReason = std::string("the engine failed earlier and cannot be recreated: ") + e.what();
    }
  }
  return skip;
}

// A measured configuration's sidecar fields.
void addMeasured(json& entry, const Measurement& m, const StepStats& st) {
  entry["n"] = m.n;
  entry["status"] = "measured";
  entry["sim_ms_median"] = st.median;
  entry["repeat_medians_ms"] = m.repeatMedians;
  entry["steps_per_s"] = 1000.0 / st.median;
  if (!cutColumn(m).empty()) entry["cut"] = cutColumn(m);
  if (m.hasNeighbours) {
    entry["neighbours_mean"] = m.neighbours.meanNeighbours;
    entry["candidates_mean"] = m.neighbours.meanCandidates;
    entry["neighbours_timed"] = m.neighboursTimed.meanNeighbours;
    entry["candidates_timed"] = m.neighboursTimed.meanCandidates;
  }
  if (m.rendered) {
    entry["render_ms"] = m.renderMs;
    entry["interop"] = m.interop;
  }
  if (m.observed && !m.sampledStepMs.empty()) {
    const StepStats os = stepStats(m.sampledStepMs);
    entry["sampled_step_ms_median"] = os.median;
    entry["sampled_step_ms_p90"] = os.p90;
    entry["observe_ms_median"] = observeCostMs(m);
    entry["observe_over_step"] = observeCostMs(m) / st.median;
    entry["observe_flocks"] = m.observedFlocks;
    json values = json::object();
    for (const core::ObservableDesc& d : core::observableTable())
      if (m.lastObservables.has(d.id)) values[d.column] = m.lastObservables[d.id];
    entry["observables_last"] = values;
  }
  entry["params"] = json::parse(paramsToJson(m.params));
}

}  // namespace

int runBench(const Options& o) { return runBench(o, nullptr); }

int runBench(const Options& o, const BenchRowSink& sink) {
  const std::vector<BenchConfig> plan = planBench(o);
  // Before anything is printed or measured: a CSV that cannot be written fails in one line. With
  // a sink the rows go to it instead, and no file is written.
  if (!sink) {
    core::checkWritable("--csv", o.bench.csv);
    core::checkWritable("--csv (sidecar)", o.bench.csv + ".json");
    if (o.bench.append) core::checkAppendable("--csv", o.bench.csv);
  }
  const auto sweepStart = Clock::now();
  std::map<SlotKey, EngineSlot> slots = openSlots(o, plan);
  std::optional<core::CsvWriter> csv;
  std::optional<Sidecar> sidecar;
  if (!sink) {
    csv.emplace(o.bench.csv, o.bench.append);
    sidecar.emplace(o.bench.csv + ".json", o.bench.append);
    sidecar->beginRun(runJson(o, slots));
    sidecar->save();
  }

  ScenarioCache cache;
  SweepEstimate eta(o.bench, o.params.gravity.gridDim);
  int measured = 0, skipped = 0;
  // The CSV and the sidecar are consistent after every configuration; a signal stops the sweep
  // between two of them (the one in progress finishes, or is skipped if it had not started).
  StopSignal stop;
  for (size_t i = 0; i < plan.size() && !StopSignal::received(); ++i) {
    const BenchConfig& c = plan[i];
    EngineSlot& slot = slots[slotKey(c)];
    std::fprintf(stderr, "[%zu/%zu] %s ... ", i + 1, plan.size(), describe(c).c_str());
    std::fflush(stderr);
    json entry = configJson(c, c.n);
    const auto t0 = Clock::now();
    Measurement m;
    const std::string skip = measureOrSkip(o, c, slot, cache, m);
    const double seconds = msBetween(t0, Clock::now()) / 1000.0;
    if (!skip.empty()) {
      ++skipped;
      entry["status"] = "skipped";
      entry["reason"] = skip;
      std::fprintf(stderr, "skipped: %s\n", skip.c_str());
    } else {
      ++measured;
      const StepStats st = stepStats(m.stepMs);
      const core::CsvRow row = makeRow(c, slot.deviceName, slot.info, m, st);
      if (sink) sink(row);
      else csv->write(row);
      // The wall time of a step as the sweep spends it: the step and its wait, and its frame.
      const size_t stepsRun = static_cast<size_t>(m.warmup) + m.stepMs.size() + m.sampledStepMs.size();
      eta.add(c, m.n, seconds, static_cast<long>(stepsRun), st.median + (m.rendered ? m.renderMs : 0.0));
      addMeasured(entry, m, st);
      const std::string cut = cutText(m, o.bench.repeats, o.bench.maxSeconds);
      const double left = eta.remaining(plan, i + 1);
      std::fprintf(stderr, "median %s ms (%s steps/s)", shortNumber(st.median).c_str(),
                   shortNumber(1000.0 / st.median).c_str());
      if (m.rendered)
        std::fprintf(stderr, ", render %s ms (%s fps)", shortNumber(m.renderMs).c_str(),
                     shortNumber(1000.0 / (st.median + m.renderMs)).c_str());
      if (m.observed && !m.sampledStepMs.empty()) {
        const double om = observeCostMs(m);
        std::fprintf(stderr, ", observe %s ms (%s of a step)", shortNumber(om).c_str(),
                     (shortNumber(100.0 * om / st.median) + "%").c_str());
      }
      if (!cut.empty()) std::fprintf(stderr, ", %s", cut.c_str());
      std::fprintf(stderr, "  [%s elapsed, ~%s left]\n", clockText(msBetween(sweepStart, Clock::now()) / 1000).c_str(),
                   left < 0 ? "?" : clockText(left).c_str());
    }
    if (sidecar) {
      sidecar->run()["configurations"].push_back(entry);
      sidecar->save();
    }
  }
  if (sidecar) {
    sidecar->run()["finished_utc"] = core::isoUtcNow();
    if (StopSignal::received()) {
      sidecar->run()["interrupted"] = StopSignal::name();
      sidecar->run()["configurations_not_run"] = plan.size() - static_cast<size_t>(measured + skipped);
    }
    sidecar->save();
    std::printf("bench: %d measured, %d skipped in %s; rows in %s, parameters in %s\n", measured, skipped,
                clockText(msBetween(sweepStart, Clock::now()) / 1000).c_str(), csv->path().c_str(),
                sidecar->path().c_str());
  }
  if (StopSignal::received()) {
    std::fprintf(stderr, "bench: stopped by %s after %d of %zu configurations\n", StopSignal::name(),
                 measured + skipped, plan.size());
    return StopSignal::exitStatus();
  }
  if (measured == 0) {
    std::fprintf(stderr, "bench: every configuration was skipped\n");
    return 1;
  }
  return 0;
}

}  // namespace murmur::app

