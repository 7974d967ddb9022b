// The splat renderer's GL side (key buffer, full-screen pass) on whatever GL EGL gives: bodies
// resolved by the CPU executor land where the GL modes put them, in the colour the key holds,
// the nearer one wins, and everything else is background.
#include "render/splat_renderer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <glad/gl.h>

#include "core/splat.h"
#include "gl_test_context.h"

namespace murmur::render {
namespace {

using test::Frame;
using test::GlTest;
using test::projectToPixel;

constexpr int kW = 160, kH = 120;

class SplatRendererTest : public GlTest {
 protected:
  Frame show(SplatRenderer& sr, Renderer& target, const std::vector<core::Vec4>& pos, const std::vector<core::Vec4>& vel,
             const core::SplatView& v, const SplatStyle& style) {
    std::vector<uint32_t> id(pos.size());
    for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint32_t>(i);
    std::vector<uint64_t> keys(static_cast<size_t>(kW) * kH);
    core::clearSplat(keys.data(), keys.size());
    core::splatBodies(v, pos.data(), vel.data(), id.data(), pos.size(), keys.data());
    sr.resize(kW, kH);
    sr.upload(keys);
    target.setOffscreenTarget(kW, kH, 1);
    glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer());
    sr.draw(style);
    Frame f;
    f.width = kW;
    f.height = kH;
    f.rgba = target.readPixels(kW, kH);
    return f;
  }
};

TEST_F(SplatRendererTest, ProgramBuilds) {
  SplatRenderer sr;
  EXPECT_NE(sr.keyBuffer(), 0u);
}

TEST_F(SplatRendererTest, BodyLandsWhereTheCameraProjectsItInItsColour) {
  Camera camera;
  camera.fitBounds(glm::vec3(0.0f), 5.0f);
  SplatStyle style;
  style.fogStrength = 0.0f;
  style.edlStrength = 0.0f;
  style.bodySize = 1e-3f;  // one pixel
  const core::SplatView v = makeSplatView(camera, kW, kH, 5.0f, style);
  const glm::vec3 p(1.3f, -0.7f, 0.4f);
  SplatRenderer sr;
  Renderer target;
  const Frame f = show(sr, target, {{p.x, p.y, p.z, 1.0f}}, {{1.0f, 0.0f, 0.0f, 0.0f}}, v, style);
  int x = 0, y = 0;
  ASSERT_TRUE(projectToPixel(camera, p, kW, kH, x, y));
  EXPECT_EQ(f.countLit(), 1);
  ASSERT_TRUE(f.lit(x, y)) << x << "," << y;
  float r, g, b;
  core::headingColour(1.0f, 0.0f, 0.0f, r, g, b);
  EXPECT_NEAR(f.at(x, y)[0], r * 255.0f, 1.5f);
  EXPECT_NEAR(f.at(x, y)[1], g * 255.0f, 1.5f);
  EXPECT_NEAR(f.at(x, y)[2], b * 255.0f, 1.5f);
  EXPECT_TRUE(f.background(0, 0));
  EXPECT_TRUE(f.background(kW - 1, kH - 1));
}

TEST_F(SplatRendererTest, NearerBodyWinsAndEyeDomeLightingDarkensWhatIsBehind) {
  Camera camera;
  camera.fitBounds(glm::vec3(0.0f), 5.0f);
  SplatStyle style;
  style.fogStrength = 0.0f;
  style.edlStrength = 0.0f;
  style.bodySize = 0.4f;  // discs of several pixels
  const core::SplatView v = makeSplatView(camera, kW, kH, 5.0f, style);
  const glm::vec3 eye = camera.eye();
  // A near body (flying +x: red) in front of a far one (flying -x) on the same line of sight.
  const glm::vec3 nearP = eye + 0.6f * (glm::vec3(0.0f) - eye), farP = glm::vec3(0.0f);
  SplatRenderer sr;
  Renderer target;
  const std::vector<core::Vec4> pos = {{farP.x, farP.y, farP.z, 1}, {nearP.x, nearP.y, nearP.z, 1}};
  const std::vector<core::Vec4> vel = {{-1, 0, 0, 0}, {1, 0, 0, 0}};
  int x = 0, y = 0;
  ASSERT_TRUE(projectToPixel(camera, farP, kW, kH, x, y));
  const Frame plain = show(sr, target, pos, vel, v, style);
  float r, g, b;
  core::headingColour(1.0f, 0.0f, 0.0f, r, g, b);
  EXPECT_GT(plain.at(x, y)[0], 150);  // the near body's red, not the far one's colour
  EXPECT_LT(plain.at(x, y)[1] + plain.at(x, y)[2], 60);
  // Only the far body: its own colour in the middle.
  const Frame alone = show(sr, target, {pos[0]}, {vel[0]}, v, style);
  EXPECT_GT(alone.at(x, y)[1] + alone.at(x, y)[2], 150);

  // Eye-dome lighting darkens far pixels that border nearer ones and leaves the rest alone.
  style.edlStrength = 2.0f;
  const Frame lit = show(sr, target, pos, vel, v, style);
  int darker = 0, brighter = 0;
  for (int yy = 0; yy < kH; ++yy)
    for (int xx = 0; xx < kW; ++xx) {
      const int a = plain.at(xx, yy)[0] + plain.at(xx, yy)[1] + plain.at(xx, yy)[2];
      const int c = lit.at(xx, yy)[0] + lit.at(xx, yy)[1] + lit.at(xx, yy)[2];
      darker += c + 6 < a;
      brighter += c > a + 1;
    }
  EXPECT_GT(darker, 0);
  EXPECT_EQ(brighter, 0);
}

TEST_F(SplatRendererTest, UploadOfTheWrongSizeIsRejected) {
  SplatRenderer sr;
  sr.resize(8, 8);
  EXPECT_THROW(sr.upload(std::vector<uint64_t>(63, core::kSplatEmpty)), std::invalid_argument);
  EXPECT_THROW(sr.resize(0, 8), std::invalid_argument);
}

}  // namespace
}  // namespace murmur::render
