// The viewer's input: keys, mouse, and the help overlay that lists the keys.
#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <cmath>

#include "app/summary.h"
#include "app/viewer.h"
#include "app/viewer_state.h"
#include "core/pipeline_table.h"
#include "core/rule_table.h"

namespace murmur::app::viewer {

namespace {

const char* kKeyHelp[][2] = {
    {"G", "boids <-> gravity"},
    {"[ / ]", "block size down / up"},             {"Space / N", "pause / single step"},
    {"+ / -", "point size"},                       {"D / C", "draw mode / colour mode"},
    {"R", "reset the scenario"},                   {"Tab / H", "panel / this help"},
    {"V", "vsync on/off"},                         {"F", "start/stop FPS recording (CSV)"},
    {"P", "screenshot (PNG)"},                     {"F9", "start/stop video (ffmpeg)"},
    {"mouse", "left: orbit, right: pan, wheel: zoom"}, {"Home", "reset the camera"},
    {"X", "slab view on/off (splat)"},             {"Esc", "quit"}};

// The GLFW key of a pipeline's number key ('1'..'9'; GLFW numbers the digit keys as ASCII).
int glfwKeyOf(const core::PipelineInfo& r) { return GLFW_KEY_0 + (r.key - '0'); }

}  // namespace

std::vector<std::pair<std::string, std::string>> helpRows() {
  std::string keys, names;
  for (const core::PipelineInfo& r : core::pipelineTable()) {
    keys += (keys.empty() ? "" : " / ") + std::string(1, r.key);
    names += (names.empty() ? "" : " / ") + std::string(r.name);
  }
  std::vector<std::pair<std::string, std::string>> rows = {{keys, names}};
  for (const auto& k : kKeyHelp) rows.emplace_back(k[0], k[1]);
  return rows;
}

// G: the other force mode. Boids worlds at rest do nothing visible under gravity (and a star
// cluster does not flock), so the scenario follows the force when it was the other mode's own;
// the starting world comes back with its force (worldForForce).
void Viewer::toggleForce() {
  params.force = core::runsLocalRule(params) ? core::ForceMode::Gravity : core::localRuleForce();
  paramsDirty = true;
  const core::ScenarioSpec next = worldForForce(scenario, startWorld, startForce, params.force);
  const bool changed = next.name != scenario.name || next.n != scenario.n || next.seed != scenario.seed ||
                       next.denseNeighbours != scenario.denseNeighbours;
  if (changed) {
    scenario = next;
    resetPending = true;
    say(std::string("force: ") + core::toString(params.force) + ", scenario " + scenarioLabel(scenario));
  } else {
    say(std::string("force: ") + core::toString(params.force));
  }
}

void Viewer::changeBlockSize(int delta) {
  if (engine->kind() == core::EngineKind::Cpu) {
    say("block size: the CPU engine has none (it applies to the CUDA engine)");
    return;
  }
  params.blockSize = std::max(core::kMinBlockSize, std::min(core::kMaxBlockSize, params.blockSize + delta));
  paramsDirty = true;
}

void Viewer::onKey(int key, int action, int mods) {
  if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
  if (ImGui::GetCurrentContext() && ImGui::GetIO().WantCaptureKeyboard) return;
  const bool press = action == GLFW_PRESS;
  // Number keys pick the pipeline with that key in the pipeline table.
  for (const core::PipelineInfo& r : core::pipelineTable()) {
    if (key == glfwKeyOf(r)) {
      params.pipeline = r.id;
      paramsDirty = true;
      return;
    }
  }
  switch (key) {
    case GLFW_KEY_G: if (press) toggleForce(); break;
    case GLFW_KEY_LEFT_BRACKET: changeBlockSize(-core::kBlockSizeStep); break;
    case GLFW_KEY_RIGHT_BRACKET: changeBlockSize(core::kBlockSizeStep); break;
    case GLFW_KEY_SPACE: if (press) paused = !paused; break;
    case GLFW_KEY_N: stepOnce = true; break;
    case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: style.pointSize = std::min(32.0f, style.pointSize * 1.25f); style.bodySize *= 1.25f; break;
    case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: style.pointSize = std::max(1.0f, style.pointSize / 1.25f); style.bodySize /= 1.25f; break;
    case GLFW_KEY_D:
      if (press) {
        style.draw = render::next(style.draw), drawChosen = true;
        say(std::string("draw mode: ") + render::toString(style.draw));
      }
      break;
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
        say(std::string("colour mode: ") + render::toString(style.colour));
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

void Viewer::onMouseButton(int button, int action) {
  if (ImGui::GetIO().WantCaptureMouse && action == GLFW_PRESS) return;
  if (button == GLFW_MOUSE_BUTTON_LEFT) dragging = action == GLFW_PRESS;
  if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) panning = action == GLFW_PRESS;
  glfwGetCursorPos(window, &lastX, &lastY);
}

void Viewer::onCursor(double x, double y) {
  const double dx = x - lastX, dy = y - lastY;
  lastX = x;
  lastY = y;
  int w = 1, h = 1;
  glfwGetWindowSize(window, &w, &h);
  const int viewW = std::max(1, w - panelWidth(w));
  if (dragging) camera.orbit(float(-dx / viewW * 3.14159), float(dy / h * 3.14159));
  if (panning) camera.pan(float(-dx / h), float(dy / h));
}

void Viewer::onScroll(double dy) {
  if (ImGui::GetIO().WantCaptureMouse) return;
  camera.zoom(float(std::pow(0.9, dy)));
}

}  // namespace murmur::app::viewer
