// The images a search visits across the world's faces (docs/design.md#the-boundary-rule): under
// the periodic boundary every local pipeline searches around a body's images and measures each
// candidate from the image it was found near (d = p_j - image), so that every pipeline, naive
// included, computes the same offsets bit for bit; the verlet lists search around the images of a
// body near a face under either boundary, to stay a superset when a body wraps.
#pragma once

#include "core/hd.h"
#include "core/params.h"

namespace murmur::core {

// The shift of the image of coordinate x that a search of `radius` must also visit: +L near the
// low face, -L near the high one (L = 2 halfSize), 0 when the search stays inside the world.
MURMUR_HD float imageShift(float x, float radius, float halfSize) {
  const float L = 2.0f * halfSize;
  return x < radius - halfSize ? L : (x >= halfSize - radius ? -L : 0.0f);
}

// Calls f(q) for p and, when periodic, for each image of p (shifted by the world's width along
// some axes) that lies within `radius` of the world: the centres to search around. With the
// world at least 2 radius wide a body is near at most one face per axis, so there are at most 8.
// p itself comes first, unchanged (no zero is added to it).
template <typename F>
MURMUR_HD void forEachImage(const Vec3& p, float radius, float halfSize, bool periodic, F&& f) {
  float sx = 0, sy = 0, sz = 0;
  if (periodic) {
    sx = imageShift(p.x, radius, halfSize);
    sy = imageShift(p.y, radius, halfSize);
    sz = imageShift(p.z, radius, halfSize);
  }
  for (int c = 0; c < (sz != 0.0f ? 2 : 1); ++c)
    for (int b = 0; b < (sy != 0.0f ? 2 : 1); ++b)
      for (int a = 0; a < (sx != 0.0f ? 2 : 1); ++a)
        f(Vec3{a ? p.x + sx : p.x, b ? p.y + sy : p.y, c ? p.z + sz : p.z});
}

// The same for a box [lo, hi] of bodies (a cluster): f(s) for each shift s (the box itself first,
// s = 0) whose shifted box lies within `radius` of the world. A box wider than the world less
// twice the radius reaches both faces of an axis: up to 3 shifts per axis.
template <typename F>
MURMUR_HD void forEachBoxImage(const Vec3& lo, const Vec3& hi, float radius, float halfSize, bool periodic, F&& f) {
  const float L = 2.0f * halfSize;
  float s[3][3];
  int n[3];
  const float los[3] = {lo.x, lo.y, lo.z}, his[3] = {hi.x, hi.y, hi.z};
  for (int a = 0; a < 3; ++a) {
    n[a] = 1;
    s[a][0] = 0.0f;
    if (!periodic) continue;
    if (los[a] < radius - halfSize) s[a][n[a]++] = L;
    if (his[a] >= halfSize - radius) s[a][n[a]++] = -L;
  }
  for (int c = 0; c < n[2]; ++c)
    for (int b = 0; b < n[1]; ++b)
      for (int a = 0; a < n[0]; ++a) f(Vec3{s[0][a], s[1][b], s[2][c]});
}

// p shifted by s, the shift added only where it is not zero (p itself for s = 0, bit for bit).
MURMUR_HD Vec3 shifted(const Vec3& p, const Vec3& s) {
  return Vec3{s.x != 0.0f ? p.x + s.x : p.x, s.y != 0.0f ? p.y + s.y : p.y, s.z != 0.0f ? p.z + s.z : p.z};
}

// The offset from pi to pj by the minimum image, formed as the periodic pipelines form the offset
// of a neighbour found near an image of pi: pj less pi shifted by the image's
// shift (0 or +-L per axis, added only where not 0). For a pair within a rule radius (less than
// half the world apart, core::periodicFits) this is that image's offset bit for bit, so the
// nearest distances use the very offsets the neighbour counts and the flock graph test.
MURMUR_HD Vec3 minimumImageOffset(const Vec3& pi, const Vec3& pj, float halfSize) {
  const float L = 2.0f * halfSize;
  const Vec3 d = pj - pi;
  const Vec3 s{d.x > halfSize ? L : (d.x < -halfSize ? -L : 0.0f), d.y > halfSize ? L : (d.y < -halfSize ? -L : 0.0f),
               d.z > halfSize ? L : (d.z < -halfSize ? -L : 0.0f)};
  return pj - shifted(pi, s);
}

// Where a neighbour j found near an image of body i, at offset d from that image, lies as seen
// from i: p_i + d (with j's mass). The rules that sum absolute positions (the boids' cohesion)
// take this for a neighbour across a face; found near p_i itself, a neighbour is p_j.
MURMUR_HD Vec4 imageOf(const Vec4& pi, const Vec3& d, const Vec4& pj) { return make4(xyz(pi) + d, pj.w); }

}  // namespace murmur::core
