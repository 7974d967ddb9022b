// What the renderer draws over a frame: the world's box lights the pixels along the projected
// cube's edges and nothing else, fades with depth, and goes over a splat frame without touching
// its keys; the legend shows the colours the bodies get, in the bottom-right corner.
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

// Colour of the legend swatch at (u, v), fractions of the swatch from its bottom-left corner.
std::array<int, 3> swatchAt(const Frame& f, ColourMode mode, float u, float v) {
  const glm::vec4 r = legendSwatch(mode, f.width, f.height);
  const int x = int(r.x + u * (r.z - r.x)), yUp = int(r.y + v * (r.w - r.y));
  const uint8_t* p = f.at(x, f.height - 1 - yUp);
  return {p[0], p[1], p[2]};
}

TEST_F(OverlayTest, HeadingLegendIsABallOfHeadingColoursSeenFromTheCamera) {
  Camera camera;  // from +z: x right, y up, z at the eye
  camera.fitBounds(glm::vec3(0.0f), 5.0f);
  OverlayStyle style;
  style.legend = true;
  const Frame f = boxOnly(camera, style);
  const glm::vec4 r = legendSwatch(ColourMode::Velocity, kW, kH);
  EXPECT_GT(r.x, kW / 2);  // bottom-right corner
  EXPECT_LT(r.y, kH / 2);
  EXPECT_NEAR(r.z - r.x, r.w - r.y, 0.5f);  // a square: the ball is round
  // Centre: flying at the eye, +z: blue. Right edge: +x, red. Top: +y, green.
  const auto centre = swatchAt(f, ColourMode::Velocity, 0.5f, 0.5f);
  EXPECT_GT(centre[2], 230);
  EXPECT_LT(centre[0] + centre[1], 40);
  const auto right = swatchAt(f, ColourMode::Velocity, 0.97f, 0.5f);
  EXPECT_GT(right[0], 200);
  EXPECT_GT(right[0], right[1] + right[2]);
  const auto top = swatchAt(f, ColourMode::Velocity, 0.5f, 0.97f);
  EXPECT_GT(top[1], 200);
  EXPECT_GT(top[1], top[0] + top[2]);
  // The corner of the square is outside the ball: the legend's dark backing.
  const auto corner = swatchAt(f, ColourMode::Velocity, 0.03f, 0.03f);
  EXPECT_LT(corner[0] + corner[1] + corner[2], 30);
  // Lettering above the ball: light grey pixels between the ball and the backing's top.
  int letters = 0;
  for (int y = int(r.w) + 1; y < int(r.w) + 20; ++y)
    for (int x = int(r.x) - 10; x < int(r.z) + 10; ++x) {
      const uint8_t* p = f.at(x, kH - 1 - y);
      letters += p[0] > 150 && p[1] > 150 && p[2] > 150;
    }
  EXPECT_GT(letters, 20);
  // Nothing outside the legend's corner: left of it and above it is background.
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      if (x < int(r.x) - 8 || kH - 1 - y > int(r.w) + 20) {
        ASSERT_TRUE(f.background(x, y)) << x << "," << y;
      }

  // Seen from +x, the ball's centre is the colour of flying at the eye there: red.
  Camera side = camera;
  side.setYaw(1.5707963f);
  const auto sideCentre = swatchAt(boxOnly(side, style), ColourMode::Velocity, 0.5f, 0.5f);
  EXPECT_GT(sideCentre[0], 230);
  EXPECT_LT(sideCentre[1] + sideCentre[2], 40);
}

// In the plane (--dims 2) the heading legend is a flat colour wheel: the rim's colour at screen
// direction a is the hue of a body flying that way in the plane (core::planeHeadingColour), all the
// way round, and the centre is white.
TEST_F(OverlayTest, PlaneHeadingLegendIsAColourWheel) {
  Camera camera;  // from +z, the plane's view: x right, y up
  camera.fitBounds(glm::vec3(0.0f), 5.0f);
  OverlayStyle style;
  style.legend = true;
  style.plane = true;
  const Frame f = boxOnly(camera, style);
  const auto centre = swatchAt(f, ColourMode::Velocity, 0.5f, 0.5f);
  EXPECT_GT(std::min({centre[0], centre[1], centre[2]}), 230);
  int hues[6] = {};
  for (int k = 0; k < 24; ++k) {
    const float a = 6.2831853f * float(k) / 24.0f;
    const auto rim = swatchAt(f, ColourMode::Velocity, 0.5f + 0.45f * std::cos(a), 0.5f + 0.45f * std::sin(a));
    float r, g, b;
    core::planeHeadingColour(std::cos(a), std::sin(a), r, g, b);
    EXPECT_NEAR(rim[0], 255.0f * r, 40.0f) << "direction " << k * 15 << " degrees";
    EXPECT_NEAR(rim[1], 255.0f * g, 40.0f) << "direction " << k * 15 << " degrees";
    EXPECT_NEAR(rim[2], 255.0f * b, 40.0f) << "direction " << k * 15 << " degrees";
    // Which of the six hue sectors the rim's colour falls in (the strongest and the weakest channel).
    const int hi = rim[0] >= rim[1] && rim[0] >= rim[2] ? 0 : (rim[1] >= rim[2] ? 1 : 2);
    const int lo = rim[0] <= rim[1] && rim[0] <= rim[2] ? 0 : (rim[1] <= rim[2] ? 1 : 2);
    ++hues[hi * 2 + (lo == (hi + 1) % 3 ? 1 : 0)];
  }
  for (int sector = 0; sector < 6; ++sector) EXPECT_GT(hues[sector], 0) << "hue sector " << sector;
}

TEST_F(OverlayTest, SpeedLegendIsTheRampFromFloorToScale) {
  Camera camera;
  OverlayStyle style;
  style.legend = true;
  style.colour = ColourMode::Speed;
  style.speedFloor = 0.5f;
  style.speedScale = 2.0f;
  const Frame f = boxOnly(camera, style);
  // The ramp's ends (colour.glsl speedRamp): dark blue at the floor, red at the scale.
  const auto low = swatchAt(f, ColourMode::Speed, 0.01f, 0.5f), high = swatchAt(f, ColourMode::Speed, 0.99f, 0.5f);
  EXPECT_NEAR(low[0], 0.16 * 255, 12);
  EXPECT_NEAR(low[1], 0.22 * 255, 12);
  EXPECT_NEAR(low[2], 0.85 * 255, 12);
  EXPECT_NEAR(high[0], 255, 12);
  EXPECT_NEAR(high[1], 0.28 * 255, 14);
  EXPECT_NEAR(high[2], 0.15 * 255, 14);
  // Its middle is the ramp's middle (green).
  const auto mid = swatchAt(f, ColourMode::Speed, 0.5f, 0.5f);
  EXPECT_GT(mid[1], mid[0] + 60);
  EXPECT_GT(mid[1], mid[2] + 60);
  // The numbers under the ramp: light pixels below the swatch, at both ends.
  const glm::vec4 r = legendSwatch(ColourMode::Speed, kW, kH);
  int leftDigits = 0, rightDigits = 0;
  for (int y = int(r.y) - 14; y < int(r.y); ++y)
    for (int x = int(r.x); x < int(r.z); ++x) {
      const uint8_t* p = f.at(x, kH - 1 - y);
      if (p[0] > 150 && p[1] > 150 && p[2] > 150) (x < (r.x + r.z) / 2 ? leftDigits : rightDigits)++;
    }
  EXPECT_GT(leftDigits, 5);
  EXPECT_GT(rightDigits, 5);
}

TEST_F(OverlayTest, IdLegendIsARowOfDistinctHues) {
  Camera camera;
  OverlayStyle style;
  style.legend = true;
  style.colour = ColourMode::Id;
  const Frame f = boxOnly(camera, style);
  std::vector<std::array<int, 3>> cells;
  for (int i = 0; i < 12; ++i) {
    const auto c = swatchAt(f, ColourMode::Id, (float(i) + 0.5f) / 12.0f, 0.5f);
    EXPECT_GT(c[0] + c[1] + c[2], 200) << "cell " << i;
    bool seen = false;
    for (const auto& o : cells) seen |= std::abs(o[0] - c[0]) + std::abs(o[1] - c[1]) + std::abs(o[2] - c[2]) < 12;
    if (!seen) cells.push_back(c);
  }
  EXPECT_GE(cells.size(), 8u);
}

}  // namespace
}  // namespace murmur::render
