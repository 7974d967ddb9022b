// The tree pipeline on the CPU engine: the radix tree's structure, the quadrupole expansion, the
// force error against a double-precision direct sum on random, clustered and degenerate inputs,
// and the conservation laws over a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/cpu_engine.h"
#include "core/metrics.h"
#include "core/rng.h"
#include "core/scenarios.h"
#include "core/tree.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::plummerBodies;

namespace {

SimParams treeParams() {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.pipeline = Pipeline::Tree;
  return p;
}

ForceError treeError(const Bodies& b, const SimParams& p) {
  CpuEngine e(p);
  e.reset(b);
  return forceError(b, e.computeAccelerations(), p.gravity.G, p.gravity.softening, b.size());
}

// Largest |a_i| relative to the largest reference |a|: for states whose exact field vanishes
// somewhere (a relative error per body would divide by ~0 there).
double worstAbsoluteError(const Bodies& b, const std::vector<Vec4>& acc, double softening) {
  const std::vector<Vec3d> ref = directAccelerations(b, 1.0, softening);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double dx = acc[i].x - ref[i].x, dy = acc[i].y - ref[i].y, dz = acc[i].z - ref[i].z;
    worst = std::max(worst, std::sqrt(dx * dx + dy * dy + dz * dz));
    scale = std::max(scale, std::sqrt(ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z));
  }
  return scale > 0 ? worst / scale : worst;
}

// 90th percentile of |a_i - a_ref,i| over the rms of |a_ref|: on a line the pulls from both sides
// cancel, and an error relative to each body's (nearly cancelled) net force would measure the
// cancellation rather than the tree.
double p90ErrorOverRms(const Bodies& b, const std::vector<Vec4>& acc, double softening) {
  const std::vector<Vec3d> ref = directAccelerations(b, 1.0, softening);
  std::vector<double> err(b.size());
  double ms = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double dx = acc[i].x - ref[i].x, dy = acc[i].y - ref[i].y, dz = acc[i].z - ref[i].z;
    err[i] = std::sqrt(dx * dx + dy * dy + dz * dz);
    ms += ref[i].x * ref[i].x + ref[i].y * ref[i].y + ref[i].z * ref[i].z;
  }
  std::sort(err.begin(), err.end());
  return err[err.size() * 9 / 10] / std::sqrt(ms / double(b.size()));
}

}  // namespace

TEST(Tree, MortonKeyInterleavesAxesAndClampsToTheCube) {
  const Vec4 lo{0, 0, 0, 0}, hi{1, 1, 1, 0};
  const float s = mortonScale(lo, hi);
  EXPECT_EQ(mortonKey(Vec4{0, 0, 0, 1}, lo, s), 0u);
  // The top cell on every axis: all 63 bits set; x is the most significant bit of each triple.
  EXPECT_EQ(mortonKey(Vec4{1, 1, 1, 1}, lo, s), (uint64_t(1) << 63) - 1);
  EXPECT_EQ(mortonKey(Vec4{0.75f, 0, 0, 1}, lo, s) >> 60, 4u);
  EXPECT_EQ(mortonKey(Vec4{0, 0.75f, 0, 1}, lo, s) >> 60, 2u);
  EXPECT_EQ(mortonKey(Vec4{0, 0, 0.75f, 1}, lo, s) >> 60, 1u);
  // All bodies at one point: the cube has no size and every key is 0.
  EXPECT_EQ(mortonScale(lo, lo), 0.0f);
}

TEST(Tree, RadixTreeCoversEveryBodyOnceAndChildrenSplitTheirParent) {
  for (size_t n : {2u, 3u, 33u, 1000u}) {
    for (bool duplicates : {false, true}) {
      std::vector<Vec4> pos(n);
      murmur::core::Rng rng(n);
      for (auto& p : pos) {
        p = Vec4{float(rng.uniform()), float(rng.uniform()), float(rng.uniform()), 1.0f};
        if (duplicates) p.x = p.y = p.z = float(int(p.x * 4)) / 4;  // at most 4 distinct keys
      }
      Vec4 lo, hi;
      treeBounds(pos.data(), n, lo, hi);
      std::vector<uint64_t> keys, sortedKeys;
      std::vector<uint32_t> index;
      treeKeys(pos.data(), n, lo, hi, keys);
      treeSortByKey(keys, sortedKeys, index);
      ASSERT_TRUE(std::is_sorted(sortedKeys.begin(), sortedKeys.end()));
      std::vector<Vec4> sorted(n);
      for (size_t k = 0; k < n; ++k) sorted[k] = pos[index[k]];
      CpuTree t;
      buildTree(sorted.data(), sortedKeys.data(), uint32_t(n), 0.6f, t);
      ASSERT_EQ(t.links.size(), n - 1);
      EXPECT_EQ(t.links[0].first, 0u);
      EXPECT_EQ(t.links[0].last, n - 1);
      EXPECT_FLOAT_EQ(t.com[0].w, float(n));
      std::vector<int> seenAsLeaf(n, 0), seenAsChild(n - 1, 0);
      for (size_t i = 0; i < n - 1; ++i) {
        const TreeLinks k = t.links[i];
        auto range = [&](uint32_t c, uint32_t& f, uint32_t& l) {
          if (c & kTreeLeafBit) {
            f = l = c & ~kTreeLeafBit;
            ++seenAsLeaf[f];
          } else {
            f = t.links[c].first;
            l = t.links[c].last;
            ++seenAsChild[c];
          }
        };
        uint32_t f0, l0, f1, l1;
        range(k.left, f0, l0);
        range(k.right, f1, l1);
        EXPECT_EQ(f0, k.first);
        EXPECT_EQ(l0 + 1, f1);
        EXPECT_EQ(l1, k.last);
        // The node's mass is its range's mass; its centre of mass lies in the range's box.
        EXPECT_NEAR(t.com[i].w, float(k.last - k.first + 1), 1e-3f);
      }
      for (size_t b = 0; b < n; ++b) EXPECT_EQ(seenAsLeaf[b], 1) << "body " << b;
      EXPECT_EQ(seenAsChild[0], 0);
      for (size_t i = 1; i < n - 1; ++i) EXPECT_EQ(seenAsChild[i], 1) << "node " << i;
    }
  }
}

TEST(Tree, QuadrupoleBeatsMonopoleFarFromACluster) {
  // A lopsided cluster of 200 bodies within ~1 of the origin, seen from distance 8.
  murmur::core::Rng rng(4);
  std::vector<Vec4> pos(200);
  for (auto& p : pos)
    p = Vec4{float(rng.uniform(-1.0, 1.0)), float(rng.uniform(-0.3, 0.3)), float(rng.uniform(-0.6, 0.6)),
             float(rng.uniform(0.5, 1.5))};
  std::sort(pos.begin(), pos.end(), [](const Vec4& a, const Vec4& b) { return a.x < b.x; });
  std::vector<uint64_t> keys(pos.size());
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;  // any order makes a valid tree
  CpuTree t;
  buildTree(pos.data(), keys.data(), uint32_t(pos.size()), 1.0f, t);
  for (const Vec3 x : {Vec3{8, 0, 0}, Vec3{0, 8, 0}, Vec3{5, -5, 3}}) {
    double ref[3] = {0, 0, 0};
    for (const Vec4& p : pos) {
      const double dx = p.x - x.x, dy = p.y - x.y, dz = p.z - x.z;
      const double r2 = dx * dx + dy * dy + dz * dz, inv3 = 1.0 / (r2 * std::sqrt(r2));
      ref[0] += p.w * dx * inv3;
      ref[1] += p.w * dy * inv3;
      ref[2] += p.w * dz * inv3;
    }
    const double refLen = std::sqrt(ref[0] * ref[0] + ref[1] * ref[1] + ref[2] * ref[2]);
    auto err = [&](const Vec3& a) {
      const double dx = a.x - ref[0], dy = a.y - ref[1], dz = a.z - ref[2];
      return std::sqrt(dx * dx + dy * dy + dz * dz) / refLen;
    };
    const Vec4 zero{0, 0, 0, 0};
    const double quad = err(quadrupoleAccel(x, t.com[0], t.quad0[0], t.quad1[0], 0.0f));
    const double mono = err(quadrupoleAccel(x, t.com[0], zero, zero, 0.0f));
    EXPECT_LT(quad, 1.5e-3);
    EXPECT_LT(quad * 5, mono) << "quadrupole " << quad << " monopole " << mono;
  }
}

TEST(Tree, DefaultThetaErrorBelow1e3AtP90OnRandomAndClusteredBodies) {
  const SimParams p = treeParams();
  const Bodies random = murmur::test::randomBodies(6000, 3.0f, 0.0f, 7);
  const Bodies plummer = plummerBodies(6000, 8);
  for (const Bodies* b : {&random, &plummer}) {
    const ForceError fe = treeError(*b, p);
    EXPECT_LT(fe.p90, 1e-3);
    EXPECT_LT(fe.median, 5e-4);
    // The multipoles are used: an exact result would mean the walk opened everything.
    EXPECT_GT(fe.median, 1e-7);
  }
}

TEST(Tree, ErrorFallsWithTheta) {
  const Bodies b = plummerBodies(4000, 12);
  SimParams p = treeParams();
  double last = 1;
  for (float theta : {1.0f, 0.7f, 0.4f, 0.2f}) {
    p.gravity.theta = theta;
    const ForceError fe = treeError(b, p);
    EXPECT_LT(fe.p90, last) << "theta " << theta;
    last = fe.p90;
  }
  EXPECT_LT(last, 5e-5);
}

TEST(Tree, LeafSizeChangesTheWorkNotTheAnswer) {
  const Bodies b = plummerBodies(3000, 13);
  SimParams p = treeParams();
  for (int leaf : {1, 8, 64}) {
    p.gravity.treeLeafSize = leaf;
    const ForceError fe = treeError(b, p);
    EXPECT_LT(fe.p90, 1e-3) << "leaf " << leaf;
  }
}

TEST(Tree, DegenerateInputs) {
  const SimParams p = treeParams();
  // One body: no internal node; it feels nothing.
  {
    Bodies b = murmur::test::randomBodies(1, 1.0f, 0.0f, 1);
    CpuEngine e(p);
    e.reset(b);
    const std::vector<Vec4> a = e.computeAccelerations();
    EXPECT_EQ(a[0].x, 0.0f);
    EXPECT_EQ(a[0].y, 0.0f);
    EXPECT_EQ(a[0].z, 0.0f);
  }
  // Two bodies: exact, equal and opposite.
  {
    Bodies b = murmur::test::randomBodies(2, 1.0f, 0.0f, 2);
    CpuEngine e(p);
    e.reset(b);
    const std::vector<Vec4> a = e.computeAccelerations();
    EXPECT_LT(worstAbsoluteError(b, a, p.gravity.softening), 1e-6);
    EXPECT_NEAR(a[0].x * b.pos[0].w, -a[1].x * b.pos[1].w, 1e-5f * std::fabs(a[0].x * b.pos[0].w));
  }
  // All bodies at one point: equal keys and a zero-size cube; every pair has r = 0, so the field
  // is zero, and the tree (split by position alone) must agree.
  for (int leaf : {1, 16}) {
    Bodies b = murmur::test::randomBodies(777, 1.0f, 0.0f, 3);
    for (auto& q : b.pos) q = Vec4{0.25f, -1.5f, 3.0f, q.w};
    SimParams pl = p;
    pl.gravity.treeLeafSize = leaf;
    CpuEngine e(pl);
    e.reset(b);
    const std::vector<Vec4> a = e.computeAccelerations();
    for (const Vec4& ai : a) EXPECT_LT(std::fabs(ai.x) + std::fabs(ai.y) + std::fabs(ai.z), 1e-3f);
  }
  // Collinear bodies, unevenly spaced, and a few stacked on the same spot.
  {
    Bodies b = murmur::test::randomBodies(3000, 1.0f, 0.0f, 5);
    murmur::core::Rng rng(6);
    for (size_t i = 0; i < b.size(); ++i) {
      const float t = i % 10 == 0 ? 0.5f : float(std::pow(rng.uniform(), 3.0));
      b.pos[i] = Vec4{2.0f * t - 1.0f, 0.5f * t, -t, b.pos[i].w};
    }
    // A needle is the worst shape for a multipole expansion cut at the quadrupole (its higher
    // moments are as large as they get for a given box), so a theta that is accurate on 3-D
    // clouds is loose here; the error must still converge as theta falls.
    double last = 1;
    for (float theta : {0.6f, 0.3f, 0.1f}) {
      SimParams pl = p;
      pl.gravity.theta = theta;
      CpuEngine e(pl);
      e.reset(b);
      const double err = p90ErrorOverRms(b, e.computeAccelerations(), pl.gravity.softening);
      std::printf("collinear theta %.2f: p90 error / rms field %.3e\n", theta, err);
      EXPECT_LT(err, last * 0.5) << "theta " << theta;
      last = err;
    }
    EXPECT_LT(last, 1e-3);
  }
  // Two tight clusters far apart: deep trees with long empty stretches between them.
  {
    Bodies b = murmur::test::randomBodies(4000, 1e-2f, 0.0f, 9);
    for (size_t i = 0; i < b.size(); i += 2) b.pos[i].x += 10.0f;
    SimParams pc = p;
    pc.gravity.softening = 1e-3f;
    CpuEngine e(pc);
    e.reset(b);
    const ForceError fe = forceError(b, e.computeAccelerations(), 1.0, pc.gravity.softening, b.size());
    EXPECT_LT(fe.p90, 1e-3);
  }
}

TEST(Tree, ReorderKeepsIdentitiesAndStateOrderedById) {
  const Bodies b = plummerBodies(2000, 14);
  CpuEngine e(treeParams());
  e.reset(b);
  e.step(3);
  const Bodies out = e.readBodies();
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out.id[i], i);
    EXPECT_EQ(out.pos[i].w, b.pos[i].w) << "mass travels with its body";
  }
}

TEST(Tree, MomentumDriftStaysSmall) {
  // The tree's forces are not pairwise antisymmetric, so momentum is not conserved exactly; its
  // drift is bounded by the force error times the momentum scale.
  CpuEngine e(treeParams());
  EXPECT_LT(murmur::test::relativeMomentumDrift(e, plummerBodies(1000, 15), 200), 1e-3);
}

TEST(Tree, LeapfrogEnergyDriftOver1000StepsBelow1e3) {
  const Bodies b = plummerBodies(512, 9);
  const SimParams p = treeParams();
  CpuEngine e(p);
  e.reset(b);
  const double e0 = totalEnergy(b, 1.0, p.gravity.softening);
  double worst = 0;
  for (int k = 0; k < 10; ++k) {
    e.step(100);
    worst = std::max(worst, std::fabs(totalEnergy(e.readBodies(), 1.0, p.gravity.softening) / e0 - 1.0));
  }
  EXPECT_LT(worst, 1e-3);
}

TEST(Tree, ParametersAreValidated) {
  SimParams p = treeParams();
  EXPECT_TRUE(validateParams(p).empty());
  for (float theta : {0.0f, -0.5f, 1.01f, NAN}) {
    p.gravity.theta = theta;
    EXPECT_NE(validateParams(p).find("gravity.theta"), std::string::npos) << theta;
  }
  p = treeParams();
  for (int leaf : {0, 65}) {
    p.gravity.treeLeafSize = leaf;
    EXPECT_NE(validateParams(p).find("gravity.treeLeafSize"), std::string::npos) << leaf;
  }
  p = treeParams();
  p.force = ForceMode::Boids;
  EXPECT_NE(validateParams(p).find("gravity only"), std::string::npos);
  EXPECT_THROW(CpuEngine e(p), std::invalid_argument);
  Pipeline parsed{};
  EXPECT_TRUE(parse("tree", parsed));
  EXPECT_EQ(parsed, Pipeline::Tree);
}
