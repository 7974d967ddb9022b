// Shared helpers for the CUDA tests: the skip-without-device fixture, test worlds, and per-id
// comparisons of GPU results against the CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/params.h"
#include "core/pipeline_table.h"
#include "core/rng.h"
#include "cuda/cuda_engine.h"

namespace murmur::test {

// Every CUDA test skips (never fails) where there is no usable device: CI has no GPU.
#define MURMUR_SKIP_WITHOUT_CUDA()                                       \
  do {                                                                   \
    std::string murmurWhy_;                                              \
    if (!::murmur::cuda::deviceAvailable(&murmurWhy_))                   \
      GTEST_SKIP() << "no usable CUDA device: " << murmurWhy_;           \
  } while (0)

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override { MURMUR_SKIP_WITHOUT_CUDA(); }
};

template <typename ParamT>
class CudaParamTest : public ::testing::TestWithParam<ParamT> {
 protected:
  void SetUp() override { MURMUR_SKIP_WITHOUT_CUDA(); }
};

// Pipeline lists, read from the pipeline table (core/pipeline_table.h) so that a new row reaches
// the tests. A list that leaves a row out filters the table and says why.

// `list` without the pipelines in `drop`.
inline std::vector<core::Pipeline> without(std::vector<core::Pipeline> list, std::initializer_list<core::Pipeline> drop) {
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](core::Pipeline p) { return std::find(drop.begin(), drop.end(), p) != drop.end(); }),
             list.end());
  return list;
}

// The pipelines that serve boids on the CUDA engine.
inline std::vector<core::Pipeline> boidsPipelines() {
  std::vector<core::Pipeline> out;
  for (core::Pipeline p : core::pipelinesFor(core::ForceMode::Boids))
    if (core::pipelineInfo(p).runsOn & core::kOnCuda) out.push_back(p);
  return out;
}

// The pipelines the CPU-agreement tests run under both forces: every CUDA row that serves boids
// and gravity. Under gravity, rows and verlet run their gravityAs method (coherent): the lists
// keep them, since what they test there is that the pipeline runs that method. Tree is left out
// of these lists: gravity only, and its Barnes-Hut walk has tolerances and tests of its own
// (test_cuda_tree.cpp).
inline std::vector<core::Pipeline> bothForcesPipelines() {
  std::vector<core::Pipeline> out;
  for (const core::PipelineInfo& r : core::pipelineTable())
    if (r.boids && r.gravity && (r.runsOn & core::kOnCuda)) out.push_back(r.id);
  return out;
}

// The classic uniform-grid pipelines (the grid snapshotGrid reads): the rows that sort by cell and
// serve both forces with a method of their own. Naive sorts nothing; rows and verlet search a
// finer grid of their own for boids and run coherent's grid for gravity; tree is gravity only and
// sorts by Morton key.
inline std::vector<core::Pipeline> classicGridPipelines() {
  std::vector<core::Pipeline> out;
  for (const core::PipelineInfo& r : core::pipelineTable())
    if (r.boids && r.gravity && r.gravityAs == r.id && r.sorts && (r.runsOn & core::kOnCuda)) out.push_back(r.id);
  return out;
}

constexpr double kPi = 3.14159265358979323846;

// 2^17 + 3 bodies: several full waves of blocks and a partial warp, for the large GPU tests.
constexpr size_t kLargeN = (size_t(1) << 17) + 3;
// Accelerations: relative error of the vector, floored at 1e-2 of the rms acceleration (a body
// whose forces nearly cancel would otherwise turn rounding into a large relative error).
constexpr double kAccFloor = 1e-2;

// A boids world dense enough that every boid has about `neighbours` others within the largest rule
// radius, whatever n is (the default 100-unit world would leave small tests without neighbours).
// Sets p.halfSize; never smaller than the radius, as validateParams requires.
inline float denseHalfSize(size_t n, const core::SimParams& p, double neighbours = 10.0) {
  const double r = core::searchRadius(p);
  const double side = std::cbrt(double(n) * (4.0 / 3.0) * kPi * r * r * r / neighbours);
  return float(std::max(side / 2.0, r));
}

// Boids uniform in the world cube, random directions, speeds up to maxSpeed, unit mass.
inline core::Bodies boidBodies(size_t n, const core::SimParams& p, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  const double h = p.halfSize, vmax = p.boids.maxSpeed;
  for (size_t i = 0; i < n; ++i) {
    b.pos[i] = core::Vec4{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), 1.0f};
    const double z = rng.uniform(-1.0, 1.0), phi = rng.uniform(0.0, 2.0 * kPi), s = std::sqrt(1.0 - z * z);
    const double speed = vmax * rng.uniform();
    b.vel[i] = core::Vec4{float(speed * s * std::cos(phi)), float(speed * s * std::sin(phi)), float(speed * z), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// boidBodies, flattened onto the plane z = 0 when p is 2D.
inline core::Bodies boidBodiesInWorld(size_t n, const core::SimParams& p, uint64_t seed) {
  core::Bodies b = boidBodies(n, p, seed);
  if (p.dims == 2)
    for (size_t i = 0; i < n; ++i) b.pos[i].z = 0, b.vel[i].z = 0;
  return b;
}

// Gravity bodies uniform in the unit ball, masses in [0.5, 1.5] / n, small random velocities.
inline core::Bodies ballBodies(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double x, y, z;
    do {
      x = rng.uniform(-1.0, 1.0), y = rng.uniform(-1.0, 1.0), z = rng.uniform(-1.0, 1.0);
    } while (x * x + y * y + z * z > 1.0);
    b.pos[i] = core::Vec4{float(x), float(y), float(z), float(rng.uniform(0.5, 1.5) / double(n))};
    b.vel[i] = core::Vec4{float(rng.uniform(-0.3, 0.3)), float(rng.uniform(-0.3, 0.3)),
                          float(rng.uniform(-0.3, 0.3)), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// A centrally concentrated cluster (Plummer profile, scale radius 0.2, truncated at 2): the
// grid pipelines see dense and empty cells side by side.
inline core::Bodies plummerBodies(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double r;
    do {
      const double u = std::max(rng.uniform(), 1e-12);
      r = 0.2 / std::sqrt(std::pow(u, -2.0 / 3.0) - 1.0);
    } while (r > 2.0);
    const double z = rng.uniform(-1.0, 1.0), phi = rng.uniform(0.0, 2.0 * kPi), s = std::sqrt(1.0 - z * z);
    b.pos[i] = core::Vec4{float(r * s * std::cos(phi)), float(r * s * std::sin(phi)), float(r * z), float(1.0 / double(n))};
    b.vel[i] = core::Vec4{float(rng.uniform(-0.2, 0.2)), float(rng.uniform(-0.2, 0.2)),
                          float(rng.uniform(-0.2, 0.2)), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// Per-id comparison: component c of a matches the reference when
// |a - ref| <= rel * |ref| + absFloor. Returns the number of bodies with any component outside
// (positions and velocities), and describes the first few in *report.
inline size_t countStateMismatches(const core::Bodies& a, const core::Bodies& ref, double rel, double posFloor,
                                   double velFloor, std::string* report) {
  std::ostringstream s;
  size_t bad = 0;
  const size_t n = std::min(a.size(), ref.size());
  for (size_t i = 0; i < n; ++i) {
    const float* pa = &a.pos[i].x;
    const float* pr = &ref.pos[i].x;
    const float* va = &a.vel[i].x;
    const float* vr = &ref.vel[i].x;
    bool ok = a.id[i] == ref.id[i];
    for (int c = 0; c < 4 && ok; ++c) {
      ok = std::fabs(double(pa[c]) - pr[c]) <= rel * std::fabs(double(pr[c])) + posFloor &&
           std::fabs(double(va[c]) - vr[c]) <= rel * std::fabs(double(vr[c])) + velFloor;
    }
    if (!ok) {
      if (bad < 5) {
        s.precision(9);
        s << "\n  id " << i << ": pos (" << pa[0] << ", " << pa[1] << ", " << pa[2] << ", " << pa[3] << ") vs ("
          << pr[0] << ", " << pr[1] << ", " << pr[2] << ", " << pr[3] << "), vel (" << va[0] << ", " << va[1]
          << ", " << va[2] << ") vs (" << vr[0] << ", " << vr[1] << ", " << vr[2] << ")";
      }
      ++bad;
    }
  }
  if (report) *report = s.str();
  return bad;
}

struct AccError {
  double max = 0;   // largest per-body error
  double mean = 0;  // mean per-body error
  size_t worst = 0;
};

// Per-body relative error of the acceleration, |a - ref| / (|ref| + floorFrac * rms|ref|): the
// floor keeps bodies whose forces nearly cancel from dominating. `sample` lists the ids compared
// (all when empty). ref may be indexed by sample position (refBySample) or by id.
inline AccError accelerationError(const std::vector<core::Vec4>& a, const std::vector<core::Vec4>& ref,
                                  double floorFrac, const std::vector<size_t>& sample = {},
                                  bool refBySample = false) {
  const size_t count = sample.empty() ? a.size() : sample.size();
  AccError e;
  if (count == 0) return e;
  auto refAt = [&](size_t k) -> const core::Vec4& { return ref[refBySample || sample.empty() ? k : sample[k]]; };
  double rms = 0;
  for (size_t k = 0; k < count; ++k) {
    const core::Vec4& r = refAt(k);
    rms += double(r.x) * r.x + double(r.y) * r.y + double(r.z) * r.z;
  }
  rms = std::sqrt(rms / double(count));
  for (size_t k = 0; k < count; ++k) {
    const size_t id = sample.empty() ? k : sample[k];
    const core::Vec4& r = refAt(k);
    const double dx = double(a[id].x) - r.x, dy = double(a[id].y) - r.y, dz = double(a[id].z) - r.z;
    const double norm = std::sqrt(double(r.x) * r.x + double(r.y) * r.y + double(r.z) * r.z);
    const double err = std::sqrt(dx * dx + dy * dy + dz * dz) / (norm + floorFrac * rms + 1e-30);
    e.mean += err;
    if (err > e.max) {
      e.max = err;
      e.worst = id;
    }
  }
  e.mean /= double(count);
  return e;
}

inline bool allFinite(const core::Bodies& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    const core::Vec4 &p = b.pos[i], &v = b.vel[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z) || !std::isfinite(v.x) ||
        !std::isfinite(v.y) || !std::isfinite(v.z))
      return false;
  }
  return true;
}

}  // namespace murmur::test
