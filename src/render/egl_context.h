// A headless OpenGL 4.5 core context through EGL: no window, no display server. Frames go into a
// framebuffer object (see Renderer::setOffscreenTarget). Used by the headless mode, screenshots,
// video frames and the render tests.
#pragma once
#include "render/module_guard.h"

#include <memory>
#include <string>

namespace murmur::render {

// Which EGL display create() may use. Any tries them in the order below; the others restrict it to
// one (tests use that to exercise each path that the machine offers).
enum class EglPlatform : int { Any = 0, Device = 1, Surfaceless = 2, Default = 3 };

class EglContext {
 public:
  // Tries, in order: the EGL device platform (EGL_EXT_platform_device; devices that CUDA can see
  // come first, so an NVIDIA GPU wins over a software device), Mesa's surfaceless platform
  // (EGL_PLATFORM_SURFACELESS_MESA), then the default display. The context is made current on the
  // calling thread without a surface (EGL_KHR_surfaceless_context); where a driver refuses that, a
  // tiny pbuffer is used instead. The GL entry points are loaded (glad) before returning.
  // Returns nullptr and fills *error (when given) with what each attempt reported.
  static std::unique_ptr<EglContext> create(std::string* error = nullptr,
                                            EglPlatform platform = EglPlatform::Any);

  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  // Makes this context current on the calling thread (create() already did on its thread).
  // Returns false when EGL refuses.
  bool makeCurrent();

  const std::string& vendor() const { return vendor_; }      // GL_VENDOR, e.g. "NVIDIA Corporation"
  const std::string& renderer() const { return renderer_; }  // GL_RENDERER, e.g. "NVIDIA H100 ..."
  const std::string& version() const { return version_; }    // GL_VERSION
  // Which attempt succeeded: "device", "surfaceless" or "default".
  const std::string& platform() const { return platform_; }
  // True on NVIDIA's driver: the only case where CUDA-GL buffer interop can work.
  bool isNvidia() const { return isNvidia_; }

 private:
  EglContext() = default;
  // Creates and makes current a context on display_; empty on success, else why not.
  std::string open();

  void* display_ = nullptr;  // EGLDisplay
  void* context_ = nullptr;  // EGLContext
  void* surface_ = nullptr;  // EGLSurface: only when surfaceless make-current was refused
  std::string vendor_, renderer_, version_, platform_;
  bool isNvidia_ = false;
};

}  // namespace murmur::render
