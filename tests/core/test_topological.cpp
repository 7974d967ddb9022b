// Topological neighbours (--topological K, core/topological.h): every body's K nearest equal a
// brute-force sort of (d^2, id) over all pairs, on random, clustered and lattice states (where ties
// are many), in the plane and in 3D, under every boundary, with and without a cutoff; a step sums
// each rule over exactly those neighbours (whatever the rule's radius; Vicsek with the body itself;
// Couzin's zones within them); and the options' refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/rule_table.h"
#include "core/rules/local_rules.h"
#include "core/topological.h"
#include "sparse_world.h"
#include "test_helpers.h"

using namespace murmur::core;

namespace {

// Every body's K nearest by brute force, by id: all pairs, sorted by (d^2, id), within the cutoff.
std::vector<std::vector<uint32_t>> bruteForceNearest(const SimParams& p, const Bodies& b) {
  const bool periodic = p.boundary == Boundary::Periodic;
  const float cut2 = p.topologicalRadius > 0 ? p.topologicalRadius * p.topologicalRadius : 0.0f;
  std::vector<std::vector<uint32_t>> out(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<std::pair<float, uint32_t>> all;
    for (size_t j = 0; j < b.size(); ++j) {
      if (j == i) continue;
      const float d2 = distance2(topologicalOffset(xyz(b.pos[i]), xyz(b.pos[j]), periodic, p.halfSize));
      if (cut2 > 0 && !(d2 < cut2)) continue;
      all.emplace_back(d2, b.id[j]);
    }
    std::sort(all.begin(), all.end());
    for (size_t k = 0; k < all.size() && k < size_t(p.topological); ++k) out[b.id[i]].push_back(all[k].second);
  }
  return out;
}

SimParams topoParams(const char* rule, int dims, float h, Boundary k, int K) {
  SimParams p = defaultParams();
  selectRule(p, *findRule(rule));
  p.dims = dims;
  p.halfSize = h;
  p.boundary = k;
  p.topological = K;
  p.pipeline = Pipeline::Rows;
  return p;
}

Bodies flat(Bodies b, int dims) {
  if (dims == 2)
    for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0, b.vel[i].z = 0;
  return b;
}

// The states the sets are checked on: random, clustered and a lattice (where ties are many).
std::vector<std::pair<std::string, Bodies>> testStates(int dims, float h, int K) {
  return {
      {"random", flat(murmur::test::randomBodies(500, h, 0.1f, 3 + K), dims)},
      {"clustered", flat(murmur::test::sparseClumps(500, h, dims, 7 + K), dims)},
      {"lattice", murmur::test::lattice(dims == 2 ? 576 : 512, dims, h)},
  };
}

}  // namespace

TEST(Topological, TheKNearestEqualBruteForceInEveryWorld) {
  int checked = 0;
  for (int dims : {2, 3})
    for (Boundary k : {Boundary::Wrap, Boundary::Periodic, Boundary::Reflect, Boundary::Open})
      for (int K : {1, 7, 16, 64}) {
        const float h = dims == 2 ? 12.0f : 6.0f;
        for (const auto& [name, b] : testStates(dims, h, K))
          for (float cutoff : {0.0f, 1.7f}) {
            SimParams p = topoParams("vicsek", dims, h, k, K);
            p.topologicalRadius = cutoff;
            CpuEngine e(p);
            e.reset(b);
            const auto got = e.topologicalNeighbours();
            const auto want = bruteForceNearest(p, b);
            ASSERT_EQ(got.size(), want.size());
            int bad = 0;
            for (size_t id = 0; id < want.size(); ++id)
              if (got[id] != want[id] && bad++ < 3)
                ADD_FAILURE() << name << " " << dims << "D " << toString(k) << " K=" << K << " cutoff " << cutoff
                              << ": body " << id << " has " << got[id].size() << " neighbours, brute force "
                              << want[id].size();
            EXPECT_EQ(bad, 0);
            ++checked;
          }
      }
  EXPECT_EQ(checked, 2 * 4 * 4 * 3 * 2);
}

// The CUDA engine's search (core::searchSpheres over core::topologicalSphereGrid's rows) from any
// first radius, run here on the CPU: tiny (many passes), the mean density's, and beyond the grid
// (one pass over everything); the sets equal brute force.
TEST(Topological, TheSphereSearchFindsTheKNearestFromAnyFirstRadius) {
  int checked = 0;
  for (int dims : {2, 3})
    for (Boundary k : {Boundary::Wrap, Boundary::Reflect})
      for (int K : {1, 7, 64}) {
        const float h = dims == 2 ? 12.0f : 6.0f;
        for (const auto& [name, state] : testStates(dims, h, K))
          for (float cutoff : {0.0f, 1.7f}) {
            const Bodies& b = state;  // a lambda below captures it (not a structured binding)
            SimParams p = topoParams("vicsek", dims, h, k, K);
            p.topologicalRadius = cutoff;
            const std::vector<std::vector<uint32_t>> want = bruteForceNearest(p, b);
            float maxReach = 0;
            const GridSpec g = topologicalSphereGrid(p, b.size(), &maxReach);
            // The bodies sorted by cell (x fastest), and each cell's first slot.
            std::vector<uint32_t> order(b.size());
            for (size_t i = 0; i < b.size(); ++i) order[i] = uint32_t(i);
            std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t c) {
              return cellKeyOf(g, xyz(b.pos[a])) < cellKeyOf(g, xyz(b.pos[c]));
            });
            std::vector<uint32_t> cellFirst(g.numCells + 1, uint32_t(b.size()));
            for (size_t q = b.size(); q-- > 0;) cellFirst[cellKeyOf(g, xyz(b.pos[order[q]]))] = uint32_t(q);
            for (size_t c = g.numCells; c-- > 0;) cellFirst[c] = std::min(cellFirst[c], cellFirst[c + 1]);
            const float mean = float(topologicalMeanReach(p, b.size(), K));
            for (float r0 : {1e-3f * g.cellWidth, mean, 2.0f * maxReach}) {
              int bad = 0;
              for (size_t q = 0; q < b.size(); ++q) {
                const Vec3 pi = xyz(b.pos[order[q]]);
                KNearest<kMaxTopological> best(K);
                searchSpheres(g, pi, r0, cutoff, maxReach, best, [&](uint32_t first, uint32_t last, float lo2, float hi2) {
                  for (uint32_t r = cellFirst[first]; r < cellFirst[last + 1]; ++r) {
                    const float d2 = distance2(xyz(b.pos[order[r]]) - pi);
                    if (d2 < lo2 || !(d2 < hi2) || r == q) continue;
                    best.offer(d2, b.id[order[r]], r);
                  }
                });
                std::vector<uint32_t> got;
                for (int m = 0; m < kMaxTopological; ++m)
                  if (best.found(m)) got.push_back(best.id[m]);
                if (got != want[b.id[order[q]]] && bad++ < 3)
                  ADD_FAILURE() << name << " " << dims << "D " << toString(k) << " K=" << K << " cutoff " << cutoff
                                << " r0 " << r0 << ": body " << b.id[order[q]];
              }
              EXPECT_EQ(bad, 0);
              ++checked;
            }
          }
      }
  EXPECT_EQ(checked, 2 * 2 * 3 * 3 * 2 * 3);
}

// A step sums each rule over exactly the K nearest: the CPU engine's velocities equal the rule
// applied by hand to the brute-force lists (with the rule's topological setup), for Vicsek (the
// boid itself included), the CIS 565 boids (every sum over the K, whatever the radii) and Couzin
// (the zones within the K).
TEST(Topological, AStepSumsTheRuleOverTheKNearest) {
  for (const char* rule : {"vicsek", "cis565", "couzin"})
    for (int dims : {2, 3})
      for (Boundary k : {Boundary::Periodic, Boundary::Open}) {  // (walls would turn a velocity after the rule)
        SimParams p = topoParams(rule, dims, dims == 2 ? 30.0f : 20.0f, k, 7);
        p.couzin.noise = 0.0f, p.vicsek.noise = 0.0f;
        const Bodies b = flat(murmur::test::randomBodies(600, p.halfSize, 0.3f, 21), dims);
        CpuEngine e(p);
        e.reset(b);
        e.step(1);
        const Bodies got = e.readBodies();
        const auto lists = bruteForceNearest(p, b);
        const bool periodic = k == Boundary::Periodic;
        withLocalRule(p, [&](auto r) {
          using Rule = decltype(r);
          const auto rp = Rule::params(p);
          const auto su = Rule::setupTopological(rp);
          int bad = 0;
          for (size_t i = 0; i < b.size(); ++i) {
            auto acc = Rule::zero([&] { return b.vel[i]; });
            for (uint32_t j : lists[b.id[i]]) {
              const Vec3 d = topologicalOffset(xyz(b.pos[i]), xyz(b.pos[j]), periodic, p.halfSize);
              const Vec3 raw = xyz(b.pos[j]) - xyz(b.pos[i]);
              const bool image = raw.x != d.x || raw.y != d.y || raw.z != d.z;
              Rule::add(acc, image ? imageOf(b.pos[i], d, b.pos[j]) : b.pos[j], d, distance2(d),
                        [&] { return b.vel[j]; }, su);
            }
            const Vec3 v = Rule::velocity(acc, b.pos[i], b.vel[i], rp, BodyDraws{p.seed, b.id[i], 0});
            const Vec4 g = got.vel[b.id[i]];
            if (std::fabs(g.x - v.x) + std::fabs(g.y - v.y) + std::fabs(g.z - v.z) > 1e-6f && bad++ < 3)
              ADD_FAILURE() << rule << " " << dims << "D " << toString(k) << " body " << b.id[i];
          }
          EXPECT_EQ(bad, 0) << rule;
        });
      }
}

// Far beyond the radius still counts: two Vicsek boids 10 apart (r = 1) align with K = 1, and do
// not without topological neighbours; with a cutoff of 5 they do not either.
TEST(Topological, TheNearestCountWhateverTheRadius) {
  SimParams p = topoParams("vicsek", 2, 50.0f, Boundary::Reflect, 1);
  p.vicsek.noise = 0.0f;
  Bodies b;
  b.resize(2);
  b.pos[0] = Vec4{0, 0, 0, 1}, b.vel[0] = Vec4{0.03f, 0, 0, 0};
  b.pos[1] = Vec4{10, 0, 0, 1}, b.vel[1] = Vec4{0, 0.03f, 0, 0};
  b.id = {0, 1};
  const auto headingOf0 = [&](const SimParams& q) {
    CpuEngine e(q);
    e.reset(b);
    e.step(1);
    const Vec4 v = e.readBodies().vel[0];
    return std::atan2(double(v.y), double(v.x));
  };
  EXPECT_NEAR(headingOf0(p), std::atan2(1.0, 1.0), 1e-6);  // its own + the other's
  SimParams metric = p;
  metric.topological = 0;
  EXPECT_NEAR(headingOf0(metric), 0.0, 1e-6);
  SimParams cut = p;
  cut.topologicalRadius = 5.0f;
  EXPECT_NEAR(headingOf0(cut), 0.0, 1e-6);
}

TEST(Topological, ItsRefusalsNameTheOption) {
  SimParams p = topoParams("vicsek", 2, 20.0f, Boundary::Periodic, 7);
  EXPECT_EQ(validateParams(p), "");
  p.pipeline = Pipeline::Naive;
  EXPECT_NE(validateParams(p).find("--topological 7 runs on the rows pipeline"), std::string::npos) << validateParams(p);
  p.pipeline = Pipeline::Rows;
  p.force = ForceMode::Gravity;
  EXPECT_NE(validateParams(p).find("--topological 7 applies to the local rules only"), std::string::npos);
  p = topoParams("vicsek", 2, 20.0f, Boundary::Periodic, kMaxTopological + 1);
  EXPECT_NE(validateParams(p).find("topological"), std::string::npos);
}
