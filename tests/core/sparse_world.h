// A sparse world for the tests of both engines: a few boids in a large box (core::boidGridCellCap).
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>

#include "core/bodies.h"
#include "core/rng.h"

namespace murmur::test {

// A sparse world: n boids in clumps of 50, each clump a ball of radius 6 (a few neighbours
// apart at the CIS 565 radii) at a random place in [-h, h)^3, some clumps across a face; z = 0 in
// the plane (dims 2). Speeds below 1 (the CIS 565 top speed), so that only neighbours turn a boid.
inline core::Bodies sparseClumps(size_t n, float h, int dims, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  core::Vec3 c{0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    if (i % 50 == 0)
      c = core::Vec3{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), dims == 2 ? 0.0f : float(rng.uniform(-h, h))};
    if (i % 100 == 0) c.x = h - 2.0f;  // a clump across the x faces
    core::Vec3 q{0, 0, 0};
    do {
      q = core::Vec3{float(rng.uniform(-6, 6)), float(rng.uniform(-6, 6)), dims == 2 ? 0.0f : float(rng.uniform(-6, 6))};
    } while (core::dot(q, q) > 36.0f);
    const auto wrap = [&](float x) { return x >= h ? x - 2.0f * h : (x < -h ? x + 2.0f * h : x); };
    b.pos[i] = core::Vec4{wrap(c.x + q.x), wrap(c.y + q.y), dims == 2 ? 0.0f : wrap(c.z + q.z), 1.0f};
    b.vel[i] = core::Vec4{float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-0.5, 0.5)),
                          dims == 2 ? 0.0f : float(rng.uniform(-0.5, 0.5)), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// Two clusters `apart` units apart along x (centred at -apart/2 and +apart/2), each a ball of
// radius 8 holding n/2 bodies, moving in random directions at `speed`; z = 0 in the plane.
inline core::Bodies twoFarClusters(size_t n, double apart, float speed, int dims, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const double cx = i < n / 2 ? -0.5 * apart : 0.5 * apart;
    core::Vec3 q{0, 0, 0}, u{0, 0, 0};
    do {
      q = core::Vec3{float(rng.uniform(-8, 8)), float(rng.uniform(-8, 8)), dims == 2 ? 0.0f : float(rng.uniform(-8, 8))};
    } while (core::dot(q, q) > 64.0f);
    do {
      u = core::Vec3{float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), dims == 2 ? 0.0f : float(rng.uniform(-1, 1))};
    } while (core::dot(u, u) > 1.0f || core::dot(u, u) < 0.01f);
    u = u * (speed / std::sqrt(core::dot(u, u)));
    b.pos[i] = core::Vec4{float(cx + q.x), q.y, q.z, 1.0f};
    b.vel[i] = core::Vec4{u.x, u.y, u.z, 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// n bodies on a cubic (square, dims 2) lattice of spacing 1 from the corner of [-h, h): every body
// has many neighbours at exactly equal distances; ids not in slot order.
inline core::Bodies lattice(size_t n, int dims, float h) {
  core::Bodies b;
  b.resize(n);
  const int side = static_cast<int>(std::ceil(dims == 2 ? std::sqrt(double(n)) : std::cbrt(double(n))));
  for (size_t i = 0; i < n; ++i) {
    const int x = int(i) % side, y = (int(i) / side) % side, z = dims == 2 ? 0 : int(i) / (side * side);
    b.pos[i] = core::Vec4{-h + 0.5f + float(x), -h + 0.5f + float(y), dims == 2 ? 0.0f : -h + 0.5f + float(z), 1};
    b.vel[i] = core::Vec4{0.02f, 0.01f * float(i % 3), dims == 2 ? 0.0f : 0.005f, 0};
    b.id[i] = static_cast<uint32_t>((i * 7919) % n);
  }
  return b;
}

}  // namespace murmur::test
