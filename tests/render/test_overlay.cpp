// What the renderer draws over a frame: the world's box lights the pixels along the projected
// cube's edges and nothing else, fades with depth, and goes over a splat frame without touching
// its keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <glad/gl.h>

#include "core/splat.h"
#include "gl_test_context.h"
#include "render/renderer.h"
#include "render/splat_renderer.h"

namespace murmur::render {
namespace {

using test::Frame;
using test::GlTest;

constexpr int kW = 240, kH = 180;
constexpr float kHalf = 3.0f;

// A camera that sees the cube from above and to the side, so that all twelve edges show apart.
Camera obliqueCamera() {
  Camera c;
  c.setYaw(0.6f);
  c.setPitch(0.4f);
  c.fitBounds(glm::vec3(0.0f), kHalf * 1.9f);
  return c;
}

// Where a world point lands, in pixels (x right, y down from the top row), unrounded.
glm::vec2 pixelOf(const Camera& camera, const glm::vec3& p) {
  const glm::vec4 clip = camera.projection(float(kW) / float(kH)) * camera.view() * glm::vec4(p, 1.0f);
  const glm::vec2 ndc = glm::vec2(clip) / clip.w;
  return {(ndc.x * 0.5f + 0.5f) * float(kW), float(kH) - (ndc.y * 0.5f + 0.5f) * float(kH)};
}

glm::vec3 corner(int i) { return {i & 1 ? kHalf : -kHalf, i & 2 ? kHalf : -kHalf, i & 4 ? kHalf : -kHalf}; }

std::vector<std::array<glm::vec2, 2>> projectedEdges(const Camera& camera) {
  std::vector<std::array<glm::vec2, 2>> edges;
  for (int i = 0; i < 8; ++i)
    for (int bit = 1; bit < 8; bit <<= 1)
      if (!(i & bit)) edges.push_back({pixelOf(camera, corner(i)), pixelOf(camera, corner(i | bit))});
  return edges;
}

float distanceToSegment(glm::vec2 p, glm::vec2 a, glm::vec2 b) {
  const glm::vec2 ab = b - a;
  const float t = std::clamp(glm::dot(p - a, ab) / std::max(glm::dot(ab, ab), 1e-12f), 0.0f, 1.0f);
  return glm::length(p - (a + t * ab));
}

// The brightest pixel (sum of rgb) within `r` pixels of (x, y).
int brightestNear(const Frame& f, glm::vec2 p, int r) {
  int best = 0;
  for (int y = int(p.y) - r; y <= int(p.y) + r; ++y)
    for (int x = int(p.x) - r; x <= int(p.x) + r; ++x)
      if (x >= 0 && y >= 0 && x < f.width && y < f.height) best = std::max(best, f.at(x, y)[0] + f.at(x, y)[1] + f.at(x, y)[2]);
  return best;
}

class OverlayTest : public GlTest {
 protected:
  Frame frame(Renderer& r) {
    Frame f;
    f.width = kW;
    f.height = kH;
    f.rgba = r.readPixels(kW, kH);
    return f;
  }
  // An empty frame (no bodies) with the overlay drawn over it.
  Frame boxOnly(const Camera& camera, const OverlayStyle& style, int samples = 1) {
    Renderer r;
    r.setOffscreenTarget(kW, kH, samples);
    r.draw(camera, DrawMode::Points, ColourMode::Velocity, kW, kH, 2.0f, 1.0f, 0.0f);
    r.drawOverlay(camera, style, kW, kH);
    return frame(r);
  }
};

TEST_F(OverlayTest, BoxLightsTheProjectedEdgesAndNothingElse) {
  const Camera camera = obliqueCamera();
  OverlayStyle style;
  style.boxHalfSize = kHalf;
  const Frame f = boxOnly(camera, style);
  const auto edges = projectedEdges(camera);
  ASSERT_EQ(edges.size(), 12u);
  // Every corner and every edge's midpoint and quarter points are lit (within a pixel).
  for (const auto& e : edges)
    for (float t : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}) {
      const glm::vec2 p = e[0] + t * (e[1] - e[0]);
      ASSERT_TRUE(p.x >= 0 && p.y >= 0 && p.x < kW && p.y < kH) << "the cube must be in view";
      EXPECT_GT(brightestNear(f, p, 1), 3 * 30) << "edge point (" << p.x << ", " << p.y << ") is dark";
    }
  // Pixels more than two pixels from every edge are background: no fill, no stray lines.
  int away = 0, wrong = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const glm::vec2 p(float(x) + 0.5f, float(y) + 0.5f);
      float d = 1e9f;
      for (const auto& e : edges) d = std::min(d, distanceToSegment(p, e[0], e[1]));
      if (d <= 2.5f) continue;
      ++away;
      wrong += f.background(x, y) ? 0 : 1;
    }
  EXPECT_GT(away, kW * kH / 2);
  EXPECT_EQ(wrong, 0);
  // Thin lines: a dozen edges a pixel or two wide, not a tenth of the frame.
  EXPECT_LT(f.countLit(), kW * kH / 10);
}

TEST_F(OverlayTest, NoBoxLeavesTheBackground) {
  OverlayStyle style;  // boxHalfSize 0
  const Frame f = boxOnly(obliqueCamera(), style);
  EXPECT_EQ(f.countLit(), 0);
  for (int y = 0; y < kH; y += 7)
    for (int x = 0; x < kW; x += 7) EXPECT_TRUE(f.background(x, y)) << x << "," << y;
}

TEST_F(OverlayTest, FarEdgesAreDimmerThanNearOnes) {
  const Camera camera = obliqueCamera();
  OverlayStyle style;
  style.boxHalfSize = kHalf;
  style.worldRadius = kHalf * 1.7320508f;
  style.fog = 0.55f;
  const Frame f = boxOnly(camera, style);
  // The corners nearest to and farthest from the eye.
  int nearest = 0, farthest = 0;
  for (int i = 1; i < 8; ++i) {
    const float d = glm::length(corner(i) - camera.eye());
    if (d < glm::length(corner(nearest) - camera.eye())) nearest = i;
    if (d > glm::length(corner(farthest) - camera.eye())) farthest = i;
  }
  const int nearBright = brightestNear(f, pixelOf(camera, corner(nearest)), 1);
  const int farBright = brightestNear(f, pixelOf(camera, corner(farthest)), 1);
  EXPECT_GT(nearBright, farBright + 40) << "near " << nearBright << ", far " << farBright;
  EXPECT_GT(farBright, 3 * 15) << "the far edges still show";
  // With no fog both ends are alike.
  style.fog = 0.0f;
  const Frame flat = boxOnly(camera, style);
  EXPECT_NEAR(brightestNear(flat, pixelOf(camera, corner(nearest)), 1),
              brightestNear(flat, pixelOf(camera, corner(farthest)), 1), 12);
}

// The box goes over the shaded splat image: the keys (the per-pixel minimum that ranks composite)
// are the same bytes afterwards, and pixels away from the edges are those of the frame without it.
TEST_F(OverlayTest, BoxOverASplatFrameLeavesTheKeysAndTheBodiesAlone) {
  const Camera camera = obliqueCamera();
  SplatStyle splatStyle;
  splatStyle.bodySize = 0.3f;
  const core::SplatView view = makeSplatView(camera, kW, kH, kHalf * 1.7320508f, splatStyle);
  std::vector<core::Vec4> pos, vel;
  for (int i = 0; i < 300; ++i) {
    const float a = 0.37f * float(i), z = -2.5f + 5.0f * float(i) / 300.0f;
    pos.push_back({2.2f * std::cos(a), 2.2f * std::sin(a), z, 1.0f});
    vel.push_back({-std::sin(a), std::cos(a), 0.3f, 0.0f});
  }
  std::vector<uint32_t> id(pos.size());
  for (size_t i = 0; i < id.size(); ++i) id[i] = uint32_t(i);
  std::vector<uint64_t> keys(size_t(kW) * kH);
  core::clearSplat(keys.data(), keys.size());
  core::splatBodies(view, pos.data(), vel.data(), id.data(), pos.size(), keys.data());

  SplatRenderer sr;
  sr.resize(kW, kH);
  sr.upload(keys);
  Renderer target;
  target.setOffscreenTarget(kW, kH, 1);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer());
  sr.draw(splatStyle);
  const Frame plain = frame(target);

  OverlayStyle style;
  style.boxHalfSize = kHalf;
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer());
  sr.draw(splatStyle);
  target.drawOverlay(camera, style, kW, kH);
  const Frame boxed = frame(target);

  std::vector<uint64_t> after(keys.size());
  glGetNamedBufferSubData(sr.keyBuffer(), 0, GLsizeiptr(after.size() * sizeof(uint64_t)), after.data());
  EXPECT_TRUE(after == keys) << "the overlay changed the splat keys";

  const auto edges = projectedEdges(camera);
  int onEdges = 0, changedOnEdges = 0, changedAway = 0, bodiesAway = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const glm::vec2 p(float(x) + 0.5f, float(y) + 0.5f);
      float d = 1e9f;
      for (const auto& e : edges) d = std::min(d, distanceToSegment(p, e[0], e[1]));
      const bool same = std::equal(plain.at(x, y), plain.at(x, y) + 3, boxed.at(x, y));
      if (d < 0.3f) {
        ++onEdges;
        changedOnEdges += same ? 0 : 1;
      } else if (d > 2.5f) {
        changedAway += same ? 0 : 1;
        bodiesAway += plain.lit(x, y) ? 1 : 0;
      }
    }
  EXPECT_GT(bodiesAway, 100) << "the bodies must show for this test to mean anything";
  EXPECT_EQ(changedAway, 0);
  EXPECT_GT(changedOnEdges, onEdges / 2);
}

}  // namespace
}  // namespace murmur::render
