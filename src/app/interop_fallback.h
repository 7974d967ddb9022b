// CUDA-GL interop with a fallback, written once for the draw buffers (app/draw_source.h) and the
// splat keys (app/splat_source.h): interop is tried while the engine hands out its device state
// (core::Engine::deviceAccess) and the GL context is NVIDIA's; the first failure turns it off for
// good, says why once on stderr, and every later frame takes the host path. offReason() names
// why the last frame did not use interop: "CPU engine", "GL is not NVIDIA's", "no CUDA interop in
// this build" or "interop failed: ...". See docs/design.md (the engine interface, capabilities).
#pragma once

#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include "core/engine.h"

namespace murmur::app {

class InteropFallback {
 public:
  // `glIsNvidia`: the current GL context is NVIDIA's. `what` names the path in the failure line
  // ("CUDA-GL", "splat") and `instead` says what happens after it ("uploading through the host").
  InteropFallback(bool glIsNvidia, const char* what, const char* instead)
      : glIsNvidia_(glIsNvidia), what_(what), instead_(instead) {}

  // Runs `interop(device)` when interop can serve this engine and returns true when it did. An
  // exception from it calls `release()` (drop what was registered), turns interop off for good
  // and returns false: the caller takes its host path then, as it does whenever this is false.
  template <typename Interop, typename Release>
  bool attempt(core::Engine& engine, Interop&& interop, Release&& release) {
    core::DeviceAccess* device = engine.deviceAccess();
    if (device && glIsNvidia_ && !failed_) {
      try {
        std::forward<Interop>(interop)(*device);
        active_ = true;
        offReason_.clear();
        return true;
      } catch (const std::exception& e) {
        // A driver without GL interop (or a GL context on another device) falls back for good.
        failed_ = true;
        std::forward<Release>(release)();
        offReason_ = std::string("interop failed: ") + e.what();
        std::fprintf(stderr, "murmur: %s %s; %s instead\n", what_, offReason_.c_str(), instead_);
      }
    }
    fellBack(engine, device != nullptr);
    return false;
  }

  // A build without CUDA: the host path, always.
  void hostOnly(core::Engine& engine) { fellBack(engine, false); }

  bool active() const { return active_; }
  const std::string& offReason() const { return offReason_; }

 private:
  void fellBack(const core::Engine& engine, bool hasDevice) {
    if (hasDevice && !glIsNvidia_) offReason_ = "GL is not NVIDIA's";
    if (engine.kind() == core::EngineKind::Cpu) offReason_ = "CPU engine";
    if (offReason_.empty()) offReason_ = "no CUDA interop in this build";
    active_ = false;
  }

  bool glIsNvidia_;
  const char* what_;
  const char* instead_;
  bool active_ = false;
  bool failed_ = false;
  std::string offReason_;
};

}  // namespace murmur::app
