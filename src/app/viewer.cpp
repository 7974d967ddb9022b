// The window: GLFW + OpenGL 4.5 (glad) + Dear ImGui. One frame = one simulation step (unless
// paused), a fill of the draw buffers (CUDA-GL interop or upload), a draw, the panel and HUD.
// Every control edits the same SimParams the command line fills; pipeline, force, block size and
// rule values apply on the next frame without a reset, N and scenario reset.
#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "app/bench.h"
#include "app/draw_source.h"
#include "app/engine_factory.h"
#include "app/run.h"
#include "app/view_setup.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/scenarios.h"
#include "render/screenshot.h"
#include "render/video.h"

#ifndef MURMUR_GIT_SHA
#define MURMUR_GIT_SHA "unknown"
#endif

namespace murmur::app {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::string timestampName(const char* prefix, const char* ext) {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return std::string(prefix) + buf + ext;
}

std::string isoNow() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

const char* kHelp[][2] = {
    {"1 / 2 / 3", "naive / scattered / coherent"}, {"5", "tree (gravity)"}, {"G", "boids <-> gravity"},
    {"[ / ]", "block size down / up"},             {"Space / N", "pause / single step"},
    {"+ / -", "point size"},                       {"D / C", "draw mode / colour mode"},
    {"R", "reset the scenario"},                   {"Tab / H", "panel / this help"},
    {"V", "vsync on/off"},                         {"F", "start/stop FPS recording (CSV)"},
    {"P", "screenshot (PNG)"},                     {"F9", "start/stop video (ffmpeg)"},
    {"mouse", "left: orbit, right: pan, wheel: zoom"}, {"Home", "reset the camera"},
    {"Esc", "quit"}};

struct Viewer {
  Options opts;
  core::SimParams params;
  core::ScenarioSpec scenario;
  std::unique_ptr<core::Engine> engine;
  GLFWwindow* window = nullptr;
  std::unique_ptr<render::Renderer> renderer;
  std::unique_ptr<DrawSource> source;
  render::Camera camera;
  ViewStyle style;
  bool glIsNvidia = false;
  std::string glRenderer;

  bool paused = false, stepOnce = false, vsync = false, showPanel = true, showHelp = false;
  bool resetPending = false, paramsDirty = false, screenshotPending = false;
  std::string message;  // last action, shown in the HUD for a few seconds
  Clock::time_point messageTime;

  // Timing: per frame, and the one-second window for the HUD and the FPS log.
  double simMs = 0, frameMs = 0, fps = 0, renderMs = 0;
  std::vector<double> secondSimMs;
  int secondFrames = 0;
  Clock::time_point secondStart = Clock::now();
  std::unique_ptr<core::CsvWriter> fpsLog;
  std::unique_ptr<render::VideoRecorder> video;

  // Mouse drag state.
  bool dragging = false, panning = false;
  double lastX = 0, lastY = 0;

  void say(const std::string& m) {
    message = m;
    messageTime = Clock::now();
    std::fprintf(stderr, "murmur: %s\n", m.c_str());
  }

  void resetScenario() {
    core::SimParams p = params;
    if (scenario.name.rfind("file:", 0) != 0) checkFits(engine->kind(), scenario.n, params);
    core::Bodies bodies = core::makeScenario(scenario, p);
    params.halfSize = p.halfSize;  // `dense` sizes the world
    engine->setParams(params);
    engine->reset(bodies);
    // Fresh sizes and scales for the new bodies; the chosen draw and colour modes stay, except
    // oriented boids, which give way to the default when the force is gravity.
    ViewStyle fresh = defaultStyle(params, bodies, "", "");
    if (!(style.draw == render::DrawMode::Boids && params.force != core::ForceMode::Boids)) fresh.draw = style.draw;
    fresh.colour = style.colour;
    style = fresh;
    frameScene(camera, bodies, params, style);
    camera.setDistance(camera.distance() / opts.zoom);
    renderer->setSpeedScale(style.speedScale);
    renderer->setSpriteAlpha(style.spriteAlpha);
  }

  void applyParams() {
    try {
      engine->setParams(params);
    } catch (const std::exception& e) {
      say(e.what());
      params = engine->params();
    }
    paramsDirty = false;
  }

  void toggleFpsLog() {
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

  void toggleVideo() {
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
      video = std::make_unique<render::VideoRecorder>(path, w & ~1, h & ~1, 60);
      say("recording video: " + path);
    } catch (const std::exception& e) {
      say(std::string("video: ") + e.what());
    }
  }

  void onKey(int key, int action, int mods) {
    if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
    if (ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureKeyboard) return;
    const bool press = action == GLFW_PRESS;
    switch (key) {
      case GLFW_KEY_1: params.pipeline = core::Pipeline::Naive; paramsDirty = true; break;
      case GLFW_KEY_2: params.pipeline = core::Pipeline::Scattered; paramsDirty = true; break;
      case GLFW_KEY_3: params.pipeline = core::Pipeline::Coherent; paramsDirty = true; break;
      case GLFW_KEY_5: params.pipeline = core::Pipeline::Tree; paramsDirty = true; break;
      case GLFW_KEY_G:
        if (!press) break;
        params.force = params.force == core::ForceMode::Boids ? core::ForceMode::Gravity : core::ForceMode::Boids;
        paramsDirty = true;
        break;
      case GLFW_KEY_LEFT_BRACKET:
        params.blockSize = std::max(core::kMinBlockSize, params.blockSize - 32);
        paramsDirty = true;
        break;
      case GLFW_KEY_RIGHT_BRACKET:
        params.blockSize = std::min(core::kMaxBlockSize, params.blockSize + 32);
        paramsDirty = true;
        break;
      case GLFW_KEY_SPACE: if (press) paused = !paused; break;
      case GLFW_KEY_N: stepOnce = true; break;
      case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: style.pointSize = std::min(32.0f, style.pointSize * 1.25f); style.bodySize *= 1.25f; break;
      case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: style.pointSize = std::max(1.0f, style.pointSize / 1.25f); style.bodySize /= 1.25f; break;
      case GLFW_KEY_D: if (press) style.draw = render::next(style.draw); break;
      case GLFW_KEY_C: if (press) style.colour = render::next(style.colour); break;
      case GLFW_KEY_R: if (press) resetPending = true; break;
      case GLFW_KEY_TAB: if (press) showPanel = !showPanel; break;
      case GLFW_KEY_H: if (press) showHelp = !showHelp; break;
      case GLFW_KEY_V:
        if (press) {
          vsync = !vsync;
          glfwSwapInterval(vsync ? 1 : 0);
        }
        break;
      case GLFW_KEY_F: if (press) toggleFpsLog(); break;
      case GLFW_KEY_P: if (press) screenshotPending = true; break;
      case GLFW_KEY_F9: if (press) toggleVideo(); break;
      case GLFW_KEY_HOME: if (press) camera.home(); break;
      case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(window, GLFW_TRUE); break;
      default: break;
    }
    (void)mods;
  }

  void onMouseButton(int button, int action) {
    if (ImGui::GetIO().WantCaptureMouse && action == GLFW_PRESS) return;
    if (button == GLFW_MOUSE_BUTTON_LEFT) dragging = action == GLFW_PRESS;
    if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) panning = action == GLFW_PRESS;
    glfwGetCursorPos(window, &lastX, &lastY);
  }

  void onCursor(double x, double y) {
    const double dx = x - lastX, dy = y - lastY;
    lastX = x;
    lastY = y;
    int w = 1, h = 1;
    glfwGetWindowSize(window, &w, &h);
    if (dragging) camera.orbit(float(-dx / w * 3.14159), float(dy / h * 3.14159));
    if (panning) camera.pan(float(-dx / h), float(dy / h));
  }

  void onScroll(double dy) {
    if (ImGui::GetIO().WantCaptureMouse) return;
    camera.zoom(float(std::pow(0.9, dy)));
  }

  void logSecond() {
    const auto now = Clock::now();
    const double elapsed = msBetween(secondStart, now);
    if (elapsed < 1000.0) return;
    fps = secondFrames * 1000.0 / elapsed;
    if (fpsLog) {
      // The benchmark's statistics, so a log row reads like a bench row.
      const StepStats st = stepStats(secondSimMs);
      core::CsvRow r;
      r.set("timestamp", isoNow());
      r.set("git_sha", std::string(MURMUR_GIT_SHA));
      r.set("gpu", engine->deviceName());
      r.set("engine", std::string(core::toString(engine->kind())));
      r.set("force", std::string(core::toString(params.force)));
      r.set("pipeline", std::string(core::toString(params.pipeline)));
      r.set("scenario", scenario.name);
      r.set("n", static_cast<long long>(engine->numBodies()));
      r.set("block_size", static_cast<long long>(params.blockSize));
      r.set("cell_width_factor", static_cast<long long>(params.cellWidthFactor));
      r.set("render", 1LL);
      r.set("steps", static_cast<long long>(secondSimMs.size()));
      if (!secondSimMs.empty()) {
        r.set("sim_ms_median", st.median);
        r.set("sim_ms_min", st.min);
        r.set("sim_ms_p90", st.p90);
        r.set("steps_per_s", 1000.0 / std::max(1e-9, st.median));
      }
      r.set("frame_fps", fps);
      fpsLog->write(r);
    }
    secondFrames = 0;
    secondSimMs.clear();
    secondStart = now;
  }

  void drawPanel() {
    if (!showPanel) return;
    ImGui::SetNextWindowPos(ImVec2(10, 40), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(340, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Murmuration");
    ImGui::Text("%s", engine->deviceName().c_str());
    ImGui::Text("GL: %s", glRenderer.c_str());
    ImGui::Text("interop: %s%s%s", source->interop() ? "on" : "off", source->interop() ? "" : " - ",
                source->interop() ? "" : source->interopOffReason().c_str());
    ImGui::Separator();
    int pipe = static_cast<int>(params.pipeline);
    if (ImGui::Combo("pipeline", &pipe, "naive\0scattered\0coherent\0tree\0")) {
      params.pipeline = static_cast<core::Pipeline>(pipe);
      paramsDirty = true;
    }
    int force = static_cast<int>(params.force);
    if (ImGui::Combo("force", &force, "boids\0gravity\0")) {
      params.force = static_cast<core::ForceMode>(force);
      paramsDirty = true;
    }
    int block = params.blockSize / 32;
    if (ImGui::SliderInt("block size / 32", &block, 1, 32)) {
      params.blockSize = block * 32;
      paramsDirty = true;
    }
    int cw = params.cellWidthFactor - 1;
    if (ImGui::Combo("cell width", &cw, "1x radius (27 cells)\0" "2x radius (8 cells)\0")) {
      params.cellWidthFactor = cw + 1;
      paramsDirty = true;
    }
    ImGui::Separator();
    static int nInput = 0;
    if (nInput == 0) nInput = static_cast<int>(scenario.n);
    ImGui::InputInt("N", &nInput, 1000, 100000);
    nInput = std::max(1, std::min(nInput, 1 << 30));
    int scen = 0;
    const auto& names = core::scenarioNames();
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == scenario.name) scen = static_cast<int>(i);
    const bool scenChanged = ImGui::Combo("scenario", &scen, "uniform\0dense\0plummer\0galaxies\0");
    if (ImGui::Button("reset (R)") || scenChanged || (ImGui::IsItemDeactivatedAfterEdit())) {
      if (scenChanged) {
        scenario.name = names[static_cast<size_t>(scen)];
        params.force = core::naturalForce(scenario.name);
      }
      scenario.n = static_cast<size_t>(nInput);
      resetPending = true;
    }
    ImGui::SameLine();
    if (ImGui::Button(paused ? "run (Space)" : "pause (Space)")) paused = !paused;
    ImGui::SameLine();
    if (ImGui::Button("step (N)")) stepOnce = true;
    if (ImGui::CollapsingHeader("boids", ImGuiTreeNodeFlags_DefaultOpen)) {
      core::BoidParams& b = params.boids;
      paramsDirty |= ImGui::SliderFloat("cohesion r1", &b.cohesionRadius, 0.5f, 20.0f);
      paramsDirty |= ImGui::SliderFloat("separation r2", &b.separationRadius, 0.5f, 20.0f);
      paramsDirty |= ImGui::SliderFloat("alignment r3", &b.alignmentRadius, 0.5f, 20.0f);
      paramsDirty |= ImGui::SliderFloat("cohesion s1", &b.cohesionScale, 0.0f, 0.1f, "%.4f");
      paramsDirty |= ImGui::SliderFloat("separation s2", &b.separationScale, 0.0f, 0.5f);
      paramsDirty |= ImGui::SliderFloat("alignment s3", &b.alignmentScale, 0.0f, 0.5f);
      paramsDirty |= ImGui::SliderFloat("max speed", &b.maxSpeed, 0.05f, 5.0f);
      paramsDirty |= ImGui::SliderFloat("dt##boids", &b.dt, 0.01f, 1.0f);
      bool rey = b.rules == core::RuleSet::Reynolds;
      if (ImGui::Checkbox("reynolds alignment", &rey)) {
        b.rules = rey ? core::RuleSet::Reynolds : core::RuleSet::Cis565;
        paramsDirty = true;
      }
    }
    if (ImGui::CollapsingHeader("gravity")) {
      core::GravityParams& g = params.gravity;
      paramsDirty |= ImGui::SliderFloat("G", &g.G, 0.0f, 5.0f);
      paramsDirty |= ImGui::SliderFloat("softening", &g.softening, 0.001f, 1.0f, "%.4f", ImGuiSliderFlags_Logarithmic);
      paramsDirty |= ImGui::SliderFloat("dt##gravity", &g.dt, 0.0001f, 0.05f, "%.4f", ImGuiSliderFlags_Logarithmic);
      paramsDirty |= ImGui::SliderInt("grid cells/axis", &g.gridDim, 1, 64);
      paramsDirty |= ImGui::SliderFloat("grid spread", &g.gridSpread, 0.0f, 10.0f);
      int integ = static_cast<int>(g.integrator);
      if (ImGui::Combo("integrator", &integ, "leapfrog\0damped euler\0")) {
        g.integrator = static_cast<core::Integrator>(integ);
        paramsDirty = true;
      }
      paramsDirty |= ImGui::SliderFloat("damping", &g.damping, 0.9f, 1.0f, "%.4f");
    }
    if (ImGui::CollapsingHeader("view", ImGuiTreeNodeFlags_DefaultOpen)) {
      int d = static_cast<int>(style.draw), c = static_cast<int>(style.colour);
      if (ImGui::Combo("draw (D)", &d, "oriented boids\0points\0sprites\0")) style.draw = static_cast<render::DrawMode>(d);
      if (ImGui::Combo("colour (C)", &c, "velocity\0speed\0id\0")) style.colour = static_cast<render::ColourMode>(c);
      ImGui::SliderFloat("point size", &style.pointSize, 1.0f, 32.0f);
      ImGui::SliderFloat("body size", &style.bodySize, style.worldRadius * 1e-4f, style.worldRadius * 0.05f, "%.3f",
                         ImGuiSliderFlags_Logarithmic);
      if (ImGui::Checkbox("vsync (V)", &vsync)) glfwSwapInterval(vsync ? 1 : 0);
    }
    ImGui::Separator();
    const core::StepProfile prof = engine->lastProfile();
    ImGui::Text("sim %.3f ms  frame %.3f ms  %.0f FPS", simMs, frameMs, fps);
    ImGui::Text("label %.3f sort %.3f bounds %.3f", prof.labelMs, prof.sortMs, prof.boundsMs);
    ImGui::Text("reorder %.3f force %.3f integrate %.3f", prof.reorderMs, prof.forceMs, prof.integrateMs);
    ImGui::Text("render copy+draw %.3f ms (CPU-side submit)", renderMs);
    ImGui::End();
  }

  void drawHud() {
    ImGui::SetNextWindowPos(ImVec2(10, 8));
    ImGui::SetNextWindowBgAlpha(0.45f);
    ImGui::Begin("hud", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
    ImGui::Text("%s | %s | N=%zu | block %d | sim %.2f ms | frame %.2f ms | %.0f FPS | interop %s%s%s%s",
                core::toString(params.pipeline), core::toString(params.force), engine->numBodies(), params.blockSize,
                simMs, frameMs, fps, source->interop() ? "on" : "off", paused ? " | paused" : "",
                fpsLog ? " | REC fps" : "", video ? " | REC video" : "");
    if (!message.empty() && msBetween(messageTime, Clock::now()) < 4000) ImGui::Text("%s", message.c_str());
    ImGui::End();
    if (showHelp) {
      ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x * 0.5f, ImGui::GetIO().DisplaySize.y * 0.5f),
                              ImGuiCond_Always, ImVec2(0.5f, 0.5f));
      ImGui::Begin("keys (H)", &showHelp, ImGuiWindowFlags_AlwaysAutoResize);
      for (const auto& k : kHelp) ImGui::Text("%-10s %s", k[0], k[1]);
      ImGui::End();
    }
  }

  void frame() {
    const auto t0 = Clock::now();
    if (paramsDirty) applyParams();
    if (resetPending) {
      resetPending = false;
      try {
        resetScenario();
        say("reset: " + scenario.name + ", N=" + std::to_string(scenario.n));
      } catch (const std::exception& e) {
        say(e.what());
      }
    }
    if (!paused || stepOnce) {
      const auto s0 = Clock::now();
      engine->step(1);
      engine->synchronize();
      simMs = msBetween(s0, Clock::now());
      secondSimMs.push_back(simMs);
      stepOnce = false;
    }
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    const auto r0 = Clock::now();
    source->fill(*engine);
    renderer->draw(camera, style.draw, style.colour, w, h, style.pointSize, style.bodySize, style.worldRadius);
    renderMs = msBetween(r0, Clock::now());
    if (screenshotPending) {
      screenshotPending = false;
      const std::string path = opts.screenshot.empty() ? timestampName("murmur-", ".png") : opts.screenshot;
      try {
        render::writePng(path, w, h, renderer->readPixels(w, h));
        say("screenshot: " + path);
      } catch (const std::exception& e) {
        say(e.what());
      }
    }
    if (video) {
      try {
        video->addFrame(renderer->readPixels(video->width(), video->height()));
      } catch (const std::exception& e) {
        say(std::string("video: ") + e.what());
        video.reset();
      }
    }
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
  }
};

Viewer* viewerOf(GLFWwindow* w) { return static_cast<Viewer*>(glfwGetWindowUserPointer(w)); }

}  // namespace

int runViewer(const Options& o) {
  glfwSetErrorCallback([](int code, const char* desc) { std::fprintf(stderr, "murmur: GLFW error %d: %s\n", code, desc); });
  if (!glfwInit()) {
    throw core::UsageError(
        "no display for the window (GLFW could not initialise); run with --headless (add --screenshot out.png to see a "
        "frame)");
  }
  Viewer v;
  v.opts = o;
  v.params = o.params;
  v.params.profile = true;  // the panel shows per-stage times
  v.scenario = o.scenario;
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SAMPLES, 4);
  v.window = glfwCreateWindow(o.width, o.height, "Murmuration", nullptr, nullptr);
  if (!v.window) {
    glfwTerminate();
    throw core::UsageError("could not open an OpenGL 4.5 core window; run with --headless");
  }
  glfwMakeContextCurrent(v.window);
  if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(glfwGetProcAddress))) {
    glfwDestroyWindow(v.window);
    glfwTerminate();
    throw std::runtime_error("could not load OpenGL 4.5 functions");
  }
  glfwSwapInterval(0);  // vsync off by default: the frame rate is the measurement
  const char* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
  const char* rend = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  v.glIsNvidia = vendor && std::string(vendor).find("NVIDIA") != std::string::npos;
  v.glRenderer = rend ? rend : "?";

  int status = 0;
  {
    v.engine = makeEngine(o.engine, v.params);
    v.renderer = std::make_unique<render::Renderer>();
    v.renderer->setWindowTarget();
    v.source = std::make_unique<DrawSource>(*v.renderer, v.glIsNvidia);
    v.style = defaultStyle(v.params, core::Bodies{}, o.drawMode, o.colourMode);
    v.resetScenario();
    if (!o.drawMode.empty()) render::parse(o.drawMode, v.style.draw);
    if (!o.colourMode.empty()) render::parse(o.colourMode, v.style.colour);

    glfwSetWindowUserPointer(v.window, &v);
    // Installed before ImGui so that its backend chains to them.
    glfwSetKeyCallback(v.window, [](GLFWwindow* w, int key, int, int action, int mods) { viewerOf(w)->onKey(key, action, mods); });
    glfwSetMouseButtonCallback(v.window, [](GLFWwindow* w, int b, int a, int) { viewerOf(w)->onMouseButton(b, a); });
    glfwSetCursorPosCallback(v.window, [](GLFWwindow* w, double x, double y) { viewerOf(w)->onCursor(x, y); });
    glfwSetScrollCallback(v.window, [](GLFWwindow* w, double, double dy) { viewerOf(w)->onScroll(dy); });
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(v.window, true);
    ImGui_ImplOpenGL3_Init("#version 450");
    std::fprintf(stderr, "murmur: %s, GL %s; press H for keys\n", v.engine->deviceName().c_str(), v.glRenderer.c_str());
    try {
      // --frames K closes the window after K frames (with --screenshot, of the last one): the
      // viewer's own smoke test, and a way to script a picture of the real window.
      long frames = 0;
      while (!glfwWindowShouldClose(v.window)) {
        glfwPollEvents();
        if (o.frames > 0 && frames + 1 == o.frames && !o.screenshot.empty()) v.screenshotPending = true;
        v.frame();
        if (o.frames > 0 && ++frames >= o.frames) glfwSetWindowShouldClose(v.window, GLFW_TRUE);
      }
    } catch (...) {
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
      throw;
    }
    if (v.video) v.video->close();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    v.source.reset();
    v.renderer.reset();
    v.engine.reset();
  }
  glfwDestroyWindow(v.window);
  glfwTerminate();
  return status;
}

}  // namespace murmur::app
