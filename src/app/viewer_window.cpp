// The window's lifetime: GLFW, the OpenGL 4.5 core context (glad) and Dear ImGui, each set up
// in one constructor and torn down in its destructor, so every way out of runViewer (the window
// closed, --frames reached, an exception) shuts them down the same way, in reverse order.
#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <stdexcept>

#include "app/engine_factory.h"
#include "app/run.h"
#include "app/viewer.h"
#include "core/errors.h"

namespace murmur::app {

namespace viewer {
namespace {

// GLFW from glfwInit to glfwTerminate.
class GlfwLibrary {
 public:
  GlfwLibrary() {
    glfwSetErrorCallback(
        [](int code, const char* desc) { std::fprintf(stderr, "murmur: GLFW error %d: %s\n", code, desc); });
    if (!glfwInit()) {
      throw core::UsageError(
          "no display for the window (GLFW could not initialise); run with --headless (add --screenshot out.png to see "
          "a frame)");
    }
  }
  ~GlfwLibrary() { glfwTerminate(); }
  GlfwLibrary(const GlfwLibrary&) = delete;
  GlfwLibrary& operator=(const GlfwLibrary&) = delete;
};

// The window and its GL context, current on this thread with the GL functions loaded.
class GlWindow {
 public:
  GlWindow(int width, int height) {
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SAMPLES, 4);
    window_ = glfwCreateWindow(width, height, "Murmuration", nullptr, nullptr);
    if (!window_) throw core::UsageError("could not open an OpenGL 4.5 core window; run with --headless");
    glfwMakeContextCurrent(window_);
    if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(glfwGetProcAddress))) {
      glfwDestroyWindow(window_);
      throw std::runtime_error("could not load OpenGL 4.5 functions");
    }
    glfwSwapInterval(0);  // vsync off by default: the frame rate is the measurement
  }
  ~GlWindow() { glfwDestroyWindow(window_); }
  GlWindow(const GlWindow&) = delete;
  GlWindow& operator=(const GlWindow&) = delete;
  GLFWwindow* get() const { return window_; }

 private:
  GLFWwindow* window_ = nullptr;
};

// Dear ImGui on the window: created after the viewer's input callbacks are installed, so that
// its backend chains to them, and shut down (once, here) before the window goes.
class ImGuiLayer {
 public:
  explicit ImGuiLayer(GLFWwindow* window) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 450");
  }
  ~ImGuiLayer() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  ImGuiLayer(const ImGuiLayer&) = delete;
  ImGuiLayer& operator=(const ImGuiLayer&) = delete;
};

Viewer* viewerOf(GLFWwindow* w) { return static_cast<Viewer*>(glfwGetWindowUserPointer(w)); }

void installCallbacks(Viewer& v) {
  glfwSetWindowUserPointer(v.window, &v);
  glfwSetKeyCallback(v.window,
                     [](GLFWwindow* w, int key, int, int action, int mods) { viewerOf(w)->onKey(key, action, mods); });
  glfwSetMouseButtonCallback(v.window, [](GLFWwindow* w, int b, int a, int) { viewerOf(w)->onMouseButton(b, a); });
  glfwSetCursorPosCallback(v.window, [](GLFWwindow* w, double x, double y) { viewerOf(w)->onCursor(x, y); });
  glfwSetScrollCallback(v.window, [](GLFWwindow* w, double, double dy) { viewerOf(w)->onScroll(dy); });
}

// The engine, the renderer and the first scenario, in the window's GL context.
void setUp(Viewer& v, const Options& o) {
  const char* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
  const char* rend = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  v.glIsNvidia = vendor && std::string(vendor).find("NVIDIA") != std::string::npos;
  v.glRenderer = rend ? rend : "?";
  v.engine = makeEngine(o.engine, v.params);
  v.engine->setProfiling(true);  // the panel shows per-stage times
  v.renderer = std::make_unique<render::Renderer>();
  v.renderer->setWindowTarget();
  v.source = std::make_unique<DrawSource>(*v.renderer, v.glIsNvidia);
  v.style = defaultStyle(v.params, core::Bodies{}, o.drawMode, o.colourMode);
  applySplatOptions(v.style, o.slab, o.fog, o.edl, o.warpReduce);
  v.style.box = o.box;
  v.style.legend = o.legend;
  v.drawChosen = !o.drawMode.empty();
  v.resetScenario();
  v.startWorld = v.scenario;
  v.startForce = v.params.force;
  if (!o.drawMode.empty()) render::parse(o.drawMode, v.style.draw);
  if (!o.colourMode.empty()) render::parse(o.colourMode, v.style.colour);
}

}  // namespace
}  // namespace viewer

int runViewer(const Options& o) {
  using viewer::Viewer;
  // Declared in the order they are needed; destroyed in reverse: ImGui, then the viewer (its
  // stepper waits for a step in flight before the engine, renderer and draw source go, while the
  // GL context still exists), then the window, then GLFW.
  viewer::GlfwLibrary glfw;
  viewer::GlWindow window(o.width, o.height);
  Viewer v;
  v.opts = o;
  v.params = o.params;
  v.scenario = o.scenario;
  v.window = window.get();
  viewer::setUp(v, o);
  viewer::installCallbacks(v);  // before ImGui, so that its backend chains to them
  viewer::ImGuiLayer imgui(v.window);
  std::fprintf(stderr, "murmur: %s, GL %s; press H for keys\n", v.engine->deviceName().c_str(), v.glRenderer.c_str());
  v.startOutputsAsked();
  // --frames K closes the window after K frames (with --screenshot, of the last one): the
  // viewer's own smoke test, and a way to script a picture of the real window. --steps N closes
  // it once N steps are done.
  bool stepsGiven = false;
  for (const auto& typed : o.typed) stepsGiven = stepsGiven || typed.first == "--steps";
  long frames = 0;
  while (!glfwWindowShouldClose(v.window)) {
    glfwPollEvents();
    if (o.frames > 0 && frames + 1 == o.frames && !o.screenshot.empty()) v.screenshotPending = true;
    v.frame();
    if (o.frames > 0 && ++frames >= o.frames) glfwSetWindowShouldClose(v.window, GLFW_TRUE);
    if (stepsGiven && v.stepsDone >= static_cast<uint64_t>(o.steps)) glfwSetWindowShouldClose(v.window, GLFW_TRUE);
  }
  v.stepper.wait();  // the engine outlives its last step
  if (v.video) v.video->close();  // a video is kept only on a clean close
  std::fprintf(stderr, "murmur: window closed after %llu steps%s%s\n", static_cast<unsigned long long>(v.stepsDone),
               v.fpsLog ? ", FPS log " : "", v.fpsLog ? v.fpsLog->path().c_str() : "");
  return 0;
}

}  // namespace murmur::app
