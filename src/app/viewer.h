// The window's state, shared by the rooms of the viewer (internal to src/app/viewer_*.cpp):
//   viewer_window.cpp   GLFW, the GL context and Dear ImGui's lifetime; runViewer and its loop
//   viewer_session.cpp  one frame: stepping, resets, the FPS log, video and screenshots
//   viewer_input.cpp    keys and mouse, and the help overlay's rows
//   viewer_panel.cpp    the ImGui panel and the HUD
// The simulation steps on a worker thread (AsyncStepper) while the window draws: each frame shows
// the latest finished step (copied into the draw buffers through CUDA-GL interop or an upload),
// then the panel and HUD. On a fast engine that is one step per frame; when a step takes longer
// than a frame, the window keeps drawing and answering input at its own rate instead of
// freezing. Every control edits the same SimParams the command line fills; pipeline, force,
// block size and rule values apply before the next step without a reset, N and scenario reset.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/async_stepper.h"
#include "app/draw_source.h"
#include "app/options.h"
#include "app/view_setup.h"
#include "core/csv.h"
#include "core/engine.h"
#include "core/observables.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
#include "render/camera.h"
#include "render/renderer.h"
#include "render/video.h"

struct GLFWwindow;

namespace murmur::app::viewer {

using Clock = std::chrono::steady_clock;

inline double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The help overlay's rows (key, what it does); the first names every pipeline by its number key.
std::vector<std::pair<std::string, std::string>> helpRows();

struct Viewer {
  Options opts;
  core::SimParams params;
  core::ScenarioSpec scenario;
  std::unique_ptr<core::Engine> engine;
  GLFWwindow* window = nullptr;
  std::unique_ptr<render::Renderer> renderer;
  std::unique_ptr<DrawSource> source;
  render::Camera camera;
  OpenFollow follow;  // an open world's camera follows the bodies (followOpenWorld)
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
  std::string nText;                              // the panel's N field, as typed
  std::string paramsPath = "murmur-params.json";  // the panel's save/load file

  // Timing: per step and per frame, and the one-second window for the HUD and the FPS log.
  // simMs is the last step's wall time on the worker; frameMs the window's frame time; the two
  // are independent, so a slow step shows as steps/s below FPS, never as a frozen window.
  double simMs = 0, frameMs = 0, fps = 0, stepsPerS = 0, renderMs = 0;
  // The world the window opened on and its force: G twice comes back to it (worldForForce).
  core::ScenarioSpec startWorld;
  core::ForceMode startForce = core::localRuleForce();
  // The stage times of the step simMs times (the same step, read on the stepping thread).
  core::StepProfile simProfile;
  std::vector<double> secondSimMs, secondRenderMs;
  int secondFrames = 0;
  Clock::time_point secondStart = Clock::now();
  Clock::time_point speedFitTime;  // when the speed colour ramp was last fitted to the state
  std::unique_ptr<core::CsvWriter> fpsLog;
  std::unique_ptr<render::VideoRecorder> video;

  // Observables (docs/observables.md): sampled between steps every --observe-every steps while
  // `observing`; the panel plots the recent history of one value (boids: polarization; gravity:
  // the energy drift, or the kinetic energy where the exact potential is skipped) and the HUD
  // shows the last one.
  bool observing = true;
  uint64_t stepsDone = 0, lastObserved = 0;
  bool observedOnce = false;
  core::ObservablesSeries obsSeries;
  core::Observables obsLast;
  std::vector<float> obsHistory;  // the plotted value, oldest first, at most kObsHistory
  double observeMs = 0;
  static constexpr size_t kObsHistory = 300;
  static constexpr size_t kViewerCpuPotentialMaxN = 16384;

  // Mouse drag state.
  bool dragging = false, panning = false;
  double lastX = 0, lastY = 0;

  static constexpr int kPanelWidth = 330;
  static constexpr int kVideoStepsPerSecond = 30;

  // Width of the panel strip on the left, in framebuffer pixels (0 when hidden). The view is
  // drawn in the rest of the window, so the scene stays centred in what the user can see.
  int panelWidth(int windowWidth) const {
    if (!showPanel) return 0;
    return std::min(kPanelWidth, windowWidth / 2);
  }
  bool splat() const { return style.draw == render::DrawMode::Splat; }

  // viewer_session.cpp
  void say(const std::string& m, bool error = false);
  void resetScenario();
  void applyParams();
  void toggleFpsLog();
  void toggleVideo();
  // --csv and --record given to the window: the FPS log and the video from the first frame; a
  // path that cannot be written (or no ffmpeg) throws core::UsageError naming the option.
  void startOutputsAsked();
  void logSecond();
  void frame();
  void observeIfDue();
  void clearObservables();
  // The plotted value's name and value in `o` (NaN when not computed).
  const char* plottedName() const;
  double plottedValue(const core::Observables& o) const;

  // viewer_input.cpp
  void toggleForce();
  void changeBlockSize(int delta);
  void onKey(int key, int action, int mods);
  void onMouseButton(int button, int action);
  void onCursor(double x, double y);
  void onScroll(double dy);

  // viewer_panel.cpp
  void drawPanel();
  void paramWidgets(const std::string& group);
  void drawSimulationSection();
  void saveParams();
  void loadParams();
  void drawViewSection();
  void drawObservablesSection();
  void drawHud();

 private:
  // viewer_session.cpp: the parts of frame()
  bool betweenSteps();
  void writeCaptures(bool newFrame, int viewW, int h);
};

}  // namespace murmur::app::viewer
