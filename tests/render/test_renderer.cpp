#include "render/renderer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/splat.h"
#include "gl_test_context.h"

namespace murmur::render {
namespace {

using test::Frame;
using test::GlTest;
using test::projectToPixel;

constexpr int kSize = 256;

// A few bodies in front of a camera that looks at the origin from +z (x right, y up on screen).
struct Scene {
  std::vector<core::Vec4> pos;
  std::vector<core::Vec4> vel;
  std::vector<uint32_t> id;
  Camera camera;

  Scene() {
    camera.fitBounds(glm::vec3(0.0f), 5.0f);
    add({0.0f, 0.0f, 0.0f}, {1.0f, 0.0f, 0.0f});
    add({3.0f, 2.0f, 0.0f}, {0.0f, 0.5f, 0.0f});
    add({-3.0f, -2.0f, 1.0f}, {0.0f, 0.0f, 0.8f});  // flies straight at the camera
    add({2.5f, -3.0f, -1.0f}, {0.0f, 0.0f, 0.0f});   // at rest
  }
  void add(glm::vec3 p, glm::vec3 v) {
    pos.push_back({p.x, p.y, p.z, 1.0f});
    vel.push_back({v.x, v.y, v.z, 0.0f});
    id.push_back(static_cast<uint32_t>(id.size()));
  }
  glm::vec3 position(size_t i) const { return {pos[i].x, pos[i].y, pos[i].z}; }
};

class RendererTest : public GlTest {
 protected:
  Frame render(Renderer& r, const Camera& camera, DrawMode mode, ColourMode colour = ColourMode::Velocity,
               float pointSize = 4.0f, float bodySize = 1.0f, int samples = 1) {
    r.setOffscreenTarget(kSize, kSize, samples);
    r.draw(camera, mode, colour, kSize, kSize, pointSize, bodySize, 5.0f);
    Frame f;
    f.width = f.height = kSize;
    f.rgba = r.readPixels(kSize, kSize);
    return f;
  }

  void expectBodiesLit(const Frame& f, const Scene& s, const char* what) {
    for (size_t i = 0; i < s.pos.size(); ++i) {
      int x = 0, y = 0;
      ASSERT_TRUE(projectToPixel(s.camera, s.position(i), kSize, kSize, x, y)) << what << " body " << i;
      EXPECT_TRUE(f.lit(x, y)) << what << ": body " << i << " at pixel (" << x << ", " << y
                               << ") differs from the background by only " << f.difference(x, y);
    }
    for (auto [x, y] : {std::pair{0, 0}, std::pair{kSize - 1, 0}, std::pair{0, kSize - 1},
                        std::pair{kSize - 1, kSize - 1}, std::pair{kSize / 2, 10}}) {
      EXPECT_TRUE(f.background(x, y)) << what << ": pixel (" << x << ", " << y << ") is not background";
    }
    const int lit = f.countLit();
    EXPECT_GE(lit, static_cast<int>(s.pos.size())) << what;
    EXPECT_LT(lit, kSize * kSize / 20) << what << ": far more lit pixels than four small bodies cover";
  }
};

TEST_F(RendererTest, EachDrawModeLightsThePixelsWhereBodiesProject) {
  Renderer r;
  Scene s;
  r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
  ASSERT_EQ(r.numBodies(), s.pos.size());
  for (DrawMode mode : {DrawMode::Boids, DrawMode::Points, DrawMode::Sprites}) {
    expectBodiesLit(render(r, s.camera, mode), s, toString(mode));
  }
}

TEST_F(RendererTest, EachColourModeIsVisible) {
  Renderer r;
  Scene s;
  r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
  for (ColourMode colour : {ColourMode::Velocity, ColourMode::Speed, ColourMode::Id}) {
    expectBodiesLit(render(r, s.camera, DrawMode::Points, colour), s, toString(colour));
  }
}

TEST_F(RendererTest, VelocityColourIsTheHeading) {
  // A body moving along +x is red, along +y green (before depth dimming, which scales all three).
  Renderer r;
  Scene s;
  r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
  Frame f = render(r, s.camera, DrawMode::Points, ColourMode::Velocity, 6.0f);
  int x = 0, y = 0;
  ASSERT_TRUE(projectToPixel(s.camera, s.position(0), kSize, kSize, x, y));
  const uint8_t* red = f.at(x, y);
  EXPECT_GT(red[0], 100);
  EXPECT_LT(red[1], 20);
  EXPECT_LT(red[2], 20);
  ASSERT_TRUE(projectToPixel(s.camera, s.position(1), kSize, kSize, x, y));
  const uint8_t* green = f.at(x, y);
  EXPECT_GT(green[1], 100);
  EXPECT_LT(green[0], 20);
}

// The plane (--dims 2, setPlane): twelve bodies on a ring in z = 0, each flying in its own
// direction of the plane, take the plane's hue of that direction (core::planeHeadingColour) and
// between them all six sectors of the hue circle; the 3D heading colour of the same bodies (|v|
// per axis, no z) never makes blue the strongest channel.
TEST_F(RendererTest, PlaneHeadingsTakeTheWholeHueCircle) {
  Scene s;
  s.pos.clear(), s.vel.clear(), s.id.clear();
  for (int k = 0; k < 12; ++k) {
    const float a = 6.2831853f * float(k) / 12.0f;
    s.add({3.5f * std::cos(a), 3.5f * std::sin(a), 0.0f}, {std::cos(a + 1.0f), std::sin(a + 1.0f), 0.0f});
  }
  const auto sectorsOf = [&](bool plane, bool checkHue) {
    Renderer r;
    r.setPlane(plane);
    r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
    const Frame f = render(r, s.camera, DrawMode::Points, ColourMode::Velocity, 6.0f);
    std::vector<int> sectors(6, 0);
    for (size_t i = 0; i < s.pos.size(); ++i) {
      int x = 0, y = 0;
      EXPECT_TRUE(projectToPixel(s.camera, s.position(i), kSize, kSize, x, y));
      const uint8_t* c = f.at(x, y);
      const int hi = c[0] >= c[1] && c[0] >= c[2] ? 0 : (c[1] >= c[2] ? 1 : 2);
      const int lo = c[0] <= c[1] && c[0] <= c[2] ? 0 : (c[1] <= c[2] ? 1 : 2);
      ++sectors[size_t(hi * 2 + (lo == (hi + 1) % 3 ? 1 : 0))];
      if (!checkHue) continue;
      float r0, g0, b0;
      core::planeHeadingColour(s.vel[i].x, s.vel[i].y, r0, g0, b0);
      // The same hue, dimmed alike in all three channels by the depth cue.
      const float m = std::max({float(c[0]), float(c[1]), float(c[2])});
      EXPECT_NEAR(c[0] / m, r0, 0.08f) << "body " << i;
      EXPECT_NEAR(c[1] / m, g0, 0.08f) << "body " << i;
      EXPECT_NEAR(c[2] / m, b0, 0.08f) << "body " << i;
    }
    return sectors;
  };
  const std::vector<int> plane = sectorsOf(true, true);
  for (int k = 0; k < 6; ++k) EXPECT_GT(plane[size_t(k)], 0) << "hue sector " << k << " in the plane";
  const std::vector<int> flat = sectorsOf(false, false);
  EXPECT_EQ(flat[4] + flat[5], 0) << "the 3D colour makes blue the strongest channel without a z";
}

// Depth cue: of two bodies alike but for their distance, the far one is darker, in every GL mode,
// by the fog's strength across the scene sphere; fog 0 draws them alike.
TEST_F(RendererTest, FarBodyIsDarkerThanANearOneByTheFog) {
  Camera camera;
  camera.fitBounds(glm::vec3(0.0f), 5.0f);  // from +z
  Scene s;
  s.pos.clear(), s.vel.clear(), s.id.clear();
  s.add({-2.0f, 0.0f, 4.0f}, {1.0f, 1.0f, 0.0f});   // near the front of the scene sphere
  s.add({2.0f, 0.0f, -4.0f}, {1.0f, 1.0f, 0.0f});   // near its back
  Renderer r;
  r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
  const auto brightness = [&](const Frame& f, size_t i) {
    int x = 0, y = 0;
    EXPECT_TRUE(projectToPixel(camera, s.position(i), kSize, kSize, x, y));
    int best = 0;
    for (int dy = -2; dy <= 2; ++dy)
      for (int dx = -2; dx <= 2; ++dx) {
        const uint8_t* p = f.at(std::clamp(x + dx, 0, kSize - 1), std::clamp(y + dy, 0, kSize - 1));
        best = std::max(best, p[0] + p[1] + p[2]);
      }
    return best;
  };
  for (DrawMode mode : {DrawMode::Points, DrawMode::Boids, DrawMode::Sprites}) {
    SCOPED_TRACE(toString(mode));
    r.setFog(0.55f);
    const Frame fogged = render(r, camera, mode, ColourMode::Velocity, 6.0f, 0.8f);
    const int nearB = brightness(fogged, 0), farB = brightness(fogged, 1);
    EXPECT_GT(nearB, 0);
    // The far body sits 80% of the way across the sphere: 1 - 0.55 * 0.8 = 0.56 of the near's 0.84.
    EXPECT_LT(farB, nearB * 8 / 10) << "near " << nearB << ", far " << farB;
    EXPECT_GT(farB, nearB * 4 / 10) << "near " << nearB << ", far " << farB;
    r.setFog(0.0f);
    const Frame flat = render(r, camera, mode, ColourMode::Velocity, 6.0f, 0.8f);
    EXPECT_NEAR(brightness(flat, 0), brightness(flat, 1), 24);
  }
}

TEST_F(RendererTest, BoidTrianglePointsAlongTheVelocity) {
  // One boid at the origin flying along +x, 2 world units long: the tip is 1.2 ahead, the base
  // 0.8 behind and 1.12 wide; the triangle narrows towards the tip.
  Renderer r;
  Scene s;
  const core::Vec4 pos{0, 0, 0, 1}, vel{1, 0, 0, 0};
  const uint32_t id = 0;
  r.upload(&pos, &vel, &id, 1);
  Frame f = render(r, s.camera, DrawMode::Boids, ColourMode::Velocity, 1.0f, 2.0f);
  auto litAt = [&](glm::vec3 p) {
    int x = 0, y = 0;
    EXPECT_TRUE(projectToPixel(s.camera, p, kSize, kSize, x, y));
    return f.lit(x, y);
  };
  EXPECT_TRUE(litAt({0.0f, 0.0f, 0.0f}));
  EXPECT_TRUE(litAt({1.0f, 0.0f, 0.0f}));    // near the tip, on the axis
  EXPECT_FALSE(litAt({1.5f, 0.0f, 0.0f}));   // beyond the tip
  EXPECT_FALSE(litAt({-1.1f, 0.0f, 0.0f}));  // behind the base
  EXPECT_TRUE(litAt({-0.7f, 0.4f, 0.0f}));   // wide near the base
  EXPECT_FALSE(litAt({0.9f, 0.4f, 0.0f}));   // narrow near the tip
}

TEST_F(RendererTest, SpritesAreRound) {
  Renderer r;
  Scene s;
  const core::Vec4 pos{0, 0, 0, 1}, vel{0, 1, 0, 0};
  const uint32_t id = 0;
  r.upload(&pos, &vel, &id, 1);
  const float diameter = 3.0f;  // world units; about 67 pixels here
  Frame f = render(r, s.camera, DrawMode::Sprites, ColourMode::Velocity, 1.0f, diameter);
  int cx = 0, cy = 0, ex = 0, ey = 0;
  ASSERT_TRUE(projectToPixel(s.camera, glm::vec3(0.0f), kSize, kSize, cx, cy));
  ASSERT_TRUE(projectToPixel(s.camera, glm::vec3(0.5f * diameter, 0.0f, 0.0f), kSize, kSize, ex, ey));
  const int radiusPx = ex - cx;
  ASSERT_GT(radiusPx, 20);
  EXPECT_TRUE(f.lit(cx, cy));
  EXPECT_TRUE(f.lit(cx + radiusPx / 4, cy));
  EXPECT_TRUE(f.lit(cx, cy - radiusPx / 4));
  // The corners of the point's square lie outside the circle.
  const int d = radiusPx * 85 / 100;
  for (auto [dx, dy] : {std::pair{d, d}, std::pair{-d, d}, std::pair{d, -d}, std::pair{-d, -d}}) {
    EXPECT_TRUE(f.background(cx + dx, cy + dy)) << "corner (" << dx << ", " << dy << ")";
  }
  // Soft edge: dimmer halfway out than at the centre.
  EXPECT_LT(f.difference(cx + radiusPx / 2, cy), f.difference(cx, cy));
}

TEST_F(RendererTest, NoBodiesMeansOnlyBackground) {
  Renderer r;
  Scene s;
  r.resize(0);
  for (DrawMode mode : {DrawMode::Boids, DrawMode::Points, DrawMode::Sprites}) {
    Frame f = render(r, s.camera, mode);
    const auto bg = test::backgroundBytes();
    int differing = 0;
    for (size_t i = 0; i < f.rgba.size(); i += 4) {
      differing += (f.rgba[i] != bg[0] || f.rgba[i + 1] != bg[1] || f.rgba[i + 2] != bg[2]) ? 1 : 0;
    }
    EXPECT_EQ(differing, 0) << toString(mode);
  }
}

TEST_F(RendererTest, MultisampledTargetResolvesOnRead) {
  Renderer r;
  Scene s;
  r.upload(s.pos.data(), s.vel.data(), s.id.data(), s.pos.size());
  expectBodiesLit(render(r, s.camera, DrawMode::Boids, ColourMode::Velocity, 4.0f, 1.0f, 4), s, "boids 4x");
}

TEST_F(RendererTest, ResizeReplacesTheBuffers) {
  Renderer r;
  EXPECT_EQ(r.numBodies(), 0u);
  EXPECT_NE(r.positionBuffer(), 0u);
  const uint64_t g0 = r.bufferGeneration();
  r.resize(1000);
  EXPECT_EQ(r.numBodies(), 1000u);
  EXPECT_GT(r.bufferGeneration(), g0);
  EXPECT_NE(r.positionBuffer(), 0u);
  EXPECT_NE(r.velocityBuffer(), 0u);
  EXPECT_NE(r.idBuffer(), 0u);
  const uint64_t g1 = r.bufferGeneration();
  r.resize(1000);  // same size: nothing changes
  EXPECT_EQ(r.bufferGeneration(), g1);
}

TEST(RenderModes, NamesRoundTrip) {
  for (int i = 0; i < kNumDrawModes; ++i) {
    DrawMode m{};
    ASSERT_TRUE(parse(toString(static_cast<DrawMode>(i)), m));
    EXPECT_EQ(static_cast<int>(m), i);
  }
  for (int i = 0; i < kNumColourModes; ++i) {
    ColourMode m{};
    ASSERT_TRUE(parse(toString(static_cast<ColourMode>(i)), m));
    EXPECT_EQ(static_cast<int>(m), i);
  }
  DrawMode d = DrawMode::Points;
  EXPECT_FALSE(parse("triangles", d));
  EXPECT_EQ(d, DrawMode::Points);
  ColourMode c = ColourMode::Id;
  EXPECT_FALSE(parse("Velocity", c));
  EXPECT_EQ(c, ColourMode::Id);
  EXPECT_EQ(next(DrawMode::Sprites), DrawMode::Splat);
  EXPECT_EQ(next(DrawMode::Splat), DrawMode::Boids);
  EXPECT_EQ(next(ColourMode::Velocity), ColourMode::Speed);
}

}  // namespace
}  // namespace murmur::render
