// The CUDA engine's test cases against the CPU reference, shared by the engine's test files: one
// step from the same state compared per id, accelerations compared per body, the test worlds per
// force x pipeline x grid width x size, and the fixture. Tolerances: docs/design.md#exactness-rules.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/params.h"
#include "cuda/cuda_engine.h"
#include "cuda_test_helpers.h"

namespace murmur::test {

class CudaEngineTest : public CudaTest {};

// Per-id tolerance (docs/design.md#exactness-rules): relative 1e-5 with an absolute floor for components near 0.
constexpr double kRel = 1e-5;
constexpr double kAbsFloor = 1e-5;
// Accelerations: relative error of the vector, floored at kAccFloor of the rms acceleration.
constexpr double kAccRel = 1e-4;

struct Case {
  core::ForceMode force;
  core::Pipeline pipeline;
  int width;  // boids: cell width factor; gravity: 1 -> gridDim 16 around the mass, 2 -> gridDim 8 bounding cube
  size_t n;
  core::Integrator integrator;
};

inline core::SimParams paramsFor(const Case& c) {
  core::SimParams p = core::defaultParams();
  p.force = c.force;
  p.pipeline = c.pipeline;
  p.cellWidthFactor = c.width;
  if (c.force == core::ForceMode::Boids) {
    p.halfSize = denseHalfSize(c.n, p);
  } else {
    p.gravity.integrator = c.integrator;
    p.gravity.gridDim = c.width == 1 ? 16 : 8;
    // Both ways of sizing the gravity grid: around the mass (default) and the bounding cube.
    p.gravity.gridSpread = c.width == 1 ? 2.5f : 0.0f;
  }
  return p;
}

inline core::Bodies bodiesFor(const Case& c, const core::SimParams& p) {
  if (c.force == core::ForceMode::Boids) return boidBodies(c.n, p, 1000 + c.n);
  return c.width == 1 ? ballBodies(c.n, 2000 + c.n) : plummerBodies(c.n, 3000 + c.n);
}

// Bodies allowed outside the tolerance after one step. Only the grid gravity leapfrog has any:
// its second force evaluation runs on drifted positions that differ from the CPU's in the last
// bit, so the bounding-box grid can differ by an ulp and a body lying on a cell face may change
// cell (near field <-> monopole), which moves its force by the approximation error. That is
// expected to touch about one body in 10^5; everything else must match.
inline size_t allowedOutliers(const core::SimParams& p, size_t n) {
  if (p.force == core::ForceMode::Gravity && p.pipeline != core::Pipeline::Naive &&
      p.gravity.integrator == core::Integrator::Leapfrog)
    return n / 1000 + 1;
  return 0;
}

inline void expectOneStepMatches(const core::SimParams& p, const core::Bodies& start, const std::string& what) {
  auto gpu = cuda::createCudaEngine(p);
  auto cpu = core::createCpuEngine(p);
  gpu->reset(start);
  cpu->reset(start);
  gpu->step(1);
  cpu->step(1);
  const core::Bodies g = gpu->readBodies();
  const core::Bodies r = cpu->readBodies();
  ASSERT_EQ(g.size(), start.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g.id[i], i) << what;
  std::string report;
  const size_t bad = countStateMismatches(g, r, kRel, kAbsFloor, kAbsFloor, &report);
  EXPECT_LE(bad, allowedOutliers(p, start.size())) << what << ": " << bad << " of " << start.size()
                                                   << " bodies differ from the CPU engine" << report;
}

inline void expectAccelerationsMatch(const core::SimParams& p, const core::Bodies& start, const std::string& what) {
  auto gpu = cuda::createCudaEngine(p);
  auto cpu = core::createCpuEngine(p);
  gpu->reset(start);
  cpu->reset(start);
  const std::vector<core::Vec4> a = gpu->computeAccelerations();
  const std::vector<core::Vec4> ref = cpu->computeAccelerations();
  ASSERT_EQ(a.size(), ref.size()) << what;
  const AccError e = accelerationError(a, ref, kAccFloor);
  EXPECT_LE(e.max, kAccRel) << what << ": worst body " << e.worst << " (" << a[e.worst].x << ", " << a[e.worst].y
                            << ", " << a[e.worst].z << ") vs (" << ref[e.worst].x << ", " << ref[e.worst].y << ", "
                            << ref[e.worst].z << ")";
  for (const core::Vec4& v : a) ASSERT_EQ(v.w, 0.0f) << what;
}

inline std::string nameOf(const Case& c) {
  std::string s = std::string(core::toString(c.force)) + "_" + core::toString(c.pipeline) + "_w" +
                  std::to_string(c.width) + "_n" + std::to_string(c.n);
  if (c.force == core::ForceMode::Gravity) s += std::string("_") + core::toString(c.integrator);
  return s;
}

inline std::string caseName(const ::testing::TestParamInfo<Case>& info) { return nameOf(info.param); }

// Whether two runs agree to the bit (positions, velocities, ids).
inline bool bitwiseEqual(const core::Bodies& a, const core::Bodies& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const core::Vec4 &p = a.pos[i], &q = b.pos[i], &u = a.vel[i], &v = b.vel[i];
    if (std::memcmp(&p, &q, sizeof p) != 0 || std::memcmp(&u, &v, sizeof u) != 0 || a.id[i] != b.id[i]) return false;
  }
  return true;
}

// Runs p's pipeline on the GPU from `start` for `steps` steps; every `every` steps its state is
// also stepped once by a fresh engine of p and by naive, both on the GPU, which must agree per id:
// a neighbour the pipeline misses anywhere (a stale cell, a wrapped body, a pruned row) shows as
// a mismatch. Returns how many bodies wrapped over the run.
inline size_t expectMatchesNaiveAtCheckpoints(const core::SimParams& p, const core::Bodies& start, int steps, int every,
                                              const std::string& what) {
  auto engine = cuda::createCudaEngine(p);
  engine->reset(start);
  core::SimParams q = p;
  q.pipeline = core::Pipeline::Naive;
  auto naive = cuda::createCudaEngine(q);
  auto check = cuda::createCudaEngine(p);
  size_t wraps = 0;
  core::Bodies prev = engine->readBodies();
  for (int step = 1; step <= steps; ++step) {
    engine->step(1);
    const core::Bodies now = engine->readBodies();
    wraps += core::countWrapped(prev, now, p.halfSize);
    prev = now;
    if (step % every != 0) continue;
    naive->reset(now);
    check->reset(now);
    naive->step(1);
    check->step(1);
    std::string report;
    const size_t bad =
        countStateMismatches(check->readBodies(), naive->readBodies(), kRel, kAbsFloor, kAbsFloor, &report);
    EXPECT_EQ(bad, 0u) << what << " step " << step << report;
  }
  return wraps;
}

}  // namespace murmur::test
