// The splat renderer's per-body work, shared by the CPU loop (core/splat.cpp) and the CUDA kernel
// (cuda/splat_kernels.cu), so the CPU tests test the arithmetic the GPU runs.
//
// A frame is a buffer of width x height 64-bit keys, row 0 at the bottom (GL's convention), all
// starting at kSplatEmpty. Every body is projected; every pixel it covers receives
// (depth bits << 32 | RGBA8) through an atomic minimum. Positive floats order like their bit
// patterns, so the minimum key is the nearest body and the pixel ends up holding its colour: the
// depth test and the colour write in one atomic, order-independent, with no sort. Ties in depth go
// to the smaller colour word, so every executor produces the same image bit for bit.
//
// Only + - * / and sqrt appear below (no trigonometry, no FMA contraction in either build), so the
// CPU and the GPU agree on every key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/hd.h"

namespace murmur::core {

constexpr uint64_t kSplatEmpty = ~uint64_t(0);

enum class SplatColour : int {
  Heading = 0,  // hue from the horizontal heading, lighter climbing, darker diving (the plane: its direction)
  Speed = 1,    // blue -> cyan -> green -> yellow -> red over |v| / speedScale
  Id = 2,       // a hue hashed from the body's id
};

// Everything the per-body work needs about the camera and the look; plain data, copied by value
// into the kernel's parameters.
struct SplatView {
  float viewProj[16] = {};   // world -> clip, column-major (GLM/GL layout)
  int width = 0, height = 0; // pixels
  float nearDepth = 1e-3f;   // world units: bodies nearer to the eye than this are not drawn
  // Pixels per world unit at view depth 1 (0.5 * height * projection[1][1]); with bodySize it
  // sets a body's on-screen radius at depth d: 0.5 * bodySize * pixelsPerUnit / d.
  float pixelsPerUnit = 1.0f;
  float bodySize = 0.5f;     // world units: a body's diameter
  // Radius in pixels up to which a body is one pixel; above it, a shaded disc.
  float singlePixelRadius = 0.75f;
  float maxRadiusPx = 6.0f;  // pixels: discs are capped here (a body at the eye covers no more)
  // Depth cue: colour moves towards the background from view depth fogNear to fogNear + fogRange,
  // by fogStrength (0..1) at the far end. fogRange <= 0 turns it off.
  float fogNear = 0.0f, fogRange = 0.0f, fogStrength = 0.0f;
  float background[3] = {0.02f, 0.02f, 0.04f};
  SplatColour colour = SplatColour::Heading;
  float speedScale = 1.0f;   // |v| at the hot end of the speed ramp
  float speedFloor = 0.0f;   // |v| at its cold end
  bool plane = false;        // a 2D world (--dims 2): heading colours from the direction in the plane
  // Slab: only bodies whose view depth lies in [slabNear, slabFar] are drawn; slabFar <= slabNear
  // draws all.
  float slabNear = 0.0f, slabFar = 0.0f;
};

// A projected body: the pixel holding its centre, its depth and colour.
struct SplatBody {
  float sx = 0, sy = 0;    // window coordinates of the centre (pixels, origin bottom-left)
  float depth = 0;         // view depth (clip w), world units
  float radiusPx = 0;      // on-screen radius, pixels
  float radiusWorld = 0;   // half the body size
  float r = 0, g = 0, b = 0;
};

MURMUR_HD float clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

MURMUR_HD uint32_t packRgba(float r, float g, float b) {
  const uint32_t R = static_cast<uint32_t>(clamp01(r) * 255.0f + 0.5f);
  const uint32_t G = static_cast<uint32_t>(clamp01(g) * 255.0f + 0.5f);
  const uint32_t B = static_cast<uint32_t>(clamp01(b) * 255.0f + 0.5f);
  return R | (G << 8) | (B << 16) | (0xffu << 24);
}

// Depth must be positive (projection culls the rest): then its bits order like its value.
MURMUR_HD uint64_t splatKey(float depth, uint32_t rgba) {
#if defined(__CUDA_ARCH__)
  const uint32_t bits = __float_as_uint(depth);
#else
  uint32_t bits;
  std::memcpy(&bits, &depth, sizeof bits);
#endif
  return (static_cast<uint64_t>(bits) << 32) | rgba;
}

// The hue of a unit direction (ux, uz) of a plane: three primaries 120 degrees apart, mixed by the
// direction's cosine to each, stretched so the strongest channel is full. The whole hue circle,
// saturated, with no trigonometry (the same bits on every executor).
MURMUR_HD void directionHue(float ux, float uz, float& r, float& g, float& b) {
  // cos(theta - 0), cos(theta - 120 deg), cos(theta - 240 deg).
  const float c0 = ux;
  const float c1 = -0.5f * ux + 0.8660254f * uz;
  const float c2 = -0.5f * ux - 0.8660254f * uz;
  r = clamp01(0.5f + 1.2f * c0);
  g = clamp01(0.5f + 1.2f * c1);
  b = clamp01(0.5f + 1.2f * c2);
  const float m = r > g ? (r > b ? r : b) : (g > b ? g : b);
  r /= m, g /= m, b /= m;
}

// The plane's heading colour (--dims 2): the hue of the direction in the plane, all the way round
// the circle; grey at rest.
MURMUR_HD void planeHeadingColour(float vx, float vy, float& r, float& g, float& b) {
  const float s2 = vx * vx + vy * vy;
  if (!(s2 > 0.0f)) {
    r = g = b = 0.6f;
    return;
  }
  const float inv = 1.0f / sqrtf(s2);
  directionHue(vx * inv, vy * inv, r, g, b);
}

// Heading colour that stays saturated: the hue of the horizontal heading (directionHue). Bodies
// flying the same way share a hue, so a flock is one colour and its neighbour another; climbing
// lightens, diving darkens, so vertical motion reads too.
MURMUR_HD void headingColour(float vx, float vy, float vz, float& r, float& g, float& b) {
  const float s2 = vx * vx + vy * vy + vz * vz;
  if (!(s2 > 0.0f)) {
    r = g = b = 0.6f;  // a body at rest has no heading; grey keeps it visible
    return;
  }
  const float inv = 1.0f / sqrtf(s2);
  const float hx = vx * inv, hy = vy * inv, hz = vz * inv;
  const float h2 = hx * hx + hz * hz;
  float cr = 0.5f, cg = 0.5f, cb = 0.5f;
  if (h2 > 0.0f) {
    const float ih = 1.0f / sqrtf(h2);
    directionHue(hx * ih, hz * ih, cr, cg, cb);
    // The horizontal part fades as the heading turns vertical.
    const float w = sqrtf(h2);
    cr = 0.7f + (cr - 0.7f) * w, cg = 0.7f + (cg - 0.7f) * w, cb = 0.7f + (cb - 0.7f) * w;
  }
  if (hy > 0.0f) {  // climbing: towards white
    const float t = 0.45f * hy;
    cr += (1.0f - cr) * t, cg += (1.0f - cg) * t, cb += (1.0f - cb) * t;
  } else {  // diving: darker, but never near the background
    const float k = 1.0f + 0.45f * hy;
    cr *= k, cg *= k, cb *= k;
  }
  r = cr, g = cg, b = cb;
}

MURMUR_HD void speedColour(float t, float& r, float& g, float& b) {
  const float stops[5][3] = {{0.16f, 0.22f, 0.85f},
                             {0.10f, 0.70f, 0.95f},
                             {0.30f, 0.95f, 0.40f},
                             {1.00f, 0.85f, 0.20f},
                             {1.00f, 0.28f, 0.15f}};
  const float x = clamp01(t) * 4.0f;
  int i = static_cast<int>(x);
  if (i > 3) i = 3;
  const float f = x - static_cast<float>(i);
  r = stops[i][0] + (stops[i + 1][0] - stops[i][0]) * f;
  g = stops[i][1] + (stops[i + 1][1] - stops[i][1]) * f;
  b = stops[i][2] + (stops[i + 1][2] - stops[i][2]) * f;
}

MURMUR_HD void idColour(uint32_t x, float& r, float& g, float& b) {
  x = (x ^ 61u) ^ (x >> 16);
  x *= 9u;
  x ^= x >> 4;
  x *= 0x27d4eb2du;
  x ^= x >> 15;
  const float h = static_cast<float>(x & 0xffffu) / 65536.0f * 6.0f;  // hue sector 0..6
  const float k[3] = {h + 0.0f, h + 4.0f, h + 2.0f};
  float c[3];
  for (int j = 0; j < 3; ++j) {
    float t = k[j] >= 6.0f ? k[j] - 6.0f : k[j];
    t = t > 3.0f ? t - 3.0f : 3.0f - t;  // |t - 3|
    c[j] = 0.25f + 0.75f * clamp01(t - 1.0f);
  }
  r = c[0], g = c[1], b = c[2];
}

// Projects one body. False when it is behind the near plane, outside the slab, or entirely off
// screen; otherwise fills `out`.
MURMUR_HD bool splatProject(const SplatView& v, const Vec4& p, const Vec4& vel, uint32_t id, SplatBody& out) {
  const float* m = v.viewProj;
  const float cx = m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12];
  const float cy = m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13];
  const float cw = m[3] * p.x + m[7] * p.y + m[11] * p.z + m[15];
  if (!(cw > v.nearDepth)) return false;  // also rejects NaN
  if (v.slabFar > v.slabNear && (cw < v.slabNear || cw > v.slabFar)) return false;
  const float sx = (cx / cw * 0.5f + 0.5f) * static_cast<float>(v.width);
  const float sy = (cy / cw * 0.5f + 0.5f) * static_cast<float>(v.height);
  float rad = 0.5f * v.bodySize * v.pixelsPerUnit / cw;
  if (rad > v.maxRadiusPx) rad = v.maxRadiusPx;
  const float reach = rad > v.singlePixelRadius ? rad : 0.0f;
  if (sx + reach < 0.0f || sy + reach < 0.0f || sx - reach >= static_cast<float>(v.width) ||
      sy - reach >= static_cast<float>(v.height))
    return false;
  out.sx = sx, out.sy = sy, out.depth = cw, out.radiusPx = rad, out.radiusWorld = 0.5f * v.bodySize;

  float r, g, b;
  if (v.colour == SplatColour::Speed)
  {
    const float span = v.speedScale - v.speedFloor;
    speedColour((sqrtf(vel.x * vel.x + vel.y * vel.y + vel.z * vel.z) - v.speedFloor) / (span > 1e-20f ? span : 1e-20f),
                r, g, b);
  }
  else if (v.colour == SplatColour::Id)
    idColour(id, r, g, b);
  else if (v.plane)
    planeHeadingColour(vel.x, vel.y, r, g, b);
  else
    headingColour(vel.x, vel.y, vel.z, r, g, b);
  if (v.fogRange > 0.0f) {
    const float f = v.fogStrength * clamp01((cw - v.fogNear) / v.fogRange);
    r += (v.background[0] - r) * f, g += (v.background[1] - g) * f, b += (v.background[2] - b) * f;
  }
  out.r = r, out.g = g, out.b = b;
  return true;
}

// True when the body is drawn as the single pixel holding its centre (the common case at 1M+).
MURMUR_HD bool splatIsPoint(const SplatView& v, const SplatBody& s) { return s.radiusPx <= v.singlePixelRadius; }

// The single pixel's index (row-major from the bottom row) and key; the body must be a point and on screen.
MURMUR_HD bool splatPointPixel(const SplatView& v, const SplatBody& s, uint32_t& pixel, uint64_t& key) {
  const int x = static_cast<int>(floorf(s.sx)), y = static_cast<int>(floorf(s.sy));
  if (x < 0 || y < 0 || x >= v.width || y >= v.height) return false;
  pixel = static_cast<uint32_t>(y) * static_cast<uint32_t>(v.width) + static_cast<uint32_t>(x);
  key = splatKey(s.depth, packRgba(s.r, s.g, s.b));
  return true;
}

// A disc: every pixel whose centre lies within radiusPx of the body's centre, shaded and pushed
// forward like a small sphere (brighter and nearer in the middle), so overlapping bodies
// intersect instead of cutting straight edges and close-up flocks read as volumes.
template <class EmitT>
MURMUR_HD void splatDisc(const SplatView& v, const SplatBody& s, EmitT&& emit) {
  const float rad = s.radiusPx;
  const int x0 = static_cast<int>(floorf(s.sx - rad)), x1 = static_cast<int>(floorf(s.sx + rad));
  const int y0 = static_cast<int>(floorf(s.sy - rad)), y1 = static_cast<int>(floorf(s.sy + rad));
  const int xa = x0 < 0 ? 0 : x0, xb = x1 >= v.width ? v.width - 1 : x1;
  const int ya = y0 < 0 ? 0 : y0, yb = y1 >= v.height ? v.height - 1 : y1;
  const float inv2 = 1.0f / (rad * rad);
  for (int y = ya; y <= yb; ++y) {
    for (int x = xa; x <= xb; ++x) {
      const float dx = static_cast<float>(x) + 0.5f - s.sx, dy = static_cast<float>(y) + 0.5f - s.sy;
      const float q = (dx * dx + dy * dy) * inv2;
      if (q > 1.0f) continue;
      const float h = sqrtf(1.0f - q);  // height of the sphere's surface, 0 at the rim
      float depth = s.depth - s.radiusWorld * h;
      if (!(depth > v.nearDepth)) depth = v.nearDepth;
      const float k = 0.45f + 0.55f * h;  // soft rim: the edge fades towards dark
      emit(static_cast<uint32_t>(y) * static_cast<uint32_t>(v.width) + static_cast<uint32_t>(x),
           splatKey(depth, packRgba(s.r * k, s.g * k, s.b * k)));
    }
  }
}

// CPU executor (OpenMP): resolves n bodies into keys (width * height entries), which the caller
// has filled with kSplatEmpty or holds from earlier bodies of the same frame.
void splatBodies(const SplatView& v, const Vec4* pos, const Vec4* vel, const uint32_t* id, size_t n,
                 uint64_t* keys);

// Fills keys with kSplatEmpty.
void clearSplat(uint64_t* keys, size_t numPixels);

}  // namespace murmur::core
