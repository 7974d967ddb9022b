#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace murmur::core {

uint64_t stateChecksum(const Bodies& b) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  };
  if (!b.pos.empty()) mix(b.pos.data(), b.pos.size() * sizeof(Vec4));
  if (!b.vel.empty()) mix(b.vel.data(), b.vel.size() * sizeof(Vec4));
  return h;
}

size_t countWrapped(const Bodies& before, const Bodies& after, float halfSize) {
  size_t wrapped = 0;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i)
    wrapped += std::fabs(after.pos[i].x - before.pos[i].x) > halfSize ||
               std::fabs(after.pos[i].y - before.pos[i].y) > halfSize ||
               std::fabs(after.pos[i].z - before.pos[i].z) > halfSize;
  return wrapped;
}

Vec3d totalMomentum(const Bodies& b) {
  Vec3d p;
  for (size_t i = 0; i < b.size(); ++i) {
    const double m = b.pos[i].w;
    p.x += m * b.vel[i].x;
    p.y += m * b.vel[i].y;
    p.z += m * b.vel[i].z;
  }
  return p;
}

double totalMass(const Bodies& b) {
  double m = 0;
  for (const Vec4& p : b.pos) m += p.w;
  return m;
}

double totalEnergy(const Bodies& b, double G, double softening) {
  const long n = static_cast<long>(b.size());
  const double eps2 = softening * softening;
  double kinetic = 0, potential = 0;
  for (long i = 0; i < n; ++i) {
    const Vec4& v = b.vel[i];
    kinetic += 0.5 * b.pos[i].w * (double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
  }
#pragma omp parallel for reduction(+ : potential) schedule(dynamic, 64)
  for (long i = 0; i < n; ++i) {
    for (long j = i + 1; j < n; ++j) {
      const double dx = double(b.pos[j].x) - b.pos[i].x, dy = double(b.pos[j].y) - b.pos[i].y,
                   dz = double(b.pos[j].z) - b.pos[i].z;
      potential -= double(b.pos[i].w) * b.pos[j].w / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
    }
  }
  return kinetic + G * potential;
}

namespace {
Vec3d directAccelerationOf(const Bodies& b, long i, double G, double eps2) {
  const long n = static_cast<long>(b.size());
  Vec3d a;
  for (long j = 0; j < n; ++j) {
    if (j == i) continue;
    const double dx = double(b.pos[j].x) - b.pos[i].x, dy = double(b.pos[j].y) - b.pos[i].y,
                 dz = double(b.pos[j].z) - b.pos[i].z;
    const double d2 = dx * dx + dy * dy + dz * dz + eps2;
    const double s = b.pos[j].w / (d2 * std::sqrt(d2));
    a.x += dx * s;
    a.y += dy * s;
    a.z += dz * s;
  }
  a.x *= G;
  a.y *= G;
  a.z *= G;
  return a;
}
}  // namespace

std::vector<Vec3d> directAccelerations(const Bodies& b, double G, double softening) {
  const long n = static_cast<long>(b.size());
  std::vector<Vec3d> out(b.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = 0; i < n; ++i) out[i] = directAccelerationOf(b, i, G, softening * softening);
  return out;
}

ForceError forceError(const Bodies& b, const std::vector<Vec4>& approx, double G, double softening,
                      size_t sample) {
  ForceError fe;
  const size_t n = b.size();
  if (n == 0 || approx.size() != n) return fe;
  const size_t stride = std::max<size_t>(1, (n + sample - 1) / std::max<size_t>(sample, 1));
  std::vector<long> idx;
  for (size_t i = 0; i < n; i += stride) idx.push_back(static_cast<long>(i));
  std::vector<double> err(idx.size());
  const long m = static_cast<long>(idx.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (long k = 0; k < m; ++k) {
    const long i = idx[k];
    const Vec3d r = directAccelerationOf(b, i, G, softening * softening);
    const double dx = approx[i].x - r.x, dy = approx[i].y - r.y, dz = approx[i].z - r.z;
    const double ref = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z);
    const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
    err[k] = ref > 0 ? d / ref : d;
  }
  double sq = 0;
  for (double e : err) sq += e * e;
  fe.samples = err.size();
  fe.rms = std::sqrt(sq / double(err.size()));
  std::sort(err.begin(), err.end());
  fe.median = err[err.size() / 2];
  fe.p90 = err[std::min(err.size() - 1, err.size() * 9 / 10)];
  fe.max = err.back();
  return fe;
}

}  // namespace murmur::core
