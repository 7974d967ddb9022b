// Headless runs: the simulation loop without a window, one summary line per run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "app/bench.h"
#include "app/bench_output.h"
#include "app/engine_factory.h"
#include "app/git_sha.h"
#include "app/observe_output.h"
#include "app/params_json.h"
#include "app/progress.h"
#include "app/run.h"
#include "app/stop_signal.h"
#include "app/summary.h"
#include "core/atomic_file.h"
#include "core/body_io.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/format.h"
#include "core/metrics.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
#include "dist/dist_factory.h"
#include "dist/launch.h"
#if defined(MURMUR_HAVE_RENDER)
#include "app/offscreen.h"
#include "render/screenshot.h"
#include "render/video.h"
#endif

namespace murmur::app {

namespace {


#if defined(MURMUR_HAVE_RENDER)
// "dir/f%05d.png": one conversion, %0 then digits then d, and nothing else for printf to read.
bool isPngPattern(const std::string& p) {
  const size_t at = p.find('%');
  if (at == std::string::npos || p.find('%', at + 1) != std::string::npos || p.size() > 4000) return false;
  size_t i = at + 1;
  if (i >= p.size() || p[i] != '0') return false;
  while (i < p.size() && p[i] >= '0' && p[i] <= '9') ++i;
  if (i >= p.size() || p[i] != 'd' || i - at > 4) return false;
  return p.size() >= 4 && p.compare(p.size() - 4, 4, ".png") == 0;
}
#endif

}  // namespace

namespace {

// Checks every output before the run (not found unwritable after an hour of it), builds the
// scenario and the engine (over several ranks, the decomposition) and resets it.
// The device line, and with --profile the start-up: the bodies made on the host (over ranks each
// makes its share, or all of them for a scenario made whole: `made`), then the engine taking them.
void reportStart(const Options& o, core::Engine& engine, bool speaker, double scenarioS, double engineS,
                 const char* made) {
  if (!speaker) return;
  std::fprintf(stderr, "device: %s\n", engine.deviceName().c_str());
  if (o.profile)
    std::printf("startup_s scenario=%.3f engine=%.3f%s%s\n", scenarioS, engineS, *made ? " bodies_made=" : "", made);
}

std::unique_ptr<core::Engine> prepareEngine(const Options& o, core::SimParams& params, bool ranks, bool speaker) {
  // The decomposition runs the pipelines the table marks for ranks; without a --pipeline the run
  // takes the decomposition's default instead of the single-GPU one.
  if (ranks && !o.pipelineSet) params.pipeline = core::defaultRankPipeline(params.force);
  if (!o.out.empty()) core::checkWritable("--out", o.out);
  if (!o.csv.empty()) core::checkWritable("--csv", o.csv);
  if (!o.screenshot.empty()) core::checkWritable("--screenshot", o.screenshot);
  if (!o.record.empty()) core::checkWritable("--record", o.record);
  checkObserveOutputs(o);
  if (!o.render && (!o.screenshot.empty() || !o.record.empty()))
    throw core::UsageError((o.screenshot.empty() ? "--record " + o.record : "--screenshot " + o.screenshot) +
                           ": needs rendering (drop --no-render)");
  // Over several ranks each GPU holds a share; the engine checks that share on every rank. Boids
  // made in shares (no rank holds every body) may number past one engine's bound.
  const core::EngineKind fitKind = ranks ? core::EngineKind::Cpu : o.engine;
  const bool fromFile = o.scenario.name.rfind("file:", 0) == 0;
  const bool inShares = ranks && core::scenarioMakesShares(o.scenario.name);
  if (inShares && core::runsLocalRule(params))
    checkFitsInShares(o.scenario.n, params, o.scenario, dist::launchedRanks(), dist::launchedLocalRanks());
  else if (!fromFile)
    checkFits(fitKind, o.scenario.n, params, &o.scenario);
  const auto t0 = std::chrono::steady_clock::now();
  if (inShares) {
    // Every rank makes only the bodies of its run of ids, which then travel to their owners: no
    // rank makes or holds them all (the same bodies as made whole: core::makeScenarioShare).
    params.halfSize = core::makeScenarioShare(o.scenario, params, 0, 0).halfSize;
    auto engine = dist::createDistEngine(o.engine, params);
    engine->setProfiling(o.profile);
    core::RankAccess& ra = *engine->rankAccess();
    size_t first = 0, last = 0;
    ra.idShare(o.scenario.n, &first, &last);
    const auto ts = std::chrono::steady_clock::now();
    core::Scenario share = core::makeScenarioShare(o.scenario, params, first, last);
    const double scenarioS = core::msSince(ts) / 1000.0;
    ra.resetShare(share.bodies, o.scenario.n);
    engine->setStepCount(o.startStep);
    reportStart(o, *engine, speaker, scenarioS, core::msSince(t0) / 1000.0 - scenarioS, "share");
    return engine;
  }
  core::Scenario scenario = core::makeScenario(o.scenario, params);
  const double scenarioS = core::msSince(t0) / 1000.0;
  params.halfSize = scenario.halfSize;
  if (speaker && !scenario.note.empty()) std::fprintf(stderr, "scenario: %s\n", scenario.note.c_str());
  if (fromFile) checkFits(fitKind, scenario.bodies.size(), params, &o.scenario);
  auto engine = ranks ? dist::createDistEngine(o.engine, params) : makeEngine(o.engine, params);
  engine->setProfiling(o.profile);
  engine->reset(scenario.bodies);
  engine->setStepCount(o.startStep);  // a saved state goes on from the step it was written at
  scenario.bodies = core::Bodies{};  // the engine has its own copy
  reportStart(o, *engine, speaker, scenarioS, core::msSince(t0) / 1000.0 - scenarioS, ranks ? "all" : "");
  return engine;
}

// What a headless run draws and writes: the offscreen view, a video or numbered PNG frames, the
// screenshot. Opened before the first step, so that a bad path fails before any work.
class HeadlessPictures {
 public:
  HeadlessPictures(const Options& o, core::Engine& engine, bool ranks, bool speaker) : o_(o), speaker_(speaker) {
#if defined(MURMUR_HAVE_RENDER)
    // Collective: rank 0's view frames gravity from every body, gathered once here (boids are
    // framed by the world alone).
    if (o.render && ranks && !core::runsLocalRule(engine.params())) engine.readBodies();
    if (o.render && speaker) {
      std::string why;
      view_ = createOffscreenView(o, engine, &why);
      if (!view_) {
        if (!o.screenshot.empty() || !o.record.empty())
          throw core::UsageError((o.screenshot.empty() ? "--record " + o.record : "--screenshot " + o.screenshot) +
                                 ": no offscreen OpenGL context (" + why + ")");
        std::fprintf(stderr, "murmur: rendering off: %s\n", why.c_str());
      }
    }
    // Over several ranks a splat frame is composited (every rank splats its own bodies: RankAccess::
    // compositeSplat), so every frame can be drawn; the other draw modes need every body on one
    // rank, so only the last frame is drawn, from the bodies gathered for the outputs. Rank 0
    // decides (it holds the view) and every rank hears it.
    if (o.render && ranks) {
      const bool splat = speaker && view_ && std::string(view_->drawMode()) == "splat";
      composite_ = engine.rankAccess()->broadcastFromRoot(splat ? "1" : "0") == "1";
      if (!composite_ && !o.record.empty())
        throw core::UsageError("--record " + o.record +
                               ": over several ranks every frame is drawn as a splat only (--draw splat)");
    }
    ranks_ = ranks;
    // A path with %d records numbered PNG files instead of a video (no ffmpeg needed).
    recordPngs_ = o.record.find('%') != std::string::npos;
    if (recordPngs_) {
      if (!isPngPattern(o.record))
        throw core::UsageError("--record " + o.record + ": a PNG frame pattern holds exactly one %0Nd and ends in .png (frames/f%05d.png)");
    } else if (!o.record.empty()) {
      if (!render::VideoRecorder::ffmpegAvailable())
        throw core::UsageError("--record " + o.record + ": ffmpeg not found; install it with apt-get install ffmpeg");
      try {
        video_ = std::make_unique<render::VideoRecorder>(o.record, o.width, o.height, 30);
      } catch (const core::UsageError&) {
        throw;
      } catch (const std::exception& e) {
        throw core::UsageError("--record " + o.record + ": " + e.what());
      }
    }
#else
    (void)engine, (void)ranks, (void)speaker;
    if (o.render && (!o.screenshot.empty() || !o.record.empty()))
      throw core::UsageError("--screenshot/--record: this build has no renderer");
#endif
  }

  bool active() const {
#if defined(MURMUR_HAVE_RENDER)
    return view_ != nullptr;
#else
    return false;
#endif
  }
  // The frames' draw mode ("" when this rank draws none).
  std::string drawMode() const {
#if defined(MURMUR_HAVE_RENDER)
    if (view_) return view_->drawMode();
#endif
    return "";
  }
  // Whether frames are composited over ranks: every rank takes part in every draw().
  bool composites() const { return composite_; }
  // Whether this rank draws (or helps draw) frames during the run, not only the last one after it.
  bool drawsEveryFrame() const { return composite_ || (active() && !ranks_); }
  // Whether the frames are the measurement: a run without --record and --screenshot reports their
  // times (render_ms, fps), so it draws every frame; with either, only the frames they write are
  // drawn.
  bool measuresFrames() const { return o_.record.empty() && o_.screenshot.empty(); }
  // Whether iteration `frame` of `frames` draws: a frame --record keeps (one every --record-every),
  // the last one for --screenshot, or every one where the frames are the measurement. The same on
  // every rank (options and iteration alone), so a composited frame has them all.
  bool drawsFrame(int frame, int frames) const {
    if (measuresFrames()) return true;
    if (!o_.record.empty() && frame % o_.recordEvery == 0) return true;
    return !o_.screenshot.empty() && frame + 1 == frames;
  }
  // Whether the state after the run is read as a picture: the screenshot, or the one frame of a
  // measuring run whose frames could not be drawn during it.
  bool wantsFinalFrame() const { return measuresFrames() || !o_.screenshot.empty(); }

  // Draws the current state (render ms into renderMs); `frame` is the loop's iteration, which
  // decides whether the frame is recorded (-1: after the loop, never recorded).
  void draw(core::Engine& engine, int frame, std::vector<double>& renderMs) {
#if defined(MURMUR_HAVE_RENDER)
    if (composite_ && !speaker_) {  // this rank's share of rank 0's frame
      core::SplatView view;
      engine.rankAccess()->compositeSplat(view, scratchKeys_);
      return;
    }
    renderMs.push_back(view_->renderFrame(engine));
    if (frame < 0 || (!video_ && !recordPngs_) || frame % o_.recordEvery != 0) return;
    if (video_) {
      video_->addFrame(view_->pixels());
      ++written_;
    }
    if (recordPngs_) {
      char path[4096];
      std::snprintf(path, sizeof path, o_.record.c_str(), pngFrames_++);
      render::writePng(path, view_->width(), view_->height(), view_->pixels(), "--record");
      ++written_;
    }
#else
    (void)engine, (void)frame, (void)renderMs;
#endif
  }

  // The screenshot and the end of the recording; whether interop drew the frames.
  bool finish() {
#if defined(MURMUR_HAVE_RENDER)
    if (view_ && !o_.screenshot.empty()) {
      render::writePng(o_.screenshot, view_->width(), view_->height(), view_->pixels(), "--screenshot");
      ++written_;
      std::fprintf(stderr, "murmur: wrote %s (%dx%d)\n", o_.screenshot.c_str(), view_->width(), view_->height());
    }
    if (recordPngs_ && view_) std::fprintf(stderr, "murmur: wrote %d frames to %s\n", pngFrames_, o_.record.c_str());
    if (video_) {
      video_->close();
      std::fprintf(stderr, "murmur: wrote %s (%ld frames)\n", o_.record.c_str(), video_->framesWritten());
    }
    return view_ && view_->interop();
#else
    return false;
#endif
  }

  // Frames written to files: the recorded ones (video frames or PNG files) and the screenshot.
  int written() const { return written_; }

 private:
  int written_ = 0;
  const Options& o_;
  bool speaker_ = true, ranks_ = false, composite_ = false;
  std::vector<uint64_t> scratchKeys_;
#if defined(MURMUR_HAVE_RENDER)
  std::unique_ptr<OffscreenView> view_;
  std::unique_ptr<render::VideoRecorder> video_;
  bool recordPngs_ = false;
  int pngFrames_ = 0;
#endif
};

// The run's results: the final state, the times of every step and frame, the stage sums.
struct HeadlessResult {
  core::Bodies final;
  std::vector<double> stepMs, renderMs;
  core::StepProfile stageSum;
  int done = 0;
  double totalMs = 0;
  int framesWritten = 0;
  bool interrupted = false, rendered = false, interop = false;
  std::string drawMode;  // the frames' draw mode, when frames were drawn
};

// The outputs of a finished run on the speaking rank: --out, --csv, the summary lines.
void writeHeadlessOutputs(const Options& o, const core::SimParams& params, core::Engine& engine, HeadlessResult& r) {
  if (!o.out.empty()) {
    core::StateHeader h;
    h.force = core::toString(params.force);
    h.halfSize = params.halfSize;
    // Every step the state has taken (the warm-up's too), as the engine counts them.
    h.step = engine.stepCount();
    h.paramsJson = paramsToJson(params, -1);
    core::writeBodiesFile(o.out, r.final, h);
  }
  // Summarised in whole cycles of the pipeline, as `murmur bench` times it.
  spreadCycleMeans(r.stepMs, static_cast<size_t>((engine.stepsPerCycle() + o.stepsPerFrame - 1) /
                                                 std::max(1, o.stepsPerFrame)));
  if (!o.csv.empty())
    core::writeCsvFile("--csv", o.csv,
                       {runRow(o.engine, params, o.scenario, engine, engine.numBodies(),
                               RunSamples{r.stepMs, r.renderMs, o.profile ? &r.stageSum : nullptr, r.drawMode,
                                          o.warmup})});
  RunSummary sum;
  sum.engine = o.engine;
  sum.params = params;
  sum.scenario = o.scenario;
  sum.n = engine.numBodies();
  sum.steps = r.done * o.stepsPerFrame;
  sum.stepMs = r.stepMs;
  sum.renderMs = r.renderMs;
  sum.totalMs = r.totalMs;
  if (o.checksum) sum.checksum = core::stateChecksum(r.final);
  sum.rendered = r.rendered;
  sum.interop = r.interop;
  sum.framesWritten = r.framesWritten;
  std::printf("%s", summaryLine(sum).c_str());
  if (r.interrupted) std::printf(" interrupted=%s", StopSignal::name());
  std::printf("\n");
  if (const core::RankAccess* ra = engine.rankAccess()) std::printf("%s\n", ra->summary().c_str());
  if (o.profile && r.done > 0) {
    const double k = 1.0 / r.done;
    std::printf("stages_ms_mean");
    for (int s = 0; s < core::kStageCount; ++s)
      std::printf(" %s=%.4f", core::kStageNames[s], r.stageSum.at(static_cast<core::Stage>(s)) * k);
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int runHeadless(const Options& o) {
  core::SimParams params = o.params;
  // Several ranks (mpirun): every rank runs this loop on its share; rank 0 speaks for the job.
  const bool ranks = dist::launchedRanks() > 1;
  const bool speaker = dist::launchedRank() == 0;
  std::unique_ptr<core::Engine> engine = prepareEngine(o, params, ranks, speaker);
  // One iteration per frame (as in the window), after --steps-per-frame steps; a frame is drawn
  // only where it is used (HeadlessPictures::drawsFrame): the frames --record writes, the last one
  // for --screenshot, every one in a run that measures its frames.
  const int iterations = o.frames > 0 ? o.frames : o.steps;
  HeadlessPictures pictures(o, *engine, ranks, speaker);
  // Untimed steps first, so the medians describe a settled flock.
  engine->step(o.warmup);
  engine->synchronize();
  // Observables and trajectory frames: sampled between steps, outside the timed part.
  ObserveOutput observed(o, params, speaker);
  if (observed.active()) observed.atStep(*engine, static_cast<uint64_t>(o.warmup));
  HeadlessResult r;
  r.stepMs.reserve(static_cast<size_t>(iterations));
  // From here on a signal stops the loop after the step in progress; everything below still runs.
  // Not over several ranks: a signal reaches the ranks at different steps, and a rank that stopped
  // early would leave the others waiting in a collective; there mpirun ends the job.
  std::optional<StopSignal> stop;
  if (!ranks) stop.emplace();
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Progress> progress;  // rank 0's alone over several ranks
  if (speaker) progress.emplace(o.frames > 0 ? "frames" : "steps", iterations);
  int lastDrawn = -1;  // the last iteration whose frame was drawn
  for (; r.done < iterations && !StopSignal::received(); ++r.done) {
    if (progress) progress->update(r.done);
    const auto a = std::chrono::steady_clock::now();
    engine->step(o.stepsPerFrame);
    engine->synchronize();
    r.stepMs.push_back(core::msSince(a) / o.stepsPerFrame);
    if (o.profile) r.stageSum += engine->lastProfile();
    if (observed.active())
      observed.atStep(*engine, static_cast<uint64_t>(o.warmup) + static_cast<uint64_t>(r.done + 1) * o.stepsPerFrame);
    // Over several ranks, splat frames are composited on every rank; other draw modes draw only
    // the final frame, after the loop (from the gathered bodies).
    if (pictures.drawsEveryFrame() && pictures.drawsFrame(r.done, iterations)) {
      pictures.draw(*engine, r.done, r.renderMs);
      lastDrawn = r.done;
    }
  }
  if (progress) progress->finish();
  r.interrupted = StopSignal::received() != 0;
  if (r.interrupted)
    std::fprintf(stderr, "murmur: %s: stopping after step %d of %d; writing the outputs (a second signal ends at once)\n",
                 StopSignal::name(), r.done, iterations);
  // A picture of the final state (the screenshot, or a measuring run's one frame) that the loop
  // did not draw: no step ran, several ranks without compositing (frames are drawn only now), or a
  // signal stopped the run after a step that drew nothing. Every rank decides alike (no signal
  // stops a run over ranks), so a composited frame has them all.
  const bool drawNow = (pictures.active() || pictures.composites()) && pictures.wantsFinalFrame() &&
                       (r.done == 0 || (ranks && !pictures.composites()) || (r.interrupted && lastDrawn != r.done - 1));
  // The final state, for the checksum and --out; --checksum off leaves it where it is (at a
  // billion bodies the gather alone moves 36 GB to one host).
  const bool wantFinal = o.checksum || !o.out.empty();
  // Collective: every rank takes part in the gather that rank 0's frame and files read; it is
  // kept for the outputs below rather than read (copied) a second time.
  core::Bodies gathered;
  if (ranks && (wantFinal || (drawNow && !pictures.composites()))) gathered = engine->readBodies();
  if (drawNow) pictures.draw(*engine, -1, r.renderMs);
  r.interop = pictures.finish();
  r.framesWritten = pictures.written();
  r.rendered = pictures.active();
  r.drawMode = pictures.drawMode();
  r.totalMs = core::msSince(t0);
  if (wantFinal) r.final = ranks ? std::move(gathered) : engine->readBodies();
  for (const auto& p : r.final.pos) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
      std::fprintf(stderr, "murmur: the state became non-finite (check dt and softening)\n");
      return 1;
    }
  }
  if (!speaker) return 0;
  observed.finish();
  writeHeadlessOutputs(o, params, *engine, r);
  return r.interrupted ? StopSignal::exitStatus() : 0;
}

int runAccuracy(const Options& o) {
  // Every pipeline's accelerations against a double-precision direct sum on the same state (the
  // grid approximates the far field by cell monopoles; naive differs only by float rounding),
  // then each pipeline's energy drift over kDriftSteps leapfrog steps of a Plummer sphere.
  core::SimParams params = o.params;
  params.force = core::ForceMode::Gravity;
  params.gravity.integrator = core::Integrator::Leapfrog;
  core::ScenarioSpec spec = o.scenario;
  if (!o.forceSet && spec.name == "uniform") spec.name = "plummer";
  if (!o.nSet) spec.n = 20000;
  const uint64_t driftBodies = o.driftSet ? o.driftBodies : (o.engine == core::EngineKind::Cuda ? 16384 : 1000);
  checkFits(o.engine, std::max<uint64_t>(spec.n, driftBodies), params, &spec);
  const core::Scenario scenario = core::makeScenario(spec, params);
  const core::Bodies& bodies = scenario.bodies;
  params.halfSize = scenario.halfSize;
  auto engine = makeEngine(o.engine, params);
  const std::vector<core::Pipeline> pipelines = core::gravityPipelines();
  std::fprintf(stderr, "device: %s\n", engine->deviceName().c_str());
  std::printf("relative force error |a - a_direct| / |a_direct| per body, a_direct a double-precision direct sum: "
              "scenario=%s n=%zu grid_dim=%d softening=%g theta=%g\n",
              spec.name.c_str(), bodies.size(), params.gravity.gridDim, params.gravity.softening, params.gravity.theta);
  std::printf("%-10s %12s %12s %12s %12s %10s %8s\n", "pipeline", "median", "p90", "max", "rms", "ms", "samples");
  for (core::Pipeline pipe : pipelines) {
    params.pipeline = pipe;
    engine->setParams(params);
    engine->reset(bodies);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<core::Vec4> acc = engine->computeAccelerations();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const core::ForceError fe = core::forceError(bodies, acc, params.gravity.G, params.gravity.softening);
    std::printf("%-10s %12.3e %12.3e %12.3e %12.3e %10.2f %8zu\n", core::toString(pipe), fe.median, fe.p90,
                fe.max, fe.rms, ms, fe.samples);
  }
  if (driftBodies == 0) return 0;

  // Energy drift: the same Plummer sphere (seed of the run) for every pipeline, kinetic plus
  // softened potential energy in double before and after.
  constexpr int kDriftSteps = 1000;
  core::ScenarioSpec driftSpec = o.scenario;
  driftSpec.name = "plummer";
  driftSpec.n = driftBodies;
  core::SimParams driftParams = params;
  const core::Bodies start = core::makeScenario(driftSpec, driftParams).bodies;
  const double e0 = core::totalEnergy(start, params.gravity.G, params.gravity.softening);
  std::printf("\nrelative energy drift |E_%d / E_0 - 1|, leapfrog: scenario=plummer n=%zu dt=%g softening=%g E_0=%.6g\n",
              kDriftSteps, start.size(), params.gravity.dt, params.gravity.softening, e0);
  std::printf("%-10s %12s %10s\n", "pipeline", "drift", "ms/step");
  for (core::Pipeline pipe : pipelines) {
    driftParams.pipeline = pipe;
    engine->setParams(driftParams);
    engine->reset(start);
    const auto t0 = std::chrono::steady_clock::now();
    engine->step(kDriftSteps);
    engine->synchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double e1 = core::totalEnergy(engine->readBodies(), params.gravity.G, params.gravity.softening);
    std::printf("%-10s %12.3e %10.3f\n", core::toString(pipe), std::fabs(e1 / e0 - 1.0), ms / kDriftSteps);
  }
  return 0;
}

}  // namespace murmur::app
