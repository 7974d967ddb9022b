// The window: GLFW + OpenGL 4.5 (glad) + Dear ImGui. The simulation steps on a worker thread
// (AsyncStepper) while the window draws: each frame shows the latest finished step (copied into the
// draw buffers through CUDA-GL interop or an upload), then the panel and HUD. On a fast engine that
// is one step per frame; when a step takes longer than a frame, the window keeps drawing and
// answering input at its own rate instead of freezing. Every control edits the same SimParams the
// command line fills; pipeline, force, block size and rule values apply before the next step
// without a reset, N and scenario reset.
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
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/async_stepper.h"
#include "app/bench.h"
#include "app/draw_source.h"
#include "app/engine_factory.h"
#include "app/git_sha.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "app/run.h"
#include "app/view_setup.h"
#include "core/csv.h"
#include "core/errors.h"
#include "core/param_table.h"
#include "core/scenarios.h"
#include "render/screenshot.h"
#include "render/video.h"

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

const char* kKeyHelp[][2] = {
    {"G", "boids <-> gravity"},
    {"[ / ]", "block size down / up"},             {"Space / N", "pause / single step"},
    {"+ / -", "point size"},                       {"D / C", "draw mode / colour mode"},
    {"R", "reset the scenario"},                   {"Tab / H", "panel / this help"},
    {"V", "vsync on/off"},                         {"F", "start/stop FPS recording (CSV)"},
    {"P", "screenshot (PNG)"},                     {"F9", "start/stop video (ffmpeg)"},
    {"mouse", "left: orbit, right: pan, wheel: zoom"}, {"Home", "reset the camera"},
    {"X", "slab view on/off (splat)"},             {"Esc", "quit"}};

// The help overlay; the first row names every pipeline by its number key.
std::vector<std::pair<std::string, std::string>> helpRows() {
  std::string keys, names;
  for (int i = 0; i < core::enumCount<core::Pipeline>(); ++i) {
    keys += (i ? " / " : "") + std::to_string(i + 1);
    names += (i ? " / " : "") + std::string(core::toString(static_cast<core::Pipeline>(i)));
  }
  std::vector<std::pair<std::string, std::string>> rows = {{keys, names}};
  for (const auto& k : kKeyHelp) rows.emplace_back(k[0], k[1]);
  return rows;
}

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
  bool drawChosen = false;  // --draw, the D key or the panel picked the mode: a reset keeps it
  bool glIsNvidia = false;
  std::string glRenderer;

  bool paused = false, stepOnce = false, vsync = false, showPanel = true, showHelp = false;
  bool resetPending = false, paramsDirty = false, screenshotPending = false;
  bool freshState = true;  // a step finished (or a reset happened) since the buffers were filled
  AsyncStepper stepper;
  std::string message;  // last action or error, shown under the HUD line for a few seconds
  bool messageIsError = false;
  Clock::time_point messageTime;
  std::string nText;                                     // the panel's N field, as typed
  std::string paramsPath = "murmur-params.json";         // the panel's save/load file

  // Timing: per step and per frame, and the one-second window for the HUD and the FPS log.
  // simMs is the last step's wall time on the worker; frameMs the window's frame time; the two
  // are independent, so a slow step shows as steps/s below FPS, never as a frozen window.
  double simMs = 0, frameMs = 0, fps = 0, stepsPerS = 0, renderMs = 0;
  std::vector<double> secondSimMs, secondRenderMs;
  int secondFrames = 0;
  Clock::time_point secondStart = Clock::now();
  Clock::time_point speedFitTime;  // when the speed colour ramp was last fitted to the state
  std::unique_ptr<core::CsvWriter> fpsLog;
  std::unique_ptr<render::VideoRecorder> video;

  // Mouse drag state.
  bool dragging = false, panning = false;
  double lastX = 0, lastY = 0;

  void say(const std::string& m, bool error = false) {
    message = m;
    messageIsError = error;
    messageTime = Clock::now();
    std::fprintf(stderr, "murmur: %s\n", m.c_str());
  }

  // Width of the panel strip on the left, in framebuffer pixels (0 when hidden). The view is
  // drawn in the rest of the window, so the scene stays centred in what the user can see.
  int panelWidth(int windowWidth) const {
    if (!showPanel) return 0;
    return std::min(kPanelWidth, windowWidth / 2);
  }
  static constexpr int kPanelWidth = 330;

  void resetScenario() {
    if (scenario.name.rfind("file:", 0) != 0) checkFits(engine->kind(), scenario.n, params, &scenario);
    const core::Scenario built = core::makeScenario(scenario, params);
    const core::Bodies& bodies = built.bodies;
    params.halfSize = built.halfSize;
    engine->setParams(params);
    engine->reset(bodies);
    // Fresh sizes and scales for the new bodies; the chosen draw and colour modes stay, except
    // oriented boids, which give way to the default when the force is gravity.
    ViewStyle fresh = defaultStyle(params, bodies, "", "");
    if (drawChosen && !(style.draw == render::DrawMode::Boids && params.force != core::ForceMode::Boids))
      fresh.draw = style.draw;
    fresh.colour = style.colour;
    const float bodySize = fresh.splat.bodySize;
    fresh.splat = style.splat;  // slab, fog and lighting are the user's
    fresh.splat.bodySize = bodySize;
    fresh.warpReduce = style.warpReduce;
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

  static constexpr int kVideoStepsPerSecond = 30;

  // G: the other force mode. Boids worlds at rest do nothing visible under gravity (and a star
  // cluster does not flock), so the scenario follows the force when it was the other mode's own.
  void toggleForce() {
    params.force = params.force == core::ForceMode::Boids ? core::ForceMode::Gravity : core::ForceMode::Boids;
    paramsDirty = true;
    const bool fileScenario = scenario.name.rfind("file:", 0) == 0;
    if (!fileScenario && core::naturalForce(scenario.name) != params.force) {
      scenario.name = params.force == core::ForceMode::Gravity ? "plummer" : "uniform";
      resetPending = true;
      say(std::string("force: ") + core::toString(params.force) + ", scenario " + scenario.name);
    }
  }

  void changeBlockSize(int delta) {
    if (engine->kind() == core::EngineKind::Cpu) {
      say("block size: the CPU engine has none (it applies to the CUDA engine)");
      return;
    }
    params.blockSize = std::max(core::kMinBlockSize, std::min(core::kMaxBlockSize, params.blockSize + delta));
    paramsDirty = true;
  }

  void onKey(int key, int action, int mods) {
    if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
    if (ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureKeyboard) return;
    const bool press = action == GLFW_PRESS;
    // Number keys pick the pipeline with that number (1 = the first).
    if (key >= GLFW_KEY_1 && key < GLFW_KEY_1 + core::enumCount<core::Pipeline>()) {
      params.pipeline = static_cast<core::Pipeline>(key - GLFW_KEY_1);
      paramsDirty = true;
      return;
    }
    switch (key) {
      case GLFW_KEY_G: if (press) toggleForce(); break;
      case GLFW_KEY_LEFT_BRACKET: changeBlockSize(-core::kBlockSizeStep); break;
      case GLFW_KEY_RIGHT_BRACKET: changeBlockSize(core::kBlockSizeStep); break;
      case GLFW_KEY_SPACE: if (press) paused = !paused; break;
      case GLFW_KEY_N: stepOnce = true; break;
      case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: style.pointSize = std::min(32.0f, style.pointSize * 1.25f); style.bodySize *= 1.25f; break;
      case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: style.pointSize = std::max(1.0f, style.pointSize / 1.25f); style.bodySize /= 1.25f; break;
      case GLFW_KEY_D: if (press) style.draw = render::next(style.draw), drawChosen = true; break;
      case GLFW_KEY_X:
        if (press) {
          // A slab a tenth of the scene thick: thin enough to cut through flocks, thick enough to hold some.
          style.splat.slabHalfWidth = style.splat.slabHalfWidth > 0 ? 0.0f : 0.1f * style.worldRadius;
          say(style.splat.slabHalfWidth > 0 ? "slab view on (splat draw mode)" : "slab view off");
        }
        break;
      case GLFW_KEY_C:
        if (press) {
          style.colour = render::next(style.colour);
          speedFitTime = Clock::time_point{};
        }
        break;
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
    const int viewW = std::max(1, w - panelWidth(w));
    if (dragging) camera.orbit(float(-dx / viewW * 3.14159), float(dy / h * 3.14159));
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
      r.set("git_sha", std::string(gitSha()));
      r.set("gpu", engine->deviceName());
      r.set("engine", std::string(core::toString(engine->kind())));
      r.set("force", std::string(core::toString(params.force)));
      r.set("pipeline", std::string(core::toString(params.pipeline)));
      r.set("scenario", scenario.name);
      r.set("n", static_cast<long long>(engine->numBodies()));
      // The CPU engine has no block size; an empty cell says so, as in bench rows.
      if (engine->kind() == core::EngineKind::Cuda) r.set("block_size", static_cast<long long>(params.blockSize));
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
      if (!secondRenderMs.empty()) r.set("render_ms", stepStats(secondRenderMs).median);
      fpsLog->write(r);
    }
    stepsPerS = secondSimMs.size() * 1000.0 / elapsed;
    secondFrames = 0;
    secondSimMs.clear();
    secondRenderMs.clear();
    secondStart = now;
  }

  bool splat() const { return style.draw == render::DrawMode::Splat; }

  // The panel: a strip on the left at the window's full height, scrolling when its open sections
  // are taller than the window. Timing comes first, so it is never the part cut off.
  void drawPanel() {
    if (!showPanel) return;
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    const float scale = ImGui::GetIO().DisplayFramebufferScale.x > 0 ? ImGui::GetIO().DisplayFramebufferScale.x : 1.0f;
    ImGui::SetNextWindowPos(ImVec2(0, 0), ImGuiCond_Always);
    ImGui::SetNextWindowSize(ImVec2(float(panelWidth(int(display.x * scale))) / scale, display.y), ImGuiCond_Always);
    ImGui::Begin("Murmuration", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
    ImGui::PushItemWidth(-130);
    if (ImGui::CollapsingHeader("timing", ImGuiTreeNodeFlags_DefaultOpen)) {
      const core::StepProfile prof = engine->lastProfile();
      ImGui::Text("step %.3f ms  %.1f steps/s", simMs, stepsPerS);
      ImGui::Text("frame %.3f ms  %.0f FPS", frameMs, fps);
      ImGui::Text("label %.3f sort %.3f bounds %.3f", prof.labelMs, prof.sortMs, prof.boundsMs);
      ImGui::Text("reorder %.3f force %.3f integ. %.3f", prof.reorderMs, prof.forceMs, prof.integrateMs);
      ImGui::Text("render %.3f ms (fill + draw + finish)", renderMs);
      ImGui::TextWrapped("%s", engine->deviceName().c_str());
      ImGui::TextWrapped("GL: %s | interop %s%s%s", glRenderer.c_str(), source->interop() ? "on" : "off",
                         source->interop() ? "" : ": ", source->interop() ? "" : source->interopOffReason().c_str());
    }
    if (ImGui::CollapsingHeader("simulation", ImGuiTreeNodeFlags_DefaultOpen)) drawSimulationSection();
    if (ImGui::CollapsingHeader("boids")) paramWidgets("boids");
    if (ImGui::CollapsingHeader("gravity")) paramWidgets("gravity");
    if (ImGui::CollapsingHeader("view")) drawViewSection();
    ImGui::PopItemWidth();
    ImGui::End();
  }

  // The widgets of the parameter-table rows whose key sits directly under `group` ("" for the
  // top level, "boids", "gravity"): enums as combos, numbers as sliders over the row's panel
  // range. Changes are applied (and validated) before the next step.
  void paramWidgets(const std::string& group) {
    const std::string lead = group.empty() ? "" : group + ".";
    for (const core::ParamDesc& d : core::paramTable()) {
      const std::string key = d.key;
      if (key.compare(0, lead.size(), lead) != 0 || key.find('.', lead.size()) != std::string::npos) continue;
      const double v = d.get(params);
      if (key == "force") {  // switching the force may switch the scenario too
        int i = static_cast<int>(v);
        if (ImGui::Combo("force (G)", &i, d.spec.names, d.spec.numNames) && i != static_cast<int>(v)) toggleForce();
      } else if (key == "blockSize" && engine->kind() != core::EngineKind::Cuda) {
        ImGui::TextDisabled("block size: none on the CPU engine");
      } else if (d.spec.type == core::ValueType::Enum) {
        int i = static_cast<int>(v);
        if (ImGui::Combo(d.label, &i, d.spec.names, d.spec.numNames)) d.set(params, i), paramsDirty = true;
      } else if (d.panelLo == d.panelHi) {
        continue;
      } else if (d.spec.type == core::ValueType::Float) {
        float f = static_cast<float>(v);
        if (ImGui::SliderFloat(d.label, &f, float(d.panelLo), float(d.panelHi), "%.4g",
                               d.panelLog ? ImGuiSliderFlags_Logarithmic : 0))
          d.set(params, f), paramsDirty = true;
      } else {
        // Integers that come in steps (block sizes: whole warps) slide over the step count.
        const int step = d.spec.multipleOf;
        const std::string label = step > 1 ? std::string(d.label) + " / " + std::to_string(step) : d.label;
        int i = static_cast<int>(v) / step;
        if (ImGui::SliderInt(label.c_str(), &i, int(d.panelLo) / step, int(d.panelHi) / step))
          d.set(params, double(i) * step), paramsDirty = true;
      }
    }
  }

  void drawSimulationSection() {
    paramWidgets("");
    // N as text: "250k" and "1M" work as on the command line, Enter applies, and a value out of
    // range is refused with the command line's message instead of wrapping.
    if (nText.empty()) nText = std::to_string(scenario.n);
    char nBuf[32];
    std::snprintf(nBuf, sizeof nBuf, "%s", nText.c_str());
    const bool nEntered = ImGui::InputText("N (Enter)", nBuf, sizeof nBuf, ImGuiInputTextFlags_EnterReturnsTrue);
    nText = nBuf;
    int scen = -1;
    const auto& names = core::scenarioNames();
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == scenario.name) scen = static_cast<int>(i);
    std::vector<const char*> scenNames;
    for (const auto& name : names) scenNames.push_back(name.c_str());
    const bool scenChanged = ImGui::Combo("scenario", &scen, scenNames.data(), static_cast<int>(scenNames.size()));
    const bool resetClicked = ImGui::Button("reset (R)");
    if (nEntered || scenChanged || resetClicked) {
      try {
        const size_t n = static_cast<size_t>(parseCount("N", nText, 1, core::kMaxBodies));
        if (scenChanged && scen >= 0) {
          scenario.name = names[static_cast<size_t>(scen)];
          params.force = core::naturalForce(scenario.name);
          paramsDirty = true;
        }
        scenario.n = n;
        resetPending = true;
      } catch (const std::exception& e) {
        say(e.what(), true);
      }
    }
    ImGui::SameLine();
    if (ImGui::Button(paused ? "run (Space)" : "pause (Space)")) paused = !paused;
    ImGui::SameLine();
    if (ImGui::Button("step (N)")) stepOnce = true;
    // The parameters as the JSON that --params reads.
    char pathBuf[512];
    std::snprintf(pathBuf, sizeof pathBuf, "%s", paramsPath.c_str());
    if (ImGui::InputText("params file", pathBuf, sizeof pathBuf)) paramsPath = pathBuf;
    if (ImGui::Button("save params")) saveParams();
    ImGui::SameLine();
    if (ImGui::Button("load params")) loadParams();
  }

  void saveParams() {
    try {
      std::ofstream out(paramsPath);
      out << paramsToJson(params) << "\n";
      out.close();
      if (!out) throw std::runtime_error("cannot write " + paramsPath);
      say("params saved: " + paramsPath + " (murmur --params " + paramsPath + ")");
    } catch (const std::exception& e) {
      say(e.what(), true);
    }
  }

  void loadParams() {
    try {
      core::SimParams p = params;
      loadParamsFile(paramsPath, p);
      params = p;
      paramsDirty = true;
      say("params loaded: " + paramsPath);
    } catch (const std::exception& e) {
      say(e.what(), true);
    }
  }

  void drawViewSection() {
    int d = static_cast<int>(style.draw), c = static_cast<int>(style.colour);
    if (ImGui::Combo("draw (D)", &d, "oriented boids\0points\0sprites\0splat\0"))
      style.draw = static_cast<render::DrawMode>(d), drawChosen = true;
    if (ImGui::Combo("colour (C)", &c, "velocity\0speed\0id\0")) {
      style.colour = static_cast<render::ColourMode>(c);
      speedFitTime = Clock::time_point{};
    }
    ImGui::SliderFloat("point size", &style.pointSize, 1.0f, 32.0f);
    ImGui::SliderFloat("body size", &style.bodySize, style.worldRadius * 1e-4f, style.worldRadius * 0.05f, "%.3f",
                       ImGuiSliderFlags_Logarithmic);
    if (ImGui::Checkbox("vsync (V)", &vsync)) glfwSwapInterval(vsync ? 1 : 0);
    if (!splat()) return;
    // Splat: the slab cuts a thin layer out of the volume, where flocks and the space between them
    // show; fog and eye-dome lighting give depth to what is left.
    render::SplatStyle& sp = style.splat;
    bool slab = sp.slabHalfWidth > 0;
    if (ImGui::Checkbox("slab (X)", &slab)) sp.slabHalfWidth = slab ? 0.1f * style.worldRadius : 0.0f;
    if (slab) {
      ImGui::SliderFloat("slab half-width", &sp.slabHalfWidth, style.worldRadius * 0.005f, style.worldRadius, "%.2f",
                         ImGuiSliderFlags_Logarithmic);
      ImGui::SliderFloat("slab offset", &sp.slabOffset, -style.worldRadius, style.worldRadius, "%.1f");
    }
    ImGui::SliderFloat("fog", &sp.fogStrength, 0.0f, 1.0f);
    ImGui::SliderFloat("eye-dome light", &sp.edlStrength, 0.0f, 4.0f);
    ImGui::SliderFloat("splat body size", &sp.bodySize, style.worldRadius * 1e-4f, style.worldRadius * 0.05f, "%.3f",
                       ImGuiSliderFlags_Logarithmic);
  }

  // The HUD sits at the top of the view area, right of the panel, with the last message (paths
  // written, errors) under it where it is read.
  void drawHud() {
    const ImGuiIO& io = ImGui::GetIO();
    const float scale = io.DisplayFramebufferScale.x > 0 ? io.DisplayFramebufferScale.x : 1.0f;
    const float left = float(panelWidth(int(io.DisplaySize.x * scale))) / scale;
    ImGui::SetNextWindowPos(ImVec2(left + 8, 8));
    ImGui::SetNextWindowBgAlpha(0.45f);
    ImGui::Begin("hud", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
    ImGui::Text("%s | %s | N=%zu | step %.2f ms (%.1f/s) | frame %.2f ms (%.0f FPS) | interop %s%s%s%s%s",
                core::toString(params.pipeline), core::toString(params.force), engine->numBodies(), simMs, stepsPerS,
                frameMs, fps, source->interop() ? "on" : "off", paused ? " | paused" : "",
                stepper.busy() && simMs > frameMs ? " | stepping" : "", fpsLog ? " | REC fps" : "",
                video ? " | REC video" : "");
    if (!message.empty() && msBetween(messageTime, Clock::now()) < (messageIsError ? 10000 : 6000)) {
      if (messageIsError)
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", message.c_str());
      else
        ImGui::Text("%s", message.c_str());
    }
    ImGui::End();
    if (showHelp) {
      ImGui::SetNextWindowPos(ImVec2(left + (io.DisplaySize.x - left) * 0.5f, io.DisplaySize.y * 0.5f),
                              ImGuiCond_Always, ImVec2(0.5f, 0.5f));
      ImGui::Begin("keys (H)", &showHelp, ImGuiWindowFlags_AlwaysAutoResize);
      for (const auto& k : helpRows()) ImGui::Text("%-10s %s", k.first.c_str(), k.second.c_str());
      ImGui::End();
    }
  }

  void frame() {
    const auto t0 = Clock::now();
    double ms = 0;
    try {
      if (stepper.poll(&ms)) {
        simMs = ms;
        secondSimMs.push_back(ms);
        freshState = true;
      }
    } catch (const std::exception& e) {
      // A failed step stops the run, not the window: the user can change parameters or reset.
      paused = true;
      say(std::string("step failed: ") + e.what(), true);
    }
    // The engine is touched only between steps.
    bool newFrameForVideo = false;
    if (!stepper.busy()) {
      if (paramsDirty) applyParams();
      if (resetPending) {
        resetPending = false;
        try {
          resetScenario();
          nText = std::to_string(scenario.n);
          freshState = true;
          say("reset: " + scenario.name + ", N=" + std::to_string(scenario.n));
        } catch (const std::exception& e) {
          say(e.what(), true);
        }
      }
      // The speed ramp follows the speeds present (every 2 s; reading the state back costs a copy).
      if (style.colour == render::ColourMode::Speed && msBetween(speedFitTime, Clock::now()) > 2000) {
        fitSpeedRange(engine->readBodies(), params, style);
        renderer->setSpeedScale(style.speedScale);
        renderer->setSpeedFloor(style.speedFloor);
        speedFitTime = Clock::now();
      }
      if (splat()) {
        // The splat frame depends on the camera, so it is resolved again whenever the engine is
        // free (every frame while paused), not only after a step.
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(window, &fw, &fh);
        const auto f0 = Clock::now();
        source->fillSplat(*engine, camera, style, std::max(1, fw - panelWidth(fw)), std::max(1, fh));
        renderMs = msBetween(f0, Clock::now());
        newFrameForVideo = freshState;
        freshState = false;
      } else if (freshState) {
        const auto f0 = Clock::now();
        source->fill(*engine);
        renderMs = msBetween(f0, Clock::now());
        freshState = false;
        newFrameForVideo = true;
      }
      if (!paused || stepOnce) {
        stepper.start(*engine);
        stepOnce = false;
      }
    }
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    const int left = panelWidth(w), viewW = std::max(1, w - left);
    renderer->setViewportOrigin(left, 0);
    const auto r0 = Clock::now();
    source->draw(camera, style, viewW, h);
    // A new state's frame is timed to completion, as DrawSource::drawFrame times it everywhere
    // else: render_ms is fill + draw + finish in the panel, the FPS log, the headless summary and
    // the benchmark. Redraws of an unchanged state (paused, or a step in flight) are not timed.
    if (newFrameForVideo) glFinish();
    const double drawMs = msBetween(r0, Clock::now());
    if (newFrameForVideo) {
      renderMs += drawMs;
      secondRenderMs.push_back(renderMs);
    }
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
    if (video && newFrameForVideo) {
      try {
        video->addFrame(renderer->readPixels(std::min(video->width(), viewW), std::min(video->height(), h)));
      } catch (const std::exception& e) {
        say(std::string("video: ") + e.what(), true);
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
    // With nothing to wait for (paused, or a step in flight) the loop would spin a core that the
    // CPU engine wants: poll input at most about 120 times a second then.
    if (!vsync && (paused || stepper.busy()) && frameMs < 8.0)
      glfwWaitEventsTimeout((8.0 - frameMs) / 1000.0);
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
    v.engine->setProfiling(true);  // the panel shows per-stage times
    v.renderer = std::make_unique<render::Renderer>();
    v.renderer->setWindowTarget();
    v.source = std::make_unique<DrawSource>(*v.renderer, v.glIsNvidia);
    v.style = defaultStyle(v.params, core::Bodies{}, o.drawMode, o.colourMode);
    applySplatOptions(v.style, o.slab, o.fog, o.edl, o.warpReduce);
    v.drawChosen = !o.drawMode.empty();
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
      v.stepper.wait();
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
      throw;
    }
    v.stepper.wait();  // the engine outlives its last step
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
