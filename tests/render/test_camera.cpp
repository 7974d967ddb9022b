#include "render/camera.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include <glm/glm.hpp>

namespace murmur::render {
namespace {

glm::vec3 toNdc(const Camera& c, const glm::vec3& p, float aspect) {
  const glm::vec4 clip = c.projection(aspect) * c.view() * glm::vec4(p, 1.0f);
  return glm::vec3(clip) / clip.w;
}

TEST(Camera, FitBoundsKeepsTheWholeSphereInView) {
  Camera c;
  c.orbit(0.7f, 0.4f);
  c.fitBounds(glm::vec3(10.0f, -5.0f, 3.0f), 20.0f);
  const glm::vec3 centre(10.0f, -5.0f, 3.0f);
  for (const glm::vec3& dir : {glm::vec3(1, 0, 0), glm::vec3(-1, 0, 0), glm::vec3(0, 1, 0),
                               glm::vec3(0, -1, 0), glm::vec3(0, 0, 1), glm::vec3(0, 0, -1)}) {
    const glm::vec3 ndc = toNdc(c, centre + 20.0f * dir, 1.0f);
    EXPECT_LT(std::abs(ndc.x), 1.0f);
    EXPECT_LT(std::abs(ndc.y), 1.0f);
    EXPECT_GT(ndc.z, -1.0f);  // between the clip planes
    EXPECT_LT(ndc.z, 1.0f);
  }
  const glm::vec3 c0 = toNdc(c, centre, 1.0f);
  EXPECT_NEAR(c0.x, 0.0f, 1e-5f);
  EXPECT_NEAR(c0.y, 0.0f, 1e-5f);
}

// fitBox: every corner of the cube in view, between the clip planes, at any angle and for any
// aspect at least the one asked for; and tight: some corner reaches the frame's margin.
TEST(Camera, FitBoxKeepsEveryCornerInViewAndFillsTheFrame) {
  const glm::vec3 centre(2.0f, -1.0f, 0.5f);
  const float h = 30.0f;
  for (const auto& [yaw, pitch, aspect] : {std::tuple{0.0f, 0.0f, 1.0f}, std::tuple{0.55f, 0.42f, 1.3f},
                                           std::tuple{-2.0f, -0.8f, 1.78f}, std::tuple{0.8f, 1.2f, 0.6f}}) {
    Camera c;
    c.setYaw(yaw);
    c.setPitch(pitch);
    c.fitBox(centre, h, aspect);
    float reach = 0.0f;
    for (int i = 0; i < 8; ++i) {
      const glm::vec3 p = centre + h * glm::vec3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
      for (float wider : {aspect, 2.0f * aspect}) {
        const glm::vec3 ndc = toNdc(c, p, wider);
        EXPECT_LT(std::abs(ndc.x), 1.0f) << yaw << " " << pitch << " corner " << i;
        EXPECT_LT(std::abs(ndc.y), 1.0f) << yaw << " " << pitch << " corner " << i;
        EXPECT_GT(ndc.z, -1.0f);
        EXPECT_LT(ndc.z, 1.0f);
      }
      const glm::vec3 ndc = toNdc(c, p, aspect);
      reach = std::max({reach, std::abs(ndc.x), std::abs(ndc.y)});
    }
    EXPECT_GT(reach, 0.9f) << yaw << " " << pitch << ": the cube should fill the frame";
    // home() returns to the fitted view.
    const float d = c.distance();
    c.zoom(0.5f);
    c.home();
    EXPECT_FLOAT_EQ(c.distance(), d);
  }
}

TEST(Camera, EyeIsOnTheOrbitSphere) {
  Camera c;
  c.fitBounds(glm::vec3(0.0f), 10.0f);
  EXPECT_NEAR(c.eye().z, c.distance(), 1e-4f);  // yaw 0, pitch 0: on +z
  c.orbit(1.0f, 0.5f);
  EXPECT_NEAR(glm::length(c.eye() - c.target()), c.distance(), 1e-3f);
  EXPECT_GT(c.eye().y, 0.0f);  // positive pitch looks from above
}

TEST(Camera, PitchStopsShortOfThePoles) {
  Camera c;
  c.orbit(0.0f, 10.0f);
  EXPECT_LT(c.pitch(), 1.5708f);
  c.orbit(0.0f, -20.0f);
  EXPECT_GT(c.pitch(), -1.5708f);
  const glm::mat4 v = c.view();
  EXPECT_TRUE(std::isfinite(v[0][0]) && std::isfinite(v[1][1]) && std::isfinite(v[2][2]));
}

TEST(Camera, ZoomPanAndHome) {
  Camera c;
  c.fitBounds(glm::vec3(1.0f, 2.0f, 3.0f), 10.0f);
  const float d0 = c.distance();
  c.zoom(0.5f);
  EXPECT_NEAR(c.distance(), 0.5f * d0, 1e-4f);
  c.zoom(1e-9f);  // clamped, never zero
  EXPECT_GT(c.distance(), 0.0f);
  c.zoom(-1.0f);  // ignored
  EXPECT_GT(c.distance(), 0.0f);

  Camera p;
  p.fitBounds(glm::vec3(0.0f), 10.0f);
  p.pan(0.25f, 0.0f);  // the scene follows the drag: the old target moves right on screen
  EXPECT_GT(toNdc(p, glm::vec3(0.0f), 1.0f).x, 0.1f);
  p.pan(0.0f, 0.25f);
  EXPECT_GT(toNdc(p, glm::vec3(0.0f), 1.0f).y, 0.1f);

  c.orbit(0.3f, -0.2f);
  c.pan(0.1f, 0.1f);
  c.home();
  EXPECT_NEAR(c.distance(), d0, 1e-4f);
  EXPECT_NEAR(c.yaw(), 0.0f, 1e-6f);
  EXPECT_NEAR(c.pitch(), 0.0f, 1e-6f);
  EXPECT_NEAR(glm::length(c.target() - glm::vec3(1.0f, 2.0f, 3.0f)), 0.0f, 1e-5f);
}

}  // namespace
}  // namespace murmur::render
