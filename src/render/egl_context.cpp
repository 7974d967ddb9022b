#include "render/egl_context.h"

// glad first: it refuses to follow any other GL header.
#include <glad/gl.h>

// Keep X11 out: its macros (None, Status, Bool) collide with ordinary names, and we need no window.
#define EGL_NO_X11
#define MESA_EGL_NO_X11_HEADERS
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

namespace murmur::render {
namespace {

const char* eglErrorName(EGLint e) {
  switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
  }
}

std::string lastEglError() { return eglErrorName(eglGetError()); }

// Whole-word search in a space-separated extension list (a prefix match would confuse
// EGL_EXT_platform_device with EGL_EXT_platform_device_foo).
bool hasExtension(const char* list, const char* name) {
  if (!list) return false;
  const size_t n = std::strlen(name);
  for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += n) {
    const bool startOk = p == list || p[-1] == ' ';
    const bool endOk = p[n] == ' ' || p[n] == '\0';
    if (startOk && endOk) return true;
  }
  return false;
}

// eglTerminate is not reference-counted: two contexts on one device get the same EGLDisplay, and
// terminating it under the other would destroy that one too. Count users per display ourselves.
std::mutex gDisplayMutex;
std::map<EGLDisplay, int> gDisplayUsers;

bool acquireDisplay(EGLDisplay dpy) {
  std::lock_guard<std::mutex> lock(gDisplayMutex);
  int& users = gDisplayUsers[dpy];
  if (users == 0) {
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) {
      gDisplayUsers.erase(dpy);
      return false;
    }
  }
  ++users;
  return true;
}

void releaseDisplay(EGLDisplay dpy) {
  std::lock_guard<std::mutex> lock(gDisplayMutex);
  auto it = gDisplayUsers.find(dpy);
  if (it == gDisplayUsers.end()) return;
  if (--it->second == 0) {
    eglTerminate(dpy);
    gDisplayUsers.erase(it);
  }
}

GLADapiproc loadGl(const char* name) { return reinterpret_cast<GLADapiproc>(eglGetProcAddress(name)); }

struct Attempt {
  std::string label;     // for error messages: "device platform, device 0"
  std::string platform;  // "device", "surfaceless", "default"
  EGLDisplay display;
};

PFNEGLGETPLATFORMDISPLAYEXTPROC platformDisplayFunction() {
  return reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
}

bool hasClientExtension(const char* name) {
  return hasExtension(eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS), name);
}

// One display per EGL device (GPUs, and Mesa's software device).
void addDeviceDisplays(std::vector<Attempt>& attempts, std::ostringstream& log) {
  auto getPlatformDisplay = platformDisplayFunction();
  if (!getPlatformDisplay || !hasClientExtension("EGL_EXT_platform_device")) {
    log << "device platform: EGL_EXT_platform_device not supported; ";
    return;
  }
  auto queryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
  auto queryDeviceString =
      reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
  EGLint count = 0;
  if (!queryDevices || !queryDevices(0, nullptr, &count) || count <= 0) {
    log << "device platform: no EGL devices; ";
    return;
  }
  std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
  queryDevices(count, devices.data(), &count);
  devices.resize(static_cast<size_t>(count));
  // CUDA-capable devices first: with a GPU and a software renderer both present, headless frames
  // must come from the GPU, or interop is impossible and rendering is slow.
  auto isCuda = [&](EGLDeviceEXT d) {
    return queryDeviceString && hasExtension(queryDeviceString(d, EGL_EXTENSIONS), "EGL_NV_device_cuda");
  };
  std::stable_partition(devices.begin(), devices.end(), isCuda);
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string label = "device platform, device " + std::to_string(i);
    EGLDisplay dpy = getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
    if (dpy == EGL_NO_DISPLAY) {
      log << label << ": eglGetPlatformDisplayEXT failed (" << lastEglError() << "); ";
    } else {
      attempts.push_back({label, "device", dpy});
    }
  }
}

// Mesa's display without any window system or device file: always software-capable.
void addSurfacelessDisplay(std::vector<Attempt>& attempts, std::ostringstream& log) {
  auto getPlatformDisplay = platformDisplayFunction();
  if (!getPlatformDisplay || !hasClientExtension("EGL_MESA_platform_surfaceless")) {
    log << "surfaceless platform: EGL_MESA_platform_surfaceless not supported; ";
    return;
  }
  EGLDisplay dpy = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  if (dpy == EGL_NO_DISPLAY) {
    log << "surfaceless platform: eglGetPlatformDisplayEXT failed (" << lastEglError() << "); ";
  } else {
    attempts.push_back({"surfaceless platform", "surfaceless", dpy});
  }
}

void addDefaultDisplay(std::vector<Attempt>& attempts, std::ostringstream& log) {
  EGLDisplay dpy = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (dpy == EGL_NO_DISPLAY) {
    log << "default display: eglGetDisplay failed (" << lastEglError() << "); ";
  } else {
    attempts.push_back({"default display", "default", dpy});
  }
}

}  // namespace

// Binds OpenGL, picks a config, creates a 4.5 core context, makes it current (surfaceless, else on
// a pbuffer) and loads the entry points, on the initialised display_. Empty on success, else why
// not; what was created is released by the destructor either way.
std::string EglContext::open() {
  EGLDisplay display = display_;
  const char* displayExt = eglQueryString(display, EGL_EXTENSIONS);
  if (!eglBindAPI(EGL_OPENGL_API)) {
    return "desktop OpenGL not supported (eglBindAPI: " + lastEglError() + ")";
  }

  // The config only matters for the pbuffer fallback: frames are drawn into our own FBO.
  const EGLint pbufferConfig[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                  EGL_OPENGL_BIT,   EGL_RED_SIZE,    8,
                                  EGL_GREEN_SIZE,   8,               EGL_BLUE_SIZE,
                                  8,                EGL_NONE};
  const EGLint anyConfig[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint numConfigs = 0;
  bool pbufferCapable = eglChooseConfig(display, pbufferConfig, &config, 1, &numConfigs) &&
                        numConfigs > 0;
  if (!pbufferCapable) {
    numConfigs = 0;
    if (!eglChooseConfig(display, anyConfig, &config, 1, &numConfigs) || numConfigs == 0) {
      if (hasExtension(displayExt, "EGL_KHR_no_config_context")) {
        config = EGL_NO_CONFIG_KHR;
      } else {
        return "no OpenGL-capable EGLConfig";
      }
    }
  }

  const EGLint contextAttribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                   4,
                                   EGL_CONTEXT_MINOR_VERSION,
                                   5,
                                   EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                   EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                   EGL_NONE};
  context_ = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttribs);
  if (context_ == EGL_NO_CONTEXT) {
    context_ = nullptr;
    return "no OpenGL 4.5 core context (eglCreateContext: " + lastEglError() + ")";
  }

  bool current = hasExtension(displayExt, "EGL_KHR_surfaceless_context") &&
                 eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context_);
  if (!current && pbufferCapable) {
    const EGLint pbufferAttribs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    EGLSurface surface = eglCreatePbufferSurface(display, config, pbufferAttribs);
    if (surface != EGL_NO_SURFACE) {
      surface_ = surface;
      current = eglMakeCurrent(display, surface, surface, context_);
    }
  }
  if (!current) {
    return "eglMakeCurrent failed without a surface and with a pbuffer (" + lastEglError() + ")";
  }

  const int glVersion = gladLoadGL(loadGl);
  if (glVersion == 0) {
    return "loading the OpenGL entry points failed";
  }
  if (GLAD_VERSION_MAJOR(glVersion) * 10 + GLAD_VERSION_MINOR(glVersion) < 45) {
    return "OpenGL " + std::to_string(GLAD_VERSION_MAJOR(glVersion)) + "." +
           std::to_string(GLAD_VERSION_MINOR(glVersion)) + " is older than the 4.5 required";
  }

  auto glString = [](GLenum name) {
    const GLubyte* s = glGetString(name);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
  };
  vendor_ = glString(GL_VENDOR);
  renderer_ = glString(GL_RENDERER);
  version_ = glString(GL_VERSION);
  isNvidia_ = vendor_.find("NVIDIA") != std::string::npos;
  return "";
}

std::unique_ptr<EglContext> EglContext::create(std::string* error, EglPlatform platform) {
  auto allowed = [platform](EglPlatform p) { return platform == EglPlatform::Any || platform == p; };
  std::ostringstream log;
  std::vector<Attempt> attempts;
  if (allowed(EglPlatform::Device)) addDeviceDisplays(attempts, log);
  if (allowed(EglPlatform::Surfaceless)) addSurfacelessDisplay(attempts, log);
  if (allowed(EglPlatform::Default)) addDefaultDisplay(attempts, log);

  for (const Attempt& at : attempts) {
    if (!acquireDisplay(at.display)) {
      log << at.label << ": eglInitialize failed (" << lastEglError() << "); ";
      continue;
    }
    // From here on, a failure releases the display (the destructor) before the next attempt.
    std::unique_ptr<EglContext> ctx(new EglContext());
    ctx->display_ = at.display;
    const std::string why = ctx->open();
    if (!why.empty()) {
      log << at.label << ": " << why << "; ";
      continue;
    }
    ctx->platform_ = at.platform;
    // Displays of the attempts not taken were never initialised: nothing to release for them.
    return ctx;
  }

  if (error) {
    std::string msg = log.str();
    if (msg.size() >= 2) msg.resize(msg.size() - 2);  // the trailing "; "
    *error = "no headless OpenGL 4.5 context: " + (msg.empty() ? std::string("no EGL display") : msg);
  }
  return nullptr;
}

EglContext::~EglContext() {
  if (!display_) return;
  if (context_ && eglGetCurrentContext() == static_cast<EGLContext>(context_)) {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  }
  if (surface_) eglDestroySurface(display_, static_cast<EGLSurface>(surface_));
  if (context_) eglDestroyContext(display_, static_cast<EGLContext>(context_));
  releaseDisplay(static_cast<EGLDisplay>(display_));
}

bool EglContext::makeCurrent() {
  EGLSurface s = surface_ ? static_cast<EGLSurface>(surface_) : EGL_NO_SURFACE;
  return eglMakeCurrent(display_, s, s, static_cast<EGLContext>(context_)) == EGL_TRUE;
}

}  // namespace murmur::render
