// The viewer's session: one frame (stepping, resets, filling and drawing), and what it writes:
// the FPS log, video and screenshots.
#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <ctime>

#include "app/bench.h"
#include "app/bench_output.h"
#include "app/engine_factory.h"
#include "app/git_sha.h"
#include "app/summary.h"
#include "app/viewer.h"
#include "core/errors.h"
#include "core/rule_table.h"
#include "render/screenshot.h"

namespace murmur::app::viewer {

namespace {

std::string timestampName(const char* prefix, const char* ext) {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return std::string(prefix) + buf + ext;
}

}  // namespace

void Viewer::say(const std::string& m, bool error) {
  message = m;
  messageIsError = error;
  messageTime = Clock::now();
  std::fprintf(stderr, "murmur: %s\n", m.c_str());
}

void Viewer::resetScenario() {
  if (scenario.name.rfind("file:", 0) != 0) checkFits(engine->kind(), scenario.n, params, &scenario);
  const core::Scenario built = core::makeScenario(scenario, params);
  const core::Bodies& bodies = built.bodies;
  if (!built.note.empty()) say(built.note);
  // A file's world has the file's N (the panel's N field and the HUD show it).
  if (scenario.name.rfind("file:", 0) == 0) scenario.n = bodies.size();
  params.halfSize = built.halfSize;
  engine->setParams(params);
  engine->reset(bodies);
  // Fresh sizes and scales for the new bodies; the chosen draw and colour modes stay, except
  // oriented boids, which give way to the default when the force is gravity.
  ViewStyle fresh = defaultStyle(params, bodies, "", "");
  if (drawChosen && !(style.draw == render::DrawMode::Boids && !core::runsLocalRule(params)))
    fresh.draw = style.draw;
  fresh.colour = style.colour;
  const float bodySize = fresh.splat.bodySize;
  fresh.splat = style.splat;  // slab, fog and lighting are the user's
  fresh.splat.bodySize = bodySize;
  fresh.warpReduce = style.warpReduce;
  fresh.box = style.box;
  fresh.legend = style.legend;
  style = fresh;
  frameScene(camera, bodies, params, style);
  follow = OpenFollow(bodies);
  camera.setDistance(camera.distance() / opts.zoom);
  renderer->setSpeedScale(style.speedScale);
  renderer->setPlane(style.plane);
  renderer->setSpriteAlpha(style.spriteAlpha);
}

void Viewer::clearObservables() {
  obsSeries = core::ObservablesSeries{};
  obsHistory.clear();
  obsLast = core::Observables{};
  observedOnce = false;
  stepsDone = lastObserved = 0;
}

const char* Viewer::plottedName() const {
  if (core::runsLocalRule(params)) return "polarization";
  return obsLast.has(core::Obs::EnergyDrift) ? "energy drift" : "kinetic energy";
}

double Viewer::plottedValue(const core::Observables& o) const {
  if (core::runsLocalRule(params)) return o[core::Obs::Polarization];
  return o.has(core::Obs::EnergyDrift) ? o[core::Obs::EnergyDrift] : o[core::Obs::Kinetic];
}

// Between steps only (the engine is idle): the CUDA engine computes on its device and returns a
// few sums; the CPU engine takes its own time, shown in the panel.
void Viewer::observeIfDue() {
  if (!observing || (observedOnce && stepsDone - lastObserved < uint64_t(opts.observeEvery))) return;
  try {
    core::ObserveRequest req;
    req.flocks = opts.observeFlocks && core::runsLocalRule(params);
    // The window waits for a sample: on the CPU engine the all-pairs potential stops at
    // kViewerCpuPotentialMaxN bodies (a fraction of a second on a few cores).
    if (engine->kind() == core::EngineKind::Cpu) req.potentialMaxN = kViewerCpuPotentialMaxN;
    const auto t0 = Clock::now();
    const double time = double(stepsDone) * double(core::activeDt(params));
    obsLast = obsSeries.add(engine->observe(req), time);
    observeMs = msBetween(t0, Clock::now());
    observedOnce = true;
    lastObserved = stepsDone;
    obsHistory.push_back(float(plottedValue(obsLast)));
    if (obsHistory.size() > kObsHistory) obsHistory.erase(obsHistory.begin());
  } catch (const std::exception& e) {
    observing = false;
    say(std::string("observables off: ") + e.what(), true);
  }
}

void Viewer::applyParams() {
  try {
    engine->setParams(params);
  } catch (const std::exception& e) {
    say(e.what());
    params = engine->params();
  }
  paramsDirty = false;
}

void Viewer::toggleFpsLog() {
  if (fpsLog) {
    say("FPS log closed: " + fpsLog->path());
    fpsLog.reset();
    return;
  }
  const std::string path = opts.csv.empty() ? timestampName("murmur-fps-", ".csv") : opts.csv;
  try {
    fpsLog = std::make_unique<core::CsvWriter>(path, true);
    say("FPS log: " + path);
  } catch (const std::exception& e) {
    say(e.what());
  }
}

void Viewer::toggleVideo() {
  if (video) {
    video->close();
    say("video written: " + video->path() + " (" + std::to_string(video->framesWritten()) + " frames)");
    video.reset();
    return;
  }
  if (!render::VideoRecorder::ffmpegAvailable()) {
    say("video: ffmpeg not found; install it with apt-get install ffmpeg");
    return;
  }
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  const std::string path = opts.record.empty() ? timestampName("murmur-", ".mp4") : opts.record;
  try {
    // One video frame per simulation step, played back at 30 steps per second: the video shows
    // simulation time evenly whatever the window's frame rate was while recording.
    const int viewW = w - panelWidth(w);
    video = std::make_unique<render::VideoRecorder>(path, viewW & ~1, h & ~1, kVideoStepsPerSecond);
    say("recording video: " + path + " (one frame per step, " + std::to_string(kVideoStepsPerSecond) +
        " steps per second of video)");
  } catch (const std::exception& e) {
    say(std::string("video: ") + e.what());
  }
}

void Viewer::startOutputsAsked() {
  if (!opts.csv.empty()) {
    try {
      fpsLog = std::make_unique<core::CsvWriter>(opts.csv, true);
    } catch (const std::exception& e) {
      throw core::UsageError("--csv " + opts.csv + ": " + e.what());
    }
    say("FPS log: " + opts.csv);
  }
  if (!opts.record.empty()) {
    if (!render::VideoRecorder::ffmpegAvailable())
      throw core::UsageError("--record " + opts.record + ": ffmpeg not found; install it with apt-get install ffmpeg");
    toggleVideo();
    if (!video) throw core::UsageError("--record " + opts.record + ": " + message);
  }
}

void Viewer::logSecond() {
  const auto now = Clock::now();
  const double elapsed = msBetween(secondStart, now);
  if (elapsed < 1000.0) return;
  fps = secondFrames * 1000.0 / elapsed;
  if (fpsLog) {
    // The bench row of the same setup from this second's samples (bench_output.h runRow), so a
    // log row reads as a bench row and a headless --csv row do.
    RunSamples samples;
    samples.stepMs = secondSimMs;
    samples.renderMs = secondRenderMs;
    samples.drawMode = render::toString(style.draw);
    const core::CsvRow r = runRow(engine->kind(), params, scenario, *engine, engine->numBodies(), samples);
    fpsLog->write(r);
  }
  stepsPerS = secondSimMs.size() * 1000.0 / elapsed;
  secondFrames = 0;
  secondSimMs.clear();
  secondRenderMs.clear();
  secondStart = now;
}

// The engine is touched only between steps: parameters, a reset, the speed ramp, the draw
// buffers, and the next step. Returns whether a new state was filled (a frame for the video).
bool Viewer::betweenSteps() {
  bool newFrame = false;
  if (paramsDirty) applyParams();
  if (resetPending) {
    resetPending = false;
    try {
      resetScenario();
      clearObservables();
      nText = std::to_string(scenario.n);
      freshState = true;
      say("reset: " + scenarioLabel(scenario) + ", N=" + std::to_string(scenario.n));
    } catch (const std::exception& e) {
      say(e.what(), true);
    }
  }
  // The speed ramp follows the speeds present (every 2 s; reading the state back costs a copy).
  if (style.colour == render::ColourMode::Speed && msBetween(speedFitTime, Clock::now()) > 2000) {
    fitSpeedRange(engine->readBodies(), params, style);
    renderer->setSpeedScale(style.speedScale);
    renderer->setSpeedFloor(style.speedFloor);
    renderer->setPlane(style.plane);
    speedFitTime = Clock::now();
  }
  // An open world's camera follows the bodies, read here while no step runs.
  if (freshState) followOpenWorld(camera, *engine, follow);
  if (splat()) {
    // The splat frame depends on the camera, so it is resolved again whenever the engine is
    // free (every frame while paused), not only after a step.
    int fw = 0, fh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    const auto f0 = Clock::now();
    source->fillSplat(*engine, camera, style, std::max(1, fw - panelWidth(fw)), std::max(1, fh));
    renderMs = msBetween(f0, Clock::now());
    newFrame = freshState;
    freshState = false;
  } else if (freshState) {
    const auto f0 = Clock::now();
    source->fill(*engine);
    renderMs = msBetween(f0, Clock::now());
    freshState = false;
    newFrame = true;
  }
  observeIfDue();
  if (!paused || stepOnce) {
    stepper.start(*engine);
    stepOnce = false;
  }
  return newFrame;
}

// The screenshot asked for, and the video's frame of a new state.
void Viewer::writeCaptures(bool newFrame, int viewW, int h) {
  if (screenshotPending) {
    screenshotPending = false;
    const std::string path = opts.screenshot.empty() ? timestampName("murmur-", ".png") : opts.screenshot;
    try {
      render::writePng(path, viewW, h, renderer->readPixels(viewW, h));
      say("screenshot: " + path);
    } catch (const std::exception& e) {
      say(e.what(), true);
    }
  }
  if (video && newFrame) {
    try {
      video->addFrame(renderer->readPixels(std::min(video->width(), viewW), std::min(video->height(), h)));
    } catch (const std::exception& e) {
      say(std::string("video: ") + e.what(), true);
      video.reset();
    }
  }
}

void Viewer::frame() {
  const auto t0 = Clock::now();
  TimedStep done;
  try {
    if (stepper.poll(&done)) {
      ++stepsDone;
      simMs = done.ms;
      simProfile = done.profile;
      secondSimMs.push_back(done.ms);
      freshState = true;
    }
  } catch (const std::exception& e) {
    // A failed step stops the run, not the window: the user can change parameters or reset.
    paused = true;
    say(std::string("step failed: ") + e.what(), true);
  }
  const bool newFrame = !stepper.busy() && betweenSteps();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  const int left = panelWidth(w), viewW = std::max(1, w - left);
  renderer->setViewportOrigin(left, 0);
  const auto r0 = Clock::now();
  source->draw(camera, style, viewW, h);
  // A new state's frame is timed to completion, as DrawSource::drawFrame times it everywhere
  // else: render_ms is fill + draw + finish in the panel, the FPS log, the headless summary and
  // the benchmark. Redraws of an unchanged state (paused, or a step in flight) are not timed.
  if (newFrame) glFinish();
  const double drawMs = msBetween(r0, Clock::now());
  if (newFrame) {
    renderMs += drawMs;
    secondRenderMs.push_back(renderMs);
  }
  writeCaptures(newFrame, viewW, h);
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  drawHud();
  drawPanel();
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glfwSwapBuffers(window);
  ++secondFrames;
  frameMs = msBetween(t0, Clock::now());
  logSecond();
  // With nothing to wait for (paused, or a step in flight) the loop would spin a core that the
  // CPU engine wants: poll input at most about 120 times a second then.
  if (!vsync && (paused || stepper.busy()) && frameMs < 8.0) glfwWaitEventsTimeout((8.0 - frameMs) / 1000.0);
}

}  // namespace murmur::app::viewer
