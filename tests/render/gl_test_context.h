// Shared by the render tests: one headless GL context per test suite, and frame helpers.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "render/camera.h"
#include "render/egl_context.h"
#include "render/renderer.h"

namespace murmur::render::test {

// A test suite whose tests need a current OpenGL 4.5 context. Skips (with EGL's reasons) where
// none can be created at all; everywhere else, including Mesa's llvmpipe, the tests run.
class GlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!context()) context() = EglContext::create(&error());
  }
  static void TearDownTestSuite() { context().reset(); }

  void SetUp() override {
    if (!context()) GTEST_SKIP() << error();
    ASSERT_TRUE(context()->makeCurrent());
  }

  static std::unique_ptr<EglContext>& context() {
    static std::unique_ptr<EglContext> ctx;
    return ctx;
  }
  static std::string& error() {
    static std::string e;
    return e;
  }
};

// Background in bytes, as the RGBA8 target stores kBackground.
inline std::array<int, 3> backgroundBytes() {
  return {static_cast<int>(kBackground[0] * 255.0f + 0.5f), static_cast<int>(kBackground[1] * 255.0f + 0.5f),
          static_cast<int>(kBackground[2] * 255.0f + 0.5f)};
}

// Image pixels are top row first (Renderer::readPixels).
struct Frame {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;

  const uint8_t* at(int x, int y) const {
    return rgba.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4;
  }
  // Sum over rgb of the distance to the background.
  int difference(int x, int y) const {
    const uint8_t* p = at(x, y);
    const auto bg = backgroundBytes();
    return std::abs(p[0] - bg[0]) + std::abs(p[1] - bg[1]) + std::abs(p[2] - bg[2]);
  }
  // Lit: clearly brighter than the background, not a rounding difference.
  bool lit(int x, int y) const { return difference(x, y) > 24; }
  bool background(int x, int y) const { return difference(x, y) <= 3; }
  int countLit() const {
    int n = 0;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) n += lit(x, y) ? 1 : 0;
    return n;
  }
};

// Pixel (column, row from the top) where a world point lands, with the same matrices the renderer
// uses. Returns false when the point is behind the camera or off-screen.
inline bool projectToPixel(const Camera& camera, const glm::vec3& p, int width, int height, int& x,
                           int& y) {
  const glm::vec4 clip = camera.projection(static_cast<float>(width) / static_cast<float>(height)) *
                         camera.view() * glm::vec4(p, 1.0f);
  if (clip.w <= 0.0f) return false;
  const glm::vec3 ndc = glm::vec3(clip) / clip.w;
  x = static_cast<int>((ndc.x * 0.5f + 0.5f) * static_cast<float>(width));
  const int fromBottom = static_cast<int>((ndc.y * 0.5f + 0.5f) * static_cast<float>(height));
  y = height - 1 - fromBottom;
  return x >= 0 && x < width && y >= 0 && y < height;
}

}  // namespace murmur::render::test
