// A brute-force reference of one step of Couzin's zones without noise, written from the paper's
// rule in double precision and apart from the rule's code (core/rules/couzin.h): all pairs, the
// zones by distance, the blind angle by the angle between the heading and the offset, the turn
// limited by an angle. The CPU and CUDA tests hold every pipeline to it.
#pragma once

#include <cmath>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"

namespace murmur::test {

struct Dir {
  double x, y, z;
};
inline Dir operator+(Dir a, Dir b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Dir operator-(Dir a, Dir b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Dir operator*(Dir a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double dotD(Dir a, Dir b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double normD(Dir a) { return std::sqrt(dotD(a, a)); }
inline Dir unitD(Dir a) {
  const double n = normD(a);
  return n > 0 ? a * (1.0 / n) : Dir{0, 0, 0};
}

// The new velocities of one step of p's Couzin rule (its noise taken as 0) on bodies b, with the
// world's positions as given (no boundary: the tests place the bodies away from the faces).
inline std::vector<Dir> couzinReferenceStep(const core::SimParams& p, const core::Bodies& b) {
  constexpr double kPi = 3.14159265358979323846;
  const core::CouzinParams& c = p.couzin;
  const double rr = c.zoneRepulsion, ro = rr + c.zoneOrientation, ra = ro + c.zoneAttraction;
  const double halfView = 0.5 * c.fieldOfView * kPi / 180.0;
  const double maxTurn = double(c.turnRate) * kPi / 180.0 * c.dt;
  const size_t n = b.size();
  std::vector<Dir> out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dir pi{b.pos[i].x, b.pos[i].y, b.pos[i].z};
    const Dir own = unitD(Dir{b.vel[i].x, b.vel[i].y, b.vel[i].z});
    Dir rep{0, 0, 0}, ori{0, 0, 0}, att{0, 0, 0};
    int nr = 0, no = 0, na = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const Dir d = Dir{b.pos[j].x, b.pos[j].y, b.pos[j].z} - pi;
      const double r = normD(d);
      if (!(r < ra)) continue;
      if (c.fieldOfView < 360.0f && r > 0 &&
          std::acos(std::fmax(-1.0, std::fmin(1.0, dotD(own, d) / r))) > halfView)
        continue;  // in the blind angle behind
      if (r < rr)
        rep = rep + unitD(d), ++nr;
      else if (r < ro)
        ori = ori + unitD(Dir{b.vel[j].x, b.vel[j].y, b.vel[j].z}), ++no;
      else
        att = att + unitD(d), ++na;
    }
    Dir want = own;
    if (nr > 0)
      want = rep * -1.0;
    else if (no > 0 && na > 0)
      want = (unitD(ori) + unitD(att)) * 0.5;
    else if (no > 0)
      want = ori;
    else if (na > 0)
      want = att;
    want = unitD(want);
    if (normD(want) == 0) want = own;
    // Turn by at most maxTurn towards it.
    const double angle = std::acos(std::fmax(-1.0, std::fmin(1.0, dotD(own, want))));
    Dir heading = want;
    if (angle > maxTurn) {
      const Dir across = unitD(want - own * dotD(own, want));
      heading = own * std::cos(maxTurn) + across * std::sin(maxTurn);
    }
    out[i] = unitD(heading) * double(c.speed);
  }
  return out;
}

}  // namespace murmur::test
