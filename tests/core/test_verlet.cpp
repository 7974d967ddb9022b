// The verlet pipeline (core/verlet.h): lists built with the plan's radius hold, for every step
// they serve, every pair that naive all-pairs accepts, wrapped bodies included; a list without
// the skin does miss pairs in the same run (so the check has teeth); the CPU engine's verlet
// agrees with naive per id at every step of a long run that crosses rebuilds and the wrap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/verlet.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::expectStatesClose;
using murmur::test::randomBodies;

namespace {

// Every body's list (as body indices of pos) built with `plan`, as the engines build it.
std::vector<std::set<uint32_t>> buildLists(const SimParams& p, const VerletPlan& plan, const std::vector<Vec4>& pos) {
  const GridSpec g = rowGridForRadius(p, pos.size(), plan.radius);
  const size_t n = pos.size();
  const murmur::test::SortedCells sc = murmur::test::sortIntoCells(g, pos);
  const std::vector<uint32_t>& order = sc.order;
  const std::vector<uint32_t>& first = sc.first;
  std::vector<std::set<uint32_t>> lists(n);
  for (uint32_t t = 0; t < n; ++t) {
    const uint32_t i = order[t];
    forEachListed(
        g, plan, p.halfSize, t, xyz(pos[i]), [&](uint32_t k) { return xyz(pos[order[k]]); },
        [&](uint32_t k) { return first[k]; },
        [&](uint32_t k) {
          EXPECT_TRUE(lists[i].insert(order[k]).second) << "slot listed twice for body " << i;
        });
  }
  return lists;
}

struct Missed {
  size_t pairs = 0;         // naive neighbour pairs absent from the lists
  size_t wrappedPairs = 0;  // naive neighbour pairs in the lists with a body that wrapped since the build
};

// Runs `steps` steps of a naive engine from `start` and counts, at every step, the naive
// neighbour pairs (d^2 < r^2 as the boids rule computes it) that lists built at the start lack.
Missed missedOverSteps(const SimParams& p, const VerletPlan& plan, const Bodies& start, int steps) {
  const std::vector<std::set<uint32_t>> lists = buildLists(p, plan, start.pos);
  SimParams q = p;
  q.pipeline = Pipeline::Naive;
  CpuEngine naive(q);
  naive.reset(start);
  const float r = searchRadius(p);
  Missed m;
  for (int s = 0; s < steps; ++s) {
    const Bodies now = naive.readBodies();
    for (size_t i = 0; i < now.size(); ++i)
      for (size_t j = 0; j < now.size(); ++j) {
        if (i == j || !(distance2(xyz(now.pos[j]) - xyz(now.pos[i])) < r * r)) continue;
        if (!lists[i].count(uint32_t(j))) {
          ++m.pairs;
          continue;
        }
        const Vec3 d0 = xyz(start.pos[j]) - xyz(start.pos[i]);
        if (std::fabs(d0.x) > p.halfSize || std::fabs(d0.y) > p.halfSize || std::fabs(d0.z) > p.halfSize)
          ++m.wrappedPairs;
      }
    naive.step(1);
  }
  return m;
}

// A world where the boids fly at full speed and many cross the faces during a list's life.
Bodies fastBodies(const SimParams& p, size_t n, uint64_t seed) {
  Bodies b = randomBodies(n, p.halfSize, p.boids.maxSpeed, seed);
  for (Vec4& v : b.vel) {
    const float s = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    if (s > 0) v = Vec4{v.x / s * p.boids.maxSpeed, v.y / s * p.boids.maxSpeed, v.z / s * p.boids.maxSpeed, 0.0f};
  }
  return b;
}

}  // namespace

TEST(Verlet, PlanRadiusCoversTheSkinAndFitsTheWorld) {
  SimParams p = defaultParams();
  for (int k : {1, 2, 5, 12}) {
    p.listSteps = k;
    const VerletPlan plan = verletPlan(p);
    EXPECT_EQ(plan.steps, k);
    EXPECT_EQ(plan.periodic, k > 1);
    EXPECT_GE(plan.radius, searchRadius(p) + 2.0f * float(k - 1) * p.boids.maxSpeed * p.boids.dt);
  }
  // A world narrower than two list radii rebuilds every step, without images.
  p.halfSize = 6.0f;
  p.listSteps = 8;
  const VerletPlan narrow = verletPlan(p);
  EXPECT_EQ(narrow.steps, 1);
  EXPECT_FALSE(narrow.periodic);
  // Left open, k keeps the skin below a fifth of the radius.
  p = defaultParams();
  p.boids.dt = 0.02f;
  EXPECT_EQ(verletPlan(p).steps, 25);  // 2 (k - 1) 0.02 < 0.2 * 5
  p.boids.dt = 0.2f;
  EXPECT_EQ(verletPlan(p).steps, 3);  // 2 (k - 1) 0.2 < 1
  p.boids.cohesionRadius = p.boids.separationRadius = p.boids.alignmentRadius = 2.0f;
  EXPECT_EQ(verletPlan(p).steps, 1);  // 0.4 (k - 1) < 0.4
}

TEST(Verlet, ListsHoldEveryNeighbourForTheStepsTheyServe) {
  SimParams p = defaultParams();
  p.halfSize = 14.0f;
  for (int k : {2, 4}) {
    p.listSteps = k;
    const VerletPlan plan = verletPlan(p);
    ASSERT_TRUE(plan.periodic);
    const Missed m = missedOverSteps(p, plan, fastBodies(p, 2000, 40 + k), k);
    EXPECT_EQ(m.pairs, 0u) << "k " << k;
    // Pairs that only exist because a body crossed a face were found through the images.
    EXPECT_GT(m.wrappedPairs, 0u) << "k " << k;
  }
}

TEST(Verlet, ListsWithoutTheSkinMissPairs) {
  SimParams p = defaultParams();
  p.halfSize = 14.0f;
  p.listSteps = 4;
  VerletPlan thin = verletPlan(p);
  thin.radius = verletRadius(p, 1);  // the margin only
  const Missed m = missedOverSteps(p, thin, fastBodies(p, 2000, 44), 4);
  EXPECT_GT(m.pairs, 0u);
  VerletPlan noImages = verletPlan(p);
  noImages.periodic = false;
  EXPECT_GT(missedOverSteps(p, noImages, fastBodies(p, 2000, 44), 4).pairs, 0u);
}

// The verlet engine runs on, reusing and rebuilding its lists; before every step its state is
// also stepped once by a naive engine, and the two must agree per id.
TEST(Verlet, CpuEngineAgreesWithNaiveAtEveryStepAcrossRebuildsAndWraps) {
  for (int k : {0, 1, 3, 7})
    for (int factor : {1, 2}) {
      SimParams p = defaultParams();
      p.halfSize = 19.0f;  // lists for 7 steps at cell width 2 need 18.5
      p.cellWidthFactor = factor;
      p.listSteps = k;
      p.pipeline = Pipeline::Verlet;
      CpuEngine verlet(p);
      SimParams q = p;
      q.pipeline = Pipeline::Naive;
      CpuEngine naive(q);
      verlet.reset(fastBodies(p, 2500, 90 + k));
      size_t wraps = 0;
      for (int step = 1; step <= 24; ++step) {
        const Bodies before = verlet.readBodies();
        naive.reset(before);
        naive.step(1);
        verlet.step(1);
        const Bodies after = verlet.readBodies();
        wraps += countWrapped(before, after, p.halfSize);
        expectStatesClose(naive.readBodies(), after, 1e-5f, 1e-6f,
                          "list steps " + std::to_string(k) + " factor " + std::to_string(factor) + " step " +
                              std::to_string(step));
        if (::testing::Test::HasFailure()) return;
      }
      EXPECT_GT(wraps, 100u);
      EXPECT_EQ(verlet.stepsPerCycle(), verletPlan(p).steps);
    }
}

TEST(Verlet, EdgeSizesAgreeWithNaive) {
  for (size_t n : {size_t(1), size_t(2), size_t(31), size_t(33), size_t(500)}) {
    SimParams p = defaultParams();
    p.halfSize = 12.0f;
    p.listSteps = 3;
    const Bodies start = randomBodies(n, 12.0f, 1.0f, 7 + n);
    const auto fiveSteps = [&](Pipeline pipe) {
      p.pipeline = pipe;
      CpuEngine e(p);
      e.reset(start);
      e.step(5);
      return e.readBodies();
    };
    expectStatesClose(fiveSteps(Pipeline::Naive), fiveSteps(Pipeline::Verlet), 1e-4f, 1e-5f, "n " + std::to_string(n));
  }
}
