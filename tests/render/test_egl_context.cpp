#include "render/egl_context.h"

#include <gtest/gtest.h>
#include <glad/gl.h>

#include <cstdio>
#include <string>

#include "render/renderer.h"

namespace murmur::render {
namespace {

TEST(EglContext, CreatesAnOpenGl45CoreContext) {
  std::string error;
  auto ctx = EglContext::create(&error);
  if (!ctx) GTEST_SKIP() << error;
  EXPECT_FALSE(ctx->vendor().empty());
  EXPECT_FALSE(ctx->renderer().empty());
  EXPECT_FALSE(ctx->platform().empty());
  EXPECT_EQ(ctx->isNvidia(), ctx->vendor().find("NVIDIA") != std::string::npos);
  GLint major = 0, minor = 0, profile = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &profile);
  EXPECT_GE(major * 10 + minor, 45) << ctx->version();
  EXPECT_TRUE(profile & GL_CONTEXT_CORE_PROFILE_BIT);
  EXPECT_TRUE(ctx->makeCurrent());
  ::testing::Test::RecordProperty("gl_renderer", ctx->renderer());
  std::printf("EGL %s platform: %s / %s / %s\n", ctx->platform().c_str(), ctx->vendor().c_str(),
              ctx->renderer().c_str(), ctx->version().c_str());
}

// Every platform that this machine offers gives a context that can draw; the ones it lacks say why.
TEST(EglContext, EachAvailablePlatformRenders) {
  int working = 0;
  for (EglPlatform p : {EglPlatform::Device, EglPlatform::Surfaceless, EglPlatform::Default}) {
    std::string error;
    auto ctx = EglContext::create(&error, p);
    if (!ctx) {
      EXPECT_FALSE(error.empty());
      std::printf("platform %d unavailable: %s\n", static_cast<int>(p), error.c_str());
      continue;
    }
    ++working;
    Renderer r;
    r.setOffscreenTarget(8, 8);
    r.draw(Camera(), DrawMode::Points, ColourMode::Velocity, 8, 8, 1.0f, 1.0f, 0.0f);
    const auto pixels = r.readPixels(8, 8);
    ASSERT_EQ(pixels.size(), 8u * 8u * 4u);
    EXPECT_NEAR(pixels[2], kBackground[2] * 255.0f, 1.0f) << ctx->platform();
  }
  if (working == 0) GTEST_SKIP() << "no EGL platform gives an OpenGL 4.5 core context here";
}

TEST(EglContext, TwoContextsLiveSideBySide) {
  std::string error;
  auto a = EglContext::create(&error);
  if (!a) GTEST_SKIP() << error;
  auto b = EglContext::create(&error);
  ASSERT_TRUE(b) << error;
  b.reset();  // must not tear down the display under a
  ASSERT_TRUE(a->makeCurrent());
  Renderer r;
  r.setOffscreenTarget(4, 4);
  r.draw(Camera(), DrawMode::Points, ColourMode::Velocity, 4, 4, 1.0f, 1.0f, 0.0f);
  EXPECT_EQ(r.readPixels(4, 4).size(), 64u);
}

}  // namespace
}  // namespace murmur::render
