// Hand-built scenes for the splat renderer's tests, shared by the CPU tests and the CUDA tests
// (which run the same scenes through the kernels).
#pragma once

#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "core/rng.h"
#include "core/splat.h"

namespace murmur::test {

// An eye at the origin looking down -z, a 90-degree vertical field of view, square pixels: a
// point (x, y, -d) lands at window coordinates ((x/d * 0.5 + 0.5) * W, (y/d * 0.5 + 0.5) * H)
// with view depth d. No fog, heading colours.
inline core::SplatView simpleView(int width = 100, int height = 100) {
  core::SplatView v;
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  float* m = v.viewProj;
  for (int i = 0; i < 16; ++i) m[i] = 0.0f;
  m[0] = 1.0f / aspect;  // column 0, row 0
  m[5] = 1.0f;           // column 1, row 1
  m[10] = -1.0f;         // clip z (unused by the splat)
  m[11] = -1.0f;         // column 2, row 3: clip w = -z
  v.width = width;
  v.height = height;
  v.nearDepth = 0.1f;
  v.pixelsPerUnit = 0.5f * static_cast<float>(height);  // projection[1][1] = 1
  v.bodySize = 0.01f;  // one pixel at every depth used below unless a test says otherwise
  v.fogRange = 0.0f;
  return v;
}

struct SplatScene {
  std::vector<core::Vec4> pos, vel;
  std::vector<uint32_t> id;
  void add(float x, float y, float z, float vx, float vy, float vz) {
    pos.push_back({x, y, z, 1.0f});
    vel.push_back({vx, vy, vz, 0.0f});
    id.push_back(static_cast<uint32_t>(id.size()));
  }
  size_t size() const { return pos.size(); }
};

// Many bodies in front of the eye, partly off screen and partly behind it, some close enough to
// be discs, in runs of near neighbours (as the coherent pipeline orders them) so that lanes of a
// warp share pixels.
inline SplatScene randomSplatScene(size_t n, uint64_t seed) {
  SplatScene s;
  core::Rng rng(seed);
  while (s.size() < n) {
    const float cx = static_cast<float>(rng.uniform(-6.0, 6.0)), cy = static_cast<float>(rng.uniform(-6.0, 6.0));
    const float cz = static_cast<float>(rng.uniform(-12.0, 1.0));
    const float vx = static_cast<float>(rng.uniform(-1.0, 1.0)), vy = static_cast<float>(rng.uniform(-1.0, 1.0));
    const float vz = static_cast<float>(rng.uniform(-1.0, 1.0));
    for (int k = 0; k < 48 && s.size() < n; ++k)
      s.add(cx + static_cast<float>(rng.uniform(-0.05, 0.05)), cy + static_cast<float>(rng.uniform(-0.05, 0.05)),
            cz + static_cast<float>(rng.uniform(-0.05, 0.05)), vx, vy, vz);
  }
  return s;
}

}  // namespace murmur::test
