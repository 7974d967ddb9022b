// The splat renderer's projection and depth resolve on the CPU executor, against hand-built
// scenes with known answers. tests/cuda/test_cuda_splat.cpp runs the same scenes on the GPU.
#include "core/splat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "splat_scene.h"

namespace murmur::core {
namespace {

using test::simpleView;
using test::SplatScene;

std::vector<uint64_t> resolve(const SplatView& v, const SplatScene& s) {
  std::vector<uint64_t> keys(static_cast<size_t>(v.width) * static_cast<size_t>(v.height));
  clearSplat(keys.data(), keys.size());
  splatBodies(v, s.pos.data(), s.vel.data(), s.id.data(), s.size(), keys.data());
  return keys;
}

size_t litPixels(const std::vector<uint64_t>& keys) {
  size_t k = 0;
  for (uint64_t key : keys) k += key != kSplatEmpty;
  return k;
}

uint32_t headingRgba(float vx, float vy, float vz) {
  float r, g, b;
  headingColour(vx, vy, vz, r, g, b);
  return packRgba(r, g, b);
}

TEST(Splat, KnownBodyLandsOnTheExpectedPixel) {
  const SplatView v = simpleView();
  SplatScene s;
  // ndc (0.105, -0.195) -> window (55.25, 40.25): column 55, row 40 from the bottom.
  s.add(0.21f, -0.39f, -2.0f, 1.0f, 0.0f, 0.0f);
  const std::vector<uint64_t> keys = resolve(v, s);
  ASSERT_EQ(litPixels(keys), 1u);
  EXPECT_EQ(keys[40 * 100 + 55], splatKey(2.0f, headingRgba(1.0f, 0.0f, 0.0f)));
}

TEST(Splat, WideFrameKeepsTheAspect) {
  const SplatView v = simpleView(200, 100);
  SplatScene s;
  // x ndc = 0.5 * 0.6 / 1.5 = 0.2 -> (0.6) * 200 = 120.0..: column 120; y ndc 0.3/1.5 = 0.2 -> row 60.
  s.add(0.61f, 0.31f, -1.5f, 0.0f, 1.0f, 0.0f);
  const std::vector<uint64_t> keys = resolve(v, s);
  ASSERT_EQ(litPixels(keys), 1u);
  EXPECT_NE(keys[60 * 200 + 120], kSplatEmpty);
}

TEST(Splat, NearBodyHidesFarOneInEitherOrder) {
  const SplatView v = simpleView();
  for (int order = 0; order < 2; ++order) {
    SplatScene s;
    // Both on the line of sight through window (30.5, 70.5): ndc (-0.39, 0.41).
    const float near[2] = {-0.39f * 2.0f, 0.41f * 2.0f}, far[2] = {-0.39f * 5.0f, 0.41f * 5.0f};
    if (order == 0) {
      s.add(near[0], near[1], -2.0f, 1.0f, 0.0f, 0.0f);
      s.add(far[0], far[1], -5.0f, -1.0f, 0.0f, 0.0f);
    } else {
      s.add(far[0], far[1], -5.0f, -1.0f, 0.0f, 0.0f);
      s.add(near[0], near[1], -2.0f, 1.0f, 0.0f, 0.0f);
    }
    const std::vector<uint64_t> keys = resolve(v, s);
    ASSERT_EQ(litPixels(keys), 1u) << "order " << order;
    EXPECT_EQ(keys[70 * 100 + 30], splatKey(2.0f, headingRgba(1.0f, 0.0f, 0.0f))) << "order " << order;
  }
}

TEST(Splat, BodiesOffScreenBehindOrInvalidDrawNothing) {
  const SplatView v = simpleView();
  SplatScene s;
  s.add(-2.2f, 0.0f, -2.0f, 1, 0, 0);  // left of the frame (ndc x -1.1)
  s.add(2.2f, 0.0f, -2.0f, 1, 0, 0);   // right
  s.add(0.0f, 2.2f, -2.0f, 1, 0, 0);   // above
  s.add(0.0f, -2.2f, -2.0f, 1, 0, 0);  // below
  s.add(0.0f, 0.0f, 2.0f, 1, 0, 0);    // behind the eye: would project onto the frame mirrored
  s.add(0.0f, 0.0f, -0.05f, 1, 0, 0);  // nearer than the near plane
  s.add(0.0f, 0.0f, std::nanf(""), 1, 0, 0);
  EXPECT_EQ(litPixels(resolve(v, s)), 0u);
}

TEST(Splat, SlabKeepsOnlyItsDepthRange) {
  SplatView v = simpleView();
  v.slabNear = 3.0f;
  v.slabFar = 4.0f;
  SplatScene s;
  s.add(0.1f, 0.1f, -2.0f, 1, 0, 0);
  s.add(0.1f, 0.1f, -3.5f, 0, 1, 0);
  s.add(0.1f, 0.1f, -6.0f, 0, 0, 1);
  const std::vector<uint64_t> keys = resolve(v, s);
  ASSERT_EQ(litPixels(keys), 1u);
  for (uint64_t k : keys)
    if (k != kSplatEmpty) {
      EXPECT_EQ(k >> 32, splatKey(3.5f, 0) >> 32);
    }
}

TEST(Splat, CloseBodyIsAShadedDiscNearestInTheMiddle) {
  SplatView v = simpleView();
  v.bodySize = 0.2f;  // radius 0.1 at depth 2: 0.1 * 50 / 2 = 2.5 pixels
  SplatScene s;
  s.add(0.0f, 0.0f, -2.0f, 1, 0, 0);  // centre at window (50, 50), a pixel corner
  const std::vector<uint64_t> keys = resolve(v, s);
  // Exactly the pixels whose centres lie within 2.5 px of (50, 50).
  size_t expected = 0;
  for (int y = 40; y < 60; ++y)
    for (int x = 40; x < 60; ++x) {
      const float dx = x + 0.5f - 50.0f, dy = y + 0.5f - 50.0f;
      const bool in = dx * dx + dy * dy <= 2.5f * 2.5f;
      expected += in;
      EXPECT_EQ(keys[static_cast<size_t>(y) * 100 + static_cast<size_t>(x)] != kSplatEmpty, in) << x << "," << y;
    }
  EXPECT_EQ(litPixels(keys), expected);
  EXPECT_GE(expected, 16u);
  // The middle is nearer and brighter than the rim.
  const uint64_t mid = keys[49 * 100 + 49], rim = keys[48 * 100 + 48];  // centres 0.7 and 2.1 px out
  ASSERT_NE(rim, kSplatEmpty);
  EXPECT_LT(mid >> 32, rim >> 32);
  EXPECT_GT(mid & 0xffu, rim & 0xffu);  // red channel: the heading +x is red
  EXPECT_LT(mid >> 32, splatKey(2.0f, 0) >> 32);  // pushed towards the eye
}

TEST(Splat, DiscRadiusIsCapped) {
  SplatView v = simpleView();
  v.bodySize = 1.0f;  // 12.5 px at depth 2
  v.maxRadiusPx = 3.0f;
  SplatScene s;
  s.add(0.0f, 0.0f, -2.0f, 1, 0, 0);
  const std::vector<uint64_t> keys = resolve(v, s);
  EXPECT_LE(litPixels(keys), 37u);  // pixel centres within 3 px of a pixel corner: 32
  EXPECT_GE(litPixels(keys), 24u);
}

TEST(Splat, FogMovesTheFarSideTowardsTheBackground) {
  SplatView v = simpleView();
  v.fogNear = 2.0f;
  v.fogRange = 4.0f;
  v.fogStrength = 1.0f;
  SplatScene s;
  s.add(-0.5f, 0.0f, -2.0f, 1, 0, 0);  // at fogNear: its own colour
  s.add(3.0f, 0.0f, -6.0f, 1, 0, 0);   // at the far end: the background
  const std::vector<uint64_t> keys = resolve(v, s);
  const uint64_t nearKey = keys[50 * 100 + 37], farKey = keys[50 * 100 + 75];
  EXPECT_EQ(static_cast<uint32_t>(nearKey), headingRgba(1, 0, 0));
  EXPECT_EQ(static_cast<uint32_t>(farKey), packRgba(v.background[0], v.background[1], v.background[2]));
}

TEST(Splat, HeadingColourIsSaturatedAndDistinguishesDirections) {
  const float dirs[4][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 0, -1}};
  uint32_t seen[4];
  for (int i = 0; i < 4; ++i) {
    float r, g, b;
    headingColour(dirs[i][0], dirs[i][1], dirs[i][2], r, g, b);
    const float hi = std::max(r, std::max(g, b));
    EXPECT_FLOAT_EQ(hi, 1.0f) << i;
    EXPECT_LT(std::min(r, std::min(g, b)), 0.75f * hi) << "washed out: " << i;
    seen[i] = packRgba(r, g, b);
    for (int j = 0; j < i; ++j) EXPECT_NE(seen[i], seen[j]) << i << " vs " << j;
  }
  // Speed does not change the heading colour.
  EXPECT_EQ(headingRgba(0.1f, 0.0f, 0.0f), headingRgba(5.0f, 0.0f, 0.0f));
}

// The plane's headings (--dims 2): every direction of the plane has a hue of its own, round the
// whole circle, saturated; a 3D heading colour would give the plane's directions only the reds,
// yellows and greens of its xz hue and y lightness. A splat view of the plane colours by it.
TEST(Splat, PlaneHeadingColourGoesRoundTheHueCircle) {
  std::vector<uint32_t> seen;
  int sectors[6] = {};
  for (int k = 0; k < 36; ++k) {
    const float a = 6.2831853f * float(k) / 36.0f;
    float r, g, b;
    planeHeadingColour(2.0f * std::cos(a), 2.0f * std::sin(a), r, g, b);
    EXPECT_FLOAT_EQ(std::max(r, std::max(g, b)), 1.0f) << k;
    EXPECT_LT(std::min(r, std::min(g, b)), 0.75f) << "washed out: " << k;
    const uint32_t c = packRgba(r, g, b);
    for (uint32_t other : seen) EXPECT_NE(c, other) << "direction " << k * 10 << " degrees";
    seen.push_back(c);
    const int hi = r >= g && r >= b ? 0 : (g >= b ? 1 : 2);
    const int lo = r <= g && r <= b ? 0 : (g <= b ? 1 : 2);
    ++sectors[hi * 2 + (lo == (hi + 1) % 3 ? 1 : 0)];
  }
  for (int s6 = 0; s6 < 6; ++s6) EXPECT_GT(sectors[s6], 0) << "hue sector " << s6;
  float r, g, b;
  planeHeadingColour(0.0f, 0.0f, r, g, b);  // at rest: grey
  EXPECT_EQ(packRgba(r, g, b), packRgba(0.6f, 0.6f, 0.6f));

  SplatView v = simpleView(100, 100);
  v.plane = true;
  SplatBody body;
  ASSERT_TRUE(splatProject(v, Vec4{0, 0, -3, 1}, Vec4{0, -1, 0, 0}, 0, body));
  planeHeadingColour(0.0f, -1.0f, r, g, b);
  EXPECT_EQ(packRgba(body.r, body.g, body.b), packRgba(r, g, b));
}

TEST(Splat, ParallelResolveEqualsTheNearestBodyPerPixel) {
  SplatView v = simpleView(160, 90);
  v.bodySize = 0.03f;  // discs up to a few pixels for the nearest bodies
  const SplatScene s = test::randomSplatScene(60000, 7);
  const std::vector<uint64_t> keys = resolve(v, s);
  // Serial reference: every body's keys, minimum per pixel.
  std::vector<uint64_t> ref(keys.size(), kSplatEmpty);
  for (size_t i = 0; i < s.size(); ++i) {
    SplatBody b;
    if (!splatProject(v, s.pos[i], s.vel[i], s.id[i], b)) continue;
    if (splatIsPoint(v, b)) {
      uint32_t p;
      uint64_t k;
      if (splatPointPixel(v, b, p, k)) ref[p] = std::min(ref[p], k);
    } else {
      splatDisc(v, b, [&](uint32_t p, uint64_t k) { ref[p] = std::min(ref[p], k); });
    }
  }
  EXPECT_GT(litPixels(ref), keys.size() / 10);
  EXPECT_EQ(keys, ref);
}

}  // namespace
}  // namespace murmur::core
